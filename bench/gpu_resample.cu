// GPU resample benchmark (issue P6): the polyphase kernel
// (kernels/cuda/resample.cu) on N float32 samples for common rate pairs,
// against the copy floor of the same bytes measured in the same run.
//
//   bench_gpu_resample [--log2n 26] [--reps 30] [--pairs 48000:44100,44100:48000,48000:16000]
//
// Per pair: median kernel time (CUDA events, after a warm-up) of the kernel
// the launcher picks and of the class-tile and blocked kernels forced (each
// falls back where it cannot run), and the copy
// floor: a device-to-device cudaMemcpy moving as many bytes as the resampler
// must (the input read once, the output written once: (in + out) / 2 bytes
// copied), with the kernel's share of it. One JSON object per line.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/resample.cuh"
#include "kernels/cuda/resources.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "stages/resample/spec.hpp"

namespace kc = sigstream::kernels::cuda;

int main(int argc, char** argv) {
  int log2n = 26, reps = 30;
  std::string pairs = "48000:44100,44100:48000,48000:16000";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--log2n")
      log2n = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--pairs")
      pairs = argv[i + 1];
  }
  try {
    const std::int64_t n = std::int64_t{1} << log2n;
    const kc::Stream stream = kc::Stream::create();
    const cudaStream_t s = stream.get();
    std::stringstream list(pairs);
    for (std::string item; std::getline(list, item, ',');) {
      const double from = std::stod(item.substr(0, item.find(':')));
      const double to = std::stod(item.substr(item.find(':') + 1));
      // The stage as the planner makes it.
      sigstream::Config c;
      c.origin = "bench";
      sigstream::StageSpec r;
      r.type = sigstream::kResampleType;
      r.name = "r";
      r.as<sigstream::ResampleSpec>().to_hz = to;
      c.stages = {r};
      sigstream::SourceInfo info;
      info.sample_rate = from;
      info.channels = 1;
      info.frames = n;
      const sigstream::Plan plan = sigstream::make_plan(c, info, 0);
      const sigstream::PlannedStage& st = plan.stages[0];
      const std::int64_t n_out = plan.output_frames;
      // The input with its halo of zeros on both sides.
      const std::int64_t halo = st.lookback / st.up + 2;
      const std::int64_t ahead = st.lookahead / st.up + 2;
      std::vector<float> h_x(static_cast<std::size_t>(n + halo + ahead), 0.0f);
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> u(-0.9f, 0.9f);
      for (std::int64_t i = 0; i < n; ++i)
        h_x[static_cast<std::size_t>(halo + i)] = u(rng);
      kc::DeviceBuffer<float> d_x(h_x.size()), d_y(static_cast<std::size_t>(n_out));
      kc::DeviceBuffer<float> d_taps(st.as<sigstream::ResamplePlan>().taps_f32.size());
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(d_x.data(), h_x.data(), d_x.bytes(), cudaMemcpyHostToDevice, s));
      SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(d_taps.data(),
                                         st.as<sigstream::ResamplePlan>().taps_f32.data(),
                                         d_taps.bytes(), cudaMemcpyHostToDevice, s));
      const kc::DevicePolyphase f{
          d_taps.data(),
          static_cast<int>(st.as<sigstream::ResamplePlan>().taps_f32.size()),
          static_cast<int>(st.up),
          static_cast<int>(st.down),
          st.lookahead,
          st.lookback};
      auto time_kernel = [&](kc::ResampleKernel which) {
        return sigstream::bench::median_ms(s, reps, [&] {
          kc::resample(d_x.data(), -halo, 0, d_y.data(), 0, 0, n_out, 1, f, s, which);
        });
      };
      const double kernel = time_kernel(kc::ResampleKernel::automatic);
      const double tiles = time_kernel(kc::ResampleKernel::class_tiles);
      const double blocked = time_kernel(kc::ResampleKernel::blocked);
      const std::size_t copy_bytes = static_cast<std::size_t>(n + n_out) * sizeof(float) / 2;
      kc::DeviceBuffer<std::byte> a(copy_bytes), b(copy_bytes);
      const double copy = sigstream::bench::median_ms(s, reps, [&] {
        SIGSTREAM_CUDA_TRY(
            cudaMemcpyAsync(b.data(), a.data(), copy_bytes, cudaMemcpyDeviceToDevice, s));
      });
      const double gbs = static_cast<double>(n + n_out) * sizeof(float) / (kernel * 1e-3) / 1e9;
      std::printf("{\"pair\": \"%g->%g\", \"up\": %lld, \"down\": %lld, \"taps\": %zu, \"n_in\": "
                  "%lld, \"n_out\": %lld, "
                  "\"kernel_ms\": %.4f, \"class_tiles_ms\": %.4f, \"blocked_ms\": %.4f, "
                  "\"copy_floor_ms\": %.4f, "
                  "\"x_floor\": %.2f, \"gb_per_s\": %.0f}\n",
                  from, to, static_cast<long long>(st.up), static_cast<long long>(st.down),
                  st.as<sigstream::ResamplePlan>().taps.size(), static_cast<long long>(n),
                  static_cast<long long>(n_out), kernel, tiles, blocked, copy, kernel / copy, gbs);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_resample: %s\n", e.what());
    return 1;
  }
  return 0;
}
