#pragma once
// Welch power sums on the GPU: the metrics spectrum's CUDA step (SPEC §8),
// the CPU's kernels::cpu::Welch::add for `channels` planes at once. Per call:
// one kernel gathers each counted segment times the window into float64
// rows (core/welch_segments.hpp says which segments), one batched cuFFT D2Z
// transforms them, and CUB's segmented reduction sums |X|^2 over the
// segments per (channel, bin), in float64 (the float32 input exactly, every
// product and sum in double: the CPU's result to ~1e-15).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/resources.hpp"

namespace sigstream::kernels::cuda {

class DeviceWelch {
public:
  // `window`: nfft >= 1 finite values; 1 <= hop <= nfft; at most
  // `max_segments` segments per call and channel; 1 <= channels. Throws
  // Error(invalid_argument) for bad arguments, Error(cuda) when it cannot
  // allocate or plan.
  DeviceWelch(std::span<const double> window, int hop, std::int64_t max_segments, int channels);

  [[nodiscard]] int nfft() const noexcept { return nfft_; }
  [[nodiscard]] int hop() const noexcept { return hop_; }
  [[nodiscard]] int bins() const noexcept { return nfft_ / 2 + 1; }
  // The most segments a call counts when it holds `frames` frames beyond its look-back.
  [[nodiscard]] static std::int64_t segments_for(std::int64_t frames, int hop) noexcept {
    return frames / hop + 1;
  }

  // Channel c's frames [first, first + n) at d_x + c * x_stride: enqueues on
  // `stream` the power sums of the segments counted (inside those frames,
  // last frame in [own_lo, own_hi)) into d_power[c * bins() + k],
  // overwriting it (zeros when none), and returns how many segments (known
  // on the host: nothing waits). Throws Error(invalid_argument) when they are
  // more than max_segments, Error(cuda) for a failed launch.
  std::int64_t sums(const float* d_x, std::int64_t x_stride, std::int64_t first, std::int64_t n,
                    std::int64_t own_lo, std::int64_t own_hi, double* d_power, cudaStream_t stream);

private:
  int nfft_ = 0;
  int hop_ = 1;
  int channels_ = 1;
  std::int64_t max_segments_ = 0;
  DeviceBuffer<double> window_;
  DeviceBuffer<double> rows_;  // [channel][max_segments][nfft]: windowed segments
  DeviceBuffer<double2> bins_; // [channel][max_segments][bins]
  CufftPlan plan_;
  DeviceBuffer<std::byte> work_;
  DeviceBuffer<std::byte> reduce_temp_;
};

} // namespace sigstream::kernels::cuda
