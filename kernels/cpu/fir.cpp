#include "kernels/cpu/fir.hpp"

#include <cmath>

namespace sigstream::kernels::cpu {

namespace {

// A block of kBlock outputs is held in registers while the taps stream past;
// the inner loop over the block has no dependency between lanes, so the
// compiler turns it into vector fmas (one broadcast tap, kBlock/width loads).
constexpr std::int64_t kBlock = 64;

template <typename T, std::int64_t B>
inline void fir_block(const T* x, const T* h, int taps, T* y) {
  T acc[B] = {};
  for (int k = 0; k < taps; ++k) {
    const T hk = h[k];
    const T* xk = x + (taps - 1 - k);
    for (std::int64_t j = 0; j < B; ++j) acc[j] = std::fma(hk, xk[j], acc[j]);
  }
  for (std::int64_t j = 0; j < B; ++j) y[j] = acc[j];
}

template <typename T>
inline void fir_tail(const T* x, std::int64_t n, const T* h, int taps, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    T acc = 0;
    for (int k = 0; k < taps; ++k) acc = std::fma(h[k], x[i + taps - 1 - k], acc);
    y[i] = acc;
  }
}

}  // namespace

// Built for AVX-512, AVX2+FMA and baseline x86-64; the loader picks the best
// the CPU has. All three compute the same fmas in the same order.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void fir_direct(const float* x, std::int64_t n, const float* h, int taps, float* y) {
  std::int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) fir_block<float, kBlock>(x + i, h, taps, y + i);
  fir_tail(x + i, n - i, h, taps, y + i);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void fir_direct_f64(const double* x, std::int64_t n, const double* h, int taps, double* y) {
  constexpr std::int64_t kBlock64 = 32;
  std::int64_t i = 0;
  for (; i + kBlock64 <= n; i += kBlock64) fir_block<double, kBlock64>(x + i, h, taps, y + i);
  fir_tail(x + i, n - i, h, taps, y + i);
}

}  // namespace sigstream::kernels::cpu
