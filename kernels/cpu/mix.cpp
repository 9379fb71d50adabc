#include "kernels/cpu/mix.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace sigstream::kernels::cpu {

namespace {

// One output's sum over M terms, M known when compiled (the term loop
// unrolls, the sums stay in registers): out = g0·x0 (fma with 0: one
// rounding, -0 gives +0), then + g1·x1, ... one fma a term, two vectors of
// frames at a time. Not First: out already holds the earlier terms' sum (an
// output of more than kMaxTerms terms runs in groups; the float in out is
// exactly the running sum, so the bits are those of one chain). Written
// once and expanded in each instruction set's struct below, under that
// set's target attribute: clang refuses a vector value passed between
// functions compiled for different targets, so every function that holds
// one carries the target.
#define SIGSTREAM_MIX_SUM_TERMS(ATTR)                                                              \
  template <int M, bool First>                                                                     \
  ATTR static void sum_terms(const T* const* xp, const T* gp, T* out, std::int64_t n) {            \
    const T* x[M];                                                                                 \
    V g[M];                                                                                        \
    for (int k = 0; k < M; ++k) {                                                                  \
      x[k] = xp[k];                                                                                \
      g[k] = set1(gp[k]);                                                                          \
    }                                                                                              \
    std::int64_t i = 0;                                                                            \
    for (; i + 2 * L <= n; i += 2 * L) {                                                           \
      V a0 = fma(g[0], load(x[0] + i), First ? zero() : load(out + i));                            \
      V a1 = fma(g[0], load(x[0] + i + L), First ? zero() : load(out + i + L));                    \
      for (int k = 1; k < M; ++k) {                                                                \
        a0 = fma(g[k], load(x[k] + i), a0);                                                        \
        a1 = fma(g[k], load(x[k] + i + L), a1);                                                    \
      }                                                                                            \
      store(out + i, a0);                                                                          \
      store(out + i + L, a1);                                                                      \
    }                                                                                              \
    for (; i < n; ++i) {                                                                           \
      T acc = std::fma(gp[0], x[0][i], First ? T(0) : out[i]);                                     \
      for (int k = 1; k < M; ++k)                                                                  \
        acc = std::fma(gp[k], x[k][i], acc);                                                       \
      out[i] = acc;                                                                                \
    }                                                                                              \
  }

// The vector registers of an instruction set, for T: loads, stores and fma
// (one rounding, as std::fma, so every build gives the same bits).
template <typename U> struct Avx512;
template <> struct Avx512<float> {
  using T = float;
  using V = __m512;
  static constexpr int L = 16;
  [[gnu::target("avx512f")]] static V set1(T g) { return _mm512_set1_ps(g); }
  [[gnu::target("avx512f")]] static V zero() { return _mm512_setzero_ps(); }
  [[gnu::target("avx512f")]] static V load(const T* p) { return _mm512_loadu_ps(p); }
  [[gnu::target("avx512f")]] static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  [[gnu::target("avx512f")]] static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  SIGSTREAM_MIX_SUM_TERMS([[gnu::target("avx512f")]])
};
template <> struct Avx512<double> {
  using T = double;
  using V = __m512d;
  static constexpr int L = 8;
  [[gnu::target("avx512f")]] static V set1(T g) { return _mm512_set1_pd(g); }
  [[gnu::target("avx512f")]] static V zero() { return _mm512_setzero_pd(); }
  [[gnu::target("avx512f")]] static V load(const T* p) { return _mm512_loadu_pd(p); }
  [[gnu::target("avx512f")]] static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  [[gnu::target("avx512f")]] static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  SIGSTREAM_MIX_SUM_TERMS([[gnu::target("avx512f")]])
};
template <typename U> struct Avx2;
template <> struct Avx2<float> {
  using T = float;
  using V = __m256;
  static constexpr int L = 8;
  [[gnu::target("avx2,fma")]] static V set1(T g) { return _mm256_set1_ps(g); }
  [[gnu::target("avx2,fma")]] static V zero() { return _mm256_setzero_ps(); }
  [[gnu::target("avx2,fma")]] static V load(const T* p) { return _mm256_loadu_ps(p); }
  [[gnu::target("avx2,fma")]] static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  [[gnu::target("avx2,fma")]] static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  SIGSTREAM_MIX_SUM_TERMS([[gnu::target("avx2,fma")]])
};
template <> struct Avx2<double> {
  using T = double;
  using V = __m256d;
  static constexpr int L = 4;
  [[gnu::target("avx2,fma")]] static V set1(T g) { return _mm256_set1_pd(g); }
  [[gnu::target("avx2,fma")]] static V zero() { return _mm256_setzero_pd(); }
  [[gnu::target("avx2,fma")]] static V load(const T* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2,fma")]] static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  [[gnu::target("avx2,fma")]] static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  SIGSTREAM_MIX_SUM_TERMS([[gnu::target("avx2,fma")]])
};
// No vector fma (before AVX2): one frame at a time.
template <typename U> struct Scalar {
  using T = U;
  using V = U;
  static constexpr int L = 1;
  static V set1(T g) { return g; }
  static V zero() { return T(0); }
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  SIGSTREAM_MIX_SUM_TERMS()
};

#undef SIGSTREAM_MIX_SUM_TERMS

constexpr std::size_t kMaxTerms = 8;

template <typename T, typename I, int M>
[[gnu::always_inline]] inline void sum_group(const T* const* xp, const T* gp, T* out,
                                             std::int64_t n, bool first) {
  if (first)
    I::template sum_terms<M, true>(xp, gp, out, n);
  else
    I::template sum_terms<M, false>(xp, gp, out, n);
}

// Each output on its own: the terms of nonzero gain (in ascending j) are
// listed once, then summed by sum_terms in groups of up to kMaxTerms.
// Measured on the 2-core EPYC (AVX-512; 6 -> 2 ITU, 10 minutes in
// 65,536-frame calls, one thread, best of 7): 12.8 ms with the term count
// known only at run time (the compiler kept the sums on the stack and began
// each with 16 scalar fmas), 9.8 ms with it compiled in and explicit vector
// fmas. The rest is memory: the same calls on 1024 frames that stay in L1
// take 6.2 ms, and passes over 1024-frame tiles of larger calls gain
// nothing (their inputs still come from L2 or L3 once).
template <typename T, typename I>
[[gnu::always_inline]] inline void mix_all(std::span<const T* const> x, const T* gains,
                                           std::span<T* const> y, std::int64_t n,
                                           std::int64_t x_offset) {
  const std::size_t in = x.size();
  // Each output's terms, in lists a thread keeps: no allocation per call once grown.
  thread_local std::vector<const T*> xs;
  thread_local std::vector<T> gs;
  for (std::size_t c = 0; c < y.size(); ++c) {
    xs.clear();
    gs.clear();
    for (std::size_t j = 0; j < in; ++j)
      if (gains[c * in + j] != T(0)) { // a term of gain 0 is left out (mix.hpp)
        xs.push_back(x[j] + x_offset);
        gs.push_back(gains[c * in + j]);
      }
    T* out = y[c];
    if (xs.empty()) { // every gain 0
      std::fill(out, out + n, T(0));
      continue;
    }
    for (std::size_t k = 0; k < xs.size(); k += kMaxTerms) {
      const T* const* xp = xs.data() + k;
      const T* gp = gs.data() + k;
      const bool head = k == 0;
      switch (std::min(kMaxTerms, xs.size() - k)) {
        case 1:
          sum_group<T, I, 1>(xp, gp, out, n, head);
          break;
        case 2:
          sum_group<T, I, 2>(xp, gp, out, n, head);
          break;
        case 3:
          sum_group<T, I, 3>(xp, gp, out, n, head);
          break;
        case 4:
          sum_group<T, I, 4>(xp, gp, out, n, head);
          break;
        case 5:
          sum_group<T, I, 5>(xp, gp, out, n, head);
          break;
        case 6:
          sum_group<T, I, 6>(xp, gp, out, n, head);
          break;
        case 7:
          sum_group<T, I, 7>(xp, gp, out, n, head);
          break;
        default:
          sum_group<T, I, 8>(xp, gp, out, n, head);
          break;
      }
    }
  }
}

// Three builds of the same arithmetic (every fma one rounding), so they
// agree bit for bit; the CPU's best is picked once.
template <typename T> struct Kernels {
  using Fn = void (*)(std::span<const T* const>, const T*, std::span<T* const>, std::int64_t,
                      std::int64_t);
  [[gnu::target("avx512f")]] static void v4(std::span<const T* const> x, const T* g,
                                            std::span<T* const> y, std::int64_t n,
                                            std::int64_t off) {
    mix_all<T, Avx512<T>>(x, g, y, n, off);
  }
  [[gnu::target("avx2,fma")]] static void v3(std::span<const T* const> x, const T* g,
                                             std::span<T* const> y, std::int64_t n,
                                             std::int64_t off) {
    mix_all<T, Avx2<T>>(x, g, y, n, off);
  }
  static void generic(std::span<const T* const> x, const T* g, std::span<T* const> y,
                      std::int64_t n, std::int64_t off) {
    mix_all<T, Scalar<T>>(x, g, y, n, off);
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
         std::int64_t n, std::int64_t x_offset) {
  static const auto fn = Kernels<float>::pick();
  fn(x, gains, y, n, x_offset);
}

void mix(std::span<const double* const> x, const double* gains, std::span<double* const> y,
         std::int64_t n, std::int64_t x_offset) {
  static const auto fn = Kernels<double>::pick();
  fn(x, gains, y, n, x_offset);
}

} // namespace sigstream::kernels::cpu
