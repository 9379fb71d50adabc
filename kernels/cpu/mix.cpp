#include "kernels/cpu/mix.hpp"

#include <cmath>
#include <cstddef>

namespace sigstream::kernels::cpu {

namespace {

// A tile of frames stays in L1 while the input planes are added to it one
// at a time: each output frame's sum is still g0·x0, then + g1·x1, ...
// (ascending j, one fma a term, from 0), so the tiling changes no bit; the
// frame loop vectorises. A term whose gain is 0 is left out (see mix.hpp).
constexpr std::int64_t kTile = 1024;

template <typename T>
[[gnu::always_inline]] inline void mix_all(std::span<const T* const> x, const T* gains,
                                           std::span<T* const> y, std::int64_t n) {
  const std::size_t in = x.size();
  for (std::int64_t t0 = 0; t0 < n; t0 += kTile) {
    const std::int64_t len = n - t0 < kTile ? n - t0 : kTile;
    for (std::size_t c = 0; c < y.size(); ++c) {
      T* out = y[c] + t0;
      const T* g = gains + c * in;
      bool first = true;
      for (std::size_t j = 0; j < in; ++j) {
        const T gj = g[j];
        if (gj == T(0))
          continue;
        const T* xj = x[j] + t0;
        if (first) // fma(g, x, 0): the product, rounded once
          for (std::int64_t i = 0; i < len; ++i)
            out[i] = std::fma(gj, xj[i], T(0));
        else
          for (std::int64_t i = 0; i < len; ++i)
            out[i] = std::fma(gj, xj[i], out[i]);
        first = false;
      }
      if (first) // every gain 0
        for (std::int64_t i = 0; i < len; ++i)
          out[i] = T(0);
    }
  }
}

// Three builds of the same arithmetic, as kernels/cpu/fir.cpp's: the fmas
// are std::fma's (one rounding) in every build, so they agree bit for bit.
template <typename T> struct Kernels {
  using Fn = void (*)(std::span<const T* const>, const T*, std::span<T* const>, std::int64_t);
  [[gnu::target("arch=x86-64-v4")]] static void v4(std::span<const T* const> x, const T* g,
                                                   std::span<T* const> y, std::int64_t n) {
    mix_all<T>(x, g, y, n);
  }
  [[gnu::target("arch=x86-64-v3")]] static void v3(std::span<const T* const> x, const T* g,
                                                   std::span<T* const> y, std::int64_t n) {
    mix_all<T>(x, g, y, n);
  }
  static void generic(std::span<const T* const> x, const T* g, std::span<T* const> y,
                      std::int64_t n) {
    mix_all<T>(x, g, y, n);
  }
  static Fn pick() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      return v4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return v3;
    return generic;
  }
};

} // namespace

void mix(std::span<const float* const> x, const float* gains, std::span<float* const> y,
         std::int64_t n) {
  static const auto fn = Kernels<float>::pick();
  fn(x, gains, y, n);
}

void mix(std::span<const double* const> x, const double* gains, std::span<double* const> y,
         std::int64_t n) {
  static const auto fn = Kernels<double>::pick();
  fn(x, gains, y, n);
}

} // namespace sigstream::kernels::cpu
