// The CPU FFT overlap-save kernel (kernels/cpu/fir_fft.hpp) against the direct
// kernel and the float64 reference: the same contract (n outputs from
// n + K - 1 inputs), within 1e-6 relative L2, for every K from 1 to 16384
// (seeded random plus the edges), odd and tiny n, many blocks, planar
// channels and several threads sharing one kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/fft_engine.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"

namespace sigstream {
namespace {

using kernels::cpu::FirFft;

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float amp) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-amp, amp);
  std::vector<float> v(n);
  for (auto& x : v)
    x = u(rng);
  return v;
}

// y = the float64 direct sum over the very same float inputs and taps, so the
// comparison measures the FFT's arithmetic only.
std::vector<double> reference(const std::vector<float>& x, std::int64_t n,
                              const std::vector<float>& h) {
  const std::vector<double> xd(x.begin(), x.end()), hd(h.begin(), h.end());
  std::vector<double> y(static_cast<std::size_t>(n));
  kernels::cpu::fir_direct_f64(xd.data(), n, hd.data(), static_cast<int>(hd.size()), y.data());
  return y;
}

double rel_l2(const std::vector<double>& ref, const float* got) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    e += d * d;
    r += ref[i] * ref[i];
  }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

struct Case {
  int k;
  std::int64_t n;
};

// Runs one case with the FFT forced (no direct fallback) and with the default
// options, against the float64 reference and the float direct kernel.
void check_case(const Case& c, std::uint32_t seed, FirFft::Options forced = {}) {
  SCOPED_TRACE("K = " + std::to_string(c.k) + ", n = " + std::to_string(c.n));
  const auto h = random_floats(static_cast<std::size_t>(c.k), seed, 1.0f / static_cast<float>(c.k));
  const auto x = random_floats(static_cast<std::size_t>(c.n + c.k - 1), seed + 1, 1.0f);
  const auto ref = reference(x, c.n, h);

  forced.short_direct = false;
  const FirFft fft(h.data(), c.k, forced);
  FirFft::Scratch scratch;
  // Guards on both sides catch writes outside y[0, n).
  std::vector<float> y(static_cast<std::size_t>(c.n + 2), 12345.0f);
  fft.apply(x.data(), c.n, y.data() + 1, scratch);
  EXPECT_EQ(y.front(), 12345.0f);
  EXPECT_EQ(y.back(), 12345.0f);
  EXPECT_LE(rel_l2(ref, y.data() + 1), 1e-6);

  // The float direct kernel is itself off by up to a few 1e-6 here (random
  // taps of both signs, summed in float), so FFT vs direct gets the float
  // tolerance of SPEC §3.
  std::vector<float> direct(static_cast<std::size_t>(c.n));
  kernels::cpu::fir_direct(x.data(), c.n, h.data(), c.k, direct.data());
  const std::vector<double> direct_d(direct.begin(), direct.end());
  EXPECT_LE(rel_l2(direct_d, y.data() + 1), 1e-5) << "FFT vs direct";

  // The default options (adaptive size, float64 direct sum for short pieces) agree too.
  const FirFft plain(h.data(), c.k);
  std::vector<float> y2(static_cast<std::size_t>(c.n));
  plain.apply(x.data(), c.n, y2.data(), scratch);
  EXPECT_LE(rel_l2(ref, y2.data()), 1e-6) << "default options";
}

TEST(FirFftCpu, EdgeTapCountsAndLengths) {
  std::uint32_t seed = 100;
  for (int k : {1, 2, 3, 4, 5, 31, 64, 511, 512, 4095, 4096, 16383, 16384})
    for (std::int64_t n :
         {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{k > 2 ? k - 2 : 1},
          std::int64_t{997}, std::int64_t{6 * k + 1001}})
      check_case({k, n}, ++seed);
}

TEST(FirFftCpu, RandomTapCountsUpTo16384) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> taps(1, 16384);
  std::uniform_int_distribution<std::int64_t> len(0, 20000);
  for (int i = 0; i < 12; ++i) {
    const int k = taps(rng);
    const std::int64_t n = 2 * len(rng) + 1; // odd
    check_case({k, n}, 500 + static_cast<std::uint32_t>(i));
  }
}

TEST(FirFftCpu, ManySmallBlocksAndEveryBlockSize) {
  // Small forced blocks: many full blocks and a partial last one; odd sizes
  // and sizes that are not 2 * 4^j work too.
  std::uint32_t seed = 900;
  for (int nfft : {8, 10, 64, 96, 250, 1024, 2048, 36450})
    for (int k : {1, 3, 7, 63})
      if (nfft > k)
        for (std::int64_t n : {1, 5, 33, 1001, 4099}) {
          FirFft::Options o;
          o.fft_size = nfft;
          o.adaptive = false;
          check_case({k, n}, ++seed, o);
        }
}

TEST(FirFftCpu, DeterministicAndSafeToShareBetweenThreads) {
  const int k = 4095, ch = 4;
  const std::int64_t n = 100001;
  const auto h = random_floats(static_cast<std::size_t>(k), 7, 1.0f / k);
  const FirFft fft(h.data(), k);
  // Planar channels, one after the other in one buffer.
  const std::int64_t stride = n + k - 1;
  const auto x = random_floats(static_cast<std::size_t>(ch * stride), 8, 1.0f);
  std::vector<float> serial(static_cast<std::size_t>(ch * n)), parallel(serial.size());
  FirFft::Scratch one;
  for (int c = 0; c < ch; ++c)
    fft.apply(x.data() + c * stride, n, serial.data() + c * n, one);

  std::vector<std::thread> threads;
  for (int c = 0; c < ch; ++c)
    threads.emplace_back([&, c] {
      FirFft::Scratch own;
      for (int rep = 0; rep < 3; ++rep)
        fft.apply(x.data() + c * stride, n, parallel.data() + c * n, own);
    });
  for (auto& t : threads)
    t.join();
  EXPECT_TRUE(serial == parallel) << "same inputs, same bits, whatever the thread";

  for (int c = 0; c < ch; ++c) {
    const std::vector<float> xc(x.begin() + c * stride, x.begin() + (c + 1) * stride);
    EXPECT_LE(rel_l2(reference(xc, n, h), serial.data() + c * n), 1e-6) << "channel " << c;
  }
}

TEST(FirFftCpu, ImpulseGivesTaps) {
  const int k = 1000;
  const auto h = random_floats(k, 3, 0.01f);
  const std::int64_t n = 3000;
  std::vector<float> x(static_cast<std::size_t>(n + k - 1), 0.0f);
  x[static_cast<std::size_t>(k - 1)] = 1.0f; // the impulse at output frame 0
  FirFft::Options o;
  o.short_direct = false;
  const FirFft fft(h.data(), k, o);
  FirFft::Scratch s;
  std::vector<float> y(static_cast<std::size_t>(n));
  fft.apply(x.data(), n, y.data(), s);
  for (int i = 0; i < k; ++i)
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], h[static_cast<std::size_t>(i)], 1e-8f) << i;
  for (std::int64_t i = k; i < n; ++i)
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], 0.0f, 1e-8f) << i;
}

TEST(FirFftCpu, ZeroOutputsTouchNothing) {
  const std::vector<float> h(5, 0.2f), x(4, 1.0f);
  const FirFft fft(h.data(), 5);
  FirFft::Scratch s;
  float y = 7.0f;
  fft.apply(x.data(), 0, &y, s);
  EXPECT_EQ(y, 7.0f);
}

TEST(FirFftCpu, SizesFollowTheMeasuredRule) {
  if (!FirFft::available())
    GTEST_SKIP() << "built without a CPU FFT library";
  EXPECT_EQ(FirFft::default_fft_size(1), 512);
  EXPECT_EQ(FirFft::default_fft_size(255), 2048);
  EXPECT_EQ(FirFft::default_fft_size(1023), 8192);
  EXPECT_EQ(FirFft::default_fft_size(4095), 32768);
  // 6K would be 98298: capped where the engine's buffers leave the L2 cache.
  EXPECT_EQ(FirFft::default_fft_size(16383), std::min(131072, kernels::cpu::fft::max_size()));
  for (int k : {1, 100, 4096, 20000, 70000}) {
    const int n = FirFft::default_fft_size(k);
    EXPECT_GE(n, 2 * k);
    EXPECT_EQ(n & (n - 1), 0) << n << " is not a power of two";
  }
  const std::vector<float> h(4095, 1.0f / 4095);
  const FirFft fft(h.data(), 4095);
  EXPECT_EQ(fft.fft_size(), 32768);
  EXPECT_EQ(fft.block_outputs(), 32768 - 4094);
  EXPECT_EQ(fft.size_for(1), 0) << "one output: the direct sum is cheaper";
  EXPECT_EQ(fft.size_for(1 << 20), 32768);
  EXPECT_EQ(fft.size_for(2000), 8192) << "a short call uses a smaller block";
}

// The pocketfft engines: the AVX2 one (8 blocks per call) and the baseline
// one (4) must give the same bits for every block, whatever its neighbours in
// the other lanes, and the sums of the float64 reference.
TEST(FftEngine, EveryEngineAndLaneGivesTheSameBits) {
  namespace fft = kernels::cpu::fft;
  std::vector<std::unique_ptr<fft::BlockFft>> (*engines)(int) = [](int nfft) {
    std::vector<std::unique_ptr<fft::BlockFft>> e;
    if (auto b = fft::make_pocketfft_baseline(nfft))
      e.push_back(std::move(b));
    if (fft::cpu_has_avx2())
      if (auto a = fft::make_pocketfft_avx2(nfft))
        e.push_back(std::move(a));
    return e;
  };
  if (engines(512).empty())
    GTEST_SKIP() << "built without pocketfft";
  std::uint32_t seed = 40;
  for (const auto& [nfft, k] :
       std::vector<std::pair<int, int>>{{512, 101}, {4096, 1023}, {32768, 4095}, {1024, 1}}) {
    SCOPED_TRACE("N = " + std::to_string(nfft) + ", K = " + std::to_string(k));
    const int keep = nfft - k + 1;
    const auto h = random_floats(static_cast<std::size_t>(k), ++seed, 1.0f / static_cast<float>(k));
    std::vector<float> padded(static_cast<std::size_t>(nfft), 0.0f);
    std::copy(h.begin(), h.end(), padded.begin());
    // 9 overlapping blocks of one signal, as the FIR reads them.
    const auto x = random_floats(static_cast<std::size_t>(9 * keep + k - 1), ++seed, 1.0f);
    std::vector<std::vector<float>> results; // per engine and grouping: the 9 blocks' outputs
    for (const auto& e : engines(nfft)) {
      const std::vector<float> spec = e->spectrum(padded.data(), 1.0f / static_cast<float>(nfft));
      for (int group : {e->group(), 5, 3, 1}) {
        std::vector<float> y(static_cast<std::size_t>(9 * keep), -1.0f);
        for (int b0 = 0; b0 < 9; b0 += group) {
          const int count = std::min(group, 9 - b0);
          std::vector<const float*> in;
          std::vector<float*> out;
          for (int j = 0; j < count; ++j) {
            in.push_back(x.data() + static_cast<std::ptrdiff_t>(b0 + j) * keep);
            out.push_back(y.data() + static_cast<std::ptrdiff_t>(b0 + j) * keep);
          }
          e->convolve(in.data(), count, spec.data(), k - 1, keep, out.data());
        }
        results.push_back(std::move(y));
      }
    }
    const auto ref = reference(x, 9 * keep, h);
    EXPECT_LE(rel_l2(ref, results[0].data()), 1e-6);
    for (std::size_t r = 1; r < results.size(); ++r)
      EXPECT_EQ(results[r], results[0]) << "result " << r;
  }
}

TEST(FirFftCpu, RejectsBadArguments) {
  const std::vector<float> h(8, 0.1f);
  EXPECT_THROW(FirFft(h.data(), 0), Error);
  FirFft::Options odd;
  odd.fft_size = 33;
  EXPECT_THROW(FirFft(h.data(), 8, odd), Error);
  FirFft::Options small;
  small.fft_size = 8; // no output per block
  EXPECT_THROW(FirFft(h.data(), 8, small), Error);
}

} // namespace
} // namespace sigstream
