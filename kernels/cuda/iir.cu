// The cascade's kernels (iir.cuh). Over 600 lines (~620) and one file on
// purpose: the passes share the block scan, the staging and the powers'
// layout. iir_segments (each segment's and each tile's state from a zero
// start), iir_scan_level / iir_fixup (levels of 128 tiles turn tile sums
// into tile starts from the channel's state), iir_tiles (each segment's true
// start, its output, the channel's final state); zero phase's padding,
// reversal and unpadding; the host side (the powers by squaring, the
// workspace, the launches).
#include "kernels/cuda/iir.cuh"

#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 128; // a block: four warps
constexpr int kWarps = kThreads / 32;
constexpr int kPowers = 56;  // M^(2^k) for k < kPowers
constexpr int kMaxGroup = 8; // sections a kernel runs (state of 16 doubles)
constexpr int kMaxGridY = 65535;

template <int S> struct Coeffs { double b0[S], b1[S], b2[S], a1[S], a2[S]; };

// One sample through the sections, as kernels/cpu/iir.cpp.
template <int S>
__device__ __forceinline__ double step(const Coeffs<S>& c, double (&z)[2 * S], double u) {
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const double out = c.b0[s] * u + z[2 * s];
    z[2 * s] = c.b1[s] * u - c.a1[s] * out + z[2 * s + 1];
    z[2 * s + 1] = c.b2[s] * u - c.a2[s] * out;
    u = out;
  }
  return u;
}

// The transition powers are block lower triangular (a section's state
// depends on its own and the earlier sections'): row i needs columns
// 0 .. (i | 1) only.
template <int D> __device__ __forceinline__ void mul(const double* __restrict__ p, double (&v)[D]) {
  double w[D];
#pragma unroll
  for (int i = 0; i < D; ++i) {
    w[i] = 0.0;
#pragma unroll
    for (int j = 0; j < D; ++j)
      if (j <= (i | 1))
        w[i] = fma(__ldg(p + i * D + j), v[j], w[i]);
  }
#pragma unroll
  for (int i = 0; i < D; ++i)
    v[i] = w[i];
}

template <int D>
__device__ __forceinline__ void mul_add(const double* __restrict__ p, const double (&x)[D],
                                        double (&acc)[D]) {
#pragma unroll
  for (int i = 0; i < D; ++i)
#pragma unroll
    for (int j = 0; j < D; ++j)
      if (j <= (i | 1))
        acc[i] = fma(__ldg(p + i * D + j), x[j], acc[i]);
}

// The block's exclusive scan of its threads' elements: v holds the state a
// thread's element (2^kb samples) leaves from a zero start, and becomes the
// state the element starts from when the block starts from z0 (uniform).
// With kTotal, `total` becomes the state the block leaves. pw: the powers.
template <int D, bool kTotal>
__device__ void block_scan(double (&v)[D], const double* __restrict__ pw, int kb,
                           const double (&z0)[D], double* s_agg, double (&total)[D]) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const int d = 1 << k;
    double w[D];
#pragma unroll
    for (int j = 0; j < D; ++j)
      w[j] = __shfl_up_sync(kAll, v[j], d);
    if (lane >= d)
      mul_add<D>(pw + static_cast<std::size_t>(kb + k) * D * D, w, v);
  }
  if (lane == 31)
#pragma unroll
    for (int j = 0; j < D; ++j)
      s_agg[warp * D + j] = v[j];
  __syncthreads();
  // Every thread walks the warps' sums in the same order, so all agree.
  const double* pwarp = pw + static_cast<std::size_t>(kb + 5) * D * D;
  double ws[D];
#pragma unroll
  for (int j = 0; j < D; ++j)
    total[j] = z0[j];
  for (int u = 0; u < (kTotal ? kWarps : warp + 1); ++u) {
    if (u == warp)
#pragma unroll
      for (int j = 0; j < D; ++j)
        ws[j] = total[j];
    if (kTotal || u < warp) {
      mul<D>(pwarp, total);
#pragma unroll
      for (int j = 0; j < D; ++j)
        total[j] += s_agg[u * D + j];
    }
  }
  double prev[D];
#pragma unroll
  for (int j = 0; j < D; ++j) {
    prev[j] = __shfl_up_sync(kAll, v[j], 1);
    if (lane == 0)
      prev[j] = 0.0;
  }
  // The warp's start state carried over the lane's earlier elements.
#pragma unroll
  for (int k = 0; k < 5; ++k)
    if ((lane >> k) & 1)
      mul<D>(pw + static_cast<std::size_t>(kb + k) * D * D, ws);
#pragma unroll
  for (int j = 0; j < D; ++j)
    v[j] = prev[j] + ws[j];
  __syncthreads(); // s_agg is free again
}

// A thread's segment: 2^kLogSeg samples (64 staged as float, 32 as float64,
// so a tile's staging stays within 48 KB); a tile: kThreads segments.
template <typename TS> constexpr int kLogSegOf = sizeof(TS) == 8 ? 5 : 6;

// Staging: the tile's samples in shared memory, each thread's segment in a
// row of its length + 1 (so a warp's rows fall in different banks).
template <int LS, typename TS, typename TX>
__device__ __forceinline__ void load_tile(const TX* __restrict__ x, std::int64_t base,
                                          std::int64_t n, TS* s) {
  constexpr int kSegLen = 1 << LS;
#pragma unroll 8
  for (int k = 0; k < kSegLen; ++k) {
    const int idx = k * kThreads + static_cast<int>(threadIdx.x);
    const std::int64_t g = base + idx;
    s[(idx >> LS) * (kSegLen + 1) + (idx & (kSegLen - 1))] = g < n ? static_cast<TS>(x[g]) : TS(0);
  }
}

template <int S, int LS, typename TS>
__device__ __forceinline__ void zero_state_run(const Coeffs<S>& c, const TS* row, int cnt,
                                               double (&z)[2 * S]) {
#pragma unroll
  for (int j = 0; j < 2 * S; ++j)
    z[j] = 0.0;
  if (cnt == (1 << LS)) {
#pragma unroll 8
    for (int i = 0; i < (1 << LS); ++i)
      step<S>(c, z, static_cast<double>(row[i]));
  } else {
    for (int i = 0; i < cnt; ++i)
      step<S>(c, z, static_cast<double>(row[i]));
  }
}

std::int64_t blocks_of(std::int64_t n) {
  return (n + kThreads - 1) / kThreads;
}

// Pass 1, a block a tile: each segment's state from a zero start,
// seg[((ch ntiles + tile) kThreads + thread) D], and the tile's,
// agg[(ch ntiles + tile) D].
template <int S, typename TX, typename TS>
__global__ void __launch_bounds__(kThreads)
    iir_segments(Coeffs<S> c, const TX* __restrict__ x, std::int64_t x_stride, std::int64_t n,
                 std::int64_t ntiles, const double* __restrict__ pw, double* __restrict__ seg,
                 double* __restrict__ agg) {
  constexpr int D = 2 * S;
  constexpr int LS = kLogSegOf<TS>;
  __shared__ TS s_x[kThreads * ((1 << LS) + 1)];
  __shared__ double s_agg[kWarps * D];
  const int ch = static_cast<int>(blockIdx.y);
  const std::int64_t tile = blockIdx.x;
  const std::int64_t base = tile * (std::int64_t{kThreads} << LS);
  load_tile<LS>(x + static_cast<std::int64_t>(ch) * x_stride, base, n, s_x);
  __syncthreads();
  const std::int64_t first = base + (static_cast<std::int64_t>(threadIdx.x) << LS);
  const int cnt =
      static_cast<int>(std::max<std::int64_t>(0, std::min<std::int64_t>(1 << LS, n - first)));
  double z[D];
  zero_state_run<S, LS>(c, s_x + threadIdx.x * ((1 << LS) + 1), cnt, z);
  double* mine =
      seg + ((static_cast<std::int64_t>(ch) * ntiles + tile) * kThreads + threadIdx.x) * D;
#pragma unroll
  for (int j = 0; j < D; ++j)
    mine[j] = z[j];
  double z0[D], total[D];
#pragma unroll
  for (int j = 0; j < D; ++j)
    z0[j] = 0.0;
  block_scan<D, true>(z, pw, LS, z0, s_agg, total);
  if (threadIdx.x == 0)
#pragma unroll
    for (int j = 0; j < D; ++j)
      agg[(static_cast<std::int64_t>(ch) * ntiles + tile) * D + j] = total[j];
}

// The start states of a channel's n elements of 2^kb samples (v[ch n + t],
// each the state its element leaves from zero, becomes the state it starts
// from), a block per 128 elements. One block: from the channel's state.
// Several: from zero, each block's total to totals[ch nb + b] for the next
// level, whose starts iir_fixup then carries in.
template <int D>
__global__ void __launch_bounds__(kThreads)
    iir_scan_level(const double* __restrict__ pw, double* __restrict__ v, std::int64_t n, int kb,
                   double* __restrict__ totals, const double* __restrict__ state,
                   std::int64_t state_stride) {
  __shared__ double s_agg[kWarps * D];
  const std::int64_t ch = blockIdx.y;
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  double* e = v + (ch * n + t) * D;
  double a[D], z0[D], total[D];
#pragma unroll
  for (int j = 0; j < D; ++j) {
    a[j] = t < n ? e[j] : 0.0;
    z0[j] = gridDim.x == 1 ? state[ch * state_stride + j] : 0.0;
  }
  block_scan<D, true>(a, pw, kb, z0, s_agg, total);
  if (t < n)
#pragma unroll
    for (int j = 0; j < D; ++j)
      e[j] = a[j];
  if (gridDim.x > 1 && threadIdx.x == 0)
#pragma unroll
    for (int j = 0; j < D; ++j)
      totals[(ch * gridDim.x + blockIdx.x) * D + j] = total[j];
}

// v[ch n + t] += M^((t mod 128) 2^kb) starts[ch nb + t / 128]: each block's
// start state carried over the block's earlier elements.
template <int D>
__global__ void __launch_bounds__(kThreads)
    iir_fixup(const double* __restrict__ pw, double* __restrict__ v, std::int64_t n, int kb,
              const double* __restrict__ starts) {
  const std::int64_t ch = blockIdx.y;
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= n)
    return;
  double s[D];
#pragma unroll
  for (int j = 0; j < D; ++j)
    s[j] = starts[(ch * gridDim.x + blockIdx.x) * D + j];
#pragma unroll
  for (int k = 0; k < 7; ++k)
    if ((threadIdx.x >> k) & 1)
      mul<D>(pw + static_cast<std::size_t>(kb + k) * D * D, s);
  double* e = v + (ch * n + t) * D;
#pragma unroll
  for (int j = 0; j < D; ++j)
    e[j] += s[j];
}

// Pass 2, a block a tile: each segment's true start (its state from pass
// 1, joined from the tile's start), its output, and the channel's final
// state (the segment holding the last frame).
template <int S, typename TX, typename TY, typename TS>
__global__ void __launch_bounds__(kThreads)
    iir_tiles(Coeffs<S> c, const TX* x, std::int64_t x_stride, TY* y, std::int64_t y_stride,
              std::int64_t n, std::int64_t ntiles, const double* __restrict__ pw,
              const double* __restrict__ seg, const double* __restrict__ starts,
              double* __restrict__ state, std::int64_t state_stride) {
  constexpr int D = 2 * S;
  constexpr int LS = kLogSegOf<TS>;
  constexpr int kSegLen = 1 << LS;
  __shared__ TS s_x[kThreads * (kSegLen + 1)];
  __shared__ double s_agg[kWarps * D];
  const int ch = static_cast<int>(blockIdx.y);
  const std::int64_t tile = blockIdx.x;
  const std::int64_t base = tile * (std::int64_t{kThreads} << LS);
  load_tile<LS>(x + static_cast<std::int64_t>(ch) * x_stride, base, n, s_x);
  const std::int64_t at = static_cast<std::int64_t>(ch) * ntiles + tile;
  double z[D], z0[D], total[D];
  const double* mine = seg + (at * kThreads + threadIdx.x) * D;
#pragma unroll
  for (int j = 0; j < D; ++j) {
    z[j] = mine[j];
    z0[j] = starts[at * D + j];
  }
  block_scan<D, false>(z, pw, LS, z0, s_agg, total); // its __syncthreads covers the staging
  const std::int64_t first = base + (static_cast<std::int64_t>(threadIdx.x) << LS);
  const int cnt =
      static_cast<int>(std::max<std::int64_t>(0, std::min<std::int64_t>(kSegLen, n - first)));
  TS* row = s_x + threadIdx.x * (kSegLen + 1);
  if (cnt == kSegLen) {
#pragma unroll 8
    for (int i = 0; i < kSegLen; ++i)
      row[i] = static_cast<TS>(step<S>(c, z, static_cast<double>(row[i])));
  } else {
    for (int i = 0; i < cnt; ++i)
      row[i] = static_cast<TS>(step<S>(c, z, static_cast<double>(row[i])));
  }
  if (cnt > 0 && first + cnt == n)
#pragma unroll
    for (int j = 0; j < D; ++j)
      state[static_cast<std::int64_t>(ch) * state_stride + j] = z[j];
  __syncthreads();
  TY* out = y + static_cast<std::int64_t>(ch) * y_stride;
#pragma unroll 8
  for (int k = 0; k < kSegLen; ++k) {
    const int idx = k * kThreads + static_cast<int>(threadIdx.x);
    const std::int64_t g = base + idx;
    if (g < n)
      out[g] = static_cast<TY>(s_x[(idx >> LS) * (kSegLen + 1) + (idx & (kSegLen - 1))]);
  }
}

// Zero phase: the odd extension of each channel (in float32, as NumPy pads
// a float32 signal) into float64 planes of m = n + 2e frames.
__global__ void odd_extend(const float* __restrict__ x, std::int64_t x_stride, std::int64_t n,
                           std::int64_t e, double* __restrict__ ext) {
  const std::int64_t m = n + 2 * e;
  const float* xc = x + static_cast<std::int64_t>(blockIdx.y) * x_stride;
  double* out = ext + static_cast<std::int64_t>(blockIdx.y) * m;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float v;
    if (i < e)
      v = __fsub_rn(__fmul_rn(2.0f, xc[0]), xc[e - i]);
    else if (i < e + n)
      v = xc[i - e];
    else
      v = __fsub_rn(__fmul_rn(2.0f, xc[n - 1]), xc[n - 2 - (i - e - n)]);
    out[i] = static_cast<double>(v);
  }
}

// state[c][k] = zi[k] * ext[c][at] (the steady state of a step of that height).
__global__ void scaled_state(const double* __restrict__ zi, int d, const double* __restrict__ ext,
                             std::int64_t m, std::int64_t at, double* __restrict__ state,
                             int channels) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= channels * d)
    return;
  const int c = i / d;
  state[i] = zi[i - c * d] * ext[static_cast<std::int64_t>(c) * m + at];
}

// Each plane of m frames reversed in place.
__global__ void reverse_planes(double* __restrict__ ext, std::int64_t m) {
  double* p = ext + static_cast<std::int64_t>(blockIdx.y) * m;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m / 2;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double t = p[i];
    p[i] = p[m - 1 - i];
    p[m - 1 - i] = t;
  }
}

// y[c][j] = ext[c][m - 1 - (e + j)]: the backward pass read back in time order, unpadded.
__global__ void unpad_reversed(const double* __restrict__ ext, std::int64_t n, std::int64_t e,
                               float* __restrict__ y, std::int64_t y_stride) {
  const std::int64_t m = n + 2 * e;
  const double* p = ext + static_cast<std::int64_t>(blockIdx.y) * m;
  float* yc = y + static_cast<std::int64_t>(blockIdx.y) * y_stride;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    yc[j] = static_cast<float>(p[m - 1 - (e + j)]);
}

dim3 planes_grid(std::int64_t frames, int channels) {
  const std::int64_t b = std::min<std::int64_t>((frames + 255) / 256, 4096);
  return {static_cast<unsigned>(std::max<std::int64_t>(b, 1)), static_cast<unsigned>(channels)};
}

// The one-sample transition of a group of sections (input 0), then its
// powers M^(2^k) by squaring, row-major.
std::vector<double> transition_powers(std::span<const cpu::Biquad> s) {
  const int d = 2 * static_cast<int>(s.size());
  const auto dd = static_cast<std::size_t>(d) * static_cast<std::size_t>(d);
  std::vector<double> out(dd * kPowers, 0.0);
  for (int col = 0; col < d; ++col) {
    std::vector<double> z(static_cast<std::size_t>(d), 0.0);
    z[static_cast<std::size_t>(col)] = 1.0;
    double u = 0.0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const cpu::Biquad& q = s[k];
      const double o = q.b0 * u + z[2 * k];
      z[2 * k] = q.b1 * u - q.a1 * o + z[2 * k + 1];
      z[2 * k + 1] = q.b2 * u - q.a2 * o;
      u = o;
    }
    for (int row = 0; row < d; ++row)
      out[static_cast<std::size_t>(row * d + col)] = z[static_cast<std::size_t>(row)];
  }
  for (int k = 1; k < kPowers; ++k) {
    const double* a = out.data() + dd * static_cast<std::size_t>(k - 1);
    double* p = out.data() + dd * static_cast<std::size_t>(k);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        long double acc = 0.0L;
        for (int m = 0; m < d; ++m)
          acc += static_cast<long double>(a[i * d + m]) * a[m * d + j];
        p[i * d + j] = static_cast<double>(acc);
      }
  }
  return out;
}

template <int S> Coeffs<S> coeffs(std::span<const cpu::Biquad> s) {
  Coeffs<S> c{};
  for (int k = 0; k < S; ++k) {
    c.b0[k] = s[static_cast<std::size_t>(k)].b0;
    c.b1[k] = s[static_cast<std::size_t>(k)].b1;
    c.b2[k] = s[static_cast<std::size_t>(k)].b2;
    c.a1[k] = s[static_cast<std::size_t>(k)].a1;
    c.a2[k] = s[static_cast<std::size_t>(k)].a2;
  }
  return c;
}

std::int64_t tiles_of(std::int64_t n, int log_seg) {
  const std::int64_t tile = std::int64_t{kThreads} << log_seg;
  return (n + tile - 1) / tile;
}

// Doubles a group of `d` state values needs in the workspace: each
// segment's state, then the levels of tile starts (iir_scan_level).
std::size_t group_doubles(int channels, std::int64_t n, int d) {
  const std::int64_t tiles = tiles_of(n, 5); // the shorter segments: the most tiles
  std::int64_t levels = 0;
  for (std::int64_t m = tiles; m > 1; m = blocks_of(m))
    levels += m;
  return static_cast<std::size_t>(channels) * static_cast<std::size_t>(d) *
         static_cast<std::size_t>(tiles * kThreads + levels + 1);
}

// The starts of v's n elements (2^kb samples each) per channel, from
// `state`; `next` holds the levels above (iir_scan_level, iir_fixup).
template <int D>
void scan_starts(const double* pw, double* v, std::int64_t n, int kb, double* next,
                 const double* state, std::int64_t state_stride, int cn, cudaStream_t stream) {
  if (kb + 6 >= kPowers)
    throw Error(ErrorKind::invalid_argument, "iir: the signal is too long");
  const std::int64_t nb = blocks_of(n);
  const dim3 grid(static_cast<unsigned>(nb), static_cast<unsigned>(cn));
  iir_scan_level<D><<<grid, kThreads, 0, stream>>>(pw, v, n, kb, next, state, state_stride);
  SIGSTREAM_CUDA_CHECK_LAUNCH("iir_scan_level");
  if (nb > 1) {
    scan_starts<D>(pw, next, nb, kb + 7, next + static_cast<std::int64_t>(cn) * nb * D, state,
                   state_stride, cn, stream);
    iir_fixup<D><<<grid, kThreads, 0, stream>>>(pw, v, n, kb, next);
    SIGSTREAM_CUDA_CHECK_LAUNCH("iir_fixup");
  }
}

template <int S, typename TX, typename TY>
void launch(std::span<const cpu::Biquad> s, const double* pw, const TX* x, std::int64_t x_stride,
            TY* y, std::int64_t y_stride, int channels, std::int64_t n, double* state,
            std::int64_t state_stride, double* work, cudaStream_t stream) {
  constexpr int D = 2 * S;
  using TS =
      std::conditional_t<std::is_same_v<TX, double> || std::is_same_v<TY, double>, double, float>;
  constexpr int LS = kLogSegOf<TS>;
  const Coeffs<S> c = coeffs<S>(s);
  const std::int64_t ntiles = tiles_of(n, LS);
  if (ntiles > 0x7fffffff)
    throw Error(ErrorKind::invalid_argument, "iir: " + std::to_string(n) + " frames is too long");
  for (int c0 = 0; c0 < channels; c0 += kMaxGridY) {
    const int cn = std::min(kMaxGridY, channels - c0);
    const TX* xc = x + static_cast<std::int64_t>(c0) * x_stride;
    TY* yc = y + static_cast<std::int64_t>(c0) * y_stride;
    double* st = state + static_cast<std::int64_t>(c0) * state_stride;
    double* seg = work;
    double* agg = seg + static_cast<std::int64_t>(cn) * ntiles * kThreads * D;
    const dim3 grid(static_cast<unsigned>(ntiles), static_cast<unsigned>(cn));
    iir_segments<S, TX, TS>
        <<<grid, kThreads, 0, stream>>>(c, xc, x_stride, n, ntiles, pw, seg, agg);
    SIGSTREAM_CUDA_CHECK_LAUNCH("iir_segments");
    scan_starts<D>(pw, agg, ntiles, LS + 7, agg + static_cast<std::int64_t>(cn) * ntiles * D, st,
                   state_stride, cn, stream);
    iir_tiles<S, TX, TY, TS><<<grid, kThreads, 0, stream>>>(c, xc, x_stride, yc, y_stride, n,
                                                            ntiles, pw, seg, agg, st, state_stride);
    SIGSTREAM_CUDA_CHECK_LAUNCH("iir_tiles");
  }
}

template <typename TX, typename TY>
void launch_any(std::span<const cpu::Biquad> s, const double* pw, const TX* x,
                std::int64_t x_stride, TY* y, std::int64_t y_stride, int channels, std::int64_t n,
                double* state, std::int64_t state_stride, double* agg, cudaStream_t stream) {
  switch (s.size()) {
#define SIGSTREAM_IIR_CASE(S)                                                                      \
  case S:                                                                                          \
    return launch<S>(s, pw, x, x_stride, y, y_stride, channels, n, state, state_stride, agg,       \
                     stream);
    SIGSTREAM_IIR_CASE(1)
    SIGSTREAM_IIR_CASE(2)
    SIGSTREAM_IIR_CASE(3)
    SIGSTREAM_IIR_CASE(4)
    SIGSTREAM_IIR_CASE(5)
    SIGSTREAM_IIR_CASE(6)
    SIGSTREAM_IIR_CASE(7)
    SIGSTREAM_IIR_CASE(8)
#undef SIGSTREAM_IIR_CASE
    default:
      throw internal_error("iir: a group of " + std::to_string(s.size()) + " sections");
  }
}

} // namespace

IirCascade::IirCascade(std::span<const cpu::Biquad> sections)
    : sections_(sections.begin(), sections.end()) {
  if (sections_.empty())
    throw Error(ErrorKind::invalid_argument, "IirCascade: no sections");
  // Groups of near-equal size, none over kMaxGroup.
  const int total = static_cast<int>(sections_.size());
  const int count = (total + kMaxGroup - 1) / kMaxGroup;
  int first = 0;
  for (int g = 0; g < count; ++g) {
    Group grp;
    grp.first = first;
    grp.count = (total - first) / (count - g);
    const std::vector<double> p = transition_powers(std::span<const cpu::Biquad>(sections_).subspan(
        static_cast<std::size_t>(grp.first), static_cast<std::size_t>(grp.count)));
    grp.powers = upload_and_wait(p.data(), p.size());
    first += grp.count;
    groups_.push_back(std::move(grp));
  }
  pad_ = cpu::sosfiltfilt_pad(sections_);
  const std::vector<double> zi = cpu::sosfilt_zi(sections_);
  zi_ = upload_and_wait(zi.data(), zi.size());
}

std::size_t IirCascade::ext_doubles(int channels, std::int64_t n) const {
  return std::max<std::size_t>(
      1, static_cast<std::size_t>(std::max(channels, 0)) *
             static_cast<std::size_t>(std::max<std::int64_t>(n, 0) + 2 * pad_));
}

void IirCascade::filtfilt(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride,
                          int channels, std::int64_t n, double* d_ext, double* d_state,
                          double* d_work, cudaStream_t stream) const {
  if (channels < 1 || channels > kMaxGridY || n <= pad_)
    throw Error(ErrorKind::invalid_argument,
                "IirCascade::filtfilt: " + std::to_string(channels) + " channel(s) of " +
                    std::to_string(n) + " frames (1.." + std::to_string(kMaxGridY) +
                    " channels, more than " + std::to_string(pad_) + " frames)");
  const std::int64_t m = n + 2 * pad_;
  const int d = state_size();
  const dim3 grid = planes_grid(m, channels);
  const unsigned state_blocks = static_cast<unsigned>((channels * d + 255) / 256);
  odd_extend<<<grid, 256, 0, stream>>>(x, x_stride, n, pad_, d_ext);
  SIGSTREAM_CUDA_CHECK_LAUNCH("odd_extend");
  scaled_state<<<state_blocks, 256, 0, stream>>>(zi_.data(), d, d_ext, m, 0, d_state, channels);
  SIGSTREAM_CUDA_CHECK_LAUNCH("scaled_state");
  run(d_ext, m, d_ext, m, channels, m, d_state, d_work, stream);
  scaled_state<<<state_blocks, 256, 0, stream>>>(zi_.data(), d, d_ext, m, m - 1, d_state, channels);
  SIGSTREAM_CUDA_CHECK_LAUNCH("scaled_state");
  reverse_planes<<<grid, 256, 0, stream>>>(d_ext, m);
  SIGSTREAM_CUDA_CHECK_LAUNCH("reverse_planes");
  run(d_ext, m, d_ext, m, channels, m, d_state, d_work, stream);
  unpad_reversed<<<planes_grid(n, channels), 256, 0, stream>>>(d_ext, n, pad_, y, y_stride);
  SIGSTREAM_CUDA_CHECK_LAUNCH("unpad_reversed");
}

std::size_t IirCascade::workspace_doubles(int channels, std::int64_t n) const {
  const int ch = std::min(std::max(channels, 0), kMaxGridY); // channels beyond take turns
  n = std::max<std::int64_t>(n, 0);
  std::size_t w = 0;
  for (const Group& g : groups_)
    w = std::max(w, group_doubles(ch, n, 2 * g.count));
  if (groups_.size() > 1) // the signal between groups, in float64
    w += static_cast<std::size_t>(std::max(channels, 0)) * static_cast<std::size_t>(n);
  return std::max<std::size_t>(w, 1);
}

template <typename TX, typename TY>
void IirCascade::run_group(const Group& g, const TX* x, std::int64_t x_stride, TY* y,
                           std::int64_t y_stride, int channels, std::int64_t n, double* d_state,
                           double* d_work, cudaStream_t stream) const {
  launch_any(std::span<const cpu::Biquad>(sections_).subspan(static_cast<std::size_t>(g.first),
                                                             static_cast<std::size_t>(g.count)),
             g.powers.data(), x, x_stride, y, y_stride, channels, n, d_state + 2 * g.first,
             state_size(), d_work, stream);
}

template <typename T>
void IirCascade::run_all(const T* x, std::int64_t x_stride, T* y, std::int64_t y_stride,
                         int channels, std::int64_t n, double* d_state, double* d_work,
                         cudaStream_t stream) const {
  if (n < 0 || channels < 0)
    throw Error(ErrorKind::invalid_argument, "IirCascade::run: negative size");
  if (n == 0 || channels == 0)
    return;
  if (x == nullptr || y == nullptr || d_state == nullptr || d_work == nullptr)
    throw Error(ErrorKind::invalid_argument, "IirCascade::run: null pointer");
  if (groups_.size() == 1)
    return run_group(groups_.front(), x, x_stride, y, y_stride, channels, n, d_state, d_work,
                     stream);
  // The groups pass float64 planes (after the tile sums in d_work).
  std::size_t scratch = 0;
  for (const Group& g : groups_)
    scratch = std::max(scratch, group_doubles(std::min(channels, kMaxGridY), n, 2 * g.count));
  double* mid = d_work + scratch;
  run_group(groups_.front(), x, x_stride, mid, n, channels, n, d_state, d_work, stream);
  for (std::size_t g = 1; g + 1 < groups_.size(); ++g)
    run_group(groups_[g], static_cast<const double*>(mid), n, mid, n, channels, n, d_state, d_work,
              stream);
  run_group(groups_.back(), static_cast<const double*>(mid), n, y, y_stride, channels, n, d_state,
            d_work, stream);
}

void IirCascade::run(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride,
                     int channels, std::int64_t n, double* d_state, double* d_work,
                     cudaStream_t stream) const {
  run_all(x, x_stride, y, y_stride, channels, n, d_state, d_work, stream);
}

void IirCascade::run(const double* x, std::int64_t x_stride, double* y, std::int64_t y_stride,
                     int channels, std::int64_t n, double* d_state, double* d_work,
                     cudaStream_t stream) const {
  run_all(x, x_stride, y, y_stride, channels, n, d_state, d_work, stream);
}

} // namespace sigstream::kernels::cuda
