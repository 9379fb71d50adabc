#include "kernels/cpu/fir.hpp"

#include <cmath>

namespace sigstream::kernels::cpu {

namespace {

// A block of B outputs is held in registers while the taps stream past; the
// loop over the block has no dependency between lanes, so it becomes vector
// fmas (one broadcast tap, B/width loads). B is chosen per instruction set so
// that there are 8 independent accumulator registers: enough to cover the fma
// latency on two fma ports, few enough not to spill.
template <typename T, std::int64_t B>
[[gnu::always_inline]] inline void fir_block(const T* x, const T* h, int taps, T* y) {
  T acc[B] = {};
  for (int k = 0; k < taps; ++k) {
    const T hk = h[k];
    const T* xk = x + (taps - 1 - k);
    for (std::int64_t j = 0; j < B; ++j)
      acc[j] = std::fma(hk, xk[j], acc[j]);
  }
  for (std::int64_t j = 0; j < B; ++j)
    y[j] = acc[j];
}

template <typename T>
[[gnu::always_inline]] inline void fir_tail(const T* x, std::int64_t n, const T* h, int taps,
                                            T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    T acc = 0;
    for (int k = 0; k < taps; ++k)
      acc = std::fma(h[k], x[i + taps - 1 - k], acc);
    y[i] = acc;
  }
}

template <typename T, std::int64_t B>
[[gnu::always_inline]] inline void fir_all(const T* x, std::int64_t n, const T* h, int taps, T* y) {
  std::int64_t i = 0;
  for (; i + B <= n; i += B)
    fir_block<T, B>(x + i, h, taps, y + i);
  // The tail in smaller blocks first, then one by one; same order per output.
  for (; i + 8 <= n; i += 8)
    fir_block<T, 8>(x + i, h, taps, y + i);
  fir_tail(x + i, n - i, h, taps, y + i);
}

enum class Isa { v4, v3, generic };

Isa isa() noexcept {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return Isa::v4;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return Isa::v3;
  return Isa::generic;
}

// Three builds of the same arithmetic (all do the same fmas in the same
// order, so they agree bit for bit); the best the CPU supports is used.
template <typename T> struct Kernels {
  using Fn = void (*)(const T*, std::int64_t, const T*, int, T*);
  [[gnu::target("arch=x86-64-v4")]] static void v4(const T* x, std::int64_t n, const T* h, int k,
                                                   T* y) {
    fir_all<T, 8 * 64 / sizeof(T)>(x, n, h, k, y);
  }
  [[gnu::target("arch=x86-64-v3")]] static void v3(const T* x, std::int64_t n, const T* h, int k,
                                                   T* y) {
    fir_all<T, 8 * 32 / sizeof(T)>(x, n, h, k, y);
  }
  static void generic(const T* x, std::int64_t n, const T* h, int k, T* y) {
    fir_all<T, 8 * 16 / sizeof(T)>(x, n, h, k, y);
  }
  static Fn pick() {
    switch (isa()) {
      case Isa::v4:
        return v4;
      case Isa::v3:
        return v3;
      default:
        return generic;
    }
  }
};

} // namespace

void fir_direct(const float* x, std::int64_t n, const float* h, int taps, float* y) {
  static const auto fn = Kernels<float>::pick();
  fn(x, n, h, taps, y);
}

void fir_direct_f64(const double* x, std::int64_t n, const double* h, int taps, double* y) {
  static const auto fn = Kernels<double>::pick();
  fn(x, n, h, taps, y);
}

double fir_direct_ns_per_fma() noexcept {
  // bench_cpu_fir BM_FirDirect, one thread, K = 255 .. 16383: 42 GFMA/s on the
  // AVX-512 Xeon (2026-11-22), 30 GFMA/s on the AVX2 EPYC (2026-11-23). The
  // generic build (half AVX2's width) is assumed half as fast, not measured.
  static const double ns = isa() == Isa::v4 ? 0.024 : isa() == Isa::v3 ? 0.034 : 0.068;
  return ns;
}

} // namespace sigstream::kernels::cpu
