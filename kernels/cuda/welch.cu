#include "kernels/cuda/welch.cuh"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <mutex>
#include <string>

#include "core/error.hpp"
#include "core/welch_segments.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/cufft_api.hpp"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;

// rows[(c * max_segments + s) * nfft + t] = window[t] * x[c][(j0 + s) * hop + t - first].
__global__ void gather_segments(const float* __restrict__ x, std::int64_t x_stride,
                                std::int64_t first, std::int64_t j0, int hop,
                                const double* __restrict__ window, int nfft,
                                std::int64_t max_segments, double* __restrict__ rows) {
  const int c = static_cast<int>(blockIdx.z);
  const std::int64_t s = blockIdx.y;
  const float* seg = x + c * x_stride + ((j0 + s) * hop - first);
  double* row = rows + (c * max_segments + s) * nfft;
  for (int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); t < nfft;
       t += static_cast<int>(gridDim.x * blockDim.x))
    row[t] = window[t] * static_cast<double>(seg[t]);
}

// The reduction's input: element i of segment g = (c, k) (segments of
// `count` elements each) is |X|^2 of channel c's segment i, bin k.
struct BinPower {
  const double2* bins;
  std::int64_t count;
  std::int64_t max_segments;
  int nbins;
  __device__ double operator()(std::int64_t i) const {
    const std::int64_t g = i / count;
    const std::int64_t s = i - g * count;
    const std::int64_t c = g / nbins;
    const std::int64_t k = g - c * nbins;
    const double2 v = bins[(c * max_segments + s) * nbins + k];
    return v.x * v.x + v.y * v.y;
  }
};

// Segment g of the reduction starts at g * count.
struct SegmentStart {
  std::int64_t count;
  __host__ __device__ std::int64_t operator()(std::int64_t g) const { return g * count; }
};

using Count = thrust::counting_iterator<std::int64_t>;
using PowerIter = thrust::transform_iterator<BinPower, Count, double>;
using OffsetIter = thrust::transform_iterator<SegmentStart, Count, std::int64_t>;

std::size_t reduce_temp_bytes(int segments_out, const BinPower& p, std::int64_t count) {
  std::size_t bytes = 0;
  const PowerIter in(Count(0), p);
  const OffsetIter offsets(Count(0), SegmentStart{count});
  SIGSTREAM_CUDA_TRY(cub::DeviceSegmentedReduce::Sum(
      nullptr, bytes, in, static_cast<double*>(nullptr), segments_out, offsets, offsets + 1));
  return bytes;
}

} // namespace

DeviceWelch::DeviceWelch(std::span<const double> window, int hop, std::int64_t max_segments,
                         int channels)
    : nfft_(static_cast<int>(window.size())), hop_(hop), channels_(channels),
      max_segments_(max_segments) {
  if (nfft_ < 1 || hop < 1 || hop > nfft_ || max_segments < 1 || channels < 1)
    throw Error(ErrorKind::invalid_argument, "device welch: nfft " + std::to_string(nfft_) +
                                                 ", hop " + std::to_string(hop) +
                                                 ", max_segments " + std::to_string(max_segments) +
                                                 ", channels " + std::to_string(channels));
  const auto rows = static_cast<std::size_t>(channels) * static_cast<std::size_t>(max_segments);
  window_ = DeviceBuffer<double>(window.size());
  // On a stream of its own, waited for: the lanes' non-blocking streams would
  // not wait for work on the legacy stream (as the fir and resample steps upload).
  const Stream upload = Stream::create();
  SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(window_.data(), window.data(), window_.bytes(),
                                     cudaMemcpyHostToDevice, upload.get()));
  rows_ = DeviceBuffer<double>(rows * static_cast<std::size_t>(nfft_));
  bins_ = DeviceBuffer<double2>(rows * static_cast<std::size_t>(bins()));
  long long n = nfft_;
  std::size_t work = 0;
  const std::lock_guard lock(cufft_plan_mutex());
  plan_ = CufftPlan::create();
  SIGSTREAM_CUFFT_TRY(cufft().set_auto_allocation(plan_.get(), 0));
  SIGSTREAM_CUFFT_TRY(cufft().make_plan_many64(plan_.get(), 1, &n, nullptr, 1, nfft_, nullptr, 1,
                                               bins(), CUFFT_D2Z, static_cast<long long>(rows),
                                               &work));
  work_ = DeviceBuffer<std::byte>(std::max<std::size_t>(work, 1));
  SIGSTREAM_CUFFT_TRY(cufft().set_work_area(plan_.get(), work_.data()));
  // Rows a call leaves alone are transformed anyway: start finite.
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(rows_.data(), 0, rows_.bytes(), upload.get()));
  upload.synchronize();
  const BinPower p{bins_.data(), max_segments, max_segments, bins()};
  reduce_temp_ = DeviceBuffer<std::byte>(
      std::max<std::size_t>(reduce_temp_bytes(channels * bins(), p, max_segments), 1));
}

std::int64_t DeviceWelch::sums(const float* d_x, std::int64_t x_stride, std::int64_t first,
                               std::int64_t n, std::int64_t own_lo, std::int64_t own_hi,
                               double* d_power, cudaStream_t stream) {
  const WelchSegments segs = welch_segments(first, n, own_lo, own_hi, nfft_, hop_);
  const int out = channels_ * bins();
  if (segs.count == 0) {
    SIGSTREAM_CUDA_TRY(
        cudaMemsetAsync(d_power, 0, static_cast<std::size_t>(out) * sizeof(double), stream));
    return 0;
  }
  if (segs.count > max_segments_)
    throw Error(ErrorKind::invalid_argument, "device welch: " + std::to_string(segs.count) +
                                                 " segments in one call, more than the " +
                                                 std::to_string(max_segments_) +
                                                 " it was made for");
  const dim3 grid(static_cast<unsigned>(std::min((nfft_ + kThreads - 1) / kThreads, 16)),
                  static_cast<unsigned>(segs.count), static_cast<unsigned>(channels_));
  gather_segments<<<grid, kThreads, 0, stream>>>(
      d_x, x_stride, first, segs.first, hop_, window_.data(), nfft_, max_segments_, rows_.data());
  SIGSTREAM_CUDA_CHECK_LAUNCH("gather_segments");
  SIGSTREAM_CUFFT_TRY(cufft().set_stream(plan_.get(), stream));
  SIGSTREAM_CUFFT_TRY(cufft().exec_d2z(plan_.get(), rows_.data(),
                                       reinterpret_cast<cufftDoubleComplex*>(bins_.data())));
  const BinPower p{bins_.data(), segs.count, max_segments_, bins()};
  const PowerIter in(Count(0), p);
  const OffsetIter offsets(Count(0), SegmentStart{segs.count});
  std::size_t bytes = reduce_temp_.bytes();
  SIGSTREAM_CUDA_TRY(cub::DeviceSegmentedReduce::Sum(reduce_temp_.data(), bytes, in, d_power, out,
                                                     offsets, offsets + 1, stream));
  return segs.count;
}

} // namespace sigstream::kernels::cuda
