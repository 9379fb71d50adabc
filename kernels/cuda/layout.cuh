#pragma once
// Sample layout on the GPU: interleaved file samples <-> planar float channels,
// with the exact PCM rules of kernels/cpu/layout.hpp (SPEC §3), plus the two
// element-wise helpers of the stage chain (gain, zeroing outside a range).
// Every function enqueues on `stream` and returns at once; n == 0 or
// channels == 0 launches nothing. Bad arguments throw Error(invalid_argument),
// a failed launch Error(cuda).
#include <cuda_runtime.h>

#include <cstdint>

#include "core/sample_block.hpp"

namespace sigstream::kernels::cuda {

// Frames [first, first + n) of the interleaved block d_in (`channels` samples
// per frame, `type`) into d_out[c * out_stride + i], i = 0 .. n-1, as float:
// int16 v -> v * 2^-15, int32 v -> v * 2^-31, float as is.
void deinterleave(const void* d_in, SampleType type, int channels, std::int64_t first,
                  std::int64_t n, float* d_out, std::int64_t out_stride, cudaStream_t stream);

// Planar d_in[c * in_stride + i], i = 0 .. n-1, into the interleaved block
// d_out (frames 0 .. n-1, `type`). PCM (`bits` 1..16 in int16, 1..32 in
// int32, left-justified): nearest-even of double(y) * 2^(bits-1), clipped to
// [-2^(bits-1), 2^(bits-1) - 1]; NaN is written as 0 and counts as clipped.
// The number of clipped samples is added to *d_clipped (exact integer atomics;
// the caller zeroes it). float (`bits` ignored): a copy, nothing clipped,
// d_clipped may be null.
void interleave(const float* d_in, std::int64_t in_stride, int channels, std::int64_t n,
                SampleType type, int bits, void* d_out, unsigned long long* d_clipped,
                cudaStream_t stream);

// d_y[c * y_stride + i] = d_x[c * x_stride + i] * g (float multiply), i = 0 .. n-1.
// In place (d_y == d_x, same strides) is fine.
void gain(const float* d_x, std::int64_t x_stride, float* d_y, std::int64_t y_stride, int channels,
          std::int64_t n, float g, cudaStream_t stream);

// Sets d_y[c * stride + i] = 0 for i in [0, lo) and [hi, len), 0 <= lo <= hi <= len.
void zero_outside(float* d_y, std::int64_t stride, int channels, std::int64_t len, std::int64_t lo,
                  std::int64_t hi, cudaStream_t stream);

} // namespace sigstream::kernels::cuda
