// The filter flags that `filter` and `design` share, and the number syntax
// of their values.
#include "app/filter_flags.hpp"

#include <cmath>
#include <exception>

#include "core/error.hpp"

namespace sigstream::app {

void add_filter_flags(CLI::App* cmd, FilterFlags& f, bool with_taps_file) {
  auto* g = cmd->add_option_group("filter", "the filter (exactly one)");
  g->add_option("--lowpass", f.lowpass, "Low-pass cutoff in Hz")->type_name("HZ");
  g->add_option("--highpass", f.highpass, "High-pass cutoff in Hz")->type_name("HZ");
  g->add_option("--bandpass", f.bandpass, "Band-pass edges in Hz")->type_name("LO:HI");
  g->add_option("--bandstop", f.bandstop, "Band-stop edges in Hz")->type_name("LO:HI");
  if (with_taps_file)
    g->add_option("--taps-file", f.taps_file, "Taps, one coefficient per line ('#' comments)")
        ->type_name("FILE");
  // `filter` also runs with --resample alone (checked after parsing).
  g->require_option(with_taps_file ? 0 : 1, 1);
  cmd->add_option("--taps", f.taps, "Number of taps (odd for highpass and bandstop)")
      ->capture_default_str();
  cmd->add_option("--window", f.window,
                  "hamming | hann | blackman | rectangular | kaiser:BETA (e.g. kaiser:8.6)")
      ->capture_default_str();
  cmd->add_option("--iir", f.iir,
                  "Design an IIR of this order instead of the FIR (Butterworth, as "
                  "scipy.signal.iirfilter; a band filter has twice as many poles)")
      ->type_name("ORDER");
}

bool has_design(const FilterFlags& f) {
  return !(f.lowpass.empty() && f.highpass.empty() && f.bandpass.empty() && f.bandstop.empty());
}

DesignFlag design_flag(const FilterFlags& f) {
  if (!f.lowpass.empty())
    return {"--lowpass", "lowpass", &f.lowpass};
  if (!f.highpass.empty())
    return {"--highpass", "highpass", &f.highpass};
  if (!f.bandpass.empty())
    return {"--bandpass", "bandpass", &f.bandpass};
  return {"--bandstop", "bandstop", &f.bandstop};
}

namespace {

double parse_number(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw config_error(flag + ": '" + text + "' is not a number");
  return v;
}

} // namespace

double parse_hz(const std::string& text, const std::string& flag) {
  const double v = parse_number(text, flag);
  if (!std::isfinite(v))
    throw config_error(flag + ": '" + text + "' is not a frequency in Hz");
  return v;
}

std::vector<double> parse_band(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw config_error(flag + ": expected LO:HI in Hz (e.g. 300:3400), got '" + text + "'");
  return {parse_hz(text.substr(0, colon), flag), parse_hz(text.substr(colon + 1), flag)};
}

} // namespace sigstream::app
