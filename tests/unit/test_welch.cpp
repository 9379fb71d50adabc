// kernels::cpu::Welch against Welch's method computed here from its
// definition in float64 (a direct DFT per segment, SciPy's scaling for
// scaling='density', detrend=False, one-sided), on random data of odd
// lengths; chunked calls with the pipeline's ownership rule give the one-shot
// sums; bad arguments are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/welch.hpp"
#include "welch_reference.hpp"

namespace sigstream {
namespace {

using kernels::cpu::Welch;

std::vector<float> noise(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x)
    v = d(rng);
  return x;
}

std::vector<double> periodic_hann(int n) {
  return test::periodic_window(WindowKind::hann, n);
}

using test::max_rel_to_peak;

class WelchTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!Welch::available())
      GTEST_SKIP() << "built without pocketfft";
  }
};

TEST_F(WelchTest, EqualsTheDefinitionForWindowsOverlapsAndOddSizes) {
  const double fs = 16000.0;
  const std::vector<float> x = noise(10007, 3);
  struct Case {
    int nfft, hop;
    bool random_window;
  };
  for (const Case c :
       {Case{256, 128, false}, Case{1000, 750, false}, Case{511, 511, false}, Case{511, 255, true},
        Case{64, 1, false}, Case{1, 1, false}, Case{2, 1, true}}) {
    SCOPED_TRACE("nfft " + std::to_string(c.nfft) + " hop " + std::to_string(c.hop));
    std::vector<double> w = periodic_hann(c.nfft);
    if (c.random_window || c.nfft == 1) {
      std::mt19937 rng(static_cast<std::uint32_t>(c.nfft));
      std::uniform_real_distribution<double> d(0.1, 1.0);
      for (double& v : w)
        v = d(rng);
    }
    const Welch welch(w, c.hop);
    ASSERT_EQ(welch.bins(), c.nfft / 2 + 1);
    std::vector<double> power(static_cast<std::size_t>(welch.bins()), 0.0);
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    const std::int64_t segments = welch.add(x.data(), 0, n, 0, n, power);
    std::int64_t want_segments = 0;
    const std::vector<double> want = test::welch_reference(x, w, c.hop, fs, &want_segments);
    EXPECT_EQ(segments, want_segments);
    EXPECT_EQ(segments, (n - c.nfft) / c.hop + 1);
    EXPECT_LE(max_rel_to_peak(welch.density(power, segments, fs), want), 1e-9);
    const std::vector<double> f = welch.frequencies(fs);
    EXPECT_DOUBLE_EQ(f.back(), (welch.bins() - 1) * fs / c.nfft);
  }
}

TEST_F(WelchTest, ChunkedCallsOwningTheirFramesGiveTheOneShotSums) {
  const std::vector<float> x = noise(50001, 9);
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  for (const auto& [nfft, hop] :
       std::vector<std::pair<int, int>>{{1024, 512}, {1000, 333}, {4096, 4096}, {17, 5}}) {
    SCOPED_TRACE("nfft " + std::to_string(nfft) + " hop " + std::to_string(hop));
    const Welch welch(periodic_hann(nfft), hop);
    std::vector<double> once(static_cast<std::size_t>(welch.bins()), 0.0);
    const std::int64_t want = welch.add(x.data(), 0, n, 0, n, once);
    std::mt19937 rng(static_cast<std::uint32_t>(nfft + hop));
    for (int trial = 0; trial < 3; ++trial) {
      // Chunks of random size (down to 1 frame); each call gets its frames
      // plus the nfft - 1 before them (the history a chunk keeps) and owns
      // the segments that end in its own frames.
      std::vector<double> sum(once.size(), 0.0);
      std::int64_t count = 0;
      for (std::int64_t c0 = 0; c0 < n;) {
        const std::int64_t len = 1 + static_cast<std::int64_t>(rng() % (trial == 0 ? 7 : 9000));
        const std::int64_t c1 = std::min(n, c0 + len);
        const std::int64_t from = std::max<std::int64_t>(0, c0 - (nfft - 1));
        count += welch.add(x.data() + from, from, c1 - from, c0, c1, sum);
        c0 = c1;
      }
      EXPECT_EQ(count, want);
      EXPECT_LE(max_rel_to_peak(sum, once), 1e-12);
    }
  }
}

TEST_F(WelchTest, ShortSignalsHaveNoSegmentsAndBadArgumentsAreErrors) {
  const Welch welch(periodic_hann(256), 128);
  const std::vector<float> x = noise(255, 1);
  std::vector<double> power(129, 0.0);
  EXPECT_EQ(welch.add(x.data(), 0, 255, 0, 255, power), 0);
  for (double v : welch.density(power, 0, 8000.0))
    EXPECT_EQ(v, 0.0);
  auto invalid = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("welch"), std::string::npos) << e.what();
    }
  };
  const std::vector<double> w = periodic_hann(64);
  invalid([&] { Welch(w, 0); });
  invalid([&] { Welch(w, 65); });
  invalid([&] { Welch(std::vector<double>{}, 1); });
  invalid([&] { Welch(std::vector<double>(8, 0.0), 4); });
  invalid([&] { Welch(std::vector<double>{1.0, std::nan(""), 1.0}, 1); });
}

} // namespace
} // namespace sigstream
