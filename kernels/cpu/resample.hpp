#pragma once
// Polyphase rational resampling by up/down (SPEC §7), direct: output m is
//   y[m] = sum_t h[phi + t*up] * x[n - t],  a = m*down + delay,
//   n = floor(a / up), phi = a - n*up,
// over the taps of phase phi in ascending t (fma, float), so the zero-stuffed
// samples of the up-sampled signal are never evaluated. With delay = (K-1)/2
// of an odd K this is scipy.signal.resample_poly's zero-phase alignment.
#include <cstdint>
#include <vector>

#include "core/int_math.hpp"

namespace sigstream::kernels::cpu {

// The taps of h (K of them, float) sorted by phase: phase p holds
// h[p], h[p + up], h[p + 2 up], ... at taps[offset[p] .. offset[p + 1]).
struct PolyphaseTaps {
  int up = 1;
  int down = 1;
  std::int64_t delay = 0;
  std::vector<float> taps;
  std::vector<double> taps_f64;
  std::vector<int> offset; // up + 1 entries

  [[nodiscard]] int longest_phase() const noexcept;
};

// Throws Error(invalid_argument) for up, down < 1, empty h or a delay outside [0, K).
[[nodiscard]] PolyphaseTaps make_polyphase(const std::vector<double>& h, int up, int down,
                                           std::int64_t delay);

// Output frames [y_first, y_first + n) into y[0..n), reading x, whose
// element 0 is input frame x_first; x must hold every frame the outputs
// need (see kernels/cpu/resample.cpp: floor((m*down + delay)/up) back to
// that minus the longest phase's length + 1).
void resample_direct(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                     std::int64_t n, const PolyphaseTaps& p);
// The same in float64 (the verification reference).
void resample_direct_f64(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                         std::int64_t n, const PolyphaseTaps& p);

using sigstream::ceil_div;
using sigstream::floor_div;

} // namespace sigstream::kernels::cpu
