// Shapes of the fused FFT FIR kernel (kernels/cuda/fir_fft_fused_kernel.cuh):
// FFT length L x elements per thread, timed on the same signal.
//
//   bench_gpu_fused_tune [--log2n 26] [--reps 20]
//
// For each L and EPT (0: cuFFTDx's suggestion, what FftFir runs) it filters
// N float32 samples (one channel) with K = L/4 taps and with K = L/2, and
// prints the median kernel time (CUDA events, after a warm-up), threads and
// shared memory per block, and the input + output bytes as % of a large
// device-to-device copy's rate measured in the same run. It checks nothing:
// the tests (FftFirTest) check the sizes FftFir runs. Built only where the
// cuFFTDx headers are (SIGSTREAM_HAVE_CUFFTDX).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_fft_fused_kernel.cuh"
#include "kernels/cuda/resources.hpp"

namespace {

using namespace sigstream;
namespace kc = sigstream::kernels::cuda;
namespace kd = sigstream::kernels::cuda::detail;

using sigstream::bench::median_ms;

struct Signal {
  std::int64_t n;
  const float* x;
  float* y;
  const float2* spectrum; // any finite bins: the timing does not depend on them
  double copy_bytes_per_s;
  cudaStream_t s;
  int reps;
};

template <unsigned L, unsigned EPT> void time_shape(const Signal& g) {
  using Shape = kd::FusedFft<L, EPT>;
  auto kernel = kd::fused_fft_fir_kernel<L, EPT>;
  SIGSTREAM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(Shape::shared_bytes)));
  int per_sm = 0;
  SIGSTREAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel, static_cast<int>(Shape::threads), Shape::shared_bytes));
  for (const int taps : {static_cast<int>(L / 4), static_cast<int>(L / 2)}) {
    const int block = static_cast<int>(L) - taps + 1;
    const std::int64_t segments = (g.n + block - 1) / block;
    const double ms = median_ms(g.s, g.reps, [&] {
      kernel<<<static_cast<unsigned>(segments), Shape::threads, Shape::shared_bytes, g.s>>>(
          g.x, 0, taps - 1, g.n + taps - 1, segments, block, taps, g.spectrum, g.n, g.y, 0, 0);
      SIGSTREAM_CUDA_CHECK_LAUNCH("fused_fft_fir_kernel");
    });
    const double bytes = 2.0 * 4.0 * static_cast<double>(g.n);
    std::printf("L=%-6u EPT=%-3u (%s) threads=%-5u smem=%-7u blocks/SM=%-2d K=%-6d %8.3f ms  "
                "%5.1f%% of copy rate\n",
                L, Shape::R2C::elements_per_thread, EPT == 0 ? "suggested" : "set      ",
                Shape::threads, Shape::shared_bytes, per_sm, taps, ms,
                100.0 * bytes / (ms * 1e-3) / g.copy_bytes_per_s);
  }
}

} // namespace

int main(int argc, char** argv) {
  try {
    int log2n = 26, reps = 20;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--log2n" && i + 1 < argc)
        log2n = std::atoi(argv[++i]);
      else if (a == "--reps" && i + 1 < argc)
        reps = std::atoi(argv[++i]);
      else {
        std::fprintf(stderr, "usage: bench_gpu_fused_tune [--log2n 26] [--reps 20]\n");
        return 2;
      }
    }
    const std::int64_t n = std::int64_t{1} << log2n;
    kc::Stream stream = kc::Stream::create();
    const cudaStream_t s = stream.get();
    std::vector<float> hx(static_cast<std::size_t>(n + 65536));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (float& v : hx)
      v = d(rng);
    std::vector<float2> hs(65536 / 2 + 1);
    for (float2& v : hs)
      v = make_float2(d(rng) * 1e-4f, d(rng) * 1e-4f);
    kc::DeviceBuffer<float> x(hx.size()), y(static_cast<std::size_t>(n));
    kc::DeviceBuffer<float2> spectrum(hs.size());
    SIGSTREAM_CUDA_TRY(cudaMemcpy(x.data(), hx.data(), x.bytes(), cudaMemcpyHostToDevice));
    SIGSTREAM_CUDA_TRY(
        cudaMemcpy(spectrum.data(), hs.data(), spectrum.bytes(), cudaMemcpyHostToDevice));
    // The copy rate: read + write bytes of a device-to-device copy of the signal.
    const double copy_ms = median_ms(s, reps, [&] {
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(y.data(), x.data(), y.bytes(), cudaMemcpyDeviceToDevice, s));
    });
    const double copy_rate = 2.0 * static_cast<double>(y.bytes()) / (copy_ms * 1e-3);
    std::printf("N = %lld float32 samples; copy %.3f ms (%.0f GB/s read + write); median of %d\n",
                static_cast<long long>(n), copy_ms, copy_rate * 1e-9, reps);
    const Signal g{n, x.data(), y.data(), spectrum.data(), copy_rate, s, reps};
    time_shape<1024, 0>(g);
    time_shape<1024, 8>(g);
    time_shape<2048, 0>(g);
    time_shape<2048, 8>(g);
    time_shape<2048, 16>(g);
    time_shape<4096, 0>(g);
    time_shape<4096, 8>(g);
    time_shape<4096, 16>(g);
    time_shape<8192, 0>(g);
    time_shape<8192, 8>(g);
    time_shape<8192, 16>(g);
    time_shape<16384, 0>(g);
    time_shape<16384, 16>(g);
    time_shape<16384, 32>(g);
    time_shape<32768, 0>(g);
    time_shape<32768, 32>(g);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_fused_tune: %s\n", e.what());
    return 1;
  }
}
