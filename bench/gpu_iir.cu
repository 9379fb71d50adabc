// GPU IIR benchmark (issue P13): the cascade kernels (kernels/cuda/iir.cu)
// on the issue's two shapes, against the copy floor of the same bytes
// measured in the same run.
//
//   bench_gpu_iir [--reps 30] [--order 4] [--check]
//
// Sections: a Butterworth band-pass 300-3400 Hz at 48 kHz of --order
// (order 4: four sections, 8th order), as scipy.signal.butter(order,
// [300, 3400], "bandpass", fs=48000, output="sos"). Shapes: one channel of
// 2^26 float32 samples, and 256 clips x 4 s (192,000 samples each). Per
// shape: the median kernel time (CUDA events, after a warm-up), the copy
// floor (a device-to-device cudaMemcpy of the signal: its bytes read once
// and written once, the least an out-of-place filter moves) and the
// kernel's share of it; --check also compares the output with the CPU's
// sosfilt (relative L2). One JSON object per line.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "kernels/cpu/iir.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/iir.cuh"
#include "kernels/cuda/resources.hpp"
#include "stages/iir/design.hpp"

namespace kc = sigstream::kernels::cuda;

int main(int argc, char** argv) {
  int reps = 30, order = 4;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--order" && i + 1 < argc)
      order = std::atoi(argv[++i]);
    else if (a == "--check")
      check = true;
  }
  try {
    sigstream::IirDesignSpec d;
    d.kind = sigstream::FilterKind::bandpass;
    d.cutoff_hz = {300.0, 3400.0};
    d.order = order;
    const std::vector<sigstream::kernels::cpu::Biquad> sos = sigstream::design_iir(d, 48000.0);
    const kc::IirCascade cascade(sos);
    const kc::Stream stream = kc::Stream::create();
    const cudaStream_t s = stream.get();
    struct Shape {
      const char* name;
      int channels;
      std::int64_t frames;
    };
    for (const Shape& sh :
         {Shape{"long_2^26", 1, std::int64_t{1} << 26}, Shape{"clips_256x4s", 256, 192000}}) {
      const std::int64_t n = sh.frames;
      const auto total = static_cast<std::size_t>(n) * static_cast<std::size_t>(sh.channels);
      std::vector<float> x(total);
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> u(-0.9f, 0.9f);
      for (float& v : x)
        v = u(rng);
      kc::DeviceBuffer<float> d_x(total), d_y(total);
      kc::DeviceBuffer<double> d_state(static_cast<std::size_t>(sh.channels) *
                                       static_cast<std::size_t>(cascade.state_size()));
      kc::DeviceBuffer<double> d_work(cascade.workspace_doubles(sh.channels, n));
      SIGSTREAM_CUDA_TRY(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice));
      auto filter = [&] {
        SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_state.data(), 0, d_state.bytes(), s));
        cascade.run(d_x.data(), n, d_y.data(), n, sh.channels, n, d_state.data(), d_work.data(), s);
      };
      const double iir_ms = sigstream::bench::median_ms(s, reps, filter);
      const double copy_ms = sigstream::bench::median_ms(s, reps, [&] {
        SIGSTREAM_CUDA_TRY(
            cudaMemcpyAsync(d_y.data(), d_x.data(), d_x.bytes(), cudaMemcpyDeviceToDevice, s));
      });
      double err = -1.0;
      if (check) {
        filter();
        SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(s));
        std::vector<float> got(total), want(total);
        SIGSTREAM_CUDA_TRY(cudaMemcpy(got.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (int c = 0; c < sh.channels; ++c) {
          std::vector<double> z(2 * sos.size(), 0.0);
          const std::size_t at = static_cast<std::size_t>(c) * static_cast<std::size_t>(n);
          sigstream::kernels::cpu::sosfilt(sos, z, x.data() + at, want.data() + at, n);
        }
        for (std::size_t i = 0; i < total; ++i) {
          num += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
          den += static_cast<double>(want[i]) * want[i];
        }
        err = std::sqrt(num / den);
      }
      std::printf("{\"bench\": \"gpu_iir\", \"shape\": \"%s\", \"channels\": %d, \"frames\": %lld, "
                  "\"sections\": %zu, \"iir_ms\": %.4f, \"copy_ms\": %.4f, \"share_of_copy\": "
                  "%.3f, \"gsamples_per_s\": %.2f, \"rel_l2_vs_cpu\": %.3g}\n",
                  sh.name, sh.channels, static_cast<long long>(n), sos.size(), iir_ms, copy_ms,
                  copy_ms / iir_ms, static_cast<double>(total) / iir_ms / 1e6, err);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_iir: %s\n", e.what());
    return 1;
  }
  return 0;
}
