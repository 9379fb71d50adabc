#pragma once
// The one-pass overlap-save kernel behind FftFir (kernels/cuda/fir_fft.cuh):
// each thread block reads one segment of L inputs, transforms it with a
// cuFFTDx block FFT in registers and shared memory, multiplies by the taps'
// spectrum, transforms back and writes the segment's L - K + 1 new outputs.
// The input is read from DRAM about once (neighbouring segments' K - 1
// shared inputs come from L2) and the output written once: two streams of
// bytes against the five passes of the cuFFT path. Internal to FftFir.
#include <cuda_runtime.h>

#include <cstdint>

namespace sigstream::kernels::cuda::detail {

// Whether this build holds the fused kernel (cuFFTDx headers were found).
[[nodiscard]] bool fused_fft_built() noexcept;

// Whether the fused kernel runs FFT length `fft` on the current device: a
// compiled size (powers of two 1024 .. 65536) on a compute capability 9.0
// device. Throws Error(cuda) if the device cannot be queried.
[[nodiscard]] bool fused_fft_supported(int fft);

// Raises the kernel's dynamic shared-memory limit for `fft` on the current
// device (once per device and size; thread-safe). Throws Error(cuda) on failure.
void fused_fft_prepare(int fft);

// Segment q of the call (channel c = q / seg_per_channel, s = q % it) for q
// in [0, segments): x is channel c's virtual input, data[c][i - x_lead] for
// i in [x_lead, x_len), zeros elsewhere; the segment transforms x[s*B ..
// s*B + L) and writes y[c][s*B + j], j < min(B, n - s*B). `spectrum` holds
// L/2 + 1 bins of the taps, scaled by 1/L. Asynchronous on `stream`, on the
// current device, for which fused_fft_prepare(fft) must have run.
struct FusedFftCall {
  const float* d_x;
  std::int64_t x_stride;
  std::int64_t x_lead;
  std::int64_t x_len;
  std::int64_t seg_per_channel;
  std::int64_t segments;
  int block;
  int taps;
  int fft;
  const float2* spectrum;
  std::int64_t n;
  float* d_y;
  std::int64_t y_stride;
};
void fused_fft_run(const FusedFftCall& call, cudaStream_t stream);

} // namespace sigstream::kernels::cuda::detail
