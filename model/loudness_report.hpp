#pragma once
// What a metrics block reports of its loudness (SPEC §13), a value type of
// its own so that the live observer's interface (stages/stage.hpp) can
// return it without the whole report.
#include <optional>

namespace sigstream {

// A metrics block's EBU R128 loudness (SPEC §13; stages/metrics/loudness.hpp).
struct LoudnessReport {
  std::optional<double> integrated_lufs;     // none: no 400 ms block above the gates
  std::optional<double> range_lu;            // none: no 3 s block above the gates
  std::optional<double> true_peak_dbtp;      // the largest of the channels'; none: all zero
  std::optional<double> max_momentary_lufs;  // over the 100 ms steps once 400 ms are in
  std::optional<double> max_short_term_lufs; // over the 100 ms steps once 3 s are in
};

} // namespace sigstream
