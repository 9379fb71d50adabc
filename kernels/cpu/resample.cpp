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

// Outputs that share a phase are `up` apart and read inputs `down` apart:
// they are taken B at a time in vector lanes (a broadcast tap, strided
// loads), each lane still summing its own taps in ascending order from 0
// with fma, as the scalar definition and the CUDA kernel do, so every build
// and both backends agree bit for bit.
template <typename T, int B>
[[gnu::always_inline]] inline void resample_all(const T* x, std::int64_t x_first, T* y, std::int64_t y_first,
                                                std::int64_t n, const PolyphaseTaps& p, const T* taps) {
  const std::int64_t up = p.up;
  const std::int64_t down = p.down;
  for (std::int64_t i0 = 0; i0 < std::min<std::int64_t>(up, n); ++i0) {
    const std::int64_t count = (n - i0 + up - 1) / up;  // outputs i0, i0 + up, ...
    const std::int64_t a = (y_first + i0) * down + p.delay;
    const std::int64_t newest = floor_div(a, up);
    const auto phase = static_cast<std::size_t>(a - newest * up);
    const T* h = taps + p.offset[phase];
    const int len = p.offset[phase + 1] - p.offset[phase];
    const T* xb = x + (newest - x_first);
    T* yb = y + i0;
    std::int64_t k = 0;
    for (; k + B <= count; k += B) {
      T acc[B] = {};
      const T* xk = xb + k * down;
      for (int t = 0; t < len; ++t) {
        const T ht = h[t];
        for (int j = 0; j < B; ++j) acc[j] = std::fma(ht, xk[j * down - t], acc[j]);
      }
      for (int j = 0; j < B; ++j) yb[(k + j) * up] = acc[j];
    }
    for (; k < count; ++k) {
      const T* xk = xb + k * down;
      T acc = 0;
      for (int t = 0; t < len; ++t) acc = std::fma(h[t], xk[-t], acc);
      yb[k * up] = acc;
    }
  }
}

bool has_avx2_fma() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

template <typename T>
struct Kernels {
  using Fn = void (*)(const T*, std::int64_t, T*, std::int64_t, std::int64_t, const PolyphaseTaps&, const T*);
  [[gnu::target("arch=x86-64-v3")]] static void v3(const T* x, std::int64_t xf, T* y, std::int64_t yf,
                                                    std::int64_t n, const PolyphaseTaps& p, const T* h) {
    resample_all<T, 32 / sizeof(T) * 2>(x, xf, y, yf, n, p, h);
  }
  static void generic(const T* x, std::int64_t xf, T* y, std::int64_t yf, std::int64_t n, const PolyphaseTaps& p,
                      const T* h) {
    resample_all<T, 16 / sizeof(T) * 2>(x, xf, y, yf, n, p, h);
  }
  static Fn pick() { return has_avx2_fma() ? v3 : generic; }
};

}  // namespace

void resample_direct(const float* x, std::int64_t x_first, float* y, std::int64_t y_first, std::int64_t n,
                     const PolyphaseTaps& p) {
  static const auto fn = Kernels<float>::pick();
  fn(x, x_first, y, y_first, n, p, p.taps.data());
}

void resample_direct_f64(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                         std::int64_t n, const PolyphaseTaps& p) {
  static const auto fn = Kernels<double>::pick();
  fn(x, x_first, y, y_first, n, p, p.taps_f64.data());
}

}  // namespace sigstream::kernels::cpu
