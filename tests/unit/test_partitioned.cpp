// The partitioned (UPOLS) FIR of live mode against the float64 sum (SPEC §3):
// random taps and signals, odd lengths, blocks of every shape.
#include <gtest/gtest.h>

#include <chrono>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_partitioned.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using kernels::cpu::PartitionedFir;

// Streams `x` through blocks of `block` samples (zero-padded at the end) and
// returns the first x.size() outputs.
std::vector<double> run_blocks(const PartitionedFir& fir, const std::vector<float>& x) {
  auto state = fir.make_state();
  const auto p = static_cast<std::size_t>(fir.block());
  std::vector<float> in(p), out(p);
  std::vector<double> y;
  for (std::size_t at = 0; at < x.size(); at += p) {
    for (std::size_t i = 0; i < p; ++i)
      in[i] = at + i < x.size() ? x[at + i] : 0.0f;
    fir.process(state, in.data(), out.data());
    for (std::size_t i = 0; i < p && at + i < x.size(); ++i)
      y.push_back(out[i]);
  }
  return y;
}

TEST(PartitionedFir, MatchesTheFloat64SumForManyShapes) {
  if (!PartitionedFir::available())
    GTEST_SKIP() << "no CPU FFT in this build";
  std::uint32_t seed = 1;
  for (int k : {1, 2, 37, 48, 49, 255, 1001, 4095}) {
    for (int block : {1, 7, 48, 64, 100}) {
      const auto h64 = test::random_taps(k, ++seed);
      const std::vector<float> h(h64.begin(), h64.end());
      const std::vector<double> hd(h.begin(), h.end()); // the taps that run
      const auto xf = test::random_samples(3001, ++seed);
      const std::vector<double> xd(xf.begin(), xf.end());
      const auto ref = test::reference_fir(xd, hd, FirMode::causal);
      const PartitionedFir fir(h.data(), k, block);
      EXPECT_EQ(fir.partitions(), (k + block - 1) / block);
      const auto got = run_blocks(fir, xf);
      ASSERT_EQ(got.size(), ref.size());
      EXPECT_LT(test::rel_l2(ref, got), 2e-6) << "K " << k << " block " << block;
    }
  }
}

TEST(PartitionedFir, ChannelsKeepTheirOwnState) {
  if (!PartitionedFir::available())
    GTEST_SKIP() << "no CPU FFT in this build";
  const auto h64 = test::random_taps(300, 5);
  const std::vector<float> h(h64.begin(), h64.end());
  const PartitionedFir fir(h.data(), 300, 32);
  const auto a = test::random_samples(32 * 40, 6), b = test::random_samples(32 * 40, 7);
  // Interleaving two channels' blocks through one object changes neither.
  auto sa = fir.make_state(), sb = fir.make_state();
  std::vector<float> ya(a.size()), yb(b.size());
  for (std::size_t at = 0; at < a.size(); at += 32) {
    fir.process(sa, a.data() + at, ya.data() + at);
    fir.process(sb, b.data() + at, yb.data() + at);
  }
  const auto ra = run_blocks(fir, a);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(static_cast<double>(ya[i]), ra[i]) << i;
}

TEST(PartitionedFir, BadShapesAreErrors) {
  const float h[1] = {1.0f};
  EXPECT_THROW(PartitionedFir(h, 0, 48), sigstream::Error);
  EXPECT_THROW(PartitionedFir(h, 1, 0), sigstream::Error);
}

} // namespace
} // namespace sigstream
