// Strategy (see fir_partitioned.cuh for the contract):
//  forward:  one thread block per channel; the 2P input samples go to shared
//            memory; thread t computes bins k = t, t + blockDim, ... as the
//            sum over n of x[n] * (cos, -sin)(pi k n / P), n ascending, twiddle
//            index (k n) mod 2P from the table. After a barrier the block
//            copies its new samples over the previous ones.
//  mac:      grid (channel, slice); thread t takes bins t, t + blockDim, ...;
//            for each bin it accumulates over the slice's partitions in order
//            (reads of consecutive bins by consecutive threads: coalesced).
//  inverse:  one block per channel; bins summed over the slices in order into
//            shared memory; thread t computes outputs n = P + t, ... as
//            Y0 + (-1)^n Y_P + 2 sum_{k=1}^{P-1} (Re Y_k cos - Im Y_k sin)(pi k n / P).
//            Block 0's thread 0 then moves *d_head for the next step (the
//            forward and mac kernels, earlier on the stream, have read it).
#include "kernels/cuda/fir_partitioned.cuh"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kPartitionsPerSlice = 16;

__global__ void forward_kernel(const float* __restrict__ d_new, float* __restrict__ d_prev, int P,
                               float2* __restrict__ d_fdl, const int* __restrict__ d_head,
                               const float2* __restrict__ tw, int channels) {
  extern __shared__ float x[]; // 2P samples
  const int c = blockIdx.x;
  for (int i = threadIdx.x; i < P; i += blockDim.x) {
    x[i] = d_prev[static_cast<std::size_t>(c) * P + i];
    x[P + i] = d_new[static_cast<std::size_t>(c) * P + i];
  }
  __syncthreads();
  const int n2 = 2 * P;
  float2* out = d_fdl + (static_cast<std::size_t>(*d_head) * channels + c) * (P + 1);
  for (int k = threadIdx.x; k <= P; k += blockDim.x) {
    float re = 0.0f, im = 0.0f;
    int m = 0; // (k n) mod 2P
    for (int n = 0; n < n2; ++n) {
      const float2 w = tw[m];
      re = fmaf(x[n], w.x, re);
      im = fmaf(-x[n], w.y, im);
      m += k;
      if (m >= n2)
        m -= n2;
    }
    out[k] = make_float2(re, im);
  }
  for (int i = threadIdx.x; i < P; i += blockDim.x)
    d_prev[static_cast<std::size_t>(c) * P + i] = x[P + i];
}

__global__ void mac_kernel(const float2* __restrict__ d_fdl, const float2* __restrict__ d_h,
                           const int* __restrict__ d_head, int P, int M, int channels, int slices,
                           float2* __restrict__ d_partial) {
  const int c = blockIdx.x;
  const int s = blockIdx.y;
  const int head = *d_head;
  const int j0 = s * kPartitionsPerSlice;
  const int j1 = min(M, j0 + kPartitionsPerSlice);
  const int bins = P + 1;
  for (int k = threadIdx.x; k < bins; k += blockDim.x) {
    float re = 0.0f, im = 0.0f;
    for (int j = j0; j < j1; ++j) {
      int slot = head + j;
      if (slot >= M)
        slot -= M;
      const float2 xv = d_fdl[(static_cast<std::size_t>(slot) * channels + c) * bins + k];
      const float2 hv = d_h[static_cast<std::size_t>(j) * bins + k];
      re = fmaf(xv.x, hv.x, fmaf(-xv.y, hv.y, re));
      im = fmaf(xv.x, hv.y, fmaf(xv.y, hv.x, im));
    }
    d_partial[(static_cast<std::size_t>(c) * slices + s) * bins + k] = make_float2(re, im);
  }
}

__global__ void inverse_kernel(const float2* __restrict__ d_partial, int P, int M, int slices,
                               const float2* __restrict__ tw, float* __restrict__ d_y,
                               int* __restrict__ d_head) {
  extern __shared__ float2 Y[]; // P + 1 bins
  const int c = blockIdx.x;
  const int bins = P + 1;
  for (int k = threadIdx.x; k < bins; k += blockDim.x) {
    float re = 0.0f, im = 0.0f;
    for (int s = 0; s < slices; ++s) {
      const float2 v = d_partial[(static_cast<std::size_t>(c) * slices + s) * bins + k];
      re += v.x;
      im += v.y;
    }
    Y[k] = make_float2(re, im);
  }
  __syncthreads();
  const int n2 = 2 * P;
  for (int t = threadIdx.x; t < P; t += blockDim.x) {
    const int n = P + t;
    float acc = 0.0f;
    int m = n % n2; // (k n) mod 2P, k = 1
    for (int k = 1; k < P; ++k) {
      const float2 w = tw[m];
      acc = fmaf(Y[k].x, w.x, fmaf(-Y[k].y, w.y, acc));
      m += n;
      while (m >= n2)
        m -= n2;
    }
    const float last = (n & 1) ? -Y[P].x : Y[P].x;
    d_y[static_cast<std::size_t>(c) * P + t] = Y[0].x + last + 2.0f * acc;
  }
  // The forward and mac kernels (earlier on the stream) were the readers of
  // this step's head: block 0 moves it for the next step.
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *d_head = *d_head == 0 ? M - 1 : *d_head - 1;
}

void check_shape(int channels, int block) {
  if (channels < 1 || channels > 65535 || block < 1 || block > 4096)
    throw Error(ErrorKind::invalid_argument,
                "partitioned FIR (cuda): channels " + std::to_string(channels) + ", block " +
                    std::to_string(block) + " (expected 1..65535 channels, blocks of 1..4096)");
}

} // namespace

std::vector<float> partitioned_spectra(const float* h, int taps, int block) {
  const int P = block;
  const int M = (taps + P - 1) / P;
  std::vector<float> out(static_cast<std::size_t>(M) * (P + 1) * 2);
  const double pi = std::acos(-1.0);
  for (int j = 0; j < M; ++j)
    for (int k = 0; k <= P; ++k) {
      double re = 0.0, im = 0.0;
      for (int n = 0; n < P && j * P + n < taps; ++n) {
        const double a = pi * static_cast<double>((static_cast<long long>(k) * n) % (2 * P)) / P;
        re += h[j * P + n] * std::cos(a);
        im -= h[j * P + n] * std::sin(a);
      }
      const std::size_t at = (static_cast<std::size_t>(j) * (P + 1) + k) * 2;
      out[at] = static_cast<float>(re / (2.0 * P));
      out[at + 1] = static_cast<float>(im / (2.0 * P));
    }
  return out;
}

std::vector<float> partitioned_twiddles(int block) {
  std::vector<float> tw(static_cast<std::size_t>(4 * block));
  const double pi = std::acos(-1.0);
  for (int m = 0; m < 2 * block; ++m) {
    tw[2 * static_cast<std::size_t>(m)] = static_cast<float>(std::cos(pi * m / block));
    tw[2 * static_cast<std::size_t>(m) + 1] = static_cast<float>(std::sin(pi * m / block));
  }
  return tw;
}

int partitioned_splits(int partitions) noexcept {
  return (partitions + kPartitionsPerSlice - 1) / kPartitionsPerSlice;
}

void partitioned_forward(const float* d_new, float* d_prev, int channels, int block, float* d_fdl,
                         const int* d_head, const float* d_twiddle, cudaStream_t stream) {
  check_shape(channels, block);
  // Padded to whole float4s: the compiler may load the samples several at a
  // time (memcheck saw a 12-byte read at the end of 2 floats).
  const std::size_t shared = static_cast<std::size_t>((2 * block + 3) / 4 * 4) * sizeof(float);
  forward_kernel<<<channels, kThreads, shared, stream>>>(
      d_new, d_prev, block, reinterpret_cast<float2*>(d_fdl), d_head,
      reinterpret_cast<const float2*>(d_twiddle), channels);
  SIGSTREAM_CUDA_CHECK_LAUNCH("partitioned forward");
}

void partitioned_mac(const float* d_fdl, const float* d_spectra, const int* d_head, int channels,
                     int block, int partitions, float* d_partial, cudaStream_t stream) {
  check_shape(channels, block);
  const int slices = partitioned_splits(partitions);
  mac_kernel<<<dim3(static_cast<unsigned>(channels), static_cast<unsigned>(slices)), kThreads, 0,
               stream>>>(reinterpret_cast<const float2*>(d_fdl),
                         reinterpret_cast<const float2*>(d_spectra), d_head, block, partitions,
                         channels, slices, reinterpret_cast<float2*>(d_partial));
  SIGSTREAM_CUDA_CHECK_LAUNCH("partitioned mac");
}

void partitioned_inverse(const float* d_partial, int channels, int block, int partitions,
                         const float* d_twiddle, float* d_y, int* d_head, cudaStream_t stream) {
  check_shape(channels, block);
  const std::size_t shared = static_cast<std::size_t>((block + 1 + 1) / 2 * 2) * sizeof(float2);
  inverse_kernel<<<channels, kThreads, shared, stream>>>(
      reinterpret_cast<const float2*>(d_partial), block, partitions, partitioned_splits(partitions),
      reinterpret_cast<const float2*>(d_twiddle), d_y, d_head);
  SIGSTREAM_CUDA_CHECK_LAUNCH("partitioned inverse");
}

} // namespace sigstream::kernels::cuda
