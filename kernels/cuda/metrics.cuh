#pragma once
// The fused metrics pass of SPEC §4 on the GPU: per channel, over n frames of
// a planar signal y and the source x at the same frames, in float64:
// energy (sum y^2), sum, peak (max |y|), dot (sum x*y), source_energy
// (sum x^2, every frame), nonfinite (NaN/Inf samples of y, which enter
// energy/sum/dot/peak as 0). Exactly the per-sample rules of
// kernels::cpu::channel_metrics; only the order of the float64 additions
// differs (a fixed tree, so the result is deterministic: same inputs, same
// bits, every run).
//
// Two passes, no atomics: blocks write partial results to a scratch array,
// then one block per channel reduces them in a fixed order.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace sigstream::kernels::cuda {

// Field for field the layout of sigstream::ChannelMetrics (stages/metrics.hpp;
// metrics.cu static_asserts it), so results can be copied back as they are.
struct DeviceChannelMetrics {
  double energy;
  double sum;
  double peak;
  double dot;
  double source_energy;
  std::int64_t nonfinite;
  std::int64_t frames;
};

// One block's partial result (scratch between the two passes).
struct MetricsPartial {
  double energy;
  double sum;
  double peak;
  double dot;
  double source_energy;
  long long nonfinite;
};

// Blocks per channel of the first pass, at most.
inline constexpr int kMetricsMaxBlocksPerChannel = 1024;

// Scratch entries channel_metrics needs for `channels` channels.
[[nodiscard]] constexpr std::size_t metrics_partials_count(int channels) noexcept {
  return static_cast<std::size_t>(channels) * kMetricsMaxBlocksPerChannel;
}

// Enqueues both passes on `stream`.
//   d_y:        channel c's signal at d_y + c * y_stride, n floats.
//   d_x:        channel c's source at d_x + c * x_stride, n floats; nullptr = zeros.
//   n:          frames (0 is fine: zero sums, frames = 0).
//   d_partials: scratch, metrics_partials_count(channels) entries; a stream may
//               reuse it for the next call (the passes are stream-ordered).
//   d_out:      channels results; frames = n.
// Throws Error(invalid_argument) for bad arguments, Error(cuda) for a failed launch.
void channel_metrics(const float* d_y, std::int64_t y_stride, const float* d_x,
                     std::int64_t x_stride, std::int64_t n, int channels,
                     MetricsPartial* d_partials, DeviceChannelMetrics* d_out, cudaStream_t stream);

} // namespace sigstream::kernels::cuda
