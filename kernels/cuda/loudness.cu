#include "kernels/cuda/loudness.cuh"

#include <algorithm>
#include <bit>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;

// y[c * plane + i] = x[c * stride + i] in float64, i < n (x: the first
// frame widened, the look-back's).
__global__ void widen_kernel(const float* __restrict__ x, std::int64_t stride, std::int64_t n,
                             double* __restrict__ y, std::int64_t plane) {
  const float* xc = x + static_cast<std::int64_t>(blockIdx.y) * stride;
  double* yc = y + static_cast<std::int64_t>(blockIdx.y) * plane;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    yc[i] = static_cast<double>(xc[i]);
}

// Block (k, c): the sum of squares of channel c's K-weighted frames in step
// s0 + k inside [first, first + n) (y: frame `first`), a fixed tree.
__global__ void energy_kernel(const double* __restrict__ y, std::int64_t plane, std::int64_t first,
                              std::int64_t n, std::int64_t s0, std::int64_t step, int steps,
                              double* __restrict__ out) {
  const int k = static_cast<int>(blockIdx.x);
  const int c = static_cast<int>(blockIdx.y);
  const std::int64_t lo = max(first, (s0 + k) * step);
  const std::int64_t hi = min(first + n, (s0 + k + 1) * step);
  const double* yc = y + static_cast<std::int64_t>(c) * plane - first;
  double e = 0.0;
  for (std::int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
    e += yc[i] * yc[i];
  for (int o = 16; o > 0; o /= 2)
    e += __shfl_down_sync(0xffffffffu, e, o);
  __shared__ double warp_sum[kThreads / 32];
  if ((threadIdx.x & 31) == 0)
    warp_sum[threadIdx.x / 32] = e;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (int w = 0; w < kThreads / 32; ++w)
      t += warp_sum[w];
    out[static_cast<std::int64_t>(c) * steps + k] = t;
  }
}

// Per channel (blockIdx.y), the largest |x| and |interpolated x| over
// frames [0, n) (x: frame 0; the phases' delays read before it).
__global__ void peaks_kernel(const float* __restrict__ x, std::int64_t stride, std::int64_t n,
                             LoudnessDesign d, unsigned int* __restrict__ peaks) {
  const float* xc = x + static_cast<std::int64_t>(blockIdx.y) * stride;
  float sp = 0.0f, tp = 0.0f; // fmaxf passes NaN over, as the CPU's max does
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    sp = fmaxf(sp, fabsf(xc[i]));
    for (int p = 0; p < d.phases; ++p) {
      double acc = 0.0;
      for (int q = 0; q < d.taps[p]; ++q)
        acc += d.coeff[p][q] * static_cast<double>(xc[i - d.delay[p][q]]);
      tp = fmaxf(tp, fabsf(static_cast<float>(acc)));
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    sp = fmaxf(sp, __shfl_down_sync(0xffffffffu, sp, o));
    tp = fmaxf(tp, __shfl_down_sync(0xffffffffu, tp, o));
  }
  // Non-negative floats order as their bits do.
  if ((threadIdx.x & 31) == 0) {
    atomicMax(peaks + 2 * blockIdx.y, __float_as_uint(sp));
    atomicMax(peaks + 2 * blockIdx.y + 1, __float_as_uint(tp));
  }
}

LoudnessDesign design_of(const cpu::Bs1770Meter& meter) {
  LoudnessDesign d{};
  std::copy(meter.k_b(), meter.k_b() + 5, d.b);
  std::copy(meter.k_a(), meter.k_a() + 5, d.a);
  d.step = meter.step_frames();
  d.settle = meter.settle_frames();
  const auto& phases = meter.phases();
  if (phases.size() > static_cast<std::size_t>(kLoudnessPhases))
    throw Error(ErrorKind::invalid_argument, "loudness on CUDA: " + std::to_string(phases.size()) +
                                                 " interpolator phases (at most 3)");
  d.phases = static_cast<int>(phases.size());
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (phases[p].coeff.size() > static_cast<std::size_t>(kLoudnessTaps))
      throw Error(ErrorKind::invalid_argument, "loudness on CUDA: an interpolator phase of " +
                                                   std::to_string(phases[p].coeff.size()) +
                                                   " taps (at most " +
                                                   std::to_string(kLoudnessTaps) + ")");
    d.taps[p] = static_cast<int>(phases[p].coeff.size());
    for (std::size_t q = 0; q < phases[p].coeff.size(); ++q) {
      d.coeff[p][q] = phases[p].coeff[q];
      d.delay[p][q] = phases[p].delay[q];
    }
  }
  return d;
}

} // namespace

DeviceLoudness::DeviceLoudness(const cpu::Bs1770Meter& meter, int channels, std::int64_t max_frames)
    : design_(design_of(meter)), channels_(channels),
      max_frames_(std::max<std::int64_t>(max_frames, 0)),
      max_steps_(max_frames_ / design_.step + 2),
      plane_((design_.settle + max_frames_ + 31) / 32 * 32), k_weighting_(meter.k_sections()),
      d_y_(static_cast<std::size_t>(channels) * static_cast<std::size_t>(plane_)),
      d_state_(static_cast<std::size_t>(channels) *
               static_cast<std::size_t>(k_weighting_.state_size())),
      d_work_(k_weighting_.workspace_doubles(channels, design_.settle + max_frames_)),
      d_energy_(static_cast<std::size_t>(channels) * static_cast<std::size_t>(max_steps_)),
      d_peaks_(2 * static_cast<std::size_t>(channels)), h_energy_(d_energy_.size()),
      h_peaks_(d_peaks_.size()) {
  if (channels < 1 || channels > 65535)
    throw Error(ErrorKind::invalid_argument, "loudness on CUDA: channels must be in 1..65535");
}

void DeviceLoudness::measure(const float* d_x, std::int64_t x_stride, std::int64_t first,
                             std::int64_t n, cudaStream_t stream) {
  if (n < 0 || n > max_frames_ || first < 0)
    throw Error(ErrorKind::invalid_argument, "loudness on CUDA: " + std::to_string(n) +
                                                 " frames from frame " + std::to_string(first) +
                                                 " (at most " + std::to_string(max_frames_) + ")");
  first_ = first;
  n_ = n;
  steps_ = n > 0 ? (first + n - 1) / design_.step - first / design_.step + 1 : 0;
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_peaks_.data(), 0, d_peaks_.bytes(), stream));
  if (n > 0) {
    // From rest `back` frames early: the look-back, or the signal's start
    // (the zeros before it leave the filter at rest).
    const std::int64_t back = std::min(design_.settle, first);
    const std::int64_t len = back + n;
    const dim3 grid(
        static_cast<unsigned>(std::min<std::int64_t>((len + kThreads - 1) / kThreads, 1024)),
        static_cast<unsigned>(channels_));
    widen_kernel<<<grid, kThreads, 0, stream>>>(d_x - back, x_stride, len, d_y_.data(), plane_);
    SIGSTREAM_CUDA_CHECK_LAUNCH("loudness widen_kernel");
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_state_.data(), 0, d_state_.bytes(), stream));
    k_weighting_.run(d_y_.data(), plane_, d_y_.data(), plane_, channels_, len, d_state_.data(),
                     d_work_.data(), stream);
    energy_kernel<<<dim3(static_cast<unsigned>(steps_), static_cast<unsigned>(channels_)), kThreads,
                    0, stream>>>(d_y_.data() + back, plane_, first, n, first / design_.step,
                                 design_.step, static_cast<int>(steps_), d_energy_.data());
    SIGSTREAM_CUDA_CHECK_LAUNCH("loudness energy_kernel");
    constexpr int kPeakBlock = 256;
    const auto blocks =
        static_cast<unsigned>(std::min<std::int64_t>((n + kPeakBlock - 1) / kPeakBlock, 2048));
    peaks_kernel<<<dim3(blocks, static_cast<unsigned>(channels_)), kPeakBlock, 0, stream>>>(
        d_x, x_stride, n, design_, d_peaks_.data());
    SIGSTREAM_CUDA_CHECK_LAUNCH("loudness peaks_kernel");
    SIGSTREAM_CUDA_TRY(
        cudaMemcpyAsync(h_energy_.data(), d_energy_.data(),
                        static_cast<std::size_t>(channels_ * steps_) * sizeof(double),
                        cudaMemcpyDeviceToHost, stream));
  }
  SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(h_peaks_.data(), d_peaks_.data(), d_peaks_.bytes(),
                                     cudaMemcpyDeviceToHost, stream));
}

void DeviceLoudness::read(std::int64_t& first, std::int64_t& n, std::vector<double>& energy,
                          std::vector<double>& sample_peak, std::vector<double>& true_peak) const {
  first = first_;
  n = n_;
  const auto ch = static_cast<std::size_t>(channels_);
  energy.assign(h_energy_.data(), h_energy_.data() + ch * static_cast<std::size_t>(steps_));
  sample_peak.resize(ch);
  true_peak.resize(ch);
  for (std::size_t c = 0; c < ch; ++c) {
    sample_peak[c] = static_cast<double>(std::bit_cast<float>(h_peaks_[2 * c]));
    true_peak[c] = static_cast<double>(std::bit_cast<float>(h_peaks_[2 * c + 1]));
  }
}

} // namespace sigstream::kernels::cuda
