// Three kernels, tried in this order by resample() below:
//   - class tiles (up >= 16, where a block's tile fits in shared memory): a
//     warp shares its phases, inputs reused from registers across 4 phases
//     and 8 outputs each; the main path of the common pairs (44.1k <-> 48k);
//   - blocked (up <= 1024): 8 outputs of one phase a thread;
//   - one output at a time (the rest: large ratios, long filters), below.
// Each is described above its code. All give the CPU's bits.
//
// The one-output-at-a-time kernel. A block of 256 threads computes a tile of up to 2048 consecutive
// outputs of one channel (blockIdx.y); thread i takes outputs i, i + 256, ...
// so that neighbouring threads write neighbouring outputs (coalesced stores)
// and read neighbouring inputs; from one output to its next, the newest input
// and the phase advance by constants (one division per thread, not per
// output). Per tile, before one __syncthreads():
//   - the taps go to shared memory when they fit (kTapsShared), else they
//     are read through the read-only cache (long filters of large ratios).
//     They stay in the filter's own order: phase p's taps are h[p + t*up],
//     so the threads of a warp, whose phases differ by down mod up, read
//     t*up + p from distinct banks (a phase-sorted table would make them
//     collide: phases' taps ~K/up words apart);
//   - the input frames the tile reads, [lo, hi), are staged in shared memory
//     with coalesced loads when that span fits (kSpanShared: up-sampling and
//     moderate down-sampling), else read from global memory, where the
//     stride between threads is down/up frames.
// Each output then walks its phase's taps in ascending order with fmaf, from
// 0.f: the CPU's operations in the CPU's order. The zero-stuffed samples of
// the up-sampled signal are never touched: per output, only ceil(K/up) or
// floor(K/up) taps. The work is ~K/up FMAs per output: memory-bound.
#include "kernels/cuda/resample.cuh"

#include <cuda_pipeline.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 2048;
constexpr std::size_t kSharedLimit = 96 * 1024; // dynamic shared memory a block may ask for

template <bool kTapsShared, bool kSpanShared>
__global__ void __launch_bounds__(kThreads)
    resample_kernel(const float* __restrict__ x, std::int64_t x_first, std::int64_t x_stride,
                    float* __restrict__ y, std::int64_t y_first, std::int64_t y_stride,
                    std::int64_t n, const float* __restrict__ taps, int k, int up, int down,
                    std::int64_t delay, std::int64_t lookback, std::int64_t step_newest,
                    int step_phase) {
  extern __shared__ float smem[];
  const int c = static_cast<int>(blockIdx.y);
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t tile_n = min(static_cast<std::int64_t>(kTile), n - tile0);
  const float* xc = x + c * x_stride;
  float* yc = y + c * y_stride + tile0;
  const float* h = taps;
  float* span = smem;
  if constexpr (kTapsShared) {
    for (int i = threadIdx.x; i < k; i += kThreads)
      smem[i] = taps[i];
    h = smem;
    span = smem + k;
  }
  const std::int64_t m0 = y_first + tile0;
  std::int64_t lo = x_first; // input frame of xs[0] below
  const float* xs = xc;
  if constexpr (kSpanShared) {
    lo = ceil_div(m0 * down - lookback, up);
    const std::int64_t hi = floor_div((m0 + tile_n - 1) * down + delay, up) + 1;
    for (std::int64_t i = threadIdx.x; i < hi - lo; i += kThreads)
      span[i] = xc[lo - x_first + i];
    xs = span;
  }
  if constexpr (kTapsShared || kSpanShared)
    __syncthreads();
  // Phase p's taps are h[p], h[p + up], ...: ceil((K - p) / up) of them.
  const int per_phase = k / up;
  const int longer = k % up; // phases below this one have one tap more
  // This thread's first output; the next ones are kThreads outputs on, whose
  // newest input and phase follow by adding (no division in the loop).
  const std::int64_t a = (m0 + threadIdx.x) * down + delay;
  std::int64_t newest = floor_div(a, up);
  int phase = static_cast<int>(a - newest * up);
  for (std::int64_t i = threadIdx.x; i < tile_n; i += kThreads) {
    const int len = per_phase + (phase < longer ? 1 : 0);
    const float* xn = xs + (newest - lo);
    const float* hp = h + phase;
    float acc = 0.0f;
    for (int t = 0; t < len; ++t)
      acc = fmaf(hp[t * up], xn[-t], acc);
    yc[i] = acc;
    newest += step_newest;
    phase += step_phase;
    if (phase >= up) {
      phase -= up;
      ++newest;
    }
  }
}

// dst[i] = src[i], i < count, by a block of `threads`: four loads in flight
// per thread before their stores (one at a time, the copy waits on latency;
// cp.async measured slower here: 48k -> 16k 0.256 against 0.235 ms).
__device__ __forceinline__ void stage(float* dst, const float* __restrict__ src, int count,
                                      int threads) {
  int i = static_cast<int>(threadIdx.x);
  for (; i + 3 * threads < count; i += 4 * threads) {
    const float a = src[i], b = src[i + threads], c = src[i + 2 * threads],
                d = src[i + 3 * threads];
    dst[i] = a;
    dst[i + threads] = b;
    dst[i + 2 * threads] = c;
    dst[i + 3 * threads] = d;
  }
  for (; i < count; i += threads)
    dst[i] = src[i];
}

// The blocked kernel (up <= 1024 where the class tiles do not run): thread q of a block of S
// threads, S the smallest multiple of up that is >= 256, computes the kRows
// outputs base + q + r*S, r < kRows. S being a multiple of up, they share
// one phase, hence one set of taps: per tap, one shared load of the tap
// feeds kRows FMAs (each with its own input load) instead of one, which is
// what bounds the simple kernel (two shared loads per FMA). For a fixed r
// the threads write consecutive outputs (coalesced). Taps and the tile's
// input span are in shared memory (the launcher checks they fit). Each
// output still sums its taps in ascending order from 0.f with fmaf.
constexpr int kRows = 8;

__global__ void __launch_bounds__(1024)
    resample_blocked_kernel(const float* __restrict__ x, std::int64_t x_first,
                            std::int64_t x_stride, float* __restrict__ y, std::int64_t y_first,
                            std::int64_t y_stride, std::int64_t n, const float* __restrict__ taps,
                            int k, int up, int down, std::int64_t delay, std::int64_t lookback) {
  extern __shared__ float smem[];
  const int s_threads = static_cast<int>(blockDim.x); // S
  const std::int64_t tile = static_cast<std::int64_t>(s_threads) * kRows;
  const int c = static_cast<int>(blockIdx.y);
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * tile;
  const std::int64_t tile_n = min(tile, n - tile0);
  const float* xc = x + c * x_stride;
  float* yc = y + c * y_stride + tile0;
  float* h = smem;
  float* span = smem + k;
  const std::int64_t m0 = y_first + tile0;
  const std::int64_t lo = ceil_div(m0 * down - lookback, up);
  const std::int64_t hi = floor_div((m0 + tile_n - 1) * down + delay, up) + 1;
  stage(h, taps, k, s_threads);
  stage(span, xc + (lo - x_first), static_cast<int>(hi - lo), s_threads);
  __syncthreads();
  const int q = static_cast<int>(threadIdx.x);
  if (q >= tile_n)
    return;
  const int rows = static_cast<int>(
      min(static_cast<std::int64_t>(kRows), (tile_n - q + s_threads - 1) / s_threads));
  const std::int64_t a = (m0 + q) * down + delay;
  const std::int64_t newest = floor_div(a, up);
  const int phase = static_cast<int>(a - newest * up);
  const int len = k / up + (phase < k % up ? 1 : 0);
  // Row r's newest input is (S / up) * down frames after row r - 1's.
  const int row_step = s_threads / up * down;
  const float* x0 = span + (newest - lo);
  const float* hp = h + phase;
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    acc[r] = 0.0f;
  if (rows == kRows) {
    for (int t = 0; t < len; ++t) {
      const float ht = hp[t * up];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        acc[r] = fmaf(ht, x0[r * row_step - t], acc[r]);
    }
  } else { // the signal's last tile
    for (int t = 0; t < len; ++t) {
      const float ht = hp[t * up];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (r < rows)
          acc[r] = fmaf(ht, x0[r * row_step - t], acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (r < rows)
      yc[q + static_cast<std::int64_t>(r) * s_threads] = acc[r];
}

// The class-tiled kernel (the main path where up >= 16 and its tile fits):
// outputs y_first + c + k*up form class c (one phase, one set of taps); a
// block takes 32 consecutive classes, c0 ..., and kKb consecutive k of each.
// Warp w computes classes c0 + 4w + a (a < kA) for k = k0 + lane + 32r
// (r < kR): all lanes of a warp share their classes, so a tap is one
// broadcast load, and the classes' inputs are near each other: output
// (c, k)'s tap t reads frame N_c + k*down - t (N_c the class's newest), so
// one input value in a register feeds the kA classes (a different tap of
// each) of a row. Per input step: kR input loads and at most kA tap loads
// for kA*kR FMAs (the blocked kernel: 9 loads per 8 FMAs). The block's
// inputs are staged in shared memory as tile[u][kk] = x[B0 + u + kk*down],
// u < U (a frame may sit in two cells when U > down): the lanes of a warp
// read consecutive cells, free of bank conflicts for any ratio. The outputs
// go through shared memory (the input tile's space, after a barrier) so
// that the stores to y are 32 consecutive frames. Each output sums its taps
// in ascending order from 0.f with fmaf: the CPU's bits.
constexpr int kA = 4;          // classes per warp
constexpr int kR = 8;          // outputs per class and lane
constexpr int kClassWarps = 8; // a block: 8 warps, 32 classes
constexpr int kBlockClasses = kA * kClassWarps;
constexpr int kKb = 32 * kR;         // k per block and class
constexpr int kTileStride = kKb + 1; // odd: the staging stores (a warp over u) hit distinct banks
constexpr int kOutStride = kBlockClasses + 1;
static_assert(kKb % (kClassWarps * 8) == 0, "the staging loop takes 8 rows of kk per warp");

struct ClassTileShape {
  int longest = 0; // taps of the longest phase
  std::size_t shared = 0;
};

// U for the worst block: the classes' newest frames spread over at most
// ceil(31 * down / up) + 1 frames, plus the longest phase's taps.
ClassTileShape class_tile_shape(const DevicePolyphase& f) {
  ClassTileShape s;
  s.longest = (f.taps + f.up - 1) / f.up;
  const std::int64_t spread =
      ((kBlockClasses - 1) * static_cast<std::int64_t>(f.down) + f.up - 1) / f.up + 1;
  const std::int64_t u = spread + s.longest;
  const std::int64_t tile =
      std::max<std::int64_t>(u * kTileStride, static_cast<std::int64_t>(kKb) * kOutStride);
  s.shared = static_cast<std::size_t>(tile + static_cast<std::int64_t>(kBlockClasses) * s.longest) *
             sizeof(float);
  return s;
}

// One step of a warp's classes: the kR inputs of tile row D_max - s (xs,
// this lane's column), each times the tap of every class that has one at s
// (kCheck: some may not; the checks are uniform over the warp).
template <bool kCheck>
__device__ __forceinline__ void class_step(float (&acc)[kA][kR], const float* xs,
                                           const float* const (&hp)[kA], const int (&g)[kA],
                                           const int (&len)[kA], int s) {
  float xv[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r)
    xv[r] = xs[32 * r];
#pragma unroll
  for (int a = 0; a < kA; ++a) {
    if (!kCheck || (s >= g[a] && s < g[a] + len[a])) {
      const float ht = hp[a][s];
#pragma unroll
      for (int r = 0; r < kR; ++r)
        acc[a][r] = fmaf(ht, xv[r], acc[a][r]);
    }
  }
}

__global__ void __launch_bounds__(kClassWarps * 32, 3)
    resample_classes_kernel(const float* __restrict__ x, std::int64_t x_first,
                            std::int64_t x_stride, float* __restrict__ y, std::int64_t y_first,
                            std::int64_t y_stride, std::int64_t n, const float* __restrict__ taps,
                            int k, int up, int down, std::int64_t delay, int longest,
                            int class_groups) {
  extern __shared__ float smem[];
  float* hs = smem;                             // [kBlockClasses][longest], phase-sorted
  float* tile = smem + kBlockClasses * longest; // [U][kTileStride], later [kKb][kOutStride]
  const int c = static_cast<int>(blockIdx.y);
  const int group = static_cast<int>(blockIdx.x % static_cast<unsigned>(class_groups));
  const std::int64_t k0 =
      static_cast<std::int64_t>(blockIdx.x / static_cast<unsigned>(class_groups)) * kKb;
  const int c0 = group * kBlockClasses;
  if (k0 * up + c0 >= n)
    return; // no output of this block exists (the whole block leaves)
  const int classes = min(kBlockClasses, up - c0);
  const float* xc = x + c * x_stride;
  float* yc = y + c * y_stride;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  // Class c0's newest frame at k = 0 (one 64-bit division), and the block's
  // first frame B0: the oldest that class c0 reads at k0 (later classes'
  // newest are later). Class j of the block: a_j = a_c0 + j*down, so its
  // newest is N_c0 + (phi_c0 + j*down) div up and its phase the remainder
  // (32-bit: phi_c0 + 31*down fits).
  const std::int64_t a_c0 = (y_first + c0) * down + delay;
  const std::int64_t n_c0 = floor_div(a_c0, up);
  const int phi_c0 = static_cast<int>(a_c0 - n_c0 * up);
  const std::int64_t b0 = n_c0 + k0 * down - (longest - 1);
  const int u_rows = (phi_c0 + (classes - 1) * down) / up + longest;
  // The newest frame this block's valid outputs read; the tile holds 0 past it
  // and before x_first (cells no valid output reads).
  const std::int64_t m_last = y_first + min(n - 1, (k0 + kKb - 1) * up + c0 + classes - 1);
  const std::int64_t hi = floor_div(m_last * down + delay, up);
  // Taps, phase-sorted: hs[j * longest + t] = h[phi_j + t*up] for the block's
  // class j. This and the tile below are copied with cp.async (no register
  // round trip: all of a thread's copies in flight at once, where loads
  // through registers came a few at a time and the block waited on memory
  // latency); one wait before the barrier.
  for (int j = warp; j < classes; j += kClassWarps) {
    const int phi = (phi_c0 + j * down) % up;
    for (int t = lane; t < longest; t += 32) {
      if (phi + t * up < k)
        __pipeline_memcpy_async(hs + j * longest + t, taps + phi + t * up, sizeof(float));
      else
        hs[j * longest + t] = 0.0f;
    }
  }
  // The input tile: a warp per kk, its lanes over u (consecutive frames).
  // Offsets from b0 in 32 bits: the tile spans (kKb - 1) * down + U frames.
  {
    constexpr int kStage = 8;
    const float* xb = xc + (b0 - x_first); // frame b0 (read only at x_first and later)
    const int lo_off = x_first > b0 ? static_cast<int>(x_first - b0) : 0; // <= longest
    const std::int64_t span = hi - b0 - lo_off; // cells [lo_off, lo_off + span] are read
    const int q_step = kClassWarps * down; // frames between a thread's rows kk and kk + kClassWarps
    // Every cell readable (all blocks but the signal's first and last): no checks.
    const bool interior =
        lo_off == 0 && static_cast<std::int64_t>(kKb - 1) * down + u_rows - 1 <= span;
    const auto in_span = static_cast<unsigned>(span < 0x7fffffff ? span : 0x7fffffff);
    for (int kk0 = warp; kk0 < kKb; kk0 += kClassWarps * kStage) {
      for (int u = lane; u < u_rows; u += 32) {
        const int off0 = kk0 * down + u;
        const float* p = xb + off0;
        float* cell = tile + u * kTileStride + kk0;
        if (interior) {
#pragma unroll
          for (int q = 0; q < kStage; ++q)
            __pipeline_memcpy_async(cell + q * kClassWarps, p + q * q_step, sizeof(float));
        } else {
#pragma unroll
          for (int q = 0; q < kStage; ++q) {
            if (static_cast<unsigned>(off0 + q * q_step - lo_off) <= in_span)
              __pipeline_memcpy_async(cell + q * kClassWarps, p + q * q_step, sizeof(float));
            else
              cell[q * kClassWarps] = 0.0f;
          }
        }
      }
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  float acc[kA][kR];
#pragma unroll
  for (int a = 0; a < kA; ++a)
#pragma unroll
    for (int r = 0; r < kR; ++r)
      acc[a][r] = 0.0f;
  const int j0 = warp * kA; // this warp's first class within the block
  if (j0 < classes) {
    // Class j0 + a: tap t reads tile row D_a - t, D_a = N_a - N_c0 + longest - 1.
    // Over steps s = D_max - u: class a's tap is s - g_a, g_a = D_max - D_a
    // (class j0 has the earliest newest frame: the largest g).
    int g[kA], len[kA];
    int d_max = 0;
#pragma unroll
    for (int a = 0; a < kA; ++a) {
      const int q = phi_c0 + min(j0 + a, classes - 1) * down;
      const int phi = q % up;
      g[a] = q / up + longest - 1; // D_a for now
      len[a] = j0 + a < classes ? k / up + (phi < k % up ? 1 : 0) : 0;
      d_max = max(d_max, g[a]);
    }
    int s_end = 0, all_from = 0,
        all_to = 1 << 30; // every class has a tap at s in [all_from, all_to)
    const float* hp[kA];  // class a's tap of step s: hp[a][s]
#pragma unroll
    for (int a = 0; a < kA; ++a) {
      g[a] = d_max - g[a];
      hp[a] = hs + (j0 + a) * longest - g[a];
      s_end = max(s_end, g[a] + len[a]);
      all_from = max(all_from, g[a]);
      all_to = min(all_to, g[a] + len[a]); // a class without outputs (len 0) leaves this empty
    }
    const float* xs = tile + lane + d_max * kTileStride; // tile row D_max - s at step s
    if (all_from >= all_to) { // a partial warp, or classes too far apart: every step checked
      for (int s = 0; s < s_end; ++s)
        class_step<true>(acc, xs - s * kTileStride, hp, g, len, s);
    } else {
      for (int s = 0; s < all_from; ++s)
        class_step<true>(acc, xs - s * kTileStride, hp, g, len, s);
      for (int s = all_from; s < all_to; ++s)
        class_step<false>(acc, xs - s * kTileStride, hp, g, len, s);
      for (int s = all_to; s < s_end; ++s)
        class_step<true>(acc, xs - s * kTileStride, hp, g, len, s);
    }
  }
  __syncthreads();   // the tile's inputs are read: its space takes the outputs
  float* out = tile; // [kKb][kOutStride]: out[kk * kOutStride + j]
#pragma unroll
  for (int a = 0; a < kA; ++a)
#pragma unroll
    for (int r = 0; r < kR; ++r)
      out[(lane + 32 * r) * kOutStride + j0 + a] = acc[a][r];
  __syncthreads();
  // Row kk of the block's outputs: classes c0 .. c0 + classes - 1 at k0 + kk,
  // consecutive frames of y.
  // Outputs left from this row on (n - m), and the row's place in y: a
  // count in 32 bits and a pointer stepped by 8 rows at a time.
  if (lane < classes) {
    const std::int64_t m0 = (k0 + warp) * up + c0 + lane; // relative to y_first
    const int row_step = kClassWarps * up;
    // This lane's rows: those before n (all kKb / kClassWarps but in the last k-block).
    const int rows = static_cast<int>(
        min(static_cast<std::int64_t>(kKb / kClassWarps), (n - m0 + row_step - 1) / row_step));
    float* yrow = yc + m0;
    const float* orow = out + warp * kOutStride + lane;
#pragma unroll 4
    for (int i = 0; i < rows; ++i)
      yrow[static_cast<std::int64_t>(i) * row_step] = orow[i * kClassWarps * kOutStride];
  }
}

template <bool kTapsShared, bool kSpanShared>
void launch(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
            std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
            const DevicePolyphase& f, std::size_t shared, cudaStream_t stream) {
  auto* kernel = &resample_kernel<kTapsShared, kSpanShared>;
  if (shared > 48 * 1024)
    SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>(channels));
  // Moving kThreads outputs on moves the up-sampled position by kThreads * down.
  const std::int64_t step = static_cast<std::int64_t>(kThreads) * f.down;
  kernel<<<grid, kThreads, shared, stream>>>(d_x, x_first, x_stride, d_y, y_first, y_stride, n,
                                             f.d_taps, f.taps, f.up, f.down, f.delay, f.lookback,
                                             step / f.up, static_cast<int>(step % f.up));
  SIGSTREAM_CUDA_CHECK_LAUNCH("resample_kernel");
}

} // namespace

void resample(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
              std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
              const DevicePolyphase& f, cudaStream_t stream, ResampleKernel kernel) {
  if (n < 0 || channels < 1 || channels > 65535 || f.taps < 1 || f.up < 1 || f.down < 1 ||
      f.delay < 0 || f.lookback < 0 || f.d_taps == nullptr || d_x == nullptr || d_y == nullptr)
    throw Error(ErrorKind::invalid_argument,
                "resample: bad arguments (n " + std::to_string(n) + ", channels " +
                    std::to_string(channels) + ", taps " + std::to_string(f.taps) + ", up " +
                    std::to_string(f.up) + ", down " + std::to_string(f.down) + ")");
  if (n == 0)
    return;
  const std::size_t taps_bytes = static_cast<std::size_t>(f.taps) * sizeof(float);
  const bool any = kernel == ResampleKernel::automatic;
  if ((any && f.up >= kBlockClasses / 2) || kernel == ResampleKernel::class_tiles) {
    const ClassTileShape shape = class_tile_shape(f);
    const std::int64_t class_groups = (f.up + kBlockClasses - 1) / kBlockClasses;
    const std::int64_t k_blocks = ((n + f.up - 1) / f.up + kKb - 1) / kKb;
    if (shape.shared <= kSharedLimit && class_groups * k_blocks <= 0x7fffffff) {
      if (shape.shared > 48 * 1024)
        SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(&resample_classes_kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(shape.shared)));
      const dim3 grid(static_cast<unsigned>(class_groups * k_blocks),
                      static_cast<unsigned>(channels));
      resample_classes_kernel<<<grid, kClassWarps * 32, shape.shared, stream>>>(
          d_x, x_first, x_stride, d_y, y_first, y_stride, n, f.d_taps, f.taps, f.up, f.down,
          f.delay, shape.longest, static_cast<int>(class_groups));
      SIGSTREAM_CUDA_CHECK_LAUNCH("resample_classes_kernel");
      return;
    }
  }
  if (f.up <= 1024 && kernel != ResampleKernel::simple) {
    const int threads = static_cast<int>((kThreads + f.up - 1) / f.up * f.up);
    const std::int64_t tile = static_cast<std::int64_t>(threads) * kRows;
    const std::int64_t span =
        ((tile - 1) * static_cast<std::int64_t>(f.down) + f.delay + f.lookback) / f.up + 2;
    const std::size_t shared = taps_bytes + static_cast<std::size_t>(span) * sizeof(float);
    if (threads <= 1024 && shared <= kSharedLimit && (n + tile - 1) / tile <= 0x7fffffff) {
      if (shared > 48 * 1024)
        SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(&resample_blocked_kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(shared)));
      const dim3 grid(static_cast<unsigned>((n + tile - 1) / tile),
                      static_cast<unsigned>(channels));
      resample_blocked_kernel<<<grid, threads, shared, stream>>>(
          d_x, x_first, x_stride, d_y, y_first, y_stride, n, f.d_taps, f.taps, f.up, f.down,
          f.delay, f.lookback);
      SIGSTREAM_CUDA_CHECK_LAUNCH("resample_blocked_kernel");
      return;
    }
  }
  // Large ratios or long filters: one output at a time (below).
  if ((n + kTile - 1) / kTile > 0x7fffffff)
    throw Error(ErrorKind::invalid_argument,
                "resample: " + std::to_string(n) + " outputs in one call");
  // The longest input span a tile reads (its phase moves it by one frame at most).
  const std::int64_t span =
      ((kTile - 1) * static_cast<std::int64_t>(f.down) + f.delay + f.lookback) / f.up + 2;
  const std::size_t span_bytes = static_cast<std::size_t>(span) * sizeof(float);
  const bool taps_shared = taps_bytes <= kSharedLimit / 2;
  const bool span_shared = span_bytes + (taps_shared ? taps_bytes : 0) <= kSharedLimit;
  if (taps_shared && span_shared)
    launch<true, true>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f,
                       taps_bytes + span_bytes, stream);
  else if (taps_shared)
    launch<true, false>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, taps_bytes,
                        stream);
  else if (span_shared)
    launch<false, true>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, span_bytes,
                        stream);
  else
    launch<false, false>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, 0, stream);
}

} // namespace sigstream::kernels::cuda
