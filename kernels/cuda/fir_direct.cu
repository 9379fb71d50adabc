// Direct FIR convolution: shared-memory tiled, register-blocked.
//
// Strategy
// --------
// Mapping. Outputs are cut into tiles of T = Threads * R; a block computes a
//   tile of one channel (gridDim.y = channels). Thread t owns the R contiguous
//   outputs t*R .. t*R + R-1 of the tile, accumulated in registers (acc[R]).
// Window. For taps [k0, k0 + nt) a tile needs T + nt - 1 inputs (the tile and
//   its halo of nt - 1 earlier samples). They sit in shared memory at
//   s_x[sh + j], sh = the first sample's offset inside its 16-byte line, so
//   global -> shared copies are 16-byte vectors (4-byte only at the two ends;
//   samples past the input read as 0: they only feed outputs >= n, never
//   written).
// Inner loop. Taps go in groups of U: a thread holds the R + U - 1 inputs its
//   R outputs need for those U taps in registers, and the U taps (broadcast
//   16-byte loads), then does R*U fmas, taps ascending:
//   acc[r] = fmaf(h[k], x[i_r + K-1-k], acc[r]). With window reuse, groups run
//   in pairs and the R - 1 inputs two consecutive windows share stay in
//   registers. The remainder (< U taps) runs as groups of 16, 8, 4, 2, 1, so
//   every output sees exactly the fma chain of the CPU reference; no tap is
//   padded (a zero tap times an Inf input would be a NaN the reference lacks).
// Banks. Thread t's window starts at word t*R + const; R is odd, so the 32
//   lanes of a warp hit 32 distinct banks on every scalar window load.
// Two kernels:
//   streaming (K <= tap tile, the common case): a persistent grid (as many
//     blocks as fit, fewer if there are fewer tiles). Taps are loaded once per
//     block. Two window buffers: while the block computes tile i from one,
//     cp.async fills the other with tile i + gridDim.x, so memory and math
//     overlap (without it, blocks that start together load together and then
//     compute together, and mid-size filters pay memory time + math time).
//     Shared: s_h[tap_tile] + 2 x s_x[T + tap_tile + 8].
//     Syncs per tile: before issuing the prefetch (its buffer's last readers,
//     the previous tile's output stores, are done); after the window landed;
//     before staging outputs in the window buffer; before the coalesced store.
//   tiled (K > tap tile): one block per output tile; taps in tiles of
//     tap_tile (2048): for each tap tile the block reloads taps and window,
//     accumulators stay in registers across tap tiles, so the per-output order
//     stays k ascending. Shared: s_h[tap_tile] + s_x[T + tap_tile + 8], never
//     more, whatever K is. Math dominates there, so no double buffering.
// Output. Accumulators go through shared memory (s_y[shy + t*R + r], again
//   conflict-free) and out as coalesced 16-byte stores.
#include "kernels/cuda/fir_direct.cuh"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kMaxSharedWithoutOptIn = 48 * 1024;

// The U taps s_h[0..U) into registers (broadcast loads, 16 bytes where aligned).
template <int U> __device__ __forceinline__ void load_taps(const float* s_h, float (&h)[U]) {
  if constexpr (U >= 4) {
#pragma unroll
    for (int q = 0; q < U / 4; ++q) {
      const float4 v = reinterpret_cast<const float4*>(s_h)[q];
      h[4 * q + 0] = v.x;
      h[4 * q + 1] = v.y;
      h[4 * q + 2] = v.z;
      h[4 * q + 3] = v.w;
    }
  } else if constexpr (U == 2) {
    const float2 v = reinterpret_cast<const float2*>(s_h)[0];
    h[0] = v.x;
    h[1] = v.y;
  } else {
    h[0] = s_h[0];
  }
}

// acc[r] += h[u] * w[U-1-u+r], u ascending: the fma chain of every output in
// the reference order.
template <int U, int R>
__device__ __forceinline__ void fma_block(const float (&w)[R + U - 1], const float (&h)[U],
                                          float (&acc)[R]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[r] = fmaf(h[u], w[U - 1 - u + r], acc[r]);
  }
}

// acc[r] += taps s_h[0..U) against the window p[-(U-1)] .. p[R-1], where p[r]
// is the input that tap 0 of the group multiplies for output r.
template <int U, int R>
__device__ __forceinline__ void tap_group(const float* p, const float* s_h, float (&acc)[R]) {
  float w[R + U - 1];
#pragma unroll
  for (int m = 0; m < R + U - 1; ++m)
    w[m] = p[m - (U - 1)];
  float h[U];
  load_taps<U>(s_h, h);
  fma_block<U, R>(w, h, acc);
}

// Groups of U taps two at a time, from tap kk while 2U taps remain: the window
// of the next group overlaps this one's in R - 1 inputs, which stay in
// registers (c[]), so each group loads U new inputs instead of R + U - 1.
template <int U, int R>
__device__ __forceinline__ int tap_pairs(const float* base, const float* s_h, int nt,
                                         float (&acc)[R]) {
  constexpr int W = R + U - 1;
  constexpr int C = W - U;
  int kk = 0;
  if (nt < 2 * U)
    return kk;
  float c[C]; // window entries [U, W) of the group at kk
#pragma unroll
  for (int m = U; m < W; ++m)
    c[m - U] = base[m - (U - 1)];
#pragma unroll 1
  for (; kk + 2 * U <= nt; kk += 2 * U) {
    float h[U];
    float wa[W];
#pragma unroll
    for (int m = 0; m < U; ++m)
      wa[m] = base[-kk + m - (U - 1)];
#pragma unroll
    for (int m = U; m < W; ++m)
      wa[m] = c[m - U];
    load_taps<U>(s_h + kk, h);
    fma_block<U, R>(wa, h, acc);
    float wb[W];
#pragma unroll
    for (int m = 0; m < U; ++m)
      wb[m] = base[-kk - U + m - (U - 1)];
#pragma unroll
    for (int m = U; m < W; ++m)
      wb[m] = wa[m - U];
    load_taps<U>(s_h + kk + U, h);
    fma_block<U, R>(wb, h, acc);
#pragma unroll
    for (int m = 0; m < C; ++m)
      c[m] = wb[m];
  }
  return kk;
}

// Accumulates taps [0, nt) of the tap tile in s_h against the window whose
// entry base[r - k] is the input tap k multiplies for output r.
template <typename P>
__device__ __forceinline__ void accumulate(const float* base, const float* s_h, int nt,
                                           float (&acc)[P::kOutputsPerThread]) {
  constexpr int R = P::kOutputsPerThread;
  constexpr int U = P::kTapUnroll;
  int kk = 0;
  if constexpr (P::kReuseWindow)
    kk = tap_pairs<U, R>(base, s_h, nt, acc);
#pragma unroll 1
  for (; kk + U <= nt; kk += U)
    tap_group<U, R>(base - kk, s_h + kk, acc);
  if constexpr (U > 16) {
    if ((nt - kk) & 16) {
      tap_group<16, R>(base - kk, s_h + kk, acc);
      kk += 16;
    }
  }
  if constexpr (U > 8) {
    if ((nt - kk) & 8) {
      tap_group<8, R>(base - kk, s_h + kk, acc);
      kk += 8;
    }
  }
  if ((nt - kk) & 4) {
    tap_group<4, R>(base - kk, s_h + kk, acc);
    kk += 4;
  }
  if ((nt - kk) & 2) {
    tap_group<2, R>(base - kk, s_h + kk, acc);
    kk += 2;
  }
  if ((nt - kk) & 1)
    tap_group<1, R>(base - kk, s_h + kk, acc);
}

// src's offset in floats inside its 16-byte line.
__device__ __forceinline__ int line_offset(const float* p) {
  return static_cast<int>((reinterpret_cast<std::uintptr_t>(p) >> 2) & 3u);
}

// Copies src[0 .. len) into s_x[sh .. sh + len) (src[j] for j < lo or
// j >= avail as 0: only src[lo .. avail) is read) with 16-byte loads; returns sh.
template <int Threads>
__device__ __forceinline__ int load_window(const float* __restrict__ src, std::int64_t lo64,
                                           std::int64_t avail, int len, float* s_x) {
  const int sh = line_offset(src);
  const int valid = avail < len ? static_cast<int>(avail) : len;
  const int lo = lo64 > 0 ? (lo64 < len ? static_cast<int>(lo64) : len) : 0;
  const auto* src4 = reinterpret_cast<const float4*>(src - sh);
  auto* s4 = reinterpret_cast<float4*>(s_x);
  const int nv = (sh + len + 3) >> 2;
  for (int v = static_cast<int>(threadIdx.x); v < nv; v += Threads) {
    const int j0 = 4 * v - sh;
    float4 val;
    if (j0 >= lo && j0 + 4 <= valid) {
      val = __ldg(src4 + v);
    } else {
      val.x = (j0 + 0 >= lo && j0 + 0 < valid) ? __ldg(src + j0 + 0) : 0.0f;
      val.y = (j0 + 1 >= lo && j0 + 1 < valid) ? __ldg(src + j0 + 1) : 0.0f;
      val.z = (j0 + 2 >= lo && j0 + 2 < valid) ? __ldg(src + j0 + 2) : 0.0f;
      val.w = (j0 + 3 >= lo && j0 + 3 < valid) ? __ldg(src + j0 + 3) : 0.0f;
    }
    s4[v] = val;
  }
  return sh;
}

// cp.async of `bytes` (0..16, the rest of the 16 zero-filled) from global to shared.
__device__ __forceinline__ void cp_async16(float* s_dst, const float* src, int bytes) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(s_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
}
// cp.async of one float (bytes 4) or a zero (bytes 0).
__device__ __forceinline__ void cp_async4(float* s_dst, const float* src, int bytes) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(s_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// load_window, asynchronously: issues the copies (the caller commits and
// waits). Only bytes inside [src + lo, src + min(avail, len)) are read;
// `safe` is a readable address given to the zero-filling copies (which read
// nothing: src itself may lie outside the allocation when lo > 0).
template <int Threads>
__device__ __forceinline__ int load_window_async(const float* __restrict__ src, std::int64_t lo64,
                                                 std::int64_t avail, int len, float* s_x,
                                                 const float* safe) {
  const int sh = line_offset(src);
  const int valid = avail < len ? static_cast<int>(avail) : len;
  const int lo = lo64 > 0 ? (lo64 < len ? static_cast<int>(lo64) : len) : 0;
  const float* src_line = src - sh;
  const int nv = (sh + len + 3) >> 2;
  for (int v = static_cast<int>(threadIdx.x); v < nv; v += Threads) {
    const int j0 = 4 * v - sh;
    if (j0 >= lo && j0 + 4 <= valid) {
      cp_async16(s_x + 4 * v, src_line + 4 * v, 16);
    } else if (j0 >= valid || j0 + 4 <= lo) {
      cp_async16(s_x + 4 * v, safe, 0); // zeros; nothing is read
    } else {
      // The lines holding src[lo] and src[valid - 1]: the floats outside
      // [src + lo, src + valid) are not ours to read (they may lie outside
      // the allocation or be uninitialised).
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = j0 + e;
        const bool in = j >= lo && j < valid;
        cp_async4(s_x + 4 * v + e, in ? src + j : safe, in ? 4 : 0);
      }
    }
  }
  return sh;
}

// Stages acc through s_y (the tile's window buffer, free again) and stores
// outputs [0, out_n) of the tile at y_tile with coalesced 16-byte stores.
template <typename P>
__device__ __forceinline__ void store_tile(const float (&acc)[P::kOutputsPerThread], float* s_y,
                                           float* y_tile, int out_n) {
  constexpr int R = P::kOutputsPerThread;
  const int tid = static_cast<int>(threadIdx.x);
  const int shy = line_offset(y_tile);
#pragma unroll
  for (int r = 0; r < R; ++r)
    s_y[shy + tid * R + r] = acc[r];
  __syncthreads();
  auto* y4 = reinterpret_cast<float4*>(y_tile - shy);
  const auto* s4 = reinterpret_cast<const float4*>(s_y);
  const int nv = (shy + out_n + 3) >> 2;
  for (int v = tid; v < nv; v += P::kThreads) {
    const int j0 = 4 * v - shy;
    if (j0 >= 0 && j0 + 4 <= out_n) {
      y4[v] = s4[v];
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (j0 + e >= 0 && j0 + e < out_n)
          y_tile[j0 + e] = s_y[shy + j0 + e];
    }
  }
}

// K > tap tile: one block per output tile, taps in tiles.
template <typename P>
__global__ void __launch_bounds__(P::kThreads)
    fir_direct_tiled_kernel(const float* __restrict__ d_x, std::int64_t n,
                            const float* __restrict__ d_h, int taps, int tap_tile,
                            float* __restrict__ d_y, std::int64_t x_stride, std::int64_t y_stride,
                            std::int64_t x_lead, std::int64_t x_end) {
  constexpr int R = P::kOutputsPerThread;
  constexpr int T = P::kTile;
  extern __shared__ float4 smem4[];
  float* s_h = reinterpret_cast<float*>(smem4);
  float* s_x = s_h + tap_tile;

  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * T;
  // x[j], j in [0, n + taps - 1): the virtual input (data[j - x_lead] for j in [x_lead, x_end),
  // else 0).
  const float* x = d_x + static_cast<std::int64_t>(blockIdx.y) * x_stride - x_lead;
  float* y = d_y + static_cast<std::int64_t>(blockIdx.y) * y_stride;

  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    acc[r] = 0.0f;

  for (int k0 = 0; k0 < taps; k0 += tap_tile) {
    const int nt = taps - k0 < tap_tile ? taps - k0 : tap_tile;
    if (k0 > 0)
      __syncthreads();
    for (int j = tid; j < nt; j += P::kThreads)
      s_h[j] = __ldg(d_h + k0 + j);
    const std::int64_t g0 = i0 + taps - k0 - nt; // input of output i0 for tap k0 + nt - 1
    const int sh = load_window<P::kThreads>(x + g0, x_lead - g0, x_end - g0, T + nt - 1, s_x);
    __syncthreads();
    accumulate<P>(s_x + sh + tid * R + (nt - 1), s_h, nt, acc);
  }
  __syncthreads();
  store_tile<P>(acc, s_x, y + i0, n - i0 < T ? static_cast<int>(n - i0) : T);
}

// K <= tap tile: persistent blocks, taps loaded once, windows double-buffered.
template <typename P>
__global__ void __launch_bounds__(P::kThreads)
    fir_direct_streaming_kernel(const float* __restrict__ d_x, std::int64_t n,
                                const float* __restrict__ d_h, int taps, int tap_tile,
                                float* __restrict__ d_y, std::int64_t x_stride,
                                std::int64_t y_stride, std::int64_t tiles, std::int64_t x_lead,
                                std::int64_t x_end) {
  constexpr int R = P::kOutputsPerThread;
  constexpr int T = P::kTile;
  extern __shared__ float4 smem4[];
  float* s_h = reinterpret_cast<float*>(smem4);
  const int buffer_floats = T + tap_tile + 8; // a multiple of 4: buffers stay 16-byte aligned
  float* const buffer0 = s_h + tap_tile;

  const int tid = static_cast<int>(threadIdx.x);
  // The virtual input as in the tiled kernel; `safe` is the channel's first sample.
  const float* safe = d_x + static_cast<std::int64_t>(blockIdx.y) * x_stride;
  const float* x = safe - x_lead;
  float* y = d_y + static_cast<std::int64_t>(blockIdx.y) * y_stride;
  const int len = T + taps - 1;

  for (int j = tid; j < taps; j += P::kThreads)
    s_h[j] = __ldg(d_h + j);
  std::int64_t t = blockIdx.x;
  int sh =
      load_window_async<P::kThreads>(x + t * T, x_lead - t * T, x_end - t * T, len, buffer0, safe);
  cp_async_commit();
  for (int i = 0; t < tiles; ++i, t += gridDim.x) {
    float* cur = buffer0 + (i & 1) * buffer_floats;
    float* next = buffer0 + ((i + 1) & 1) * buffer_floats;
    const std::int64_t tn = t + gridDim.x;
    __syncthreads();
    int sh_next = 0;
    if (tn < tiles)
      sh_next = load_window_async<P::kThreads>(x + tn * T, x_lead - tn * T, x_end - tn * T, len,
                                               next, safe);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();

    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[r] = 0.0f;
    accumulate<P>(cur + sh + tid * R + (taps - 1), s_h, taps, acc);
    __syncthreads();
    const std::int64_t i0 = t * T;
    store_tile<P>(acc, cur, y + i0, n - i0 < T ? static_cast<int>(n - i0) : T);
    sh = sh_next;
  }
  cp_async_wait<0>();
}

constexpr int round_up(int v, int m) {
  return (v + m - 1) / m * m;
}

// Blocks of `kernel` resident on the whole current device for this shared
// memory size, cached per (kernel, device, slot): the query costs host time
// that the chunk loop should not pay on every launch.
template <typename Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, std::size_t smem, int slot) {
  constexpr int kDevices = 16;
  constexpr int kSlots = 129; // tap_tile / 16 for tap tiles up to 2048
  static std::atomic<std::int64_t> cache[kDevices][kSlots] = {};
  int device = 0;
  SIGSTREAM_CUDA_TRY(cudaGetDevice(&device));
  const bool cacheable = device < kDevices && slot < kSlots;
  if (cacheable) {
    const std::int64_t hit = cache[device][slot].load(std::memory_order_relaxed);
    if (hit > 0)
      return hit;
  }
  int sms = 0;
  int per_sm = 0;
  SIGSTREAM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SIGSTREAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const std::int64_t blocks = static_cast<std::int64_t>(std::max(sms, 1)) * std::max(per_sm, 1);
  if (cacheable)
    cache[device][slot].store(blocks, std::memory_order_relaxed);
  return blocks;
}

template <typename Kernel> void allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(kMaxSharedWithoutOptIn))
    SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
}

} // namespace

FirInputRange input_range(const FirInputSpan& span, std::int64_t n, int taps, const char* who) {
  if (span.len < 0)
    return {0, n + taps - 1};
  if (span.lead < 0)
    throw Error(ErrorKind::invalid_argument, std::string(who) + ": input span lead " +
                                                 std::to_string(span.lead) + " must be >= 0");
  return {span.lead, span.lead + span.len};
}

template <typename P> std::string describe_fir_policy() {
  return std::to_string(P::kThreads) + " threads x " + std::to_string(P::kOutputsPerThread) +
         " outputs (tile " + std::to_string(P::kTile) + "), taps unrolled by " +
         std::to_string(P::kTapUnroll) + (P::kReuseWindow ? " with window reuse" : "") +
         ", tap tile " + std::to_string(P::kTapTile);
}

template <typename P>
void fir_direct_with_policy(const float* d_x, std::int64_t n, const float* d_h, int taps,
                            float* d_y, int channels, std::int64_t x_stride, std::int64_t y_stride,
                            cudaStream_t stream, FirInputSpan span) {
  auto bad = [](const std::string& m) {
    return Error(ErrorKind::invalid_argument, "fir_direct: " + m);
  };
  if (taps < 1)
    throw bad("taps must be >= 1 (got " + std::to_string(taps) + ")");
  if (n < 0)
    throw bad("n must be >= 0 (got " + std::to_string(n) + ")");
  if (channels < 0 || channels > 65535)
    throw bad("channels must be in 0..65535 (got " + std::to_string(channels) + ")");
  if (n == 0 || channels == 0)
    return;
  if (d_x == nullptr || d_h == nullptr || d_y == nullptr)
    throw bad("null pointer");
  if (channels > 1 && (y_stride < n || x_stride < 0))
    throw bad("y_stride " + std::to_string(y_stride) + " < n " + std::to_string(n));
  const std::int64_t tiles = (n + P::kTile - 1) / P::kTile;
  if (tiles > 0x7fffffff)
    throw bad("n too large (" + std::to_string(n) + ")");
  const auto [x_lead, x_end] = input_range(span, n, taps, "fir_direct");

  if (taps <= P::kTapTile) {
    const int tap_tile = round_up(taps, 16);
    const std::size_t smem =
        static_cast<std::size_t>(tap_tile + 2 * (P::kTile + tap_tile + 8)) * sizeof(float);
    allow_shared(fir_direct_streaming_kernel<P>, smem);
    const std::int64_t resident =
        resident_blocks(fir_direct_streaming_kernel<P>, P::kThreads, smem, tap_tile / 16);
    // As many blocks as fit, each taking every gridDim.x-th tile, spread so
    // that blocks get equal counts (a last wave of a few tiles would double
    // the time, and leave the GPU idle for other streams' work meanwhile).
    const std::int64_t per_channel = std::max<std::int64_t>(1, resident / channels);
    const std::int64_t waves = (tiles + per_channel - 1) / per_channel;
    const std::int64_t blocks = (tiles + waves - 1) / waves;
    const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(channels));
    fir_direct_streaming_kernel<P><<<grid, P::kThreads, smem, stream>>>(
        d_x, n, d_h, taps, tap_tile, d_y, x_stride, y_stride, tiles, x_lead, x_end);
    SIGSTREAM_CUDA_CHECK_LAUNCH("fir_direct_streaming_kernel");
  } else {
    const int tap_tile = P::kTapTile;
    const std::size_t smem = static_cast<std::size_t>(2 * tap_tile + P::kTile + 8) * sizeof(float);
    allow_shared(fir_direct_tiled_kernel<P>, smem);
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(channels));
    fir_direct_tiled_kernel<P><<<grid, P::kThreads, smem, stream>>>(
        d_x, n, d_h, taps, tap_tile, d_y, x_stride, y_stride, x_lead, x_end);
    SIGSTREAM_CUDA_CHECK_LAUNCH("fir_direct_tiled_kernel");
  }
}

void fir_direct(const float* d_x, std::int64_t n, const float* d_h, int taps, float* d_y,
                int channels, std::int64_t x_stride, std::int64_t y_stride, cudaStream_t stream,
                FirInputSpan span) {
  fir_direct_with_policy<FirDirectDefaultPolicy>(d_x, n, d_h, taps, d_y, channels, x_stride,
                                                 y_stride, stream, span);
}

std::string fir_direct_policy() {
  return "fir_direct: " + describe_fir_policy<FirDirectDefaultPolicy>() +
         "; K <= tap tile: persistent blocks, cp.async double-buffered windows; longer: tiled taps";
}

#define SIGSTREAM_FIR_POLICY_INSTANTIATE(P)                                                        \
  template void fir_direct_with_policy<P>(const float*, std::int64_t, const float*, int, float*,   \
                                          int, std::int64_t, std::int64_t, cudaStream_t,           \
                                          FirInputSpan);                                           \
  template std::string describe_fir_policy<P>();
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy0)
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy1)
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy2)
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy3)
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy4)
SIGSTREAM_FIR_POLICY_INSTANTIATE(FirBenchPolicy5)
#undef SIGSTREAM_FIR_POLICY_INSTANTIATE

} // namespace sigstream::kernels::cuda
