// Google Benchmark: the CPU FIR kernels (single thread), outputs/s, over tap
// counts: direct (with its FMA rate) and FFT overlap-save (pocketfft), so that
// the crossover is visible. Run: build/bench/bench_cpu_fir
//   BM_FirDirect/K          direct kernel, n = 2^20 outputs
//   BM_FirFft/K             FFT kernel at its default block size, n = 2^20 (FFT even where
//                           direct is cheaper, so the crossover shows)
//   BM_FirFftSize/K/N       FFT kernel with the block size forced to N (size sweep)
//   BM_FirShort/K/n/method  one call of n outputs (method 0 direct, 1 FFT): short chunks
//   BM_FftEngine/N/count    one engine call of `count` blocks of N points (pass widths)
//   BM_Resample/up/down     the polyphase resampler (resample_poly's filter, h = 10), one
//                           call of 2^20 outputs, as a chunk of the default size sees it
// Results and the rule derived from them: bench/RESULTS-cpu-crossover.md.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/fft_engine.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "kernels/cpu/resample.hpp"
#include "stages/resample/resample.hpp"

namespace {

struct Data {
  std::vector<float> x, h, y;
  Data(int k, std::int64_t n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    x.resize(static_cast<std::size_t>(n + k - 1));
    h.resize(static_cast<std::size_t>(k));
    y.resize(static_cast<std::size_t>(n));
    for (auto& v : x)
      v = u(rng);
    for (auto& v : h)
      v = u(rng) / static_cast<float>(k);
  }
};

void counters(benchmark::State& state, std::int64_t n, int k) {
  state.counters["Msamples/s"] = benchmark::Counter(static_cast<double>(n) * 1e-6,
                                                    benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns/sample"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
  state.counters["GFMA/s"] = benchmark::Counter(static_cast<double>(n) * k * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FirDirect(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const std::int64_t n = 1 << 20;
  Data d(k, n);
  for (auto _ : state) {
    sigstream::kernels::cpu::fir_direct(d.x.data(), n, d.h.data(), k, d.y.data());
    benchmark::DoNotOptimize(d.y.data());
  }
  counters(state, n, k);
}
BENCHMARK(BM_FirDirect)
    ->Arg(15)
    ->Arg(31)
    ->Arg(47)
    ->Arg(63)
    ->Arg(95)
    ->Arg(127)
    ->Arg(255)
    ->Arg(383)
    ->Arg(447)
    ->Arg(511)
    ->Arg(639)
    ->Arg(767)
    ->Arg(1023)
    ->Arg(4095)
    ->Arg(16383)
    ->Unit(benchmark::kMillisecond);

void run_fft(benchmark::State& state, int k, std::int64_t n,
             sigstream::kernels::cpu::FirFft::Options o) {
  Data d(k, n);
  const sigstream::kernels::cpu::FirFft fft(d.h.data(), k, o);
  sigstream::kernels::cpu::FirFft::Scratch scratch;
  for (auto _ : state) {
    fft.apply(d.x.data(), n, d.y.data(), scratch);
    benchmark::DoNotOptimize(d.y.data());
  }
  counters(state, n, k);
  state.counters["N"] = fft.size_for(n);
}

void BM_FirFft(benchmark::State& state) {
  sigstream::kernels::cpu::FirFft::Options o;
  o.short_direct = false; // always the FFT path, also where direct would be cheaper
  run_fft(state, static_cast<int>(state.range(0)), 1 << 20, o);
}
BENCHMARK(BM_FirFft)
    ->Arg(15)
    ->Arg(31)
    ->Arg(47)
    ->Arg(63)
    ->Arg(95)
    ->Arg(127)
    ->Arg(255)
    ->Arg(383)
    ->Arg(447)
    ->Arg(511)
    ->Arg(639)
    ->Arg(767)
    ->Arg(1023)
    ->Arg(4095)
    ->Arg(16383)
    ->Unit(benchmark::kMillisecond);

void BM_FirFftSize(benchmark::State& state) {
  sigstream::kernels::cpu::FirFft::Options o;
  o.fft_size = static_cast<int>(state.range(1));
  o.short_direct = false;
  o.adaptive = false;
  run_fft(state, static_cast<int>(state.range(0)), 1 << 20, o);
}
BENCHMARK(BM_FirFftSize)
    ->ArgsProduct({{127}, {512, 1024, 2048}})
    ->ArgsProduct({{255}, {1024, 2048, 4096, 8192}})
    ->ArgsProduct({{1023}, {4096, 8192, 16384, 32768}})
    ->ArgsProduct({{4095}, {16384, 24576, 32768, 36450, 40960, 49152, 65536, 131072}})
    ->ArgsProduct({{16383}, {49152, 65536, 131072, 262144}})
    ->Unit(benchmark::kMillisecond);

// One call of n outputs, as a chunk of n frames sees it (the FFT side picks
// its block size for n, with the direct fallback off).
void BM_FirShort(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const std::int64_t n = state.range(1);
  if (state.range(2) == 0) {
    Data d(k, n);
    for (auto _ : state) {
      sigstream::kernels::cpu::fir_direct(d.x.data(), n, d.h.data(), k, d.y.data());
      benchmark::DoNotOptimize(d.y.data());
    }
    counters(state, n, k);
  } else {
    sigstream::kernels::cpu::FirFft::Options o;
    o.short_direct = false;
    run_fft(state, k, n, o);
  }
}
BENCHMARK(BM_FirShort)
    ->ArgsProduct({{511, 1023, 4095}, {1024, 4096, 16384}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// One call of the FFT engine with `count` blocks: what a partly filled call
// costs against a full one (the weights of fft::call_cost_ns).
void BM_FftEngine(benchmark::State& state) {
  const int nfft = static_cast<int>(state.range(0));
  const int count = static_cast<int>(state.range(1));
  const int k = nfft / 8 + 1;
  auto e = sigstream::kernels::cpu::fft::make(nfft);
  if (!e) {
    state.SkipWithError("no FFT library in this build");
    return;
  }
  Data d(k, static_cast<std::int64_t>(count) * nfft);
  std::vector<float> padded(static_cast<std::size_t>(nfft), 0.0f);
  std::copy(d.h.begin(), d.h.end(), padded.begin());
  const std::vector<float> spec = e->spectrum(padded.data(), 1.0f / static_cast<float>(nfft));
  std::vector<const float*> in;
  std::vector<float*> out;
  for (int b = 0; b < count; ++b) {
    in.push_back(d.x.data() + static_cast<std::ptrdiff_t>(b) * nfft);
    out.push_back(d.y.data() + static_cast<std::ptrdiff_t>(b) * (nfft - k + 1));
  }
  for (auto _ : state) {
    e->convolve(in.data(), count, spec.data(), k - 1, nfft - k + 1, out.data());
    benchmark::DoNotOptimize(d.y.data());
  }
  state.counters["us/block"] = benchmark::Counter(
      count * 1e-6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FftEngine)
    ->ArgsProduct({{2048, 32768}, {1, 2, 4, 5, 8}})
    ->Unit(benchmark::kMicrosecond);

void BM_Resample(benchmark::State& state) {
  const int up = static_cast<int>(state.range(0));
  const int down = static_cast<int>(state.range(1));
  sigstream::WindowSpec window;
  window.kind = sigstream::WindowKind::kaiser;
  window.beta = 5.0;
  const std::vector<double> h = sigstream::resample_filter(up, down, 10, window);
  const auto k = static_cast<std::int64_t>(h.size());
  const auto p = sigstream::kernels::cpu::make_polyphase(h, up, down, (k - 1) / 2);
  const std::int64_t n = std::int64_t{1} << 20;
  const std::int64_t lookback = k - 1 - p.delay;
  const std::int64_t x_first = sigstream::kernels::cpu::ceil_div(-lookback, up);
  const std::int64_t x_end = sigstream::kernels::cpu::floor_div((n - 1) * down + p.delay, up) + 1;
  Data d(1, x_end - x_first);
  std::vector<float> y(static_cast<std::size_t>(n));
  for (auto _ : state) {
    sigstream::kernels::cpu::resample_direct(d.x.data(), x_first, y.data(), 0, n, p);
    benchmark::DoNotOptimize(y.data());
  }
  // FMAs: K/up taps per output.
  state.counters["GFMA/s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(k) / up * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns/output"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}
BENCHMARK(BM_Resample)
    ->Args({160, 147})
    ->Args({147, 160})
    ->Args({1, 3})
    ->Args({6, 1})
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
