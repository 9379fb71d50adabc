// kernels/cpu/response: the filter response in the statistics, against the
// DFT evaluated here term by term on random taps of odd and even lengths
// (longer and shorter than the grid), and the group delay of a symmetric
// (linear-phase) filter, which is (K - 1) / 2 samples wherever H is not 0.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/response.hpp"

namespace sigstream {
namespace {

TEST(FilterResponse, EqualsTheDftOnTheGrid) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const int k : {1, 2, 17, 255, 1024, 3001}) {
    std::vector<double> h(static_cast<std::size_t>(k));
    for (double& v : h)
      v = u(rng);
    const double rate = 44100.0;
    const int points = 64;
    const auto r = kernels::cpu::filter_response(h, rate, points);
    ASSERT_EQ(r.freq_hz.size(), static_cast<std::size_t>(points + 1));
    EXPECT_EQ(r.freq_hz.back(), rate / 2);
    for (int j = 0; j <= points; ++j) {
      const double w = std::numbers::pi * j / points; // radians per sample
      std::complex<double> sh, sg;
      for (int i = 0; i < k; ++i) {
        const std::complex<double> e = std::polar(1.0, -w * i);
        sh += h[static_cast<std::size_t>(i)] * e;
        sg += static_cast<double>(i) * h[static_cast<std::size_t>(i)] * e;
      }
      EXPECT_NEAR(r.magnitude_db[static_cast<std::size_t>(j)], 20.0 * std::log10(std::abs(sh)),
                  1e-9)
          << "K " << k << ", point " << j;
      EXPECT_NEAR(r.group_delay_ms[static_cast<std::size_t>(j)], (sg / sh).real() / rate * 1000.0,
                  1e-9 * std::max(1.0, std::abs((sg / sh).real() / rate * 1000.0)))
          << "K " << k << ", point " << j;
    }
  }
}

TEST(FilterResponse, ALinearPhaseFilterDelaysByHalfItsLength) {
  std::vector<double> h = {0.1, -0.3, 0.7, 1.9, 0.7, -0.3, 0.1}; // symmetric, 7 taps
  const auto r = kernels::cpu::filter_response(h, 8000.0, 100);
  int defined = 0; // NaN only where |H| is zero: most points have a phase
  for (double g : r.group_delay_ms) {
    if (!std::isnan(g)) {
      EXPECT_NEAR(g, 3.0 / 8000.0 * 1000.0, 1e-9);
      ++defined;
    }
  }
  EXPECT_GE(defined, static_cast<int>(r.group_delay_ms.size()) - 2);
}

TEST(FilterResponse, NoPhaseWhereTheResponseIsZero) {
  const std::vector<double> h = {1.0, 1.0}; // zero at Nyquist
  const auto r = kernels::cpu::filter_response(h, 2.0, 4);
  EXPECT_TRUE(std::isnan(r.group_delay_ms.back()));
  EXPECT_LT(r.magnitude_db.back(), -200.0);
  EXPECT_NEAR(r.magnitude_db.front(), 20.0 * std::log10(2.0), 1e-12);
}

TEST(FilterResponse, BadArgumentsThrow) {
  EXPECT_THROW(static_cast<void>(kernels::cpu::filter_response({}, 48000.0)), Error);
  const std::vector<double> h = {1.0};
  EXPECT_THROW(static_cast<void>(kernels::cpu::filter_response(h, 0.0)), Error);
  EXPECT_THROW(static_cast<void>(kernels::cpu::filter_response(h, 48000.0, 0)), Error);
}

} // namespace
} // namespace sigstream
