// GPU mix benchmark (issue P12): the mix kernel (kernels/cuda/mix.cu) on N
// frames for common channel shapes, against the copy floor of the same
// bytes measured in the same run.
//
//   bench_gpu_mix [--log2n 24] [--reps 30] [--shapes 6:2,2:1,2:6,8:8,24:2]
//
// Per shape IN:OUT: median kernel time (CUDA events, after a warm-up) of the
// matrix mix, and of select (OUT copies of input planes), and the copy floor:
// a device-to-device cudaMemcpy moving as many bytes as the mix must (the
// input read once, the output written once: (IN + OUT) x N x 4 / 2 bytes
// copied), with the kernel's ratio to it. One JSON object per line.
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
#include "kernels/cuda/mix.cuh"
#include "kernels/cuda/resources.hpp"

namespace kc = sigstream::kernels::cuda;

int main(int argc, char** argv) {
  int log2n = 24, reps = 30;
  std::string shapes = "6:2,2:1,2:6,8:8,24:2";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--log2n")
      log2n = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--shapes")
      shapes = argv[i + 1];
  }
  try {
    const std::int64_t n = std::int64_t{1} << log2n;
    // Planes start on 128 bytes, as the backend's lanes lay them out.
    const std::int64_t stride = n + 32;
    const kc::Stream stream = kc::Stream::create();
    const cudaStream_t s = stream.get();
    std::stringstream list(shapes);
    for (std::string item; std::getline(list, item, ',');) {
      const int in = std::stoi(item.substr(0, item.find(':')));
      const int out = std::stoi(item.substr(item.find(':') + 1));
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> u(-0.9f, 0.9f);
      std::vector<float> h_x(static_cast<std::size_t>(in * stride));
      for (float& v : h_x)
        v = u(rng);
      std::vector<float> h_g(static_cast<std::size_t>(in * out));
      for (float& v : h_g)
        v = u(rng);
      std::vector<int> h_pick(static_cast<std::size_t>(out));
      for (int c = 0; c < out; ++c)
        h_pick[static_cast<std::size_t>(c)] = (c * 7 + 3) % in;
      kc::DeviceBuffer<float> d_x(h_x.size()), d_g(h_g.size()),
          d_y(static_cast<std::size_t>(out * stride));
      kc::DeviceBuffer<int> d_pick(h_pick.size());
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(d_x.data(), h_x.data(), d_x.bytes(), cudaMemcpyHostToDevice, s));
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(d_g.data(), h_g.data(), d_g.bytes(), cudaMemcpyHostToDevice, s));
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(d_pick.data(), h_pick.data(), d_pick.bytes(), cudaMemcpyHostToDevice, s));
      const double mix = sigstream::bench::median_ms(s, reps, [&] {
        kc::mix(d_x.data(), stride, in, d_g.data(), d_y.data(), stride, out, n, s);
      });
      const double sel = sigstream::bench::median_ms(s, reps, [&] {
        kc::select_planes(d_x.data(), stride, in, d_pick.data(), d_y.data(), stride, out, n, s);
      });
      auto floor_ms = [&](std::int64_t planes) {
        const std::size_t bytes = static_cast<std::size_t>(planes * n) * sizeof(float) / 2;
        kc::DeviceBuffer<std::byte> a(bytes), b(bytes);
        return sigstream::bench::median_ms(s, reps, [&] {
          SIGSTREAM_CUDA_TRY(
              cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s));
        });
      };
      const double copy = floor_ms(in + out);
      // select reads only the planes it picks (at most OUT of them) and writes OUT.
      const double copy_sel = floor_ms(2 * out);
      const double gbs = static_cast<double>((in + out) * n) * sizeof(float) / (mix * 1e-3) / 1e9;
      std::printf("{\"shape\": \"%d->%d\", \"frames\": %lld, \"mix_ms\": %.4f, \"copy_floor_ms\": "
                  "%.4f, \"x_floor\": %.2f, \"gb_per_s\": %.0f, \"select_ms\": %.4f, "
                  "\"select_floor_ms\": %.4f, \"select_x_floor\": %.2f}\n",
                  in, out, static_cast<long long>(n), mix, copy, mix / copy, gbs, sel, copy_sel,
                  sel / copy_sel);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_mix: %s\n", e.what());
    return 1;
  }
  return 0;
}
