// Metrics: grid (B, channels) of blocks that each fold a grid-strided share of
// the frames into float64 registers, cub::BlockReduce the block's share into
// one MetricsPartial (partials[c * B + b]); then one block per channel folds
// the B partials (thread t takes partials t, t + threads, ... in order) and
// block-reduces them. Every addition happens in an order fixed by n and the
// launch shape, never by timing: no atomics.
//
// float -> double products are exact (24-bit mantissas), so the fused
// multiply-adds nvcc may form give the same values as separate operations.
#include "kernels/cuda/metrics.cuh"

#include <cub/block/block_reduce.cuh>

#include <cstddef>
#include <string>

#include "core/channel_metrics.hpp"
#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

static_assert(sizeof(DeviceChannelMetrics) == sizeof(ChannelMetrics));
static_assert(offsetof(DeviceChannelMetrics, energy) == offsetof(ChannelMetrics, energy));
static_assert(offsetof(DeviceChannelMetrics, sum) == offsetof(ChannelMetrics, sum));
static_assert(offsetof(DeviceChannelMetrics, peak) == offsetof(ChannelMetrics, peak));
static_assert(offsetof(DeviceChannelMetrics, dot) == offsetof(ChannelMetrics, dot));
static_assert(offsetof(DeviceChannelMetrics, source_energy) ==
              offsetof(ChannelMetrics, source_energy));
static_assert(offsetof(DeviceChannelMetrics, nonfinite) == offsetof(ChannelMetrics, nonfinite));
static_assert(offsetof(DeviceChannelMetrics, frames) == offsetof(ChannelMetrics, frames));

namespace {

constexpr int kThreads = 256;
constexpr int kMinFramesPerThread = 16;

struct Merge {
  __device__ __forceinline__ MetricsPartial operator()(const MetricsPartial& a,
                                                       const MetricsPartial& b) const {
    MetricsPartial m;
    m.energy = a.energy + b.energy;
    m.sum = a.sum + b.sum;
    m.peak = fmax(a.peak, b.peak);
    m.dot = a.dot + b.dot;
    m.source_energy = a.source_energy + b.source_energy;
    m.nonfinite = a.nonfinite + b.nonfinite;
    return m;
  }
};

__device__ __forceinline__ MetricsPartial zero_partial() {
  MetricsPartial m;
  m.energy = 0.0;
  m.sum = 0.0;
  m.peak = 0.0;
  m.dot = 0.0;
  m.source_energy = 0.0;
  m.nonfinite = 0;
  return m;
}

// Exactly the per-sample rule of kernels::cpu::channel_metrics: a non-finite
// y counts, and enters the sums and the peak as 0; a non-finite source sample
// enters dot and the source energy as 0 (it is counted by the metrics block
// that sees the source).
__device__ __forceinline__ void fold(MetricsPartial& m, float yf, float xf) {
  const double s = isfinite(xf) ? static_cast<double>(xf) : 0.0;
  const bool finite = isfinite(yf);
  const double f = finite ? static_cast<double>(yf) : 0.0;
  m.energy += f * f;
  m.sum += f;
  m.dot += s * f;
  m.source_energy += s * s;
  m.peak = fmax(m.peak, fabs(f));
  m.nonfinite += finite ? 0 : 1;
}

__global__ void __launch_bounds__(kThreads)
    metrics_partial_kernel(const float* __restrict__ d_y, std::int64_t y_stride,
                           const float* __restrict__ d_x, std::int64_t x_stride, std::int64_t n,
                           int blocks_per_channel, MetricsPartial* __restrict__ d_partials) {
  using BlockReduce = cub::BlockReduce<MetricsPartial, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int c = static_cast<int>(blockIdx.y);
  const float* y = d_y + c * y_stride;
  const float* x = d_x != nullptr ? d_x + c * x_stride : nullptr;
  const std::int64_t stride = static_cast<std::int64_t>(blocks_per_channel) * kThreads;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  MetricsPartial m = zero_partial();
  // Four independent loads in flight before their values are folded.
  for (; i + 3 * stride < n; i += 4 * stride) {
    float yv[4];
    float xv[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      yv[q] = __ldg(y + i + q * stride);
      xv[q] = x != nullptr ? __ldg(x + i + q * stride) : 0.0f;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q)
      fold(m, yv[q], xv[q]);
  }
  for (; i < n; i += stride)
    fold(m, __ldg(y + i), x != nullptr ? __ldg(x + i) : 0.0f);
  const MetricsPartial total = BlockReduce(temp).Reduce(m, Merge{});
  if (threadIdx.x == 0)
    d_partials[static_cast<std::int64_t>(c) * blocks_per_channel + blockIdx.x] = total;
}

__global__ void __launch_bounds__(kThreads)
    metrics_final_kernel(const MetricsPartial* __restrict__ d_partials, int blocks_per_channel,
                         std::int64_t n, DeviceChannelMetrics* __restrict__ d_out) {
  using BlockReduce = cub::BlockReduce<MetricsPartial, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int c = static_cast<int>(blockIdx.x);
  const MetricsPartial* p = d_partials + static_cast<std::int64_t>(c) * blocks_per_channel;
  MetricsPartial m = zero_partial();
  const Merge merge;
  for (int b = static_cast<int>(threadIdx.x); b < blocks_per_channel; b += kThreads)
    m = merge(m, p[b]);
  const MetricsPartial total = BlockReduce(temp).Reduce(m, merge);
  if (threadIdx.x == 0) {
    DeviceChannelMetrics out;
    out.energy = total.energy;
    out.sum = total.sum;
    out.peak = total.peak;
    out.dot = total.dot;
    out.source_energy = total.source_energy;
    out.nonfinite = total.nonfinite;
    out.frames = n;
    d_out[c] = out;
  }
}

} // namespace

void channel_metrics(const float* d_y, std::int64_t y_stride, const float* d_x,
                     std::int64_t x_stride, std::int64_t n, int channels,
                     MetricsPartial* d_partials, DeviceChannelMetrics* d_out, cudaStream_t stream) {
  auto bad = [](const std::string& m) {
    return Error(ErrorKind::invalid_argument, "channel_metrics: " + m);
  };
  if (n < 0)
    throw bad("n must be >= 0 (got " + std::to_string(n) + ")");
  if (channels < 0 || channels > 65535)
    throw bad("channels must be in 0..65535 (got " + std::to_string(channels) + ")");
  if (channels == 0)
    return;
  if (d_partials == nullptr || d_out == nullptr || (n > 0 && d_y == nullptr))
    throw bad("null pointer");
  const std::int64_t per_block = static_cast<std::int64_t>(kThreads) * kMinFramesPerThread;
  std::int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks < 1)
    blocks = 1;
  if (blocks > kMetricsMaxBlocksPerChannel)
    blocks = kMetricsMaxBlocksPerChannel;
  const int b = static_cast<int>(blocks);
  metrics_partial_kernel<<<dim3(static_cast<unsigned>(b), static_cast<unsigned>(channels)),
                           kThreads, 0, stream>>>(d_y, y_stride, d_x, x_stride, n, b, d_partials);
  SIGSTREAM_CUDA_CHECK_LAUNCH("metrics_partial_kernel");
  metrics_final_kernel<<<static_cast<unsigned>(channels), kThreads, 0, stream>>>(d_partials, b, n,
                                                                                 d_out);
  SIGSTREAM_CUDA_CHECK_LAUNCH("metrics_final_kernel");
}

} // namespace sigstream::kernels::cuda
