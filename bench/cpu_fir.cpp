// Google Benchmark: the CPU direct FIR kernel (single thread), outputs/s and
// FMA rate, over tap counts. Run: build/bench/bench_cpu_fir
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/fir.hpp"

namespace {

void BM_FirDirect(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const std::int64_t n = 1 << 20;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<std::size_t>(n + k - 1)), h(static_cast<std::size_t>(k)), y(static_cast<std::size_t>(n));
  for (auto& v : x) v = u(rng);
  for (auto& v : h) v = u(rng) / static_cast<float>(k);
  for (auto _ : state) {
    sigstream::kernels::cpu::fir_direct(x.data(), n, h.data(), k, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["Msamples/s"] = benchmark::Counter(static_cast<double>(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFMA/s"] = benchmark::Counter(static_cast<double>(n) * k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FirDirect)->Arg(15)->Arg(31)->Arg(63)->Arg(255)->Arg(1023)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
