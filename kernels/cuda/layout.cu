// Layout kernels: one thread per frame (grid-stride), channels in an inner
// loop, so interleaved reads/writes of a warp cover one contiguous span and
// planar reads/writes are coalesced per channel. Clip counts: per-thread
// integers, block-reduced, then one integer atomicAdd per block (exact, so the
// total does not depend on scheduling).
#include "kernels/cuda/layout.cuh"

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 32768;

Error bad(const char* fn, const std::string& m) {
  return Error(ErrorKind::invalid_argument, std::string(fn) + ": " + m);
}

void check_common(const char* fn, int channels, std::int64_t n) {
  if (n < 0)
    throw bad(fn, "n must be >= 0 (got " + std::to_string(n) + ")");
  if (channels < 0 || channels > 65535)
    throw bad(fn, "channels must be in 0..65535 (got " + std::to_string(channels) + ")");
}

unsigned blocks_for(std::int64_t n) {
  std::int64_t b = (n + kThreads - 1) / kThreads;
  if (b > kMaxBlocks)
    b = kMaxBlocks;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

template <typename T> __device__ __forceinline__ float to_float(T v);
template <> __device__ __forceinline__ float to_float<std::int16_t>(std::int16_t v) {
  return static_cast<float>(v) * 0x1p-15f;
}
template <> __device__ __forceinline__ float to_float<std::int32_t>(std::int32_t v) {
  return static_cast<float>(v) * 0x1p-31f;
}
template <> __device__ __forceinline__ float to_float<float>(float v) {
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    deinterleave_kernel(const T* __restrict__ d_in, int channels, std::int64_t n,
                        float* __restrict__ d_out, std::int64_t out_stride) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += step) {
    const T* frame = d_in + i * channels;
    for (int c = 0; c < channels; ++c)
      d_out[c * out_stride + i] = to_float(frame[c]);
  }
}

// kernels::cpu::quantize, on the device: rint is round-to-nearest-even.
__device__ __forceinline__ std::int32_t quantize(float y, double scale, int& clipped) {
  if (isnan(y)) {
    ++clipped;
    return 0;
  }
  const double r = rint(static_cast<double>(y) * scale);
  const double lo = -scale;
  const double hi = scale - 1.0;
  if (r < lo) {
    ++clipped;
    return static_cast<std::int32_t>(lo);
  }
  if (r > hi) {
    ++clipped;
    return static_cast<std::int32_t>(hi);
  }
  return static_cast<std::int32_t>(r);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    interleave_kernel(const float* __restrict__ d_in, std::int64_t in_stride, int channels,
                      std::int64_t n, double scale, int shift, T* __restrict__ d_out,
                      unsigned long long* __restrict__ d_clipped) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  int clipped = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += step) {
    T* frame = d_out + i * channels;
    for (int c = 0; c < channels; ++c) {
      const float v = d_in[c * in_stride + i];
      if constexpr (std::is_same_v<T, float>) {
        frame[c] = v;
      } else {
        const std::int32_t q = quantize(v, scale, clipped);
        frame[c] =
            static_cast<T>(static_cast<std::int32_t>(static_cast<std::uint32_t>(q) << shift));
      }
    }
  }
  if constexpr (!std::is_same_v<T, float>) {
    using BlockReduce = cub::BlockReduce<int, kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    const int total = BlockReduce(temp).Sum(clipped);
    if (threadIdx.x == 0 && total > 0)
      atomicAdd(d_clipped, static_cast<unsigned long long>(total));
  }
}

__global__ void __launch_bounds__(kThreads)
    gain_kernel(const float* d_x, std::int64_t x_stride, float* d_y, std::int64_t y_stride,
                std::int64_t n, float g) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const float* x = d_x + blockIdx.y * x_stride;
  float* y = d_y + blockIdx.y * y_stride;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += step)
    y[i] = x[i] * g;
}

__global__ void __launch_bounds__(kThreads)
    zero_outside_kernel(float* __restrict__ d_y, std::int64_t stride, std::int64_t lo,
                        std::int64_t hi, std::int64_t count) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  float* y = d_y + blockIdx.y * stride;
  for (std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; m < count;
       m += step)
    y[m < lo ? m : hi + (m - lo)] = 0.0f;
}

} // namespace

void deinterleave(const void* d_in, SampleType type, int channels, std::int64_t first,
                  std::int64_t n, float* d_out, std::int64_t out_stride, cudaStream_t stream) {
  check_common("deinterleave", channels, n);
  if (first < 0)
    throw bad("deinterleave", "first must be >= 0");
  if (n == 0 || channels == 0)
    return;
  if (d_in == nullptr || d_out == nullptr)
    throw bad("deinterleave", "null pointer");
  if (channels > 1 && out_stride < n)
    throw bad("deinterleave", "out_stride < n");
  const unsigned blocks = blocks_for(n);
  const std::int64_t offset = first * channels;
  switch (type) {
    case SampleType::i16:
      deinterleave_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const std::int16_t*>(d_in) + offset, channels, n, d_out, out_stride);
      break;
    case SampleType::i32:
      deinterleave_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const std::int32_t*>(d_in) + offset, channels, n, d_out, out_stride);
      break;
    case SampleType::f32:
      deinterleave_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(d_in) + offset,
                                                           channels, n, d_out, out_stride);
      break;
  }
  SIGSTREAM_CUDA_CHECK_LAUNCH("deinterleave_kernel");
}

void interleave(const float* d_in, std::int64_t in_stride, int channels, std::int64_t n,
                SampleType type, int bits, void* d_out, unsigned long long* d_clipped,
                cudaStream_t stream) {
  check_common("interleave", channels, n);
  const int width = type == SampleType::i16 ? 16 : 32;
  if (type != SampleType::f32 && (bits < 1 || bits > width))
    throw bad("interleave", "bits " + std::to_string(bits) + " do not fit the " +
                                std::to_string(width) + "-bit container");
  if (n == 0 || channels == 0)
    return;
  if (d_in == nullptr || d_out == nullptr || (type != SampleType::f32 && d_clipped == nullptr))
    throw bad("interleave", "null pointer");
  if (channels > 1 && in_stride < n)
    throw bad("interleave", "in_stride < n");
  const unsigned blocks = blocks_for(n);
  const double scale = type == SampleType::f32 ? 1.0 : static_cast<double>(1ull << (bits - 1));
  const int shift = width - bits;
  switch (type) {
    case SampleType::i16:
      interleave_kernel<<<blocks, kThreads, 0, stream>>>(
          d_in, in_stride, channels, n, scale, shift, static_cast<std::int16_t*>(d_out), d_clipped);
      break;
    case SampleType::i32:
      interleave_kernel<<<blocks, kThreads, 0, stream>>>(
          d_in, in_stride, channels, n, scale, shift, static_cast<std::int32_t*>(d_out), d_clipped);
      break;
    case SampleType::f32:
      interleave_kernel<<<blocks, kThreads, 0, stream>>>(d_in, in_stride, channels, n, scale, 0,
                                                         static_cast<float*>(d_out), d_clipped);
      break;
  }
  SIGSTREAM_CUDA_CHECK_LAUNCH("interleave_kernel");
}

void gain(const float* d_x, std::int64_t x_stride, float* d_y, std::int64_t y_stride, int channels,
          std::int64_t n, float g, cudaStream_t stream) {
  check_common("gain", channels, n);
  if (n == 0 || channels == 0)
    return;
  if (d_x == nullptr || d_y == nullptr)
    throw bad("gain", "null pointer");
  if (channels > 1 && y_stride < n)
    throw bad("gain", "y_stride < n");
  gain_kernel<<<dim3(blocks_for(n), static_cast<unsigned>(channels)), kThreads, 0, stream>>>(
      d_x, x_stride, d_y, y_stride, n, g);
  SIGSTREAM_CUDA_CHECK_LAUNCH("gain_kernel");
}

void zero_outside(float* d_y, std::int64_t stride, int channels, std::int64_t len, std::int64_t lo,
                  std::int64_t hi, cudaStream_t stream) {
  check_common("zero_outside", channels, len);
  if (lo < 0 || lo > hi || hi > len)
    throw bad("zero_outside", "need 0 <= lo <= hi <= len (lo " + std::to_string(lo) + ", hi " +
                                  std::to_string(hi) + ", len " + std::to_string(len) + ")");
  const std::int64_t count = lo + (len - hi);
  if (count == 0 || channels == 0)
    return;
  if (d_y == nullptr)
    throw bad("zero_outside", "null pointer");
  zero_outside_kernel<<<dim3(blocks_for(count), static_cast<unsigned>(channels)), kThreads, 0,
                        stream>>>(d_y, stride, lo, hi, count);
  SIGSTREAM_CUDA_CHECK_LAUNCH("zero_outside_kernel");
}

} // namespace sigstream::kernels::cuda
