#pragma once
// A FIR filter's frequency response for the statistics and their figures
// (SPEC §8): magnitude in dB and group delay, on an even grid from 0 to the
// Nyquist frequency, from the float64 taps.
#include <span>
#include <vector>

namespace sigstream::kernels::cpu {

struct FilterResponse {
  std::vector<double> freq_hz;
  std::vector<double> magnitude_db; // 20 log10 |H|, -400 where |H| is 0
  std::vector<double>
      group_delay_ms; // -d(phase)/d(omega); NaN where |H| is over 120 dB below its peak
};

// `points` + 1 frequencies k * rate / (2 * points). H is evaluated exactly
// on that grid (a zero-padded real FFT of a multiple of 2 * points, at least
// the taps' length, read every so many bins); the group delay is Re(DFT(n
// h[n]) / DFT(h)) samples, in ms at `rate`. Throws Error(invalid_argument)
// for no taps, points < 1 or a rate <= 0.
[[nodiscard]] FilterResponse filter_response(std::span<const double> taps, double rate,
                                             int points = 512);

} // namespace sigstream::kernels::cpu
