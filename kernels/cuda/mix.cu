// Mixing kernels: one thread per frame (grid-stride), planar loads and
// stores coalesced per channel. With up to kRegs inputs a thread holds its
// frame's inputs in registers and forms every output from them; wider mixes
// read the inputs again for each output (from L1/L2: they were just read).
#include "kernels/cuda/mix.cuh"

#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 32768;
constexpr int kRegs = 16;

Error bad(const char* fn, const std::string& m) {
  return Error(ErrorKind::invalid_argument, std::string(fn) + ": " + m);
}

unsigned blocks_for(std::int64_t n) {
  std::int64_t b = (n + kThreads - 1) / kThreads;
  if (b > kMaxBlocks)
    b = kMaxBlocks;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

void check(const char* fn, const void* x, const void* table, const float* y, int in, int out,
           std::int64_t n) {
  if (n < 0)
    throw bad(fn, "n must be >= 0 (got " + std::to_string(n) + ")");
  if (in < 1 || out < 1 || in > 65535 || out > 65535)
    throw bad(fn, "channels must be in 1..65535 (got " + std::to_string(in) + " in, " +
                      std::to_string(out) + " out)");
  if (n > 0 && (x == nullptr || table == nullptr || y == nullptr))
    throw bad(fn, "null pointer");
}

__global__ void __launch_bounds__(kThreads)
    mix_kernel(const float* __restrict__ d_x, std::int64_t x_stride, int in,
               const float* __restrict__ g, float* __restrict__ d_y, std::int64_t y_stride, int out,
               std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += step) {
    if (in <= kRegs) {
      float x[kRegs];
#pragma unroll
      for (int j = 0; j < kRegs; ++j)
        if (j < in)
          x[j] = d_x[j * x_stride + i];
      for (int c = 0; c < out; ++c) {
        const float* row = g + static_cast<std::int64_t>(c) * in;
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j < kRegs; ++j)
          if (j < in && row[j] != 0.0f) // a zero gain's term is left out, as on the CPU
            acc = __fmaf_rn(row[j], x[j], acc);
        d_y[c * y_stride + i] = acc;
      }
    } else {
      for (int c = 0; c < out; ++c) {
        const float* row = g + static_cast<std::int64_t>(c) * in;
        float acc = 0.0f;
        for (int j = 0; j < in; ++j)
          if (row[j] != 0.0f)
            acc = __fmaf_rn(row[j], d_x[j * x_stride + i], acc);
        d_y[c * y_stride + i] = acc;
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    select_kernel(const float* __restrict__ d_x, std::int64_t x_stride,
                  const int* __restrict__ pick, float* __restrict__ d_y, std::int64_t y_stride,
                  std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const float* x = d_x + pick[blockIdx.y] * x_stride;
  float* y = d_y + blockIdx.y * y_stride;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += step)
    y[i] = x[i];
}

} // namespace

void mix(const float* d_x, std::int64_t x_stride, int in, const float* d_gains, float* d_y,
         std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream) {
  check("mix", d_x, d_gains, d_y, in, out, n);
  if (n == 0)
    return;
  mix_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_x, x_stride, in, d_gains, d_y, y_stride, out,
                                                     n);
  SIGSTREAM_CUDA_CHECK_LAUNCH("mix_kernel");
}

void select_planes(const float* d_x, std::int64_t x_stride, int in, const int* d_pick, float* d_y,
                   std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream) {
  check("select_planes", d_x, d_pick, d_y, in, out, n);
  if (n == 0)
    return;
  select_kernel<<<dim3(blocks_for(n), static_cast<unsigned>(out)), kThreads, 0, stream>>>(
      d_x, x_stride, d_pick, d_y, y_stride, n);
  SIGSTREAM_CUDA_CHECK_LAUNCH("select_kernel");
}

} // namespace sigstream::kernels::cuda
