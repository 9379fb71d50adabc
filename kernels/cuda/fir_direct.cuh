#pragma once
// Direct FIR convolution on the GPU, bit-identical to kernels::cpu::fir_direct.
//
//   y[c][i] = sum_{k=0}^{K-1} h[k] * x[c][i + K - 1 - k],   i = 0 .. n-1, c = 0 .. channels-1
//
// Each output is accumulated from 0.f over k ascending with one fmaf per tap:
// the same operations in the same order as the CPU reference, so both produce
// the same bits. The strategy (tiles, shared memory, tap tiling) is described
// at the top of fir_direct.cu.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace sigstream::kernels::cuda {

// Tuning knobs of the direct kernel (a compile-time policy, printable).
//   Threads:    threads per block.
//   Outputs:    outputs per thread, contiguous, held in registers. Odd, so that
//               threads reading their windows at stride Outputs hit distinct banks.
//   TapUnroll:  taps per register window (32, 16 or 8): each window of
//               Outputs + TapUnroll - 1 inputs feeds Outputs * TapUnroll fmas.
//   TapTile:    taps per shared-memory tile; longer filters loop over tiles.
//   Reuse:      run groups in pairs, keeping the R - 1 inputs two consecutive
//               windows share in registers (fewer shared loads per fma).
template <int Threads, int Outputs, int TapUnroll, int TapTile, bool Reuse = false>
struct FirDirectPolicy {
  static constexpr int kThreads = Threads;
  static constexpr int kOutputsPerThread = Outputs;
  static constexpr int kTapUnroll = TapUnroll;
  static constexpr int kTapTile = TapTile;
  static constexpr bool kReuseWindow = Reuse;
  static constexpr int kTile = Threads * Outputs; // outputs per block

  static_assert(Threads % 32 == 0 && Threads <= 1024, "whole warps");
  static_assert(Outputs % 2 == 1, "odd outputs per thread keep shared reads conflict-free");
  static_assert(TapUnroll == 32 || TapUnroll == 16 || TapUnroll == 8, "tap unroll 32, 16 or 8");
  static_assert(TapTile % 16 == 0 && TapTile >= 16, "tap tiles keep 16-byte tap alignment");
};

// What fir_direct runs. Measured on an H100 (bench/gpu_fir.cu --policies)
// against the other compiled policies: the best at 1023 taps and within 5% of
// the best at every tap count from 1 to 4096 (the longest unroll with window
// reuse needs the fewest shared loads per fma; 256 threads keep enough warps
// per scheduler).
using FirDirectDefaultPolicy = FirDirectPolicy<256, 15, 32, 2048, true>;

// Where the input samples are. By default (lead 0, len -1) channel c holds
// all n + taps - 1 samples the contract reads. Otherwise it holds only `len`
// samples at d_x + c * x_stride, which are the contract's inputs lead ..
// lead + len - 1; the inputs before and after them are zeros, and nothing
// outside those len samples is read. A clip without padding is filtered in
// place this way: causal is {taps - 1, N}, full {taps - 1, N}, same
// {taps - 1 - (taps - 1) / 2, N}.
struct FirInputSpan {
  std::int64_t lead = 0;
  std::int64_t len = -1;
};

// The contract's inputs [lead, end) a span says hold data, for n outputs of
// `taps` taps (the default span: all n + taps - 1). Throws
// Error(invalid_argument), prefixed with `who`, for a negative lead or length.
struct FirInputRange {
  std::int64_t lead = 0;
  std::int64_t end = 0;
};
[[nodiscard]] FirInputRange input_range(const FirInputSpan& span, std::int64_t n, int taps,
                                        const char* who);

// Launches the direct FIR on `stream` (asynchronous; no synchronisation).
//   d_x:       channel c's input at d_x + c * x_stride, n + taps - 1 samples
//              (the taps - 1 samples before output 0, then n more).
//   n:         outputs per channel (0: nothing is launched).
//   d_h:       `taps` float taps in device memory (taps >= 1).
//   d_y:       channel c's output at d_y + c * y_stride, n samples; must not
//              overlap the input.
//   channels:  1 .. 65535.
// Any float alignment of d_x/d_y/strides works; 16-byte alignment is faster.
// Throws Error(invalid_argument) for bad arguments, Error(cuda) for a failed launch.
void fir_direct(const float* d_x, std::int64_t n, const float* d_h, int taps, float* d_y,
                int channels, std::int64_t x_stride, std::int64_t y_stride, cudaStream_t stream,
                FirInputSpan span = {});

// What fir_direct runs (policy and kernel choice), for logs.
[[nodiscard]] std::string fir_direct_policy();

// The same launcher with another policy, for benchmarks and tests. Instantiated
// in fir_direct.cu for FirBenchPolicy0 .. FirBenchPolicy5.
template <typename Policy>
void fir_direct_with_policy(const float* d_x, std::int64_t n, const float* d_h, int taps,
                            float* d_y, int channels, std::int64_t x_stride, std::int64_t y_stride,
                            cudaStream_t stream, FirInputSpan span = {});
template <typename Policy> [[nodiscard]] std::string describe_fir_policy();

// Policies compiled for comparison (benchmarks, tests).
using FirBenchPolicy0 = FirDirectDefaultPolicy;
using FirBenchPolicy1 = FirDirectPolicy<128, 15, 32, 2048, true>;
using FirBenchPolicy2 = FirDirectPolicy<128, 15, 16, 2048>;
using FirBenchPolicy3 = FirDirectPolicy<256, 15, 16, 2048, true>;
using FirBenchPolicy4 = FirDirectPolicy<128, 15, 8, 2048>;
using FirBenchPolicy5 = FirDirectPolicy<256, 11, 32, 2048, true>;

#define SIGSTREAM_FIR_POLICY_EXTERN(P)                                                             \
  extern template void fir_direct_with_policy<P>(const float*, std::int64_t, const float*, int,    \
                                                 float*, int, std::int64_t, std::int64_t,          \
                                                 cudaStream_t, FirInputSpan);                      \
  extern template std::string describe_fir_policy<P>();
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy0)
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy1)
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy2)
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy3)
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy4)
SIGSTREAM_FIR_POLICY_EXTERN(FirBenchPolicy5)
#undef SIGSTREAM_FIR_POLICY_EXTERN

} // namespace sigstream::kernels::cuda
