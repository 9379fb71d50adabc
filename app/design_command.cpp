// `sigstream design`: the taps of one windowed-sinc design, %.17g a line,
// or with --iir ORDER the second-order sections of an IIR design, one
// "b0 b1 b2 a0 a1 a2" a line (what sos_file reads). It reads no config
// (there is no signal, only --rate), so its flags go to stages/design.hpp
// and stages/iir/design.hpp directly, which check them against that rate.
#include "app/design_command.hpp"

#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "stages/design.hpp"
#include "stages/iir/design.hpp"
#include "stages/iir/iir.hpp"

namespace sigstream::app {

namespace {

// The design flag given: its kind and its cutoff(s), for either design.
template <class D> void kind_and_cutoff(const FilterFlags& f, D& d) {
  const DesignFlag given = design_flag(f);
  d.kind = parse_filter_kind(given.kind);
  if (d.kind == FilterKind::lowpass || d.kind == FilterKind::highpass)
    d.cutoff_hz = {parse_hz(*given.text, given.flag)};
  else
    d.cutoff_hz = parse_band(*given.text, given.flag);
}

DesignSpec design_from(const FilterFlags& f) {
  DesignSpec d;
  kind_and_cutoff(f, d);
  d.taps = f.taps;
  d.window = parse_window(f.window);
  if (d.window.kind == WindowKind::kaiser && f.window.find(':') == std::string::npos)
    throw config_error("--window: kaiser needs its beta, e.g. --window kaiser:8.6");
  return d;
}

IirDesignSpec iir_design_from(const DesignFlags& flags) {
  IirDesignSpec d;
  kind_and_cutoff(flags.filter, d);
  d.order = flags.filter.iir;
  std::string names;
  bool known = false;
  for (const IirFamily family : config::EnumValues<IirFamily>::values) {
    names += (names.empty() ? "" : ", ") + std::string(to_string(family));
    if (to_string(family) == flags.ftype) {
      d.ftype = family;
      known = true;
    }
  }
  if (!known)
    throw config_error("--ftype: '" + flags.ftype + "' is not one of " + names);
  if (flags.rp > 0)
    d.rp = flags.rp;
  if (flags.rs > 0)
    d.rs = flags.rs;
  return d;
}

} // namespace

CLI::App* add_design_command(CLI::App& app, DesignFlags& flags) {
  auto* design = app.add_subcommand(
      "design",
      "Print FIR taps (one per line, %.17g), like scipy.signal.firwin; with --iir ORDER the "
      "sections of an IIR (b0 b1 b2 a0 a1 a2 a line), like scipy.signal.iirfilter(output='sos')");
  add_filter_flags(design, flags.filter, false);
  design->add_option("--rate", flags.rate, "Sample rate in Hz")->required();
  design
      ->add_option(
          "--ftype", flags.ftype,
          "With --iir: butter | cheby1 (--rp) | cheby2 (--rs) | ellip (--rp, --rs) | bessel")
      ->capture_default_str();
  design->add_option("--rp", flags.rp,
                     "With --iir --ftype cheby1 or ellip: pass-band ripple in dB");
  design->add_option("--rs", flags.rs,
                     "With --iir --ftype cheby2 or ellip: stop-band attenuation in dB");
  return design;
}

int run_design_command(const DesignFlags& flags) {
  if (flags.filter.iir != 0) {
    for (const auto& s : design_iir(iir_design_from(flags), flags.rate))
      std::printf("%.17g %.17g %.17g 1 %.17g %.17g\n", s.b0, s.b1, s.b2, s.a1, s.a2);
    return 0;
  }
  const auto taps = design_fir(design_from(flags.filter), flags.rate);
  for (double t : taps)
    std::printf("%.17g\n", t);
  return 0;
}

} // namespace sigstream::app
