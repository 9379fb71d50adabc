// The fir kind's YAML keys (stages[] and stages[].design) and their reader:
// exactly one of design / taps / taps_file, the design's kind, cutoffs
// (checked against Nyquist when the synth rate is known), window and taps.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "model/config.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/cutoff_schema.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/spec.hpp"
#include "stages/schema_enums.hpp"
#include "stages/window_schema.hpp"

namespace sigstream {
namespace {

using namespace config;

constexpr Key kFirKeys[] = {
    Key("design", Type::section, "Windowed-sinc design; exactly one of design / taps / taps_file."),
    Key("taps", Type::custom,
        "Inline coefficients h[0], h[1], ...; or one such list per input channel (shorter ones "
        "zero-padded to the longest).")
        .spelled("a non-empty list of finite numbers, or a list of them per channel"),
    Key("taps_file", Type::string,
        "File of coefficients, one per line, '#' comments; or an audio file (WAV, FLAC, ...) "
        "whose channel c filters input channel c (a 1-channel file filters every channel).")
        .spelled("a file path"),
    Key("mode", Type::choice, "Output alignment: causal (lfilter), same (delay compensated), full.")
        .one_of(&enum_names<FirMode>)
        .defaults("causal"),
    Key("method", Type::choice, "Convolution algorithm; auto picks by filter length.")
        .one_of(&enum_names<FirMethod>)
        .defaults("auto"),
};

constexpr Key kDesignKeys[] = {
    Key("kind", Type::custom, "Filter type.").one_of(&enum_names<FilterKind>).required(),
    Key("cutoff_hz", Type::custom, "Cutoff in Hz, 0 < f < sample_rate/2.")
        .spelled("a number, or [lo, hi] for bandpass/bandstop")
        .required(),
    Key("taps", Type::integer, "Number of taps (odd for highpass and bandstop).")
        .defaults("255")
        .at_least(1)
        .at_most(kMaxInt),
    Key("window", Type::custom,
        "Window; kaiser takes a beta: 'kaiser:8.6', or kaiser with beta: 8.6.")
        .one_of(&enum_names<WindowKind>)
        .defaults("hamming"),
    Key("beta", Type::number, "Kaiser beta, with window: kaiser.").at_least(0),
};

// Element types of lists, for messages.
constexpr Key kTapValue = Key("tap", Type::number);

DesignSpec parse_design(Context& cx, const YAML::Node& node, const Path& path,
                        std::optional<double> rate, bool rate_changed) {
  MapReader r(cx, node, path, keys_of({kDesignKeys}));
  DesignSpec d;
  if (!r.ok())
    return d;
  std::optional<FilterKind> kind;
  if (r.has("kind")) {
    bool valid = false;
    const FilterKind k = parse_kind(cx, r, valid);
    if (valid)
      kind = d.kind = k;
  }
  const auto taps = r.int32("taps");
  if (taps)
    d.taps = *taps;
  d.window = read_window_setting(cx, r);
  if (r.has("cutoff_hz")) {
    d.cutoff_hz = parse_cutoff(cx, r.value("cutoff_hz"), r.path("cutoff_hz"), r.decl("cutoff_hz"),
                               kind, rate, rate_changed);
  }
  if (taps && kind && (*kind == FilterKind::highpass || *kind == FilterKind::bandstop) &&
      *taps % 2 == 0) {
    r.error("taps", "a " + std::string(to_string(*kind)) +
                        " filter needs an odd number of taps, "
                        "got " +
                        std::to_string(*taps) + " (expected an odd integer, e.g. " +
                        std::to_string(*taps + 1) +
                        ": an even-length linear-phase filter has a zero at Nyquist)");
  }
  return d;
}

std::vector<double> parse_inline_taps(Context& cx, const YAML::Node& v, const Path& p,
                                      const Key& k);

// taps: [[...], [...]]: one response per channel (SPEC §11); a list of one list is the same
// as that list for every channel.
void parse_channel_taps(Context& cx, const YAML::Node& v, const Path& p, const Key& k, FirSpec& f) {
  std::size_t i = 0;
  for (const YAML::Node& row : v) {
    if (!row.IsSequence()) {
      cx.error(row, p / i,
               describe(row) + " is not a list (expected " + expected(k) +
                   ": either every item a number, or every item a list)");
    } else {
      f.channel_taps.push_back(parse_inline_taps(cx, row, p / i, k));
    }
    ++i;
  }
  if (f.channel_taps.size() == 1) {
    f.taps = std::move(f.channel_taps.front());
    f.channel_taps.clear();
  }
}

std::vector<double> parse_inline_taps(Context& cx, const YAML::Node& v, const Path& p,
                                      const Key& k) {
  std::vector<double> taps;
  if (!v.IsSequence()) {
    cx.error(v, p,
             describe(v) + " is not a list (expected " + expected(k) +
                 "; a designed filter's tap count goes under design: taps)");
    return taps;
  }
  if (v.size() == 0) {
    cx.error(v, p, "the taps list is empty (expected " + expected(k) + ")");
    return taps;
  }
  taps.reserve(v.size());
  std::size_t i = 0;
  for (const YAML::Node& t : v) {
    if (auto x = read_number(cx, t, p / i, kTapValue))
      taps.push_back(*x);
    ++i;
  }
  return taps;
}

void read_fir(MapReader& r, const StageReadContext& where, StageSpec& out) {
  Context& cx = where.cx;
  FirSpec& f = out.as<FirSpec>();
  exactly_one_of(cx, r, {"design", "taps", "taps_file"});
  if (r.has("design")) {
    f.design = parse_design(cx, r.value("design"), r.path("design"), where.sample_rate,
                            where.rate_changed);
  }
  if (r.has("taps")) {
    const YAML::Node v = r.value("taps");
    if (v.IsSequence() && v.size() > 0 && v[0].IsSequence())
      parse_channel_taps(cx, v, r.path("taps"), r.decl("taps"), f);
    else
      f.taps = parse_inline_taps(cx, v, r.path("taps"), r.decl("taps"));
  }
  if (r.has("taps_file"))
    f.taps_file = r.string("taps_file");
  if (auto v = r.choice<FirMode>("mode"))
    f.mode = *v;
  if (auto v = r.choice<FirMethod>("method"))
    f.method = *v;
}

constexpr Section kFirSections[] = {
    {"stages[].design", "type: fir", kDesignKeys},
};

} // namespace

const StageSchema& fir_schema() {
  static constexpr StageSchema kSchema{kFirKeys, kFirSections, &read_fir};
  return kSchema;
}

} // namespace sigstream
