// Strategy. A block of 256 threads computes a tile of up to 2048 consecutive
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

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 2048;
constexpr std::size_t kSharedLimit = 96 * 1024;  // dynamic shared memory a block may ask for


template <bool kTapsShared, bool kSpanShared>
__global__ void __launch_bounds__(kThreads)
    resample_kernel(const float* __restrict__ x, std::int64_t x_first, std::int64_t x_stride, float* __restrict__ y,
                    std::int64_t y_first, std::int64_t y_stride, std::int64_t n, const float* __restrict__ taps, int k,
                    int up, int down, std::int64_t delay, std::int64_t lookback, std::int64_t step_newest,
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
    for (int i = threadIdx.x; i < k; i += kThreads) smem[i] = taps[i];
    h = smem;
    span = smem + k;
  }
  const std::int64_t m0 = y_first + tile0;
  std::int64_t lo = x_first;  // input frame of xs[0] below
  const float* xs = xc;
  if constexpr (kSpanShared) {
    lo = ceil_div(m0 * down - lookback, up);
    const std::int64_t hi = floor_div((m0 + tile_n - 1) * down + delay, up) + 1;
    for (std::int64_t i = threadIdx.x; i < hi - lo; i += kThreads) span[i] = xc[lo - x_first + i];
    xs = span;
  }
  if constexpr (kTapsShared || kSpanShared) __syncthreads();
  // Phase p's taps are h[p], h[p + up], ...: ceil((K - p) / up) of them.
  const int per_phase = k / up;
  const int longer = k % up;  // phases below this one have one tap more
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
    for (int t = 0; t < len; ++t) acc = fmaf(hp[t * up], xn[-t], acc);
    yc[i] = acc;
    newest += step_newest;
    phase += step_phase;
    if (phase >= up) {
      phase -= up;
      ++newest;
    }
  }
}

// The blocked kernel (the main path, up <= 1024): thread q of a block of S
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
    resample_blocked_kernel(const float* __restrict__ x, std::int64_t x_first, std::int64_t x_stride,
                            float* __restrict__ y, std::int64_t y_first, std::int64_t y_stride, std::int64_t n,
                            const float* __restrict__ taps, int k, int up, int down, std::int64_t delay,
                            std::int64_t lookback) {
  extern __shared__ float smem[];
  const int s_threads = static_cast<int>(blockDim.x);  // S
  const std::int64_t tile = static_cast<std::int64_t>(s_threads) * kRows;
  const int c = static_cast<int>(blockIdx.y);
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * tile;
  const std::int64_t tile_n = min(tile, n - tile0);
  const float* xc = x + c * x_stride;
  float* yc = y + c * y_stride + tile0;
  float* h = smem;
  float* span = smem + k;
  for (int i = threadIdx.x; i < k; i += s_threads) h[i] = taps[i];
  const std::int64_t m0 = y_first + tile0;
  const std::int64_t lo = ceil_div(m0 * down - lookback, up);
  const std::int64_t hi = floor_div((m0 + tile_n - 1) * down + delay, up) + 1;
  for (std::int64_t i = threadIdx.x; i < hi - lo; i += s_threads) span[i] = xc[lo - x_first + i];
  __syncthreads();
  const int q = static_cast<int>(threadIdx.x);
  if (q >= tile_n) return;
  const int rows = static_cast<int>(min(static_cast<std::int64_t>(kRows), (tile_n - q + s_threads - 1) / s_threads));
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
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  if (rows == kRows) {
    for (int t = 0; t < len; ++t) {
      const float ht = hp[t * up];
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = fmaf(ht, x0[r * row_step - t], acc[r]);
    }
  } else {  // the signal's last tile
    for (int t = 0; t < len; ++t) {
      const float ht = hp[t * up];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (r < rows) acc[r] = fmaf(ht, x0[r * row_step - t], acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (r < rows) yc[q + static_cast<std::int64_t>(r) * s_threads] = acc[r];
}

template <bool kTapsShared, bool kSpanShared>
void launch(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y, std::int64_t y_first,
            std::int64_t y_stride, std::int64_t n, int channels, const DevicePolyphase& f, std::size_t shared,
            cudaStream_t stream) {
  auto* kernel = &resample_kernel<kTapsShared, kSpanShared>;
  if (shared > 48 * 1024)
    SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>(channels));
  // Moving kThreads outputs on moves the up-sampled position by kThreads * down.
  const std::int64_t step = static_cast<std::int64_t>(kThreads) * f.down;
  kernel<<<grid, kThreads, shared, stream>>>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, f.d_taps, f.taps,
                                             f.up, f.down, f.delay, f.lookback, step / f.up,
                                             static_cast<int>(step % f.up));
  SIGSTREAM_CUDA_CHECK_LAUNCH("resample_kernel");
}

}  // namespace

void resample(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y, std::int64_t y_first,
              std::int64_t y_stride, std::int64_t n, int channels, const DevicePolyphase& f,
              cudaStream_t stream) {
  if (n < 0 || channels < 1 || channels > 65535 || f.taps < 1 || f.up < 1 || f.down < 1 || f.delay < 0 ||
      f.lookback < 0 || f.d_taps == nullptr || d_x == nullptr || d_y == nullptr)
    throw Error(ErrorKind::invalid_argument,
                "resample: bad arguments (n " + std::to_string(n) + ", channels " + std::to_string(channels) +
                    ", taps " + std::to_string(f.taps) + ", up " + std::to_string(f.up) + ", down " +
                    std::to_string(f.down) + ")");
  if (n == 0) return;
  const std::size_t taps_bytes = static_cast<std::size_t>(f.taps) * sizeof(float);
  if (f.up <= 1024) {
    const int threads = static_cast<int>((kThreads + f.up - 1) / f.up * f.up);
    const std::int64_t tile = static_cast<std::int64_t>(threads) * kRows;
    const std::int64_t span = ((tile - 1) * static_cast<std::int64_t>(f.down) + f.delay + f.lookback) / f.up + 2;
    const std::size_t shared = taps_bytes + static_cast<std::size_t>(span) * sizeof(float);
    if (threads <= 1024 && shared <= kSharedLimit && (n + tile - 1) / tile <= 0x7fffffff) {
      if (shared > 48 * 1024)
        SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(&resample_blocked_kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
      const dim3 grid(static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>(channels));
      resample_blocked_kernel<<<grid, threads, shared, stream>>>(d_x, x_first, x_stride, d_y, y_first, y_stride, n,
                                                                 f.d_taps, f.taps, f.up, f.down, f.delay, f.lookback);
      SIGSTREAM_CUDA_CHECK_LAUNCH("resample_blocked_kernel");
      return;
    }
  }
  // Large ratios or long filters: one output at a time (below).
  if ((n + kTile - 1) / kTile > 0x7fffffff)
    throw Error(ErrorKind::invalid_argument, "resample: " + std::to_string(n) + " outputs in one call");
  // The longest input span a tile reads (its phase moves it by one frame at most).
  const std::int64_t span = ((kTile - 1) * static_cast<std::int64_t>(f.down) + f.delay + f.lookback) / f.up + 2;
  const std::size_t span_bytes = static_cast<std::size_t>(span) * sizeof(float);
  const bool taps_shared = taps_bytes <= kSharedLimit / 2;
  const bool span_shared = span_bytes + (taps_shared ? taps_bytes : 0) <= kSharedLimit;
  if (taps_shared && span_shared)
    launch<true, true>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, taps_bytes + span_bytes, stream);
  else if (taps_shared)
    launch<true, false>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, taps_bytes, stream);
  else if (span_shared)
    launch<false, true>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, span_bytes, stream);
  else
    launch<false, false>(d_x, x_first, x_stride, d_y, y_first, y_stride, n, channels, f, 0, stream);
}

}  // namespace sigstream::kernels::cuda
