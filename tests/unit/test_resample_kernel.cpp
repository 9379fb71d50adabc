// The CPU polyphase kernel (kernels/cpu/resample.hpp) against its definition
// written here one output at a time: y[m] = sum over t ascending of
// h[phi + t*up] * x[newest - t], one fma each from 0, with a = m*down +
// delay, newest = floor(a / up), phi = a - newest*up. The kernel works in
// passes over decimated tiles, blocks of 64 outputs per phase, transposed
// stores and loads: the cases cover several passes, partial last blocks,
// down below, at and above the 8-row transposes (and not a multiple of 8),
// few and many phases, outputs that do not start at frame 0 and an input
// that starts before the first frame read. The float kernel must give the
// definition's bits (the same fma order), and so must the float64 one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/resample.hpp"

namespace sigstream {
namespace {

using kernels::cpu::ceil_div;
using kernels::cpu::floor_div;

template <typename T>
std::vector<T> definition(const std::vector<T>& x, std::int64_t x_first, std::int64_t y_first,
                          std::int64_t n, const std::vector<double>& h, int up, int down,
                          std::int64_t delay) {
  std::vector<T> y(static_cast<std::size_t>(n));
  const auto k = static_cast<std::int64_t>(h.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t a = (y_first + i) * down + delay;
    const std::int64_t newest = floor_div(a, up);
    const std::int64_t phi = a - newest * up;
    T acc = 0;
    for (std::int64_t t = 0; phi + t * up < k; ++t)
      acc = std::fma(static_cast<T>(h[static_cast<std::size_t>(phi + t * up)]),
                     x[static_cast<std::size_t>(newest - t - x_first)], acc);
    y[static_cast<std::size_t>(i)] = acc;
  }
  return y;
}

struct Case {
  int up, down, half; // K = 2*half*max(up, down) + 1
};

class ResampleKernel : public ::testing::TestWithParam<Case> {};

TEST_P(ResampleKernel, GivesTheDefinitionsBits) {
  const auto [up, down, half] = GetParam();
  const int k = 2 * half * std::max(up, down) + 1;
  std::mt19937_64 rng(static_cast<std::uint64_t>(up * 1000 + down));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> h(static_cast<std::size_t>(k));
  for (double& v : h)
    v = u(rng);
  const std::int64_t delay = (k - 1) / 2;
  const auto p = kernels::cpu::make_polyphase(h, up, down, delay);
  for (const std::int64_t y_first : {std::int64_t{0}, std::int64_t{12345}}) {
    for (const std::int64_t n :
         {std::int64_t{1}, std::int64_t{63}, std::int64_t{64}, std::int64_t{65},
          std::int64_t{20011}, std::int64_t{64} * up * 3 + 7}) {
      SCOPED_TRACE("up " + std::to_string(up) + " down " + std::to_string(down) + " y_first " +
                   std::to_string(y_first) + " n " + std::to_string(n));
      // The input the outputs read, from 3 frames before the oldest.
      const std::int64_t x_first = ceil_div(y_first * down - (k - 1 - delay), up) - 3;
      const std::int64_t x_end = floor_div((y_first + n - 1) * down + delay, up) + 1;
      std::vector<float> xf(static_cast<std::size_t>(x_end - x_first));
      std::vector<double> xd(xf.size());
      for (std::size_t i = 0; i < xf.size(); ++i) {
        xf[i] = static_cast<float>(u(rng));
        xd[i] = u(rng);
      }
      std::vector<float> yf(static_cast<std::size_t>(n), -7.0f);
      kernels::cpu::resample_direct(xf.data(), x_first, yf.data(), y_first, n, p);
      const std::vector<float> want_f = definition(xf, x_first, y_first, n, h, up, down, delay);
      std::vector<double> yd(static_cast<std::size_t>(n), -7.0);
      kernels::cpu::resample_direct_f64(xd.data(), x_first, yd.data(), y_first, n, p);
      const std::vector<double> want_d = definition(xd, x_first, y_first, n, h, up, down, delay);
      std::int64_t wrong_f = 0, wrong_d = 0;
      for (std::size_t i = 0; i < yf.size(); ++i) {
        wrong_f += yf[i] != want_f[i];
        wrong_d += yd[i] != want_d[i];
      }
      EXPECT_EQ(wrong_f, 0) << "float outputs differ from the definition, first " << yf[0] << " vs "
                            << want_f[0];
      EXPECT_EQ(wrong_d, 0) << "float64 outputs differ from the definition";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ratios, ResampleKernel,
                         ::testing::Values(Case{160, 147, 10}, Case{147, 160, 10}, Case{1, 3, 10},
                                           Case{6, 1, 10}, Case{37, 101, 3}, Case{101, 37, 3},
                                           Case{17, 8, 2}, Case{9, 13, 4}, Case{3, 2, 10},
                                           Case{2, 250, 1}, Case{7, 1, 1}));

} // namespace
} // namespace sigstream
