#pragma once
// The filter specification that `filter` and `design` share: one of
// --lowpass, --highpass, --bandpass, --bandstop (and, for `filter`,
// --taps-file), with --taps and --window.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sigstream::app {

struct FilterFlags {
  std::string lowpass, highpass, bandpass, bandstop, taps_file;
  int taps = 255;
  std::string window = "hamming";
  int iir = 0; // --iir ORDER: a Butterworth IIR design in place of the FIR (0: none)
};

void add_filter_flags(CLI::App* cmd, FilterFlags& f, bool with_taps_file);

// True when one of the design flags (not --taps-file) is given.
[[nodiscard]] bool has_design(const FilterFlags& f);
// The design flag given ("--lowpass", ...), its filter kind's name
// ("lowpass", ...) and its text.
struct DesignFlag {
  const char* flag;
  const char* kind;
  const std::string* text;
};
[[nodiscard]] DesignFlag design_flag(const FilterFlags& f);

// A flag's number (Error(config) naming the flag if it is none, or not finite).
double parse_hz(const std::string& text, const std::string& flag);
// LO:HI, the band flags' syntax (YAML has none like it: there it is [lo, hi]).
std::vector<double> parse_band(const std::string& text, const std::string& flag);

} // namespace sigstream::app
