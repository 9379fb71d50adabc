// Mixing kernels: grid-stride over frames, planar loads and stores coalesced
// per channel. Up to kOutRegs outputs (every down-mix to 7.1 or fewer, most
// up-mixes) keep their sums in registers and read each input once; more
// outputs keep up to kRegs inputs in registers instead.
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

// Each thread takes kFrames frames kThreads apart, so that a warp's loads of
// one plane stay coalesced and each thread has kFrames loads in flight.
constexpr int kFrames = 4;
// Outputs whose sums a thread keeps (kFrames x kOutRegs registers: eight
// keeps the kernel near 64 registers, four blocks of 256 threads an SM).
constexpr int kOutRegs = 8;

// Up to kOutRegs outputs: their sums stay in registers while each input plane
// is read once; output c's terms still come in ascending j (the loop over
// c is inside the loop over j), one fmaf each, zero gains left out.
__global__ void __launch_bounds__(kThreads)
    mix_few_outputs(const float* __restrict__ d_x, std::int64_t x_stride, int in,
                    const float* __restrict__ g, float* __restrict__ d_y, std::int64_t y_stride,
                    int out, std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads * kFrames;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kThreads * kFrames + threadIdx.x;
       base < n; base += step) {
    float acc[kFrames][kOutRegs];
#pragma unroll
    for (int f = 0; f < kFrames; ++f)
#pragma unroll
      for (int c = 0; c < kOutRegs; ++c)
        acc[f][c] = 0.0f;
    for (int j = 0; j < in; ++j) {
      const float* xj = d_x + j * x_stride;
      float x[kFrames];
#pragma unroll
      for (int f = 0; f < kFrames; ++f) {
        const std::int64_t i = base + f * kThreads;
        x[f] = i < n ? xj[i] : 0.0f;
      }
#pragma unroll
      for (int c = 0; c < kOutRegs; ++c) {
        if (c >= out)
          break;
        const float gc = g[c * in + j];
        if (gc != 0.0f)
#pragma unroll
          for (int f = 0; f < kFrames; ++f)
            acc[f][c] = __fmaf_rn(gc, x[f], acc[f][c]);
      }
    }
#pragma unroll
    for (int f = 0; f < kFrames; ++f) {
      const std::int64_t i = base + f * kThreads;
      if (i >= n)
        break;
#pragma unroll
      for (int c = 0; c < kOutRegs; ++c)
        if (c < out)
          d_y[c * y_stride + i] = acc[f][c];
    }
  }
}

// More outputs: with up to kRegs inputs a thread holds its frame's inputs in
// registers and forms every output from them; wider mixes read the inputs
// again for each output (from L1/L2: they were just read).
__global__ void __launch_bounds__(kThreads)
    mix_many_outputs(const float* __restrict__ d_x, std::int64_t x_stride, int in,
                     const float* __restrict__ g, float* __restrict__ d_y, std::int64_t y_stride,
                     int out, std::int64_t n) {
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
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads * kFrames;
  const float* x = d_x + pick[blockIdx.y] * x_stride;
  float* y = d_y + blockIdx.y * y_stride;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kThreads * kFrames + threadIdx.x;
       base < n; base += step) {
    float v[kFrames];
#pragma unroll
    for (int f = 0; f < kFrames; ++f) {
      const std::int64_t i = base + f * kThreads;
      v[f] = i < n ? x[i] : 0.0f;
    }
#pragma unroll
    for (int f = 0; f < kFrames; ++f) {
      const std::int64_t i = base + f * kThreads;
      if (i < n)
        y[i] = v[f];
    }
  }
}

} // namespace

void mix(const float* d_x, std::int64_t x_stride, int in, const float* d_gains, float* d_y,
         std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream) {
  check("mix", d_x, d_gains, d_y, in, out, n);
  if (n == 0)
    return;
  if (out <= kOutRegs) {
    mix_few_outputs<<<blocks_for((n + kFrames - 1) / kFrames), kThreads, 0, stream>>>(
        d_x, x_stride, in, d_gains, d_y, y_stride, out, n);
    SIGSTREAM_CUDA_CHECK_LAUNCH("mix_few_outputs");
  } else {
    mix_many_outputs<<<blocks_for(n), kThreads, 0, stream>>>(d_x, x_stride, in, d_gains, d_y,
                                                             y_stride, out, n);
    SIGSTREAM_CUDA_CHECK_LAUNCH("mix_many_outputs");
  }
}

void select_planes(const float* d_x, std::int64_t x_stride, int in, const int* d_pick, float* d_y,
                   std::int64_t y_stride, int out, std::int64_t n, cudaStream_t stream) {
  check("select_planes", d_x, d_pick, d_y, in, out, n);
  if (n == 0)
    return;
  select_kernel<<<dim3(blocks_for((n + kFrames - 1) / kFrames), static_cast<unsigned>(out)),
                  kThreads, 0, stream>>>(d_x, x_stride, d_pick, d_y, y_stride, n);
  SIGSTREAM_CUDA_CHECK_LAUNCH("select_kernel");
}

} // namespace sigstream::kernels::cuda
