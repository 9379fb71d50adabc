// One-pass overlap-save FIR with cuFFTDx block FFTs (see fir_fft_fused.cuh).
//
// A block per segment. The real FFT is cuFFTDx's "folded" R2C/C2R: the L
// reals go in as L/2 complex pairs (x[2j], x[2j+1]), thread t holding pairs
// j = t + i * stride, i < input_ept; the R2C leaves bins j = t + i * stride
// (j <= L/2) in the same registers, the layout the C2R takes back, so the
// multiply by the taps' spectrum happens in registers between the two. The
// C2R returns pairs of reals in the input's layout: outputs are the reals at
// positions K - 1 .. L - 1. The taps' spectrum (L/2 + 1 bins, 8 bytes each)
// is read through the read-only cache by every block: it stays in L2.
//
// cuFFTDx's descriptions take the measured best elements per thread (kEpt)
// and one FFT per block for SM 9.0 (the only architecture this project builds for, see
// CMakeLists.txt); other devices use the cuFFT path. The headers come from
// the nvidia-mathdx wheel (scripts/fetch-mathdx.sh); without them this file
// builds the stubs at the bottom and FftFir keeps to cuFFT.
#include "kernels/cuda/fir_fft_fused.cuh"

#include "kernels/cuda/fir_fft.cuh" // fused_fft_runs_on

#include <string>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"

#if SIGSTREAM_HAVE_CUFFTDX
#include "kernels/cuda/fir_fft_fused_kernel.cuh"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <type_traits>
#include <vector>

namespace sigstream::kernels::cuda::detail {

namespace {

// Elements per thread for each L (0: cuFFTDx's suggestion), measured on an
// H100 with bench_gpu_fused_tune (2^26 samples, K = L/4, ms): L = 2048
// suggested 64 (32 threads) 0.583, 16 0.397; 16384 suggested 64 0.842, 32
// 0.665; 32768 suggested 64 0.721, 32 0.688; at 1024, 4096 and 8192 the
// suggestion was fastest (8 and 16 were 5-60% slower).
template <unsigned L> constexpr unsigned kEpt = L == 2048 ? 16 : L == 16384 || L == 32768 ? 32 : 0;

// The dynamic shared-memory limit is a per-device attribute of the kernel:
// raised once per device and size.
template <unsigned L> void prepare_size() {
  static std::mutex mutex;
  static std::vector<bool> done;
  int device = 0;
  SIGSTREAM_CUDA_TRY(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  const auto d = static_cast<std::size_t>(device);
  if (d < done.size() && done[d])
    return;
  SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(fused_fft_fir_kernel<L, kEpt<L>>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(FusedFft<L, kEpt<L>>::shared_bytes)));
  if (d >= done.size())
    done.resize(d + 1, false);
  done[d] = true;
}

template <unsigned L> void run_size(const FusedFftCall& a, cudaStream_t stream) {
  // (fused_fft_prepare() raised the shared-memory limit when the FftFir was
  // made, on the device it runs on.)
  // One block per segment; grids past 2^31 - 1 blocks go in pieces.
  constexpr std::int64_t kMaxGrid = 0x7fffffff;
  for (std::int64_t q0 = 0; q0 < a.segments; q0 += kMaxGrid) {
    const auto blocks = static_cast<unsigned>(std::min(kMaxGrid, a.segments - q0));
    using Shape = FusedFft<L, kEpt<L>>;
    fused_fft_fir_kernel<L, kEpt<L>><<<blocks, Shape::threads, Shape::shared_bytes, stream>>>(
        a.d_x, a.x_stride, a.x_lead, a.x_len, a.seg_per_channel, a.block, a.taps, a.spectrum, a.n,
        a.d_y, a.y_stride, q0);
    SIGSTREAM_CUDA_CHECK_LAUNCH("fused_fft_fir_kernel");
  }
}

template <unsigned L> using SizeTag = std::integral_constant<unsigned, L>;

// Calls f(SizeTag<L>{}) for the compiled size L == fft; false if there is none.
template <typename F> bool with_size(int fft, F&& f) {
  switch (fft) {
    case 1024:
      f(SizeTag<1024>{});
      return true;
    case 2048:
      f(SizeTag<2048>{});
      return true;
    case 4096:
      f(SizeTag<4096>{});
      return true;
    case 8192:
      f(SizeTag<8192>{});
      return true;
    case 16384:
      f(SizeTag<16384>{});
      return true;
    case 32768:
      f(SizeTag<32768>{});
      return true;
    case 65536:
      f(SizeTag<65536>{});
      return true;
    default:
      return false;
  }
}

} // namespace

bool fused_fft_built() noexcept {
  return true;
}

bool fused_fft_supported(int fft) {
  if (!with_size(fft, [](auto) {}))
    return false;
  // The device's answer, asked once per device (a Python call asks per call).
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {}; // 0 unknown, 1 no, 2 yes
  int device = 0;
  SIGSTREAM_CUDA_TRY(cudaGetDevice(&device));
  if (device < kDevices) {
    const int k = known[device].load(std::memory_order_relaxed);
    if (k != 0)
      return k == 2;
  }
  int major = 0, minor = 0;
  SIGSTREAM_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  SIGSTREAM_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const bool yes = fused_fft_runs_on(major, minor);
  if (device < kDevices)
    known[device].store(yes ? 2 : 1, std::memory_order_relaxed);
  return yes;
}

void fused_fft_prepare(int fft) {
  if (!with_size(fft, [](auto size) { prepare_size<decltype(size)::value>(); }))
    throw Error(ErrorKind::invalid_argument,
                "fir_fft: no fused kernel for FFT size " + std::to_string(fft));
}

void fused_fft_run(const FusedFftCall& call, cudaStream_t stream) {
  if (call.segments <= 0)
    return;
  if (!with_size(call.fft, [&](auto size) { run_size<decltype(size)::value>(call, stream); }))
    throw Error(ErrorKind::invalid_argument,
                "fir_fft: no fused kernel for FFT size " + std::to_string(call.fft));
}

} // namespace sigstream::kernels::cuda::detail

#else // !SIGSTREAM_HAVE_CUFFTDX

namespace sigstream::kernels::cuda::detail {

bool fused_fft_built() noexcept {
  return false;
}
bool fused_fft_supported(int) {
  return false;
}
void fused_fft_prepare(int fft) {
  throw Error(ErrorKind::invalid_argument, "fir_fft: this build has no fused FFT kernel "
                                           "(cuFFTDx headers not found), FFT size " +
                                               std::to_string(fft));
}
void fused_fft_run(const FusedFftCall& call, cudaStream_t) {
  fused_fft_prepare(call.fft);
}

} // namespace sigstream::kernels::cuda::detail

#endif
