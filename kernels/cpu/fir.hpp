#pragma once
// Direct FIR convolution on the CPU: the reference arithmetic of sigstream.
//
//   y[i] = sum_{k=0}^{K-1} h[k] * x[i + K - 1 - k],   i = 0 .. n-1
//
// `x` holds n + K - 1 samples (the K-1 samples before the first output frame,
// then the n frames). Each output is accumulated over k ascending, starting
// from 0, with one fused multiply-add per tap (fmaf). The CUDA kernel does the
// same operations in the same order, so the two agree bit for bit.
#include <cstdint>

namespace sigstream::kernels::cpu {

void fir_direct(const float* x, std::int64_t n, const float* h, int taps, float* y);

// The same sum in float64 (the verification reference).
void fir_direct_f64(const double* x, std::int64_t n, const double* h, int taps, double* y);

// What fir_direct costs per tap and output on this CPU (one thread), for the
// method rule: measured per instruction set the kernel picks at run time
// (bench/RESULTS-cpu-crossover.md).
[[nodiscard]] double fir_direct_ns_per_fma() noexcept;

} // namespace sigstream::kernels::cpu
