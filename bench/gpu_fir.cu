// GPU FIR benchmark: the direct and FFT kernels against the chip's own measured limits.
//
//   bench_gpu_fir [--taps 31,127,255,1023,4095,16383] [--log2n 26] [--reps 20] [--policies]
//                 [--fft-tune] [--no-crossover] [--no-pipeline] [--chunk FRAMES]
//                 [--streams 1,4] [--device N]
//
// Prints, for N float32 samples and each tap count: median kernel time (CUDA
// events, after a warm-up), outputs per second, the FMA rate as % of an FP32
// FMA peak measured in the same run (a register-resident fmaf kernel), and
// the memory traffic as % of a measured bandwidth (a large device-to-device
// cudaMemcpy, read + write bytes). --policies times every compiled policy.
// The FFT method (overlap-save, kernels/cuda/fir_fft.cu) gets a row per tap
// count ("fft"): its time, and its bytes as % of the bandwidth twice: the
// input and output alone, and every pass's reads and writes (over 100% when
// the segment buffer stays in L2, as it is sized to). --fft-tune times other
// FFT sizes and group sizes. Then the crossover: direct against fft for
// K = 15, 31, ..., 16383, on the whole signal and on 2-channel chunks of
// --chunk frames (what the pipeline runs) and of 16384 frames, which
// pipeline/method_rule.cpp is set from.
// Then the metrics and layout kernels, and a host-to-host run of int16 stereo
// through the CUDA backend (chunks on several streams) against the pinned
// PCIe floor (the same bytes up and down, concurrently).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_direct.cuh"
#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/layout.cuh"
#include "kernels/cuda/metrics.cuh"
#include "kernels/cuda/resources.hpp"
#include "pipeline/backends/cuda_backend.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "stages/fir/spec.hpp"

namespace kc = sigstream::kernels::cuda;
using sigstream::SampleType;

namespace {

constexpr int kPeakThreads = 256;
constexpr int kPeakChains = 8;
constexpr int kPeakIters = 4096;

__global__ void __launch_bounds__(kPeakThreads) fma_peak_kernel(float* out, float a, float b) {
  float v[kPeakChains];
#pragma unroll
  for (int c = 0; c < kPeakChains; ++c)
    v[c] = static_cast<float>(threadIdx.x + c);
#pragma unroll 1
  for (int i = 0; i < kPeakIters; ++i) {
#pragma unroll
    for (int r = 0; r < 16; ++r) {
#pragma unroll
      for (int c = 0; c < kPeakChains; ++c)
        v[c] = fmaf(v[c], a, b);
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kPeakChains; ++c)
    s += v[c];
  if (s == 1234.5f)
    out[0] = s; // keeps the chains alive
}

// Median of `reps` timings (ms) of `work` on `stream`, after one warm-up.
using sigstream::bench::median_ms;

struct Limits {
  double fma_per_s = 0; // FP32 FMA (not flops)
  double bytes_per_s = 0;
};

Limits measure_limits(cudaStream_t s, int reps, const cudaDeviceProp& p) {
  Limits l;
  kc::DeviceBuffer<float> out(1);
  const int blocks = p.multiProcessorCount * 8;
  const double fmas = static_cast<double>(blocks) * kPeakThreads * kPeakIters * 16 * kPeakChains;
  const double ms = median_ms(s, reps, [&] {
    fma_peak_kernel<<<blocks, kPeakThreads, 0, s>>>(out.data(), 0.999f, 0.001f);
    SIGSTREAM_CUDA_CHECK_LAUNCH("fma_peak_kernel");
  });
  l.fma_per_s = fmas / (ms * 1e-3);
  const std::size_t bytes = std::size_t{1} << 30;
  kc::DeviceBuffer<std::byte> a(bytes), b(bytes);
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(a.data(), 1, bytes, s));
  const double ms_copy = median_ms(s, reps, [&] {
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  l.bytes_per_s = 2.0 * static_cast<double>(bytes) / (ms_copy * 1e-3);
  return l;
}

using FirLauncher = void (*)(const float*, std::int64_t, const float*, int, float*, int,
                             std::int64_t, std::int64_t, cudaStream_t, kc::FirInputSpan);
struct NamedPolicy {
  std::string description;
  FirLauncher launch;
};

std::vector<NamedPolicy> policies(bool all) {
  std::vector<NamedPolicy> v = {{"auto", kc::fir_direct}};
  if (!all)
    return v;
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy0>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy0>});
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy1>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy1>});
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy2>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy2>});
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy3>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy3>});
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy4>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy4>});
  v.push_back({kc::describe_fir_policy<kc::FirBenchPolicy5>(),
               kc::fir_direct_with_policy<kc::FirBenchPolicy5>});
  return v;
}

std::string short_policy(const std::string& d) {
  // "128 threads x 15 outputs (tile 1920), taps unrolled by 16 with window reuse, ..." ->
  // "128x15/u16r"
  int t = 0, o = 0, u = 0;
  if (std::sscanf(d.c_str(), "%d threads x %d outputs (tile %*d), taps unrolled by %d", &t, &o,
                  &u) == 3)
    return std::to_string(t) + "x" + std::to_string(o) + "/u" + std::to_string(u) +
           (d.find("reuse") != std::string::npos ? "r" : "");
  return d;
}

void bench_fir(cudaStream_t s, int reps, std::int64_t n, const std::vector<int>& taps,
               const Limits& lim, bool all_policies) {
  const int k_max = *std::max_element(taps.begin(), taps.end());
  std::vector<float> hx(static_cast<std::size_t>(n + k_max - 1));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& v : hx)
    v = d(rng);
  std::vector<float> hh(static_cast<std::size_t>(k_max));
  for (float& v : hh)
    v = d(rng) * 0.01f;
  kc::DeviceBuffer<float> x(hx.size()), h(hh.size()), y(static_cast<std::size_t>(n));
  SIGSTREAM_CUDA_TRY(cudaMemcpy(x.data(), hx.data(), x.bytes(), cudaMemcpyHostToDevice));
  SIGSTREAM_CUDA_TRY(cudaMemcpy(h.data(), hh.data(), h.bytes(), cudaMemcpyHostToDevice));

  std::printf("\nFIR direct, N = %lld float32 samples, 1 channel, median of %d\n",
              static_cast<long long>(n), reps);
  std::printf("%-12s %6s %10s %12s %10s %10s\n", "policy", "taps", "time ms", "Gsamples/s",
              "%FMA peak", "%DRAM bw");
  for (int k : taps) {
    for (const NamedPolicy& p : policies(all_policies)) {
      const double ms = median_ms(s, reps, [&] {
        p.launch(x.data(), n, h.data(), k, y.data(), 1, 0, 0, s, kc::FirInputSpan{});
      });
      const double sec = ms * 1e-3;
      const double gsps = static_cast<double>(n) / sec * 1e-9;
      const double fma = static_cast<double>(n) * k / sec;
      const double bytes = (static_cast<double>(n + k - 1) + static_cast<double>(n)) * 4.0;
      std::printf("%-12s %6d %10.3f %12.2f %9.1f%% %9.1f%%\n", short_policy(p.description).c_str(),
                  k, ms, gsps, 100.0 * fma / lim.fma_per_s, 100.0 * bytes / sec / lim.bytes_per_s);
    }
  }
}

// Bytes every pass of the FFT path reads and writes for n outputs per channel
// (gather, R2C, multiply, C2R, scatter; one cuFFT pass each way assumed).
double fft_pass_bytes(const kc::FftFir& f, std::int64_t n, int channels) {
  const double rows = static_cast<double>((n + f.block() - 1) / f.block()) * channels;
  const double l = f.fft_size();
  return rows * 4.0 * (2.0 * l + 6.0 * (l + 2.0)) + 2.0 * 4.0 * static_cast<double>(n) * channels;
}

struct FftTiming {
  double ms = 0;
  int fft = 0, block = 0, group = 0;
};

FftTiming time_fft(cudaStream_t s, int reps, const float* x, std::int64_t n,
                   const std::vector<float>& hh, int k, float* y, int channels, std::int64_t stride,
                   kc::FftFirOptions o = {}) {
  kc::FftFir f(hh.data(), k, n, channels, o);
  FftTiming t;
  t.ms = median_ms(s, reps, [&] { f.run(x, n, y, channels, stride, stride, s); });
  t.fft = f.fft_size();
  t.block = f.block();
  t.group = f.group_segments();
  return t;
}

void bench_fft(cudaStream_t s, int reps, std::int64_t n, const std::vector<int>& taps,
               const Limits& lim, bool tune) {
  const int k_max = *std::max_element(taps.begin(), taps.end());
  std::vector<float> hx(static_cast<std::size_t>(n + k_max - 1));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& v : hx)
    v = d(rng);
  std::vector<float> hh(static_cast<std::size_t>(k_max));
  for (float& v : hh)
    v = d(rng) * 0.01f;
  kc::DeviceBuffer<float> x(hx.size()), y(static_cast<std::size_t>(n));
  SIGSTREAM_CUDA_TRY(cudaMemcpy(x.data(), hx.data(), x.bytes(), cudaMemcpyHostToDevice));
  SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());

  std::printf(
      "\nFIR fft (overlap-save, cuFFT), N = %lld float32 samples, 1 channel, median of %d\n",
      static_cast<long long>(n), reps);
  std::printf("%-12s %6s %10s %12s %10s %10s %8s %7s %6s\n", "method", "taps", "time ms",
              "Gsamples/s", "%bw in+out", "%bw passes", "L", "block", "group");
  for (int k : taps)
    for (const kc::FftEngine engine : {kc::FftEngine::cufft, kc::FftEngine::automatic}) {
      kc::FftFirOptions o;
      o.engine = engine;
      kc::FftFir f(hh.data(), k, n, 1, o);
      if (engine == kc::FftEngine::automatic && f.engine() == kc::FftEngine::cufft)
        continue;
      const double ms = median_ms(s, reps, [&] { f.run(x.data(), n, y.data(), 1, 0, 0, s); });
      const double sec = ms * 1e-3;
      const double io = (static_cast<double>(n + k - 1) + static_cast<double>(n)) * 4.0;
      const bool fused = f.engine() == kc::FftEngine::fused;
      // The fused kernel's passes are its input and output (overlaps from L2).
      const double passes = fused ? io : fft_pass_bytes(f, n, 1);
      std::printf("%-12s %6d %10.3f %12.2f %9.1f%% %9.1f%% %8d %7d %6d\n",
                  fused ? "fft (fused)" : "fft (cufft)", k, ms, static_cast<double>(n) / sec * 1e-9,
                  100.0 * io / sec / lim.bytes_per_s, 100.0 * passes / sec / lim.bytes_per_s,
                  f.fft_size(), f.block(), f.group_segments());
    }
  if (!tune)
    return;
  std::printf("\nFused FFT size tuning (N = %lld, 1 channel): ms\n", static_cast<long long>(n));
  for (int k : taps)
    for (int l = 1024; l <= 65536; l *= 2) {
      if (l < k + 1 || !kc::fused_fft_available(l))
        continue;
      kc::FftFirOptions o;
      o.fft_size = l;
      o.engine = kc::FftEngine::fused;
      const FftTiming t = time_fft(s, reps, x.data(), n, hh, k, y.data(), 1, 0, o);
      std::printf("fused K=%-6d L=%-8d block=%-7d %9.3f ms%s\n", k, t.fft, t.block, t.ms,
                  l == kc::fft_size_for(k, n, true) ? "  (default)" : "");
    }
  std::printf("\nFFT size and group tuning, cuFFT engine (N = %lld, 1 channel): ms\n",
              static_cast<long long>(n));
  for (int k : taps) {
    if (k < 255)
      continue;
    int k2 = 1;
    while (k2 < k)
      k2 *= 2;
    FftTiming best;
    best.ms = 1e30;
    for (int m : {2, 4, 8, 16, 32}) {
      const std::int64_t l = static_cast<std::int64_t>(k2) * m;
      if (l > (1 << 20) || l < 2 * k)
        continue;
      kc::FftFirOptions o;
      o.fft_size = static_cast<int>(l);
      o.engine = kc::FftEngine::cufft;
      const FftTiming t = time_fft(s, reps, x.data(), n, hh, k, y.data(), 1, 0, o);
      std::printf("tune K=%-6d L=%-8d block=%-7d group=%-6d group_MB=%-5d %9.3f ms\n", k, t.fft,
                  t.block, t.group, static_cast<int>(kc::fft_default_group_bytes() >> 20), t.ms);
      if (t.ms < best.ms)
        best = t;
    }
    int best_mb = static_cast<int>(kc::fft_default_group_bytes() >> 20);
    for (int mb : {16, 32, 256}) {
      kc::FftFirOptions o;
      o.fft_size = best.fft;
      o.group_bytes = static_cast<std::int64_t>(mb) << 20;
      o.engine = kc::FftEngine::cufft;
      const FftTiming t = time_fft(s, reps, x.data(), n, hh, k, y.data(), 1, 0, o);
      std::printf("tune K=%-6d L=%-8d block=%-7d group=%-6d group_MB=%-5d %9.3f ms\n", k, t.fft,
                  t.block, t.group, mb, t.ms);
      if (t.ms < best.ms) {
        best = t;
        best_mb = mb;
      }
    }
    {
      kc::FftFirOptions o;
      o.fft_size = best.fft;
      o.group_bytes = static_cast<std::int64_t>(best_mb) << 20;
      o.in_place = false;
      o.engine = kc::FftEngine::cufft;
      const FftTiming t = time_fft(s, reps, x.data(), n, hh, k, y.data(), 1, 0, o);
      std::printf("tune K=%-6d L=%-8d block=%-7d group=%-6d group_MB=%-5d %9.3f ms out of place\n",
                  k, t.fft, t.block, t.group, best_mb, t.ms);
    }
    // Each pass's time: the whole minus a run that leaves that pass out.
    const char* names[] = {"gather", "R2C", "multiply", "C2R", "scatter"};
    std::printf("passes K=%-6d L=%-8d group_MB=%-5d total %.3f ms:", k, best.fft, best_mb, best.ms);
    for (unsigned p = 0; p < 5; ++p) {
      kc::FftFirOptions o;
      o.fft_size = best.fft;
      o.group_bytes = static_cast<std::int64_t>(best_mb) << 20;
      o.skip_passes = 1u << p;
      o.engine = kc::FftEngine::cufft;
      const FftTiming t = time_fft(s, reps, x.data(), n, hh, k, y.data(), 1, 0, o);
      std::printf(" %s %.3f", names[p], best.ms - t.ms);
    }
    std::printf("\n");
  }
}

// Direct against fft for K = 15 .. 16383 on `channels` x n frames.
void bench_crossover(cudaStream_t s, int reps, std::int64_t n, int channels) {
  const int k_max = 16383;
  const std::int64_t stride = (n + k_max - 1 + 31) / 32 * 32;
  std::vector<float> hx(static_cast<std::size_t>(stride * channels));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& v : hx)
    v = d(rng);
  std::vector<float> hh(static_cast<std::size_t>(k_max));
  for (float& v : hh)
    v = d(rng) * 0.01f;
  kc::DeviceBuffer<float> x(hx.size()), h(hh.size()), y(hx.size());
  SIGSTREAM_CUDA_TRY(cudaMemcpy(x.data(), hx.data(), x.bytes(), cudaMemcpyHostToDevice));
  SIGSTREAM_CUDA_TRY(cudaMemcpy(h.data(), hh.data(), h.bytes(), cudaMemcpyHostToDevice));
  SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());
  std::printf("\nCrossover, %d channel(s) x %lld frames, median of %d (ms)\n", channels,
              static_cast<long long>(n), reps);
  std::printf("%-9s %6s %10s %10s %8s %8s  %s\n", "crossover", "K", "direct", "fft", "L", "ratio",
              "faster");
  for (int k = 15; k <= k_max; k = 2 * k + 1) {
    const double dms = median_ms(s, reps, [&] {
      kc::fir_direct(x.data(), n, h.data(), k, y.data(), channels, stride, stride, s);
    });
    const FftTiming f = time_fft(s, reps, x.data(), n, hh, k, y.data(), channels, stride);
    std::printf("%-9s %6d %10.3f %10.3f %8d %7.2fx  %s\n", "crossover", k, dms, f.ms, f.fft,
                dms / f.ms, dms <= f.ms ? "direct" : "fft");
  }
}

void bench_other_kernels(cudaStream_t s, int reps, std::int64_t n, const Limits& lim) {
  std::printf("\nOther kernels, N = %lld frames\n", static_cast<long long>(n));
  std::printf("%-34s %10s %12s %10s\n", "kernel", "time ms", "Gframes/s", "%DRAM bw");
  kc::DeviceBuffer<float> a(static_cast<std::size_t>(2 * n)), b(static_cast<std::size_t>(2 * n));
  kc::DeviceBuffer<std::int16_t> pcm(static_cast<std::size_t>(2 * n));
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(a.data(), 0, a.bytes(), s));
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(b.data(), 0, b.bytes(), s));
  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(pcm.data(), 0, pcm.bytes(), s));
  kc::DeviceBuffer<kc::MetricsPartial> partials(kc::metrics_partials_count(2));
  kc::DeviceBuffer<kc::DeviceChannelMetrics> out(2);
  kc::DeviceBuffer<unsigned long long> clipped(1);
  auto row = [&](const char* name, double ms, double frames, double bytes) {
    std::printf("%-34s %10.3f %12.2f %9.1f%%\n", name, ms, frames / (ms * 1e-3) * 1e-9,
                100.0 * bytes / (ms * 1e-3) / lim.bytes_per_s);
  };
  const double fn = static_cast<double>(n);
  row("metrics (1 ch, y + source)",
      median_ms(s, reps,
                [&] {
                  kc::channel_metrics(a.data(), n, b.data(), n, n, 1, partials.data(), out.data(),
                                      s);
                }),
      fn, 8.0 * fn);
  row("metrics (2 ch, y + source)",
      median_ms(s, reps,
                [&] {
                  kc::channel_metrics(a.data(), n, b.data(), n, n, 2, partials.data(), out.data(),
                                      s);
                }),
      2 * fn, 16.0 * fn);
  row("deinterleave int16 stereo",
      median_ms(s, reps,
                [&] { kc::deinterleave(pcm.data(), SampleType::i16, 2, 0, n, a.data(), n, s); }),
      fn, 12.0 * fn);
  row("interleave+quantize int16 stereo",
      median_ms(s, reps,
                [&] {
                  SIGSTREAM_CUDA_TRY(cudaMemsetAsync(clipped.data(), 0, 8, s));
                  kc::interleave(a.data(), n, 2, n, SampleType::i16, 16, pcm.data(), clipped.data(),
                                 s);
                }),
      fn, 12.0 * fn);
  row("gain stereo", median_ms(s, reps, [&] { kc::gain(a.data(), n, b.data(), n, 2, n, 0.5f, s); }),
      fn, 16.0 * fn);
}

// Int16 stereo through the CUDA backend, host memory to host memory.
void bench_pipeline(std::int64_t samples, int taps, std::int64_t chunk, int streams) {
  using namespace sigstream;
  const int ch = 2;
  const std::int64_t frames = samples / ch;
  std::vector<std::int16_t> src(static_cast<std::size_t>(samples));
  std::mt19937 rng(7);
  for (auto& v : src)
    v = static_cast<std::int16_t>(static_cast<int>(rng() % 20001) - 10000);

  Config config;
  StageSpec st;
  st.type = kFirType;
  st.name = "lp";
  st.as<sigstream::FirSpec>().taps.assign(static_cast<std::size_t>(taps), 1.0 / taps);
  config.stages.push_back(st);
  config.execution.chunk_frames = chunk;
  SourceInfo si;
  si.sample_rate = 48000;
  si.channels = ch;
  si.frames = frames;
  si.sample_type = SampleType::i16;
  si.bits = 16;
  const Plan plan = make_plan(config, si, 16);

  auto backend = make_cuda_backend();
  BackendOptions o;
  o.streams = streams;
  backend->prepare(plan, o);
  const std::size_t frame_bytes = ch * sizeof(std::int16_t);
  // Every chunk's input block filled up front (what a reader thread does while
  // the GPU works), so the timed loop is submit/retire only.
  std::vector<HostBlock> blocks;
  for (std::int64_t c = 0; c < plan.num_chunks; ++c) {
    HostBlock b =
        backend->make_block(SampleType::i16, ch, plan.chunk_frames + plan.back + plan.ahead);
    const std::int64_t start = plan.chunk_start(c);
    const std::int64_t lo = start - plan.back, hi = start + plan.chunk_length(c) + plan.ahead;
    b.frames = hi - lo;
    auto* dst = reinterpret_cast<unsigned char*>(b.data.get());
    const std::int64_t a = std::max<std::int64_t>(lo, 0), e = std::min(hi, frames);
    std::memset(dst, 0, static_cast<std::size_t>(b.frames) * frame_bytes);
    std::memcpy(dst + (a - lo) * frame_bytes, src.data() + a * ch,
                static_cast<std::size_t>(e - a) * frame_bytes);
    blocks.push_back(b);
  }
  std::vector<std::int16_t> sink(static_cast<std::size_t>(samples));

  auto run_once = [&](bool copy_out) {
    int in_flight = 0;
    std::int64_t written = 0;
    auto take = [&] {
      ChunkResult r = backend->retire();
      if (copy_out)
        std::memcpy(sink.data() + written * ch, r.output.data.get(), r.output.bytes());
      written += r.frames;
    };
    for (std::int64_t c = 0; c < plan.num_chunks; ++c) {
      while (in_flight >= backend->depth()) {
        take();
        --in_flight;
      }
      ChunkJob job = chunk_job(plan, c);
      job.input = blocks[static_cast<std::size_t>(c)];
      backend->submit(std::move(job));
      ++in_flight;
    }
    while (in_flight-- > 0)
      take();
  };
  run_once(true); // warm-up
  auto t0 = std::chrono::steady_clock::now();
  run_once(false);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  run_once(true);
  const double s_copy =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The PCIe floor: the same bytes up and down, pinned, concurrently on two streams.
  const std::size_t bytes = static_cast<std::size_t>(samples) * sizeof(std::int16_t);
  kc::PinnedBuffer<std::byte> hu(bytes), hd(bytes);
  kc::DeviceBuffer<std::byte> du(bytes), dd(bytes);
  auto up = kc::Stream::create();
  auto down = kc::Stream::create();
  auto timed = [&](bool h2d, bool d2h) {
    const auto t = std::chrono::steady_clock::now();
    if (h2d)
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(du.data(), hu.data(), bytes, cudaMemcpyHostToDevice, up.get()));
    if (d2h)
      SIGSTREAM_CUDA_TRY(
          cudaMemcpyAsync(hd.data(), dd.data(), bytes, cudaMemcpyDeviceToHost, down.get()));
    up.synchronize();
    down.synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  timed(true, true);
  const double t_up = timed(true, false), t_down = timed(false, true), t_both = timed(true, true);
  const double gb = static_cast<double>(bytes) * 1e-9;
  std::printf(
      "\nHost to host: %lld int16 samples (stereo), fir %d taps, chunk %lld frames, %d streams\n",
      static_cast<long long>(samples), taps, static_cast<long long>(chunk), streams);
  std::printf("  pipeline          %8.2f ms  %7.2f GB/s each way  %7.1f Msamples/s\n", s * 1e3,
              gb / s, static_cast<double>(samples) / s * 1e-6);
  std::printf("  + output memcpy   %8.2f ms  (results copied out on the same thread)\n",
              s_copy * 1e3);
  std::printf("  PCIe H2D only     %8.2f ms  %7.2f GB/s\n", t_up * 1e3, gb / t_up);
  std::printf("  PCIe D2H only     %8.2f ms  %7.2f GB/s\n", t_down * 1e3, gb / t_down);
  std::printf("  PCIe both (floor) %8.2f ms  -> pipeline at %.0f%% of the floor\n", t_both * 1e3,
              100.0 * t_both / s);
  std::printf("  fir stage, event time summed over chunks and runs: %.2f ms\n",
              backend->stage_ms().empty() ? 0.0 : backend->stage_ms()[0]);
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p != '\0';) {
    char* end = nullptr;
    const long x = std::strtol(p, &end, 10);
    if (end == p || x < 1)
      throw sigstream::Error(sigstream::ErrorKind::invalid_argument,
                             std::string("bad --taps list: ") + s);
    v.push_back(static_cast<int>(x));
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

} // namespace

int main(int argc, char** argv) {
  try {
    std::vector<int> taps = {31, 127, 255, 1023, 4095, 16383};
    int log2n = 26, reps = 20, device = 0;
    bool all_policies = false, pipeline = true, fft_tune = false, crossover = true;
    std::int64_t chunk = 1 << 20;
    std::vector<int> stream_counts = {1, 4};
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc)
          throw sigstream::Error(sigstream::ErrorKind::invalid_argument, a + " needs a value");
        return argv[++i];
      };
      if (a == "--taps")
        taps = parse_list(value());
      else if (a == "--log2n")
        log2n = std::atoi(value());
      else if (a == "--reps")
        reps = std::max(3, std::atoi(value()));
      else if (a == "--device")
        device = std::atoi(value());
      else if (a == "--policies")
        all_policies = true;
      else if (a == "--no-pipeline")
        pipeline = false;
      else if (a == "--fft-tune")
        fft_tune = true;
      else if (a == "--no-crossover")
        crossover = false;
      else if (a == "--chunk")
        chunk = std::max<std::int64_t>(1, std::atoll(value()));
      else if (a == "--streams")
        stream_counts = parse_list(value());
      else {
        std::fprintf(stderr,
                     "usage: %s [--taps 31,127,...] [--log2n 26] [--reps 20] [--policies] "
                     "[--fft-tune] [--no-crossover] [--no-pipeline] [--chunk FRAMES] "
                     "[--streams 1,4] [--device N]\n",
                     argv[0]);
        return 2;
      }
    }
    if (sigstream::cuda_devices().empty()) {
      std::printf("no CUDA device: nothing to measure\n");
      return 0;
    }
    SIGSTREAM_CUDA_TRY(cudaSetDevice(device));
    cudaDeviceProp p{};
    SIGSTREAM_CUDA_TRY(cudaGetDeviceProperties(&p, device));
    auto stream = kc::Stream::create();
    const Limits lim = measure_limits(stream.get(), reps, p);
    std::printf("%s: %d SMs; measured FP32 FMA peak %.2f TFMA/s (%.1f TFLOP/s), "
                "device-to-device copy %.0f GB/s (read + write)\n",
                p.name, p.multiProcessorCount, lim.fma_per_s * 1e-12, 2 * lim.fma_per_s * 1e-12,
                lim.bytes_per_s * 1e-9);
    std::printf("auto = %s\n", kc::fir_direct_policy().c_str());
    const std::int64_t n = std::int64_t{1} << log2n;
    bench_fir(stream.get(), reps, n, taps, lim, all_policies);
    bench_fft(stream.get(), reps, n, taps, lim, fft_tune);
    if (crossover) {
      bench_crossover(stream.get(), reps, n, 1);
      bench_crossover(stream.get(), reps, chunk, 2);
      bench_crossover(stream.get(), reps, 16384, 2);
    }
    bench_other_kernels(stream.get(), reps, n / 2, lim);
    if (pipeline)
      for (int sc : stream_counts)
        bench_pipeline(n, 255, chunk, sc);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_fir: %s\n", e.what());
    return 1;
  }
}
