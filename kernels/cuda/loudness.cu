#include "kernels/cuda/loudness.cuh"

#include <algorithm>
#include <bit>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

// Frames a thread of the energy kernel measures, at most (a step has
// rate / 10 of them): short enough for threads in every step, long enough
// that the settling before each piece is not most of the work.
constexpr std::int64_t kPiece = 2048;

// Thread t = (c * steps + k) * pieces + j measures the frames of piece j of
// step s0 + k inside [first, first + n) of channel c (x: frame `first`).
__global__ void energy_kernel(const float* __restrict__ x, std::int64_t stride, std::int64_t first,
                              std::int64_t n, std::int64_t s0, std::int64_t steps,
                              std::int64_t pieces, int channels, LoudnessDesign d,
                              double* __restrict__ out) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t per_channel = steps * pieces;
  if (t >= per_channel * channels)
    return;
  const std::int64_t c = t / per_channel;
  const std::int64_t k = t % per_channel / pieces;
  const std::int64_t j = t % pieces;
  const std::int64_t step_lo = (s0 + k) * d.step;
  const std::int64_t lo = max(first, step_lo + j * kPiece);
  const std::int64_t hi = min(first + n, step_lo + min((j + 1) * kPiece, d.step));
  double e = 0.0;
  if (lo < hi) {
    const float* xc = x + c * stride - first; // xc[i]: frame i
    const double a1 = d.a[1], a2 = d.a[2], a3 = d.a[3], a4 = d.a[4];
    const double b0 = d.b[0], b1 = d.b[1], b2 = d.b[2], b3 = d.b[3], b4 = d.b[4];
    double v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0;
    // The CPU meter's recursion (kernels/cpu/loudness.cpp, k_step): the
    // chain through v1 is one fused multiply-add.
    auto step = [&](double xi) {
      const double older = a2 * v2 + a3 * v3 + a4 * v4;
      const double v0 = fma(-a1, v1, xi - older);
      const double y = b0 * v0 + b1 * v1 + b2 * v2 + b3 * v3 + b4 * v4;
      v4 = v3;
      v3 = v2;
      v2 = v1;
      v1 = v0;
      return y;
    };
#pragma unroll 4
    for (std::int64_t i = lo - d.settle; i < lo; ++i)
      static_cast<void>(step(static_cast<double>(xc[i])));
#pragma unroll 4
    for (std::int64_t i = lo; i < hi; ++i) {
      const double y = step(static_cast<double>(xc[i]));
      e += y * y;
    }
  }
  out[t] = e;
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
      pieces_per_step_((design_.step + kPiece - 1) / kPiece),
      max_steps_(max_frames_ / design_.step + 2),
      d_energy_(static_cast<std::size_t>(channels) * static_cast<std::size_t>(max_steps_) *
                static_cast<std::size_t>(pieces_per_step_)),
      d_peaks_(2 * static_cast<std::size_t>(channels)), h_energy_(d_energy_.size()),
      h_peaks_(d_peaks_.size()) {
  if (channels < 1)
    throw Error(ErrorKind::invalid_argument, "loudness on CUDA: channels must be >= 1");
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
    const std::int64_t threads = channels_ * steps_ * pieces_per_step_;
    constexpr int kBlock = 128;
    energy_kernel<<<static_cast<unsigned>((threads + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
        d_x, x_stride, first, n, first / design_.step, steps_, pieces_per_step_, channels_, design_,
        d_energy_.data());
    SIGSTREAM_CUDA_CHECK_LAUNCH("loudness energy_kernel");
    constexpr int kPeakBlock = 256;
    const auto blocks =
        static_cast<unsigned>(std::min<std::int64_t>((n + kPeakBlock - 1) / kPeakBlock, 2048));
    peaks_kernel<<<dim3(blocks, static_cast<unsigned>(channels_)), kPeakBlock, 0, stream>>>(
        d_x, x_stride, n, design_, d_peaks_.data());
    SIGSTREAM_CUDA_CHECK_LAUNCH("loudness peaks_kernel");
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(h_energy_.data(), d_energy_.data(),
                                       static_cast<std::size_t>(threads) * sizeof(double),
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
  const auto steps = static_cast<std::size_t>(steps_);
  const auto pieces = static_cast<std::size_t>(pieces_per_step_);
  energy.assign(ch * steps, 0.0);
  for (std::size_t i = 0; i < ch * steps; ++i)
    for (std::size_t j = 0; j < pieces; ++j) // in order: the same sum every run
      energy[i] += h_energy_[i * pieces + j];
  sample_peak.resize(ch);
  true_peak.resize(ch);
  for (std::size_t c = 0; c < ch; ++c) {
    sample_peak[c] = static_cast<double>(std::bit_cast<float>(h_peaks_[2 * c]));
    true_peak[c] = static_cast<double>(std::bit_cast<float>(h_peaks_[2 * c + 1]));
  }
}

} // namespace sigstream::kernels::cuda
