// CPU kernels against the definitions: direct FIR sweeps, PCM conversion
// rules of SPEC §3, the fused metrics pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/reduce.hpp"
#include "pipeline/backends/backend.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using kernels::cpu::fir_direct;

// y[i] = sum_k h[k] x[i+K-1-k] by the plain loop with fmaf, taps ascending:
// the order the fast kernel promises, so the two must agree bit for bit.
std::vector<float> plain_fir(const std::vector<float>& x, std::int64_t n,
                             const std::vector<float>& h) {
  const int k = static_cast<int>(h.size());
  std::vector<float> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (int j = 0; j < k; ++j)
      acc = std::fmaf(h[static_cast<std::size_t>(j)], x[static_cast<std::size_t>(i + k - 1 - j)],
                      acc);
    y[static_cast<std::size_t>(i)] = acc;
  }
  return y;
}

TEST(CpuFir, HandComputedThreeTaps) {
  // x = [1, 2, 3, 4] with 2 zeros of history; h = [0.5, 0.25, 0.125]
  const std::vector<float> x = {0, 0, 1, 2, 3, 4};
  const std::vector<float> h = {0.5f, 0.25f, 0.125f};
  std::vector<float> y(4);
  fir_direct(x.data(), 4, h.data(), 3, y.data());
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 1.0f + 0.25f);
  EXPECT_FLOAT_EQ(y[2], 1.5f + 0.5f + 0.125f);
  EXPECT_FLOAT_EQ(y[3], 2.0f + 0.75f + 0.25f);
}

TEST(CpuFir, ExhaustiveSmallSweepAgainstFloat64AndPlainLoop) {
  for (int k = 1; k <= 33; ++k) {
    for (std::int64_t n = 0; n <= 70; ++n) {
      const auto h64 = test::random_taps(k, static_cast<std::uint32_t>(k * 1000 + n));
      const std::vector<float> h(h64.begin(), h64.end());
      const auto x = test::random_samples(static_cast<std::size_t>(n + k - 1),
                                          static_cast<std::uint32_t>(n * 77 + k));
      std::vector<float> y(static_cast<std::size_t>(n) + 1,
                           std::numeric_limits<float>::quiet_NaN());
      fir_direct(x.data(), n, h.data(), k, y.data());
      EXPECT_TRUE(std::isnan(y[static_cast<std::size_t>(n)]))
          << "wrote past the end, k=" << k << " n=" << n;
      const auto plain = plain_fir(x, n, h);
      if (n > 0) { // memcmp takes no null pointer, even for 0 bytes (plain is empty then)
        ASSERT_EQ(0,
                  std::memcmp(plain.data(), y.data(), static_cast<std::size_t>(n) * sizeof(float)))
            << "k=" << k << " n=" << n;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        double ref = 0;
        for (int j = 0; j < k; ++j)
          ref += h64[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(i + k - 1 - j)];
        ASSERT_NEAR(y[static_cast<std::size_t>(i)], ref, 1e-6)
            << "k=" << k << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST(CpuFir, LongRandomMatchesPlainLoopBitwise) {
  for (int k : {64, 255, 256, 1023}) {
    const std::int64_t n = 10007;
    const auto h64 = test::random_taps(k, 11);
    const std::vector<float> h(h64.begin(), h64.end());
    const auto x = test::random_samples(static_cast<std::size_t>(n + k - 1), 12);
    std::vector<float> y(static_cast<std::size_t>(n));
    fir_direct(x.data(), n, h.data(), k, y.data());
    const auto plain = plain_fir(x, n, h);
    EXPECT_EQ(0, std::memcmp(plain.data(), y.data(), y.size() * sizeof(float))) << "k=" << k;
  }
}

TEST(CpuFir, Float64KernelMatchesDefinition) {
  const int k = 37;
  const std::int64_t n = 101;
  const auto h = test::random_taps(k, 5);
  const auto xf = test::random_samples(static_cast<std::size_t>(n + k - 1), 6);
  const std::vector<double> x(xf.begin(), xf.end());
  std::vector<double> y(static_cast<std::size_t>(n));
  kernels::cpu::fir_direct_f64(x.data(), n, h.data(), k, y.data());
  for (std::int64_t i = 0; i < n; ++i) {
    double ref = 0;
    for (int j = 0; j < k; ++j)
      ref += h[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(i + k - 1 - j)];
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], ref, 1e-15);
  }
}

TEST(CpuLayout, QuantizeRoundsHalfToEvenAndClips) {
  bool clip = false;
  // 0.5 LSB and 1.5 LSB at 16 bits: ties go to the even neighbour.
  EXPECT_EQ(kernels::cpu::quantize(0.5f / 32768.0f, 16, clip), 0);
  EXPECT_EQ(kernels::cpu::quantize(1.5f / 32768.0f, 16, clip), 2);
  EXPECT_EQ(kernels::cpu::quantize(-2.5f / 32768.0f, 16, clip), -2);
  EXPECT_FALSE(clip);
  EXPECT_EQ(kernels::cpu::quantize(1.0f, 16, clip), 32767);
  EXPECT_TRUE(clip);
  clip = false;
  EXPECT_EQ(kernels::cpu::quantize(-1.0f, 16, clip), -32768);
  EXPECT_FALSE(clip) << "-1.0 is representable";
  EXPECT_EQ(kernels::cpu::quantize(-1.5f, 24, clip), -(1 << 23));
  EXPECT_TRUE(clip);
  clip = false;
  EXPECT_EQ(kernels::cpu::quantize(std::numeric_limits<float>::quiet_NaN(), 16, clip), 0);
  EXPECT_TRUE(clip);
}

HostBlock block_of(SampleType t, int ch, std::int64_t frames) {
  struct B : Backend {
    std::string name() const override { return ""; }
    std::string device_name() const override { return ""; }
    void prepare(const Plan&, const BackendOptions&) override {}
    int depth() const override { return 1; }
    void submit(ChunkJob) override {}
    ChunkResult retire() override { return {}; }
  } b;
  HostBlock h = b.make_block(t, ch, frames);
  h.frames = frames;
  return h;
}

// deinterleave has its own loops for mono and stereo: every sample must be
// the definition's (the container's value times 2^-15, 2^-31 or 1), for 1,
// 2 and 3 channels, each sample type, an odd length from an odd first frame.
TEST(CpuLayout, DeinterleaveIsTheDefinitionForEveryLayout) {
  for (const SampleType t : {SampleType::i16, SampleType::i32, SampleType::f32}) {
    for (const int ch : {1, 2, 3}) {
      const std::int64_t total = 1031, first = 7, n = 1013;
      HostBlock in = block_of(t, ch, total);
      std::mt19937 rng(static_cast<unsigned>(ch * 31 + static_cast<int>(t)));
      std::uniform_int_distribution<std::int32_t> u16(-32768, 32767);
      std::uniform_int_distribution<std::int32_t> u32(std::numeric_limits<std::int32_t>::min(),
                                                      std::numeric_limits<std::int32_t>::max());
      std::uniform_real_distribution<float> uf(-2.0f, 2.0f);
      for (std::int64_t i = 0; i < total * ch; ++i) {
        if (t == SampleType::i16)
          in.as<std::int16_t>()[i] = static_cast<std::int16_t>(u16(rng));
        else if (t == SampleType::i32)
          in.as<std::int32_t>()[i] = u32(rng);
        else
          in.as<float>()[i] = uf(rng);
      }
      std::vector<std::vector<float>> planes(static_cast<std::size_t>(ch),
                                             std::vector<float>(static_cast<std::size_t>(n)));
      std::vector<float*> p;
      for (auto& v : planes)
        p.push_back(v.data());
      kernels::cpu::deinterleave(in, first, n, p.data());
      for (std::int64_t i = 0; i < n; ++i)
        for (int c = 0; c < ch; ++c) {
          const std::int64_t k = (first + i) * ch + c;
          const float want =
              t == SampleType::i16   ? static_cast<float>(in.as<std::int16_t>()[k]) * 0x1p-15f
              : t == SampleType::i32 ? static_cast<float>(in.as<std::int32_t>()[k]) * 0x1p-31f
                                     : in.as<float>()[k];
          ASSERT_EQ(planes[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)], want)
              << ch << " channels, frame " << i << ", channel " << c;
        }
    }
  }
}

// interleave quantises in vector blocks (up to 16 bits in float32): every
// sample must be the scalar Quantizer's value and the clip count its count,
// for halves (ties to even), out-of-range, NaN, Inf, huge and subnormal values.
TEST(CpuLayout, InterleaveIsTheScalarQuantizerSampleBySample) {
  for (const int bits : {8, 12, 16, 24}) {
    for (const int ch : {1, 2, 3}) {
      const std::int64_t n = 2053;
      const SampleType t = bits <= 16 ? SampleType::i16 : SampleType::i32;
      const int shift = (t == SampleType::i16 ? 16 : 32) - bits;
      const double scale = std::ldexp(1.0, bits - 1);
      std::mt19937 rng(static_cast<unsigned>(bits * 10 + ch));
      std::uniform_real_distribution<float> u(-1.2f, 1.2f);
      std::uniform_int_distribution<int> k(-(1 << (bits - 1)) - 2, (1 << (bits - 1)) + 1);
      const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               1e30f,
                               -3e38f,
                               std::numeric_limits<float>::denorm_min(),
                               -0.0f,
                               1.0f,
                               -1.0f};
      std::vector<std::vector<float>> planes(static_cast<std::size_t>(ch),
                                             std::vector<float>(static_cast<std::size_t>(n)));
      for (auto& plane : planes)
        for (std::size_t i = 0; i < plane.size(); ++i) {
          if (i % 97 < std::size(special))
            plane[i] = special[i % 97];
          else if (i % 3 == 0) // a half step: ties go to even
            plane[i] = static_cast<float>((k(rng) + 0.5) / scale);
          else
            plane[i] = u(rng);
        }
      std::vector<const float*> cp;
      for (const auto& plane : planes)
        cp.push_back(plane.data());
      HostBlock out = block_of(t, ch, n);
      const std::int64_t clipped = kernels::cpu::interleave(cp.data(), n, bits, out);
      std::int64_t want_clipped = 0;
      const kernels::cpu::Quantizer quantize(bits);
      for (std::int64_t i = 0; i < n; ++i)
        for (int c = 0; c < ch; ++c) {
          bool clip = false;
          const std::int32_t want = static_cast<std::int32_t>(
              static_cast<std::uint32_t>(
                  quantize(planes[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)], clip))
              << shift);
          want_clipped += clip ? 1 : 0;
          const std::int32_t got = t == SampleType::i16
                                       ? std::int32_t{out.as<std::int16_t>()[i * ch + c]}
                                       : out.as<std::int32_t>()[i * ch + c];
          ASSERT_EQ(got,
                    t == SampleType::i16 ? std::int32_t{static_cast<std::int16_t>(want)} : want)
              << bits << " bits, " << ch << " ch, frame " << i << " channel " << c;
        }
      EXPECT_EQ(clipped, want_clipped) << bits << " bits, " << ch << " ch";
    }
  }
}

TEST(CpuLayout, Pcm16And24RoundTripExactly) {
  for (int bits : {16, 24}) {
    const int ch = 3;
    const std::int64_t n = 1001;
    const SampleType t = bits == 16 ? SampleType::i16 : SampleType::i32;
    HostBlock in = block_of(t, ch, n);
    std::mt19937 rng(bits);
    std::uniform_int_distribution<std::int32_t> u(-(1 << (bits - 1)), (1 << (bits - 1)) - 1);
    for (std::int64_t i = 0; i < n * ch; ++i) {
      const std::int32_t v = u(rng);
      if (t == SampleType::i16)
        in.as<std::int16_t>()[i] = static_cast<std::int16_t>(v);
      else
        in.as<std::int32_t>()[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << 8);
    }
    std::vector<std::vector<float>> planes(ch, std::vector<float>(n));
    std::vector<float*> p;
    for (auto& v : planes)
      p.push_back(v.data());
    kernels::cpu::deinterleave(in, 0, n, p.data());
    HostBlock out = block_of(t, ch, n);
    std::vector<const float*> cp(p.begin(), p.end());
    EXPECT_EQ(0, kernels::cpu::interleave(cp.data(), n, bits, out));
    EXPECT_EQ(0, std::memcmp(in.data.get(), out.data.get(), in.bytes())) << bits << " bits";
  }
}

TEST(CpuMetrics, MatchFloat64DefinitionsAndSkipNonFinite) {
  const std::int64_t n = 1237;
  auto y = test::random_samples(static_cast<std::size_t>(n), 1);
  const auto x = test::random_samples(static_cast<std::size_t>(n), 2);
  y[10] = std::numeric_limits<float>::infinity();
  y[20] = std::numeric_limits<float>::quiet_NaN();
  auto xs = x;
  xs[30] = std::numeric_limits<float>::quiet_NaN(); // a bad source sample stays out of dot
  const ChannelMetrics m = kernels::cpu::channel_metrics(y.data(), xs.data(), n);
  double e = 0, s = 0, p = 0, d = 0, ex = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double xi = i == 30 ? 0.0 : double(x[i]);
    ex += xi * xi;
    if (!std::isfinite(y[i]))
      continue;
    e += double(y[i]) * y[i];
    s += y[i];
    d += xi * y[i];
    p = std::max(p, std::fabs(double(y[i])));
  }
  EXPECT_EQ(m.nonfinite, 2);
  EXPECT_EQ(m.frames, n);
  EXPECT_NEAR(m.energy, e, 1e-12 * e);
  EXPECT_NEAR(m.sum, s, 1e-12);
  EXPECT_EQ(m.peak, p);
  EXPECT_NEAR(m.dot, d, 1e-12);
  EXPECT_NEAR(m.source_energy, ex, 1e-12 * ex);
  EXPECT_NEAR(m.rms(), std::sqrt(e / n), 1e-12);
  EXPECT_NEAR(m.correlation(), d / std::sqrt(e * ex), 1e-12);
}

// channel_metrics sums finite chunks without the finiteness masks and reruns
// masked where a sum came out non-finite: both ways must give the same bits.
// A chunk with one bad sample (masked path) against the same chunk with 0
// there (unmasked path), at odd lengths and bad positions in both halves of
// the 8 lanes and in the tail.
TEST(CpuMetrics, MaskedAndUnmaskedPassesGiveTheSameBits) {
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{13}, std::int64_t{4099}, std::int64_t{100003}}) {
    const auto y = test::random_samples(static_cast<std::size_t>(n), 7);
    const auto x = test::random_samples(static_cast<std::size_t>(n), 8);
    for (const std::int64_t at : {std::int64_t{0}, n / 2 + 3, n - 1}) {
      if (at >= n)
        continue;
      for (const bool in_source : {false, true}) {
        for (const float bad :
             {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
          auto yb = y, xb = x, yz = y, xz = x;
          (in_source ? xb : yb)[static_cast<std::size_t>(at)] = bad;
          (in_source ? xz : yz)[static_cast<std::size_t>(at)] = 0.0f;
          const ChannelMetrics m = kernels::cpu::channel_metrics(yb.data(), xb.data(), n);
          const ChannelMetrics z = kernels::cpu::channel_metrics(yz.data(), xz.data(), n);
          const std::string where = "n " + std::to_string(n) + " at " + std::to_string(at) +
                                    (in_source ? " (source)" : "");
          EXPECT_EQ(m.nonfinite, in_source ? 0 : 1) << where;
          EXPECT_EQ(z.nonfinite, 0) << where;
          EXPECT_EQ(m.energy, z.energy) << where;
          EXPECT_EQ(m.sum, z.sum) << where;
          EXPECT_EQ(m.peak, z.peak) << where;
          EXPECT_EQ(m.dot, z.dot) << where;
          EXPECT_EQ(m.source_energy, z.source_energy) << where;
        }
      }
    }
  }
}

TEST(CpuMetrics, FullScaleSineRmsIsOneOverRootTwo) {
  const std::int64_t n = 48000; // a whole number of periods of 1 kHz at 48 kHz
  std::vector<float> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    y[static_cast<std::size_t>(i)] = static_cast<float>(std::sin(2 * M_PI * 1000.0 * i / 48000.0));
  const ChannelMetrics m = kernels::cpu::channel_metrics(y.data(), nullptr, n);
  EXPECT_NEAR(m.rms(), 1.0 / std::sqrt(2.0), 1e-7);
  EXPECT_NEAR(m.mean(), 0.0, 1e-7);
  EXPECT_EQ(m.correlation(), 0.0) << "no source energy: correlation is defined as 0";
}

} // namespace
} // namespace sigstream
