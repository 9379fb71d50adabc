#include "kernels/cpu/resample.hpp"

#include <immintrin.h>

#include <algorithm>
#include <type_traits>
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

// Outputs that share a phase are `up` apart and read inputs `down` apart.
// The input window is first split into its `down` decimated sub-sequences
// (sub[r][i] = x[r + i*down]); then, for a phase's outputs k, k+1, ..., the
// samples tap t reads lie next to each other in one sub-sequence, so B
// outputs take one broadcast tap and one contiguous vector load per tap.
// Each lane still sums its own taps in ascending order from 0 with fma, as
// the scalar definition and the CUDA kernel do: every build and both
// backends agree bit for bit.
// B outputs of one phase: lane j sums h[t] * rows[t][k + j] over t.
// (GCC does not vectorise this loop nest by itself: its fully unrolled lanes
// defeat the SLP pass; the AVX2 build below spells the vectors out.)
template <typename T, int B>
[[gnu::always_inline]] inline void phase_block(const T* const* rows, std::int64_t k, const T* h, int len, T* out) {
  T acc[B] = {};
  for (int t = 0; t < len; ++t) {
    const T ht = h[t];
    const T* xt = rows[t] + k;
    for (int j = 0; j < B; ++j) acc[j] = std::fma(ht, xt[j], acc[j]);
  }
  for (int j = 0; j < B; ++j) out[j] = acc[j];
}

// The same for float on AVX2 + FMA: 64 lanes in 8 registers, each lane's
// fma exactly std::fma's (one rounding).
[[gnu::target("arch=x86-64-v3")]] inline void phase_block_avx2(const float* const* rows, std::int64_t k,
                                                               const float* h, int len, float* out) {
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int t = 0; t < len; ++t) {
    const __m256 ht = _mm256_set1_ps(h[t]);
    const float* xt = rows[t] + k;
    for (int v = 0; v < 8; ++v) acc[v] = _mm256_fmadd_ps(ht, _mm256_loadu_ps(xt + 8 * v), acc[v]);
  }
  for (int v = 0; v < 8; ++v) _mm256_storeu_ps(out + 8 * v, acc[v]);
}

template <typename T, int B, bool kAvx2>
[[gnu::always_inline]] inline void resample_all(const T* x, std::int64_t x_first, T* y, std::int64_t y_first,
                                                std::int64_t n, const PolyphaseTaps& p, const T* taps) {
  if (n <= 0) return;
  const std::int64_t up = p.up;
  const std::int64_t down = p.down;
  const int longest = p.longest_phase();
  // The window the outputs read, relative to x_first: [0, w).
  const std::int64_t w = floor_div((y_first + n - 1) * down + p.delay, up) + 1 - x_first;
  // Each sub-sequence is followed by B zeros: the last, partial block of a
  // phase's outputs runs in full lanes too (their extra results are dropped).
  const std::int64_t sub_len = (w + down - 1) / down + B;
  thread_local std::vector<T> sub;
  sub.assign(static_cast<std::size_t>(sub_len * down), T(0));
  for (std::int64_t r = 0; r < down; ++r) {
    T* dst = sub.data() + r * sub_len;
    for (std::int64_t i = 0; r + i * down < w; ++i) dst[i] = x[r + i * down];
  }
  thread_local std::vector<const T*> row;  // tap t's sub-sequence, at the class's first output
  row.resize(static_cast<std::size_t>(longest));
  for (std::int64_t i0 = 0; i0 < std::min<std::int64_t>(up, n); ++i0) {
    const std::int64_t count = (n - i0 + up - 1) / up;  // outputs i0, i0 + up, ...
    const std::int64_t a = (y_first + i0) * down + p.delay;
    const std::int64_t newest = floor_div(a, up);
    const auto phase = static_cast<std::size_t>(a - newest * up);
    const T* h = taps + p.offset[phase];
    const int len = p.offset[phase + 1] - p.offset[phase];
    for (int t = 0; t < len; ++t) {
      const std::int64_t e = newest - t - x_first;  // >= 0: the window holds it
      row[static_cast<std::size_t>(t)] = sub.data() + (e % down) * sub_len + e / down;
    }
    T* yb = y + i0;
    T out[B];
    for (std::int64_t k = 0; k < count; k += B) {
      if constexpr (kAvx2)
        phase_block_avx2(row.data(), k, h, len, out);
      else
        phase_block<T, B>(row.data(), k, h, len, out);
      const std::int64_t m = std::min<std::int64_t>(B, count - k);
      for (std::int64_t j = 0; j < m; ++j) yb[(k + j) * up] = out[j];
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
    if constexpr (std::is_same_v<T, float>)
      resample_all<T, 64, true>(x, xf, y, yf, n, p, h);
    else
      resample_all<T, 8 * 32 / sizeof(T), false>(x, xf, y, yf, n, p, h);
  }
  static void generic(const T* x, std::int64_t xf, T* y, std::int64_t yf, std::int64_t n, const PolyphaseTaps& p,
                      const T* h) {
    resample_all<T, 8 * 16 / sizeof(T), false>(x, xf, y, yf, n, p, h);
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
