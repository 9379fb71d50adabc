#include "kernels/cpu/resample.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace sigstream::kernels::cpu {

int PolyphaseTaps::longest_phase() const noexcept {
  int longest = 0;
  for (std::size_t p = 0; p + 1 < offset.size(); ++p) longest = std::max(longest, offset[p + 1] - offset[p]);
  return longest;
}

PolyphaseTaps make_polyphase(const std::vector<double>& h, int up, int down, std::int64_t delay) {
  const auto k = static_cast<std::int64_t>(h.size());
  if (up < 1 || down < 1 || k < 1 || delay < 0 || delay >= k)
    throw Error(ErrorKind::invalid_argument, "polyphase taps: up " + std::to_string(up) + ", down " +
                                                 std::to_string(down) + ", " + std::to_string(k) +
                                                 " taps, delay " + std::to_string(delay));
  PolyphaseTaps p;
  p.up = up;
  p.down = down;
  p.delay = delay;
  p.offset.assign(static_cast<std::size_t>(up) + 1, 0);
  for (int phase = 0; phase < up; ++phase) {
    p.offset[static_cast<std::size_t>(phase)] = static_cast<int>(p.taps.size());
    for (std::int64_t i = phase; i < k; i += up) {
      p.taps_f64.push_back(h[static_cast<std::size_t>(i)]);
      p.taps.push_back(static_cast<float>(h[static_cast<std::size_t>(i)]));
    }
  }
  p.offset[static_cast<std::size_t>(up)] = static_cast<int>(p.taps.size());
  return p;
}

namespace {

template <typename T>
void resample(const T* x, std::int64_t x_first, T* y, std::int64_t y_first, std::int64_t n,
              const PolyphaseTaps& p, const std::vector<T>& taps) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t a = (y_first + i) * p.down + p.delay;
    const std::int64_t newest = floor_div(a, p.up);
    const auto phase = static_cast<std::size_t>(a - newest * p.up);
    const T* h = taps.data() + p.offset[phase];
    const int len = p.offset[phase + 1] - p.offset[phase];
    const T* xn = x + (newest - x_first);
    T acc = 0;
    for (int t = 0; t < len; ++t) acc = std::fma(h[t], xn[-t], acc);
    y[i] = acc;
  }
}

}  // namespace

void resample_direct(const float* x, std::int64_t x_first, float* y, std::int64_t y_first, std::int64_t n,
                     const PolyphaseTaps& p) {
  resample(x, x_first, y, y_first, n, p, p.taps);
}

void resample_direct_f64(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                         std::int64_t n, const PolyphaseTaps& p) {
  resample(x, x_first, y, y_first, n, p, p.taps_f64);
}

}  // namespace sigstream::kernels::cpu
