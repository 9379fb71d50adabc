#pragma once
// Polyphase rational resampling on the GPU, bit-identical to
// kernels::cpu::resample_direct (kernels/cpu/resample.hpp):
//
//   y[m] = sum_t h[phi + t*up] * x[newest - t],  a = m*down + delay,
//   newest = floor(a / up),  phi = a - newest*up,
//
// accumulated from 0.f over t ascending with one fmaf per tap, the CPU's
// order. The strategy is described at the top of resample.cu.
#include <cuda_runtime.h>

#include <cstdint>

namespace sigstream::kernels::cuda {

// The filter as the launcher takes it: d_taps holds the K taps h[0..K) in
// device memory, in their own order (phase p's taps are h[p + t*up]).
struct DevicePolyphase {
  const float* d_taps = nullptr;
  int taps = 0; // K
  int up = 1;
  int down = 1;
  std::int64_t delay = 0;    // in up-sampled frames (lookahead)
  std::int64_t lookback = 0; // K - 1 - delay
};

// Which kernel runs (resample.cu): automatic picks by ratio and fit; the
// others are for benchmarks and tests, and fall back to the next one where
// they cannot run (class tiles -> blocked -> one output at a time).
enum class ResampleKernel { automatic, class_tiles, blocked, simple };

// Enqueues output frames [y_first, y_first + n) of `channels` planes
// (channel c at d_y + c * y_stride) from d_x (element 0 is input frame
// x_first, channel c at d_x + c * x_stride), which must hold every input
// frame those outputs read. n may be 0 (nothing is launched); channels
// 1 .. 65535. Throws Error(invalid_argument) for bad arguments, Error(cuda)
// for a failed launch.
void resample(const float* d_x, std::int64_t x_first, std::int64_t x_stride, float* d_y,
              std::int64_t y_first, std::int64_t y_stride, std::int64_t n, int channels,
              const DevicePolyphase& filter, cudaStream_t stream,
              ResampleKernel kernel = ResampleKernel::automatic);

} // namespace sigstream::kernels::cuda
