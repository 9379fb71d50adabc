#include "kernels/cpu/resample.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "core/error.hpp"

namespace sigstream::kernels::cpu {

int PolyphaseTaps::longest_phase() const noexcept {
  int longest = 0;
  for (std::size_t p = 0; p + 1 < offset.size(); ++p)
    longest = std::max(longest, offset[p + 1] - offset[p]);
  return longest;
}

PolyphaseTaps make_polyphase(const std::vector<double>& h, int up, int down, std::int64_t delay) {
  const auto k = static_cast<std::int64_t>(h.size());
  if (up < 1 || down < 1 || k < 1 || delay < 0 || delay >= k)
    throw Error(ErrorKind::invalid_argument,
                "polyphase taps: up " + std::to_string(up) + ", down " + std::to_string(down) +
                    ", " + std::to_string(k) + " taps, delay " + std::to_string(delay));
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
// The input is split into its `down` decimated sub-sequences (sub[r][i] =
// x[r + i*down], a tile at a time: resample_all); then, for a phase's
// outputs k, k+1, ..., the samples tap t reads lie next to each other in one
// sub-sequence, so B outputs take one broadcast tap and one contiguous
// vector load per tap. Each lane still sums its own taps in ascending order from 0 with fma, as
// the scalar definition and the CUDA kernel do: every build and both
// backends agree bit for bit.
// B outputs of one phase: lane j sums h[t] * rows[t][k + j] over t.
// (GCC does not vectorise this loop nest by itself: its fully unrolled lanes
// defeat the SLP pass; the AVX2 build below spells the vectors out.)
template <typename T, int B>
[[gnu::always_inline]] inline void phase_block(const T* const* rows, std::int64_t k, const T* h,
                                               int len, T* out) {
  T acc[B] = {};
  for (int t = 0; t < len; ++t) {
    const T ht = h[t];
    const T* xt = rows[t] + k;
    for (int j = 0; j < B; ++j)
      acc[j] = std::fma(ht, xt[j], acc[j]);
  }
  for (int j = 0; j < B; ++j)
    out[j] = acc[j];
}

// The same for float on AVX2 + FMA: B lanes in B/8 registers, each lane's
// fma exactly std::fma's (one rounding).
template <int B>
[[gnu::target("arch=x86-64-v3")]] inline void
phase_block_avx2(const float* const* rows, std::int64_t k, const float* h, int len, float* out) {
  constexpr int kV = B / 8;
  __m256 acc[kV];
  for (auto& a : acc)
    a = _mm256_setzero_ps();
  for (int t = 0; t < len; ++t) {
    const __m256 ht = _mm256_set1_ps(h[t]);
    const float* xt = rows[t] + k;
    for (int v = 0; v < kV; ++v)
      acc[v] = _mm256_fmadd_ps(ht, _mm256_loadu_ps(xt + 8 * v), acc[v]);
  }
  for (int v = 0; v < kV; ++v)
    _mm256_storeu_ps(out + 8 * v, acc[v]);
}

// An 8 x 8 transpose in registers: r[i][j] becomes r[j][i].
[[gnu::target("arch=x86-64-v3")]] inline void transpose8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// out[c][j] (8 classes c, B outputs j of each) to y[j * up + c]: each row of
// eight stored as one vector.
template <int B>
[[gnu::target("arch=x86-64-v3")]] inline void store_transposed(const float (*out)[B], float* y,
                                                               std::int64_t up) {
  for (int j0 = 0; j0 < B; j0 += 8) {
    __m256 r[8];
    for (int c = 0; c < 8; ++c)
      r[c] = _mm256_load_ps(out[c] + j0);
    transpose8(r);
    for (int j = 0; j < 8; ++j)
      _mm256_storeu_ps(y + (j0 + j) * up, r[j]);
  }
}

// Groups [0, groups) of `down` inputs (x[i*down + r]) into rows of stride
// `stride` (dst[r*stride + i]) for down >= 8: eight groups by eight rows at a
// time, through a transpose; the rows past a multiple of 8 one by one.
[[gnu::target("arch=x86-64-v3")]] inline void decimate_avx2(const float* x, std::int64_t groups,
                                                            std::int64_t down, float* dst,
                                                            std::int64_t stride) {
  std::int64_t i = 0;
  for (; i + 8 <= groups; i += 8) {
    const float* src = x + i * down;
    std::int64_t r = 0;
    for (; r + 8 <= down; r += 8) {
      __m256 v[8];
      for (int g = 0; g < 8; ++g)
        v[g] = _mm256_loadu_ps(src + g * down + r);
      transpose8(v);
      for (int q = 0; q < 8; ++q)
        _mm256_storeu_ps(dst + (r + q) * stride + i, v[q]);
    }
    for (; r < down; ++r)
      for (int g = 0; g < 8; ++g)
        dst[r * stride + i + g] = src[g * down + r];
  }
  for (; i < groups; ++i)
    for (std::int64_t r = 0; r < down; ++r)
      dst[r * stride + i] = x[i * down + r];
}

// decimate_avx2's scalar form: in x's order for large down (the rows'
// current lines stay in cache), row by row for small down.
template <typename T>
void decimate(const T* x, std::int64_t groups, std::int64_t down, T* dst, std::int64_t stride) {
  if (down >= 16) {
    for (std::int64_t i = 0; i < groups; ++i)
      for (std::int64_t r = 0; r < down; ++r)
        dst[r * stride + i] = x[i * down + r];
  } else {
    for (std::int64_t r = 0; r < down; ++r)
      for (std::int64_t i = 0; i < groups; ++i)
        dst[r * stride + i] = x[i * down + r];
  }
}

template <typename T, int B, bool kAvx2>
[[gnu::always_inline]] inline void resample_all(const T* x, std::int64_t x_first, T* y,
                                                std::int64_t y_first, std::int64_t n,
                                                const PolyphaseTaps& p, const T* taps) {
  if (n <= 0)
    return;
  const std::int64_t up = p.up;
  const std::int64_t down = p.down;
  // The window the outputs read, relative to x_first: [0, w).
  const std::int64_t w = floor_div((y_first + n - 1) * down + p.delay, up) + 1 - x_first;
  // Tap t of the class of output i0 (outputs i0, i0 + up, ...) reads input
  // e - t, e its newest relative to x_first (>= 0: the window holds it), and
  // its k-th output reads k * down frames later. So in the `down` decimated
  // sub-sequences of x (sub[r][i] = x[r + i*down]), the samples tap t reads
  // for outputs k, k+1, ... lie next to each other in one row, (e - t) mod
  // down, from (e - t) div down + k: B outputs take one broadcast tap and one
  // contiguous vector load per tap.
  const std::int64_t classes = std::min<std::int64_t>(up, n);
  std::int64_t e_max = 0;
  for (std::int64_t i0 = 0; i0 < classes; ++i0)
    e_max = std::max(e_max, floor_div((y_first + i0) * down + p.delay, up) - x_first);
  // The work goes in passes of `step` outputs of every class (B each where
  // there are many classes). A pass's sub-sequences are built into a tile,
  // [down][tile_len], from x[c0*down ...): the pass reads ~step * down
  // consecutive inputs, and its tile stays in the core's cache while the
  // classes use it (built for the whole window at once, the sub-sequences
  // went to and from L3). The tile's rows end in zeros: the last, partial
  // block of a class runs in full lanes too (the extra results are dropped).
  const std::int64_t step = B * std::max<std::int64_t>(1, 64 / up);
  const std::int64_t tile_len = step + e_max / down + 1;
  thread_local std::vector<T> tile;
  tile.resize(static_cast<std::size_t>(down * tile_len));
  // The classes' row pointers into the tile (`longest` per class) and taps.
  const int longest = p.longest_phase();
  thread_local std::vector<const T*> rows;
  rows.resize(static_cast<std::size_t>(classes * longest));
  thread_local std::vector<int> class_taps; // offset of the class's phase in taps, then its length
  class_taps.resize(static_cast<std::size_t>(2 * classes));
  for (std::int64_t i0 = 0; i0 < classes; ++i0) {
    const std::int64_t a = (y_first + i0) * down + p.delay;
    const std::int64_t newest = floor_div(a, up);
    const auto phase = static_cast<std::size_t>(a - newest * up);
    const int len = p.offset[phase + 1] - p.offset[phase];
    class_taps[static_cast<std::size_t>(2 * i0)] = p.offset[phase];
    class_taps[static_cast<std::size_t>(2 * i0 + 1)] = len;
    for (int t = 0; t < len; ++t) {
      const std::int64_t e = newest - t - x_first;
      rows[static_cast<std::size_t>(i0 * longest + t)] =
          tile.data() + (e % down) * tile_len + e / down;
    }
  }
  // Pass c0's tile: row r, entry i holds x[(c0 + i) * down + r] (0 past w).
  auto build_tile = [&](std::int64_t c0) __attribute__((always_inline)) {
    const std::int64_t o = c0 * down;
    const std::int64_t full =
        std::clamp<std::int64_t>((w - o) / down, 0, tile_len); // whole groups of down
    const auto split = [&]() __attribute__((always_inline)) {
      if constexpr (kAvx2) {
        if (down >= 8)
          return decimate_avx2(x + o, full, down, tile.data(), tile_len);
      }
      decimate(x + o, full, down, tile.data(), tile_len);
    };
    split();
    for (std::int64_t r = 0; r < down; ++r) {
      T* row = tile.data() + r * tile_len;
      std::int64_t i = full;
      if (i < tile_len && o + i * down + r < w) {
        row[i] = x[o + i * down + r];
        ++i;
      }
      std::fill(row + i, row + tile_len, T(0));
    }
  };
  const std::int64_t most = (n + up - 1) / up; // class 0's outputs, the most any class has
  alignas(32) T out[8][B];
  auto block = [&](std::int64_t i0, std::int64_t k, T * dst) __attribute__((always_inline)) {
    const T* h = taps + class_taps[static_cast<std::size_t>(2 * i0)];
    const int len = class_taps[static_cast<std::size_t>(2 * i0 + 1)];
    const T* const* row = rows.data() + i0 * longest;
    if constexpr (kAvx2)
      phase_block_avx2<B>(row, k, h, len, dst);
    else
      phase_block<T, B>(row, k, h, len, dst);
  };
  for (std::int64_t c0 = 0; c0 < most; c0 += step) {
    build_tile(c0);
    // Up to eight neighbouring classes at a time: their outputs of one block
    // row are consecutive frames, stored in that order.
    for (std::int64_t i0 = 0; i0 < classes; i0 += 8) {
      if (c0 >= (n - i0 + up - 1) / up)
        break; // later classes have no more outputs
      const int group = static_cast<int>(std::min<std::int64_t>(8, classes - i0));
      std::int64_t count[8]; // outputs of class i0 + c: i0 + c, i0 + c + up, ...
      for (int c = 0; c < group; ++c)
        count[c] = (n - (i0 + c) + up - 1) / up;
      const std::int64_t c1 = std::min(count[0], c0 + step);
      for (std::int64_t kb = c0; kb < c1; kb += B) {
        T* yb = y + i0 + kb * up;
        if constexpr (kAvx2) {
          if (group == 8 && count[7] >= kb + B) { // full: an 8 x 8 transpose per eight rows
            for (int c = 0; c < 8; ++c)
              block(i0 + c, kb - c0, out[c]);
            store_transposed<B>(out, yb, up);
            continue;
          }
        }
        std::int64_t rows_of[8];
        for (int c = 0; c < group; ++c) {
          rows_of[c] = std::max<std::int64_t>(0, std::min<std::int64_t>(B, count[c] - kb));
          if (rows_of[c] > 0)
            block(i0 + c, kb - c0, out[c]);
        }
        for (std::int64_t j = 0; j < rows_of[0]; ++j)
          for (int c = 0; c < group; ++c)
            if (j < rows_of[c])
              yb[j * up + c] = out[c][j];
      }
    }
  }
}

bool has_avx2_fma() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

constexpr int kAvx2Lanes = 64;

template <typename T> struct Kernels {
  using Fn = void (*)(const T*, std::int64_t, T*, std::int64_t, std::int64_t, const PolyphaseTaps&,
                      const T*);
  [[gnu::target("arch=x86-64-v3")]] static void v3(const T* x, std::int64_t xf, T* y,
                                                   std::int64_t yf, std::int64_t n,
                                                   const PolyphaseTaps& p, const T* h) {
    if constexpr (std::is_same_v<T, float>)
      resample_all<T, kAvx2Lanes, true>(x, xf, y, yf, n, p, h);
    else
      resample_all<T, 8 * 32 / sizeof(T), false>(x, xf, y, yf, n, p, h);
  }
  static void generic(const T* x, std::int64_t xf, T* y, std::int64_t yf, std::int64_t n,
                      const PolyphaseTaps& p, const T* h) {
    resample_all<T, 8 * 16 / sizeof(T), false>(x, xf, y, yf, n, p, h);
  }
  static Fn pick() { return has_avx2_fma() ? v3 : generic; }
};

} // namespace

void resample_direct(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                     std::int64_t n, const PolyphaseTaps& p) {
  static const auto fn = Kernels<float>::pick();
  fn(x, x_first, y, y_first, n, p, p.taps.data());
}

void resample_direct_f64(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                         std::int64_t n, const PolyphaseTaps& p) {
  static const auto fn = Kernels<double>::pick();
  fn(x, x_first, y, y_first, n, p, p.taps_f64.data());
}

} // namespace sigstream::kernels::cpu
