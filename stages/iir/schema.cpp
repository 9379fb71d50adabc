// The iir kind's YAML keys (SPEC §12: stages[] and stages[].biquad) and their
// reader: exactly one of sos / sos_file / biquad. What needs the sample rate
// (a biquad's frequency below Nyquist) and the sections' stability are
// checked when the stage is planned (iir.cpp).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/cutoff_schema.hpp"
#include "stages/iir/iir.hpp"
#include "stages/iir/spec.hpp"
#include "stages/schema_enums.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr Key kIirKeys[] = {
    Key("design", Type::section,
        "A design as scipy.signal.iirfilter(order, cutoff_hz, btype=kind, ftype, rp, rs, fs=rate, "
        "output='sos'); exactly one of design / sos / sos_file / biquad."),
    Key("sos", Type::custom,
        "Second-order sections, one row each: [b0, b1, b2, a0, a1, a2] (scipy.signal's sos "
        "layout; a0 is divided out); exactly one of sos / sos_file / biquad.")
        .spelled("a non-empty list of rows of six finite numbers"),
    Key("sos_file", Type::string,
        "File of sections, six numbers a line (b0 b1 b2 a0 a1 a2, spaces or commas), '#' "
        "comments.")
        .spelled("a file path"),
    Key("biquad", Type::section, "One RBJ Audio EQ Cookbook section."),
    Key("zero_phase", Type::boolean,
        "Forward and backward (= scipy.signal.sosfiltfilt with its default odd padding): no "
        "phase shift, the magnitude squared. Holds the whole signal: files and batch only.")
        .defaults("false"),
};

constexpr Key kDesignKeys[] = {
    Key("kind", Type::custom, "Filter type.").one_of(&enum_names<FilterKind>).required(),
    Key("cutoff_hz", Type::custom,
        "Cutoff in Hz (the -3 dB point of butter, the ripple's edge of cheby1, the stop band's "
        "of cheby2), 0 < f < sample_rate/2.")
        .spelled("a number, or [lo, hi] for bandpass/bandstop")
        .required(),
    Key("order", Type::integer, "Filter order (a band filter has twice as many poles).")
        .at_least(1)
        .at_most(kMaxIirOrder)
        .required(),
    Key("ftype", Type::choice,
        "butter, cheby1 (needs rp), cheby2 (needs rs), ellip (needs both) or bessel (normalised "
        "for phase, as SciPy's default).")
        .one_of(&enum_names<IirFamily>)
        .defaults("butter"),
    Key("rp", Type::number, "cheby1, ellip: the pass band's ripple in dB.").above(0),
    Key("rs", Type::number, "cheby2, ellip: the stop band's attenuation in dB.").above(0),
};

constexpr Key kBiquadKeys[] = {
    Key("type", Type::choice,
        "lowpass, highpass, bandpass (constant 0 dB peak), notch, allpass, peaking, lowshelf, "
        "highshelf.")
        .one_of(&enum_names<BiquadKind>)
        .required(),
    Key("freq_hz", Type::number, "Centre or corner frequency in Hz, below the Nyquist frequency.")
        .above(0)
        .required(),
    Key("q", Type::number, "Quality factor (shelves: their slope as Q).")
        .above(0)
        .defaults("0.7071067811865476"),
    Key("gain_db", Type::number, "Gain in dB of peaking and shelving sections.").defaults("0"),
};

constexpr Key kCoefficient = Key("coefficient", Type::number);

void read_sos(Context& cx, const MapReader& r, IirSpec& spec) {
  const YAML::Node v = r.value("sos");
  const Path p = r.path("sos");
  const Key& k = r.decl("sos");
  if (!v.IsSequence() || v.size() == 0) {
    cx.error(
        v, p,
        (v.IsSequence() ? std::string("the sos list is empty") : describe(v) + " is not a list") +
            " (expected " + expected(k) + ")");
    return;
  }
  if (v.size() > static_cast<std::size_t>(kMaxIirSections)) {
    cx.error(v, p,
             std::to_string(v.size()) + " sections (at most " + std::to_string(kMaxIirSections) +
                 ")");
    return;
  }
  std::size_t i = 0;
  for (const YAML::Node& row : v) {
    const Path rp = p / i;
    if (!row.IsSequence() || row.size() != 6) {
      cx.error(row, rp,
               "section " + std::to_string(i) + " is " +
                   (row.IsSequence() ? std::to_string(row.size()) + " numbers" : describe(row)) +
                   ", not six (expected [b0, b1, b2, a0, a1, a2])");
    } else {
      std::vector<double> c;
      std::size_t j = 0;
      for (const YAML::Node& x : row) {
        if (auto d = read_number(cx, x, rp / j, kCoefficient))
          c.push_back(*d);
        ++j;
      }
      spec.sos.push_back(std::move(c));
    }
    ++i;
  }
}

IirDesignSpec read_design(Context& cx, const YAML::Node& node, const Path& path,
                          const StageReadContext& where) {
  MapReader r(cx, node, path, keys_of({kDesignKeys}));
  IirDesignSpec d;
  if (!r.ok())
    return d;
  std::optional<FilterKind> kind;
  if (r.has("kind")) {
    bool valid = false;
    const FilterKind k = parse_kind(cx, r, valid);
    if (valid)
      kind = d.kind = k;
  }
  if (r.has("cutoff_hz"))
    d.cutoff_hz = parse_cutoff(cx, r.value("cutoff_hz"), r.path("cutoff_hz"), r.decl("cutoff_hz"),
                               kind, where.sample_rate, where.rate_changed);
  if (auto v = r.int32("order"))
    d.order = *v;
  if (auto v = r.choice<IirFamily>("ftype"))
    d.ftype = *v;
  d.rp = r.number("rp");
  d.rs = r.number("rs");
  if (d.ftype == IirFamily::cheby1 && !d.rp)
    cx.error(node, path, "ftype cheby1 needs rp, the pass band's ripple in dB (e.g. rp: 1)");
  if (d.ftype == IirFamily::cheby2 && !d.rs)
    cx.error(node, path, "ftype cheby2 needs rs, the stop band's attenuation in dB (e.g. rs: 60)");
  if (d.ftype == IirFamily::ellip && (!d.rp || !d.rs))
    cx.error(node, path,
             "ftype ellip needs rp and rs, the pass band's ripple and the stop band's attenuation "
             "in dB (e.g. rp: 1, rs: 60)");
  return d;
}

BiquadSpec read_biquad(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kBiquadKeys}));
  BiquadSpec b;
  if (!r.ok())
    return b;
  if (auto v = r.choice<BiquadKind>("type"))
    b.kind = *v;
  if (auto v = r.number("freq_hz"))
    b.freq_hz = *v;
  if (auto v = r.number("q"))
    b.q = *v;
  if (auto v = r.number("gain_db"))
    b.gain_db = *v;
  return b;
}

void read_iir(MapReader& r, const StageReadContext& where, StageSpec& out) {
  Context& cx = where.cx;
  IirSpec& spec = out.as<IirSpec>();
  exactly_one_of(cx, r, {"design", "sos", "sos_file", "biquad"});
  if (r.has("design"))
    spec.design = read_design(cx, r.value("design"), r.path("design"), where);
  if (r.has("sos"))
    read_sos(cx, r, spec);
  if (r.has("sos_file"))
    spec.sos_file = r.string("sos_file");
  if (r.has("biquad"))
    spec.biquad = read_biquad(cx, r.value("biquad"), r.path("biquad"));
  if (auto v = r.boolean("zero_phase"))
    spec.zero_phase = *v;
}

constexpr Section kIirSections[] = {
    {"stages[].design", "type: iir", kDesignKeys},
    {"stages[].biquad", "type: iir", kBiquadKeys},
};

} // namespace

const StageSchema& iir_schema() {
  static constexpr StageSchema kSchema{kIirKeys, kIirSections, &read_iir};
  return kSchema;
}

} // namespace sigstream
