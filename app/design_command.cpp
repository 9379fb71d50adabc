// `sigstream design`: the taps of one windowed-sinc design, %.17g a line.
// It reads no config (there is no signal, only --rate), so its flags go to
// stages/design.hpp directly, which checks them against that rate.
#include "app/design_command.hpp"

#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "stages/design.hpp"

namespace sigstream::app {

namespace {

DesignSpec design_from(const FilterFlags& f) {
  DesignSpec d;
  const DesignFlag given = design_flag(f);
  d.kind = parse_filter_kind(given.kind);
  if (d.kind == FilterKind::lowpass || d.kind == FilterKind::highpass)
    d.cutoff_hz = {parse_hz(*given.text, given.flag)};
  else
    d.cutoff_hz = parse_band(*given.text, given.flag);
  d.taps = f.taps;
  d.window = parse_window(f.window);
  if (d.window.kind == WindowKind::kaiser && f.window.find(':') == std::string::npos)
    throw config_error("--window: kaiser needs its beta, e.g. --window kaiser:8.6");
  return d;
}

} // namespace

CLI::App* add_design_command(CLI::App& app, DesignFlags& flags) {
  auto* design = app.add_subcommand(
      "design", "Print FIR taps (one per line, %.17g), like scipy.signal.firwin");
  add_filter_flags(design, flags.filter, false);
  design->add_option("--rate", flags.rate, "Sample rate in Hz")->required();
  return design;
}

int run_design_command(const DesignFlags& flags) {
  const auto taps = design_fir(design_from(flags.filter), flags.rate);
  for (double t : taps)
    std::printf("%.17g\n", t);
  return 0;
}

} // namespace sigstream::app
