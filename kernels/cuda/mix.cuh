#pragma once
// Channel mixing on the GPU (SPEC §11), the arithmetic of kernels/cpu/mix.hpp:
// y[c][i] = Σ_j g[c·in + j] · x[j][i], ascending j from 0, one fmaf a term,
// terms of gain 0 left out, so it gives the CPU's bits; and the select copy. Both enqueue on
// `stream` and return at once; n == 0 launches nothing. Bad arguments throw
// Error(invalid_argument), a failed launch Error(cuda).
#include <cuda_runtime.h>

#include <cstdint>

namespace sigstream::kernels::cuda {

// Input plane j at d_x + j * x_stride, output plane c at d_y + c * y_stride,
// frames 0 .. n-1; d_gains (device): out x in, row-major. One thread per
// frame computes every output of its frame, so each input sample is read
// from memory once. No output plane may overlap an input plane.
void mix(const float* d_x, std::int64_t x_stride, int in, const float* d_gains, float* d_y,
         std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream);

// d_y[c * y_stride + i] = d_x[d_pick[c] * x_stride + i]: output c is input
// plane d_pick[c] (device, `out` of them, each in 0 .. in-1), i = 0 .. n-1.
void select_planes(const float* d_x, std::int64_t x_stride, int in, const int* d_pick, float* d_y,
                   std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream);

} // namespace sigstream::kernels::cuda
