// CUDA kernels against the CPU reference kernels (kernels/cpu): the direct
// FIR bit for bit, layout conversions bit for bit, metrics to 1e-12.
// Every test skips when no CUDA device is present.
//
// Over 600 lines on purpose: the three kernels' suites share one set of
// helpers (stream-synchronised uploads, poison fill, bit comparison), and a
// shared test-support header for them would be the first thing to write when
// a fourth kernel joins; each suite is a block of its own below.
#include <gtest/gtest.h>

#include "cuda_test_support.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/reduce.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_direct.cuh"
#include "kernels/cuda/layout.cuh"
#include "kernels/cuda/metrics.cuh"
#include "kernels/cuda/resources.hpp"

namespace sigstream {
namespace {

namespace kc = kernels::cuda;

constexpr double kPi = 3.14159265358979323846;

using test::have_device;

#define REQUIRE_DEVICE()                                                                           \
  if (!have_device())                                                                              \
  GTEST_SKIP() << "no CUDA device"

// A pageable cudaMemcpy to the device may return before its DMA has landed,
// and kernels on non-blocking streams do not wait for the legacy stream:
// every upload here waits for the device.
void upload(void* d, const void* h, std::size_t bytes) {
  if (bytes == 0)
    return;
  SIGSTREAM_CUDA_TRY(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());
}

template <typename T> kc::DeviceBuffer<T> to_device(const std::vector<T>& h) {
  kc::DeviceBuffer<T> d(h.size());
  upload(d.data(), h.data(), h.size() * sizeof(T));
  return d;
}

template <typename T> std::vector<T> to_host(const kc::DeviceBuffer<T>& d) {
  std::vector<T> h(d.size());
  if (!h.empty())
    SIGSTREAM_CUDA_TRY(
        cudaMemcpy(h.data(), d.data(), h.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f,
                                 float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

// A float whose bits no kernel produces: untouched memory keeps it.
constexpr std::uint32_t kPoisonBits = 0x7fc0dead;
float poison() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}
bool is_poison(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b == kPoisonBits;
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Equal bits, or both NaN (NaN payloads differ between x86 and the GPU).
bool same_float(float a, float b) {
  return bits_of(a) == bits_of(b) || (std::isnan(a) && std::isnan(b));
}

class CudaStreamFixture : public ::testing::Test {
protected:
  void SetUp() override {
    if (!have_device())
      GTEST_SKIP() << "no CUDA device";
    stream_ = kc::Stream::create();
  }
  cudaStream_t s() const { return stream_.get(); }
  void sync() const { stream_.synchronize(); }
  kc::Stream stream_;
};

// ---------------------------------------------------------------------------
// FIR direct

using FirLauncher = void (*)(const float*, std::int64_t, const float*, int, float*, int,
                             std::int64_t, std::int64_t, cudaStream_t, kc::FirInputSpan);

struct FirCase {
  std::int64_t n;
  int taps;
  int channels;
  int x_offset; // floats before channel 0's input (misaligns the loads)
  int y_offset; // floats before channel 0's output (misaligns the stores)
  std::uint32_t seed;
};

std::string describe(const FirCase& c) {
  return "n=" + std::to_string(c.n) + " K=" + std::to_string(c.taps) +
         " ch=" + std::to_string(c.channels) + " xoff=" + std::to_string(c.x_offset) +
         " yoff=" + std::to_string(c.y_offset);
}

// Runs one case on the GPU and compares with kernels::cpu::fir_direct bit for
// bit; checks that every output was written and nothing around it was.
void check_fir_case(const FirCase& c, cudaStream_t stream, FirLauncher launch,
                    std::vector<float> x_override = {}, std::vector<float> h_override = {}) {
  SCOPED_TRACE(describe(c));
  const std::int64_t x_len = c.n + c.taps - 1;
  const std::int64_t x_stride = x_len + 5; // odd padding: every channel differently aligned
  const std::int64_t y_stride = c.n + 3;
  std::vector<float> h =
      h_override.empty() ? random_floats(static_cast<std::size_t>(c.taps), c.seed) : h_override;
  std::vector<float> x(static_cast<std::size_t>(c.x_offset + c.channels * x_stride));
  if (x_override.empty()) {
    x = random_floats(x.size(), c.seed + 1);
  } else {
    x = x_override;
    ASSERT_EQ(x.size(), static_cast<std::size_t>(c.x_offset + c.channels * x_stride));
  }
  const std::size_t y_size = static_cast<std::size_t>(c.y_offset + c.channels * y_stride + 4);
  std::vector<float> y_init(y_size, poison());

  auto d_x = to_device(x);
  auto d_h = to_device(h);
  auto d_y = to_device(y_init);
  launch(d_x.data() + c.x_offset, c.n, d_h.data(), c.taps, d_y.data() + c.y_offset, c.channels,
         x_stride, y_stride, stream, kc::FirInputSpan{});
  SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(stream));
  const std::vector<float> y = to_host(d_y);

  std::vector<float> ref(static_cast<std::size_t>(c.n));
  for (int ch = 0; ch < c.channels; ++ch) {
    kernels::cpu::fir_direct(x.data() + c.x_offset + ch * x_stride, c.n, h.data(), c.taps,
                             ref.data());
    const float* got = y.data() + c.y_offset + ch * y_stride;
    std::int64_t mismatches = 0;
    std::int64_t first_bad = -1;
    for (std::int64_t i = 0; i < c.n; ++i) {
      if (!same_float(got[i], ref[static_cast<std::size_t>(i)])) {
        if (first_bad < 0)
          first_bad = i;
        ++mismatches;
      }
    }
    ASSERT_EQ(mismatches, 0) << "channel " << ch << ": first mismatch at " << first_bad << ": gpu "
                             << got[first_bad] << " cpu "
                             << ref[static_cast<std::size_t>(first_bad)]
                             << (is_poison(got[first_bad]) ? " (never written)" : "");
  }
  // Nothing outside the outputs was written.
  for (std::int64_t i = 0; i < c.y_offset; ++i)
    ASSERT_TRUE(is_poison(y[static_cast<std::size_t>(i)]));
  for (int ch = 0; ch < c.channels; ++ch)
    for (std::int64_t i = c.n;
         i < y_stride && c.y_offset + ch * y_stride + i < static_cast<std::int64_t>(y_size); ++i)
      ASSERT_TRUE(is_poison(y[static_cast<std::size_t>(c.y_offset + ch * y_stride + i)]))
          << "channel " << ch << " wrote past its end at " << i;
  for (std::size_t i = static_cast<std::size_t>(c.y_offset + c.channels * y_stride); i < y_size;
       ++i)
    ASSERT_TRUE(is_poison(y[i]));
}

const std::vector<int> kTapCounts = {1,   2,   3,    7,    31,   64,   127,
                                     255, 256, 1023, 1024, 2047, 4096, 4097};

class FirDirectTest : public CudaStreamFixture {};

TEST_F(FirDirectTest, BitExactSmallAndOddLengths) {
  std::uint32_t seed = 100;
  for (int k : kTapCounts)
    for (std::int64_t n : {1, 2, 37, 1919, 1920, 1921, 4099})
      for (int ch : {1, 3, 8})
        check_fir_case(
            {n, k, ch, static_cast<int>(seed % 4), static_cast<int>((seed / 4) % 4), seed++}, s(),
            kc::fir_direct);
}

TEST_F(FirDirectTest, BitExactLongSignal) {
  std::uint32_t seed = 500;
  for (int k : kTapCounts)
    check_fir_case({1000003, k, 2, 1, 2, seed++}, s(), kc::fir_direct);
}

// Long signals: the streaming kernel's blocks loop over several tiles each,
// prefetching the next window while computing the current one.
TEST_F(FirDirectTest, BitExactManyTilesPerBlock) {
  std::uint32_t seed = 600;
  for (int k : {1, 7, 48, 255, 2048})
    check_fir_case({6000007, k, 1, 3, 1, seed++}, s(), kc::fir_direct);
  for (int k : {31, 64, 1023})
    check_fir_case({3000017, k, 3, 2, 3, seed++}, s(), kc::fir_direct);
}

TEST_F(FirDirectTest, BitExactEveryChannelCount) {
  for (int ch = 1; ch <= 8; ++ch) {
    check_fir_case({10007, 31, ch, ch % 4, (ch + 1) % 4, static_cast<std::uint32_t>(700 + ch)}, s(),
                   kc::fir_direct);
    check_fir_case({3001, 1024, ch, 0, 0, static_cast<std::uint32_t>(800 + ch)}, s(),
                   kc::fir_direct);
  }
}

TEST_F(FirDirectTest, EveryCompiledPolicyIsBitExact) {
  const std::vector<FirLauncher> policies = {kc::fir_direct_with_policy<kc::FirBenchPolicy0>,
                                             kc::fir_direct_with_policy<kc::FirBenchPolicy1>,
                                             kc::fir_direct_with_policy<kc::FirBenchPolicy2>,
                                             kc::fir_direct_with_policy<kc::FirBenchPolicy3>,
                                             kc::fir_direct_with_policy<kc::FirBenchPolicy4>,
                                             kc::fir_direct_with_policy<kc::FirBenchPolicy5>};
  std::uint32_t seed = 900;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    SCOPED_TRACE("policy " + std::to_string(p));
    for (int k : {1, 5, 16, 17, 31, 64, 65, 255, 2048, 2049, 4097})
      for (std::int64_t n : {1, 333, 10001})
        check_fir_case(
            {n, k, 2, static_cast<int>(seed % 4), static_cast<int>((seed / 3) % 4), seed++}, s(),
            policies[p]);
    for (int k : {1, 31, 65, 255}) // several tiles per persistent block
      check_fir_case({2500001, k, 2, static_cast<int>(seed % 4), 1, seed++}, s(), policies[p]);
  }
}

// Signed zeros and exact products: the first fma starts from +0 exactly like
// the CPU, so -0 products give +0 on both.
TEST_F(FirDirectTest, SignedZerosAndExactValues) {
  const int k = 19;
  const std::int64_t n = 5000;
  const std::int64_t x_stride = n + k - 1 + 5;
  std::vector<float> x(static_cast<std::size_t>(x_stride), 0.0f);
  std::mt19937 rng(3);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto r = rng() % 4;
    x[i] = r == 0   ? 0.0f
           : r == 1 ? -0.0f
           : r == 2 ? static_cast<float>(static_cast<int>(rng() % 7) - 3)
                    : 0.5f;
  }
  std::vector<float> h(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i)
    h[static_cast<std::size_t>(i)] = i % 3 == 0 ? -0.0f : (i % 2 ? -1.0f : 0.25f);
  check_fir_case({n, k, 1, 0, 0, 1}, s(), kc::fir_direct, x, h);
}

// Inf and NaN inputs propagate exactly as on the CPU (NaN payloads aside).
TEST_F(FirDirectTest, NonFiniteInputs) {
  for (int k : {1, 4, 33, 300}) {
    const std::int64_t n = 7001;
    const std::int64_t x_stride = n + k - 1 + 5;
    auto x = random_floats(static_cast<std::size_t>(2 * x_stride), 11);
    x[100] = std::numeric_limits<float>::infinity();
    x[2000] = -std::numeric_limits<float>::infinity();
    x[4000] = std::numeric_limits<float>::quiet_NaN();
    x[static_cast<std::size_t>(x_stride + 10)] = std::numeric_limits<float>::infinity();
    x[static_cast<std::size_t>(x_stride + 11)] = -std::numeric_limits<float>::infinity();
    check_fir_case({n, k, 2, 0, 0, 1}, s(), kc::fir_direct, x);
  }
}

// Big values: overflow to Inf mid-sum happens at the same tap on both sides.
TEST_F(FirDirectTest, LargeMagnitudes) {
  const int k = 64;
  const std::int64_t n = 3000;
  const std::int64_t x_stride = n + k - 1 + 5;
  auto x = random_floats(static_cast<std::size_t>(x_stride), 12, -3e37f, 3e37f);
  auto h = random_floats(static_cast<std::size_t>(k), 13, -4.0f, 4.0f);
  check_fir_case({n, k, 1, 0, 0, 1}, s(), kc::fir_direct, x, h);
}

TEST_F(FirDirectTest, CloseToFloat64Reference) {
  for (int k : {7, 31, 255, 1024, 4097}) {
    SCOPED_TRACE("K=" + std::to_string(k));
    const std::int64_t n = 1000003;
    const auto x =
        random_floats(static_cast<std::size_t>(n + k - 1), 40 + static_cast<std::uint32_t>(k));
    // A windowed-sinc lowpass (what the product runs), not white taps.
    std::vector<float> h(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) {
      const double t = i - (k - 1) / 2.0;
      const double sinc = t == 0 ? 0.5 : std::sin(kPi * 0.5 * t) / (kPi * t);
      const double w = k > 1 ? 0.54 - 0.46 * std::cos(2 * kPi * i / (k - 1)) : 1.0;
      h[static_cast<std::size_t>(i)] = static_cast<float>(sinc * w);
    }
    auto d_x = to_device(x);
    auto d_h = to_device(h);
    kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(n));
    kc::fir_direct(d_x.data(), n, d_h.data(), k, d_y.data(), 1, 0, 0, s());
    sync();
    const auto y = to_host(d_y);
    std::vector<double> xd(x.begin(), x.end()), hd(h.begin(), h.end()),
        ref(static_cast<std::size_t>(n));
    kernels::cpu::fir_direct_f64(xd.data(), n, hd.data(), k, ref.data());
    double err2 = 0, ref2 = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double d = static_cast<double>(y[i]) - ref[i];
      err2 += d * d;
      ref2 += ref[i] * ref[i];
    }
    const double rel = std::sqrt(err2 / ref2);
    // Rounding grows like sqrt(K); 1e-6 holds up to ~1024 taps of float32.
    const double tol = 1e-6 * std::max(1.0, std::sqrt(k / 1024.0));
    EXPECT_LE(rel, tol) << "relative L2 error " << rel;
  }
}

// A clip without padding (FirInputSpan): the contract's other inputs are
// zeros and nothing around the clip is read. The clips sit between NaNs, so
// a read outside them would spread a NaN into the outputs; the reference
// filters an explicitly zero-padded copy.
TEST_F(FirDirectTest, InputSpanFiltersAClipInPlace) {
  std::uint32_t seed = 900;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int k : {1, 2, 3, 31, 64, 255, 1023, 2047, 2049, 4097})
    for (std::int64_t len : {1, 5, 37, 1919, 4100, 30011}) {
      const int rows = 3;
      const std::int64_t stride = len + 7;
      // mode: causal (lead K-1, n = len), same (lead K-1-(K-1)/2, n = len), full (lead K-1, n =
      // len+K-1)
      for (int mode = 0; mode < 3; ++mode) {
        SCOPED_TRACE("K=" + std::to_string(k) + " len=" + std::to_string(len) +
                     " mode=" + std::to_string(mode));
        const std::int64_t lead = mode == 1 ? (k - 1) - (k - 1) / 2 : k - 1;
        const std::int64_t n = mode == 2 ? len + k - 1 : len;
        std::vector<float> x(static_cast<std::size_t>(3 + rows * stride), nan);
        const std::vector<float> data = random_floats(static_cast<std::size_t>(rows * len), seed++);
        for (int r = 0; r < rows; ++r)
          std::copy_n(data.begin() + r * len, len, x.begin() + 3 + r * stride);
        const std::vector<float> h = random_floats(static_cast<std::size_t>(k), seed++);
        auto d_x = to_device(x);
        auto d_h = to_device(h);
        kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(rows * n));
        kc::fir_direct(d_x.data() + 3, n, d_h.data(), k, d_y.data(), rows, stride, n, s(),
                       kc::FirInputSpan{lead, len});
        sync();
        const std::vector<float> y = to_host(d_y);
        std::vector<float> padded(static_cast<std::size_t>(n + k - 1));
        std::vector<float> ref(static_cast<std::size_t>(n));
        for (int r = 0; r < rows; ++r) {
          std::fill(padded.begin(), padded.end(), 0.0f);
          for (std::int64_t i = 0; i < len && lead + i < n + k - 1; ++i)
            padded[static_cast<std::size_t>(lead + i)] =
                data[static_cast<std::size_t>(r * len + i)];
          kernels::cpu::fir_direct(padded.data(), n, h.data(), k, ref.data());
          for (std::int64_t i = 0; i < n; ++i)
            ASSERT_TRUE(same_float(y[static_cast<std::size_t>(r * n + i)],
                                   ref[static_cast<std::size_t>(i)]))
                << "row " << r << " output " << i << ": gpu "
                << y[static_cast<std::size_t>(r * n + i)] << " cpu "
                << ref[static_cast<std::size_t>(i)];
        }
      }
    }
}

TEST_F(FirDirectTest, ZeroLengthLaunchesNothing) {
  kc::DeviceBuffer<float> d_h(4);
  EXPECT_NO_THROW(kc::fir_direct(nullptr, 0, d_h.data(), 4, nullptr, 2, 0, 0, s()));
  EXPECT_NO_THROW(kc::fir_direct(nullptr, 10, d_h.data(), 4, nullptr, 0, 0, 0, s()));
  sync();
}

TEST_F(FirDirectTest, BadArgumentsThrow) {
  kc::DeviceBuffer<float> d(64);
  EXPECT_THROW(kc::fir_direct(d.data(), 4, d.data(), 0, d.data() + 32, 1, 0, 0, s()), Error);
  EXPECT_THROW(kc::fir_direct(d.data(), -1, d.data(), 3, d.data() + 32, 1, 0, 0, s()), Error);
  EXPECT_THROW(kc::fir_direct(d.data(), 4, d.data(), 3, d.data() + 32, 70000, 0, 0, s()), Error);
  EXPECT_FALSE(kc::fir_direct_policy().empty());
}

// ---------------------------------------------------------------------------
// Metrics

void expect_metrics_close(const ChannelMetrics& cpu, const kc::DeviceChannelMetrics& gpu,
                          double abs_sum_y, double abs_sum_xy, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(gpu.frames, cpu.frames);
  EXPECT_EQ(gpu.nonfinite, cpu.nonfinite);
  EXPECT_EQ(gpu.peak, cpu.peak); // max does not depend on the order
  auto near = [](double a, double b, double scale) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b))
      return a == b;
    return std::fabs(a - b) <= 1e-12 * std::max({std::fabs(a), std::fabs(b), scale});
  };
  EXPECT_TRUE(near(gpu.energy, cpu.energy, 0)) << gpu.energy << " vs " << cpu.energy;
  EXPECT_TRUE(near(gpu.source_energy, cpu.source_energy, 0))
      << gpu.source_energy << " vs " << cpu.source_energy;
  // Sums with cancellation: relative to the sum of magnitudes.
  EXPECT_TRUE(near(gpu.sum, cpu.sum, abs_sum_y)) << gpu.sum << " vs " << cpu.sum;
  EXPECT_TRUE(near(gpu.dot, cpu.dot, abs_sum_xy)) << gpu.dot << " vs " << cpu.dot;
}

class MetricsTest : public CudaStreamFixture {
protected:
  // y and x planar with the given strides; compares every channel with the CPU.
  std::vector<kc::DeviceChannelMetrics> run_and_check(const std::vector<float>& y, std::int64_t ys,
                                                      const std::vector<float>* x, std::int64_t xs,
                                                      std::int64_t n, int channels) {
    auto d_y = to_device(y);
    kc::DeviceBuffer<float> d_x;
    if (x != nullptr)
      d_x = to_device(*x);
    kc::DeviceBuffer<kc::MetricsPartial> d_partials(kc::metrics_partials_count(channels));
    std::vector<kc::DeviceChannelMetrics> init(static_cast<std::size_t>(channels));
    std::memset(init.data(), 0xff, init.size() * sizeof(init[0]));
    auto d_out = to_device(init);
    kc::channel_metrics(d_y.data(), ys, x != nullptr ? d_x.data() : nullptr, xs, n, channels,
                        d_partials.data(), d_out.data(), s());
    sync();
    const auto got = to_host(d_out);
    for (int c = 0; c < channels; ++c) {
      const float* yc = y.data() + c * ys;
      const float* xc = x != nullptr ? x->data() + c * xs : nullptr;
      const ChannelMetrics ref = kernels::cpu::channel_metrics(yc, xc, n);
      double asy = 0, asxy = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(yc[i]))
          continue;
        asy += std::fabs(static_cast<double>(yc[i]));
        if (xc != nullptr)
          asxy += std::fabs(static_cast<double>(xc[i]) * yc[i]);
      }
      expect_metrics_close(ref, got[static_cast<std::size_t>(c)], asy, asxy,
                           "n=" + std::to_string(n) + " channel " + std::to_string(c));
    }
    return got;
  }
};

TEST_F(MetricsTest, MatchesCpuOnRandomData) {
  std::uint32_t seed = 1;
  for (std::int64_t n : {0, 1, 2, 255, 256, 1000, 4097, 65536, 1000003}) {
    for (int ch : {1, 2, 5}) {
      const std::int64_t stride = n + 7;
      const auto y = random_floats(static_cast<std::size_t>(stride * ch + 1), seed++, -2.0f, 1.0f);
      const auto x = random_floats(static_cast<std::size_t>(stride * ch + 1), seed++);
      run_and_check(y, stride, &x, stride, n, ch);
      run_and_check(y, stride, nullptr, 0, n, ch);
    }
  }
}

TEST_F(MetricsTest, NonFiniteSamplesAreCountedNotSummed) {
  const std::int64_t n = 300001;
  auto y = random_floats(static_cast<std::size_t>(2 * n), 77);
  auto x = random_floats(static_cast<std::size_t>(2 * n), 78);
  std::mt19937 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const auto at = static_cast<std::size_t>(rng() % y.size());
    y[at] = i % 3 == 0   ? std::numeric_limits<float>::quiet_NaN()
            : i % 3 == 1 ? std::numeric_limits<float>::infinity()
                         : -std::numeric_limits<float>::infinity();
  }
  y[5] = 100.0f; // the peak
  const auto got = run_and_check(y, n, &x, n, n, 2);
  EXPECT_EQ(got[0].peak, 100.0);
  EXPECT_GT(got[0].nonfinite + got[1].nonfinite, 900);
}

TEST_F(MetricsTest, NonFiniteSourceSampleStaysOutOfDotAndSourceEnergyLikeCpu) {
  const std::int64_t n = 5000;
  auto y = random_floats(static_cast<std::size_t>(n), 1);
  auto x = random_floats(static_cast<std::size_t>(n), 2);
  x[17] = std::numeric_limits<float>::infinity();
  x[18] = std::numeric_limits<float>::quiet_NaN();
  const auto got = run_and_check(y, n, &x, n, n, 1);
  double ex = 0, d = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == 17 || i == 18)
      continue;
    ex += double(x[static_cast<std::size_t>(i)]) * x[static_cast<std::size_t>(i)];
    d += double(x[static_cast<std::size_t>(i)]) * y[static_cast<std::size_t>(i)];
  }
  EXPECT_NEAR(got[0].source_energy, ex, 1e-12 * ex);
  EXPECT_NEAR(got[0].dot, d, 1e-12 * std::fabs(ex));
}

TEST_F(MetricsTest, DeterministicAcrossRuns) {
  const std::int64_t n = 1 << 20;
  const auto y = random_floats(static_cast<std::size_t>(n), 9);
  const auto x = random_floats(static_cast<std::size_t>(n), 10);
  const auto a = run_and_check(y, n, &x, n, n, 1);
  const auto b = run_and_check(y, n, &x, n, n, 1);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(a[0])), 0);
}

TEST_F(MetricsTest, FullScaleSineRms) {
  const std::int64_t n = 48000;
  std::vector<float> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    y[static_cast<std::size_t>(i)] = static_cast<float>(std::sin(2 * kPi * 1000.0 * i / 48000.0));
  const auto got = run_and_check(y, n, &y, n, n, 1);
  ChannelMetrics m;
  m.energy = got[0].energy;
  m.frames = got[0].frames;
  EXPECT_NEAR(m.rms(), 1.0 / std::sqrt(2.0), 1e-6);
}

// ---------------------------------------------------------------------------
// Layout

class LayoutTest : public CudaStreamFixture {};

HostBlock host_block(SampleType t, int channels, std::int64_t frames) {
  HostBlock b;
  b.type = t;
  b.channels = channels;
  b.frames = frames;
  b.capacity = frames;
  const std::size_t bytes = static_cast<std::size_t>(frames * channels) * sample_bytes(t) + 16;
  b.data = std::shared_ptr<std::byte>(new std::byte[bytes](), std::default_delete<std::byte[]>());
  return b;
}

void fill_random(HostBlock& b, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::int64_t count = b.frames * b.channels;
  for (std::int64_t i = 0; i < count; ++i) {
    switch (b.type) {
      case SampleType::i16:
        b.as<std::int16_t>()[i] = static_cast<std::int16_t>(rng() & 0xffff);
        break;
      case SampleType::i32:
        b.as<std::int32_t>()[i] = static_cast<std::int32_t>(rng());
        break;
      case SampleType::f32:
        b.as<float>()[i] = std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng);
        break;
    }
  }
  if (b.type == SampleType::i16 && count > 2) {
    b.as<std::int16_t>()[0] = -32768;
    b.as<std::int16_t>()[1] = 32767;
  }
  if (b.type == SampleType::i32 && count > 2) {
    b.as<std::int32_t>()[0] = std::numeric_limits<std::int32_t>::min();
    b.as<std::int32_t>()[1] = std::numeric_limits<std::int32_t>::max();
  }
}

TEST_F(LayoutTest, DeinterleaveMatchesCpu) {
  std::uint32_t seed = 1;
  for (SampleType t : {SampleType::i16, SampleType::i32, SampleType::f32}) {
    for (int ch : {1, 2, 3, 6}) {
      for (std::int64_t frames : {1, 17, 100003}) {
        SCOPED_TRACE("type " + std::to_string(static_cast<int>(t)) + " ch " + std::to_string(ch) +
                     " frames " + std::to_string(frames));
        HostBlock b = host_block(t, ch, frames);
        fill_random(b, seed++);
        const std::int64_t first = frames > 5 ? 3 : 0;
        const std::int64_t n = frames - first;
        const std::int64_t stride = n + 9;
        std::vector<float> ref(static_cast<std::size_t>(stride * ch), poison());
        std::vector<float*> planes;
        for (int c = 0; c < ch; ++c)
          planes.push_back(ref.data() + c * stride);
        kernels::cpu::deinterleave(b, first, n, planes.data());

        kc::DeviceBuffer<std::byte> d_in(b.bytes());
        upload(d_in.data(), b.data.get(), b.bytes());
        auto d_out = to_device(std::vector<float>(ref.size(), poison()));
        kc::deinterleave(d_in.data(), t, ch, first, n, d_out.data(), stride, s());
        sync();
        const auto got = to_host(d_out);
        ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float)), 0);
      }
    }
  }
}

// Values that exercise rounding and clipping: ties, the clip edges, NaN, Inf.
std::vector<float> tricky_values(int bits, std::size_t n, std::uint32_t seed) {
  const double scale = std::ldexp(1.0, bits - 1);
  std::vector<float> v = random_floats(n, seed, -1.2f, 1.2f);
  const float specials[] = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            2.0f,
                            -2.0f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            static_cast<float>((scale - 1) / scale),
                            static_cast<float>((scale - 0.5) / scale),
                            static_cast<float>(-(scale + 0.5) / scale),
                            static_cast<float>(0.5 / scale),
                            static_cast<float>(1.5 / scale),
                            static_cast<float>(2.5 / scale),
                            static_cast<float>(-0.5 / scale),
                            static_cast<float>(-1.5 / scale),
                            std::nextafter(1.0f, 2.0f),
                            std::nextafter(-1.0f, -2.0f),
                            1e-30f,
                            -1e-30f};
  for (std::size_t i = 0; i < std::size(specials) && i < n; ++i)
    v[i * 7 % n] = specials[i];
  return v;
}

TEST_F(LayoutTest, InterleaveQuantizeClipMatchesCpu) {
  struct Fmt {
    SampleType type;
    int bits;
  };
  std::uint32_t seed = 50;
  for (Fmt f : {Fmt{SampleType::i16, 16}, Fmt{SampleType::i16, 8}, Fmt{SampleType::i32, 24},
                Fmt{SampleType::i32, 32}, Fmt{SampleType::f32, 0}}) {
    for (int ch : {1, 2, 5}) {
      for (std::int64_t n : {1, 31, 200003}) {
        SCOPED_TRACE("bits " + std::to_string(f.bits) + " ch " + std::to_string(ch) + " n " +
                     std::to_string(n));
        const std::int64_t stride = n + 3;
        const auto in =
            tricky_values(f.bits == 0 ? 16 : f.bits, static_cast<std::size_t>(stride * ch), seed++);
        std::vector<const float*> planes;
        for (int c = 0; c < ch; ++c)
          planes.push_back(in.data() + c * stride);
        HostBlock ref = host_block(f.type, ch, n);
        const std::int64_t ref_clipped = kernels::cpu::interleave(planes.data(), n, f.bits, ref);

        auto d_in = to_device(in);
        kc::DeviceBuffer<std::byte> d_out(ref.bytes());
        kc::DeviceBuffer<unsigned long long> d_clipped(1);
        SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_clipped.data(), 0, sizeof(unsigned long long), s()));
        kc::interleave(d_in.data(), stride, ch, n, f.type, f.bits, d_out.data(), d_clipped.data(),
                       s());
        sync();
        std::vector<std::byte> got(ref.bytes());
        SIGSTREAM_CUDA_TRY(
            cudaMemcpy(got.data(), d_out.data(), got.size(), cudaMemcpyDeviceToHost));
        unsigned long long clipped = 0;
        SIGSTREAM_CUDA_TRY(
            cudaMemcpy(&clipped, d_clipped.data(), sizeof clipped, cudaMemcpyDeviceToHost));
        if (f.type == SampleType::f32) {
          for (std::int64_t i = 0; i < n * ch; ++i) {
            float a, b;
            std::memcpy(&a, got.data() + i * 4, 4);
            std::memcpy(&b, ref.data.get() + i * 4, 4);
            ASSERT_TRUE(same_float(a, b)) << i;
          }
        } else {
          ASSERT_EQ(std::memcmp(got.data(), ref.data.get(), ref.bytes()), 0);
          EXPECT_EQ(static_cast<std::int64_t>(clipped), ref_clipped);
          if (n > 100)
            EXPECT_GT(clipped, 0u);
        }
      }
    }
  }
}

// PCM -> float -> PCM through the GPU is the identity (SPEC §3).
TEST_F(LayoutTest, PcmRoundTripsExactly) {
  struct Fmt {
    SampleType type;
    int bits;
  };
  for (Fmt f : {Fmt{SampleType::i16, 16}, Fmt{SampleType::i32, 24}, Fmt{SampleType::i32, 32}}) {
    const int ch = 2;
    const std::int64_t n = 123457;
    HostBlock b = host_block(f.type, ch, n);
    fill_random(b, 99);
    if (f.type == SampleType::i32) {
      // Values float32 holds exactly: `bits`-bit samples (24 significant bits at most).
      const int drop = 8;
      for (std::int64_t i = 0; i < n * ch; ++i)
        b.as<std::int32_t>()[i] = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(b.as<std::int32_t>()[i] >> drop) << drop);
    }
    kc::DeviceBuffer<std::byte> d_in(b.bytes());
    upload(d_in.data(), b.data.get(), b.bytes());
    kc::DeviceBuffer<float> d_planes(static_cast<std::size_t>(n * ch));
    kc::DeviceBuffer<std::byte> d_out(b.bytes());
    kc::DeviceBuffer<unsigned long long> d_clipped(1);
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(d_clipped.data(), 0, sizeof(unsigned long long), s()));
    kc::deinterleave(d_in.data(), f.type, ch, 0, n, d_planes.data(), n, s());
    kc::interleave(d_planes.data(), n, ch, n, f.type, f.bits, d_out.data(), d_clipped.data(), s());
    sync();
    std::vector<std::byte> got(b.bytes());
    SIGSTREAM_CUDA_TRY(cudaMemcpy(got.data(), d_out.data(), got.size(), cudaMemcpyDeviceToHost));
    unsigned long long clipped = 1;
    SIGSTREAM_CUDA_TRY(
        cudaMemcpy(&clipped, d_clipped.data(), sizeof clipped, cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(got.data(), b.data.get(), b.bytes()), 0) << "bits " << f.bits;
    EXPECT_EQ(clipped, 0u);
  }
}

TEST_F(LayoutTest, GainMatchesCpuAndZeroOutside) {
  const std::int64_t n = 50001;
  const std::int64_t stride = n + 11;
  const int ch = 3;
  const auto x = random_floats(static_cast<std::size_t>(stride * ch), 5, -3.0f, 3.0f);
  const double g = std::pow(10.0, -3.0 / 20.0);
  const auto gf = static_cast<float>(g);
  auto d_x = to_device(x);
  auto d_y = to_device(std::vector<float>(x.size(), poison()));
  kc::gain(d_x.data(), stride, d_y.data(), stride, ch, n, gf, s());
  sync();
  auto y = to_host(d_y);
  for (int c = 0; c < ch; ++c) {
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(bits_of(y[static_cast<std::size_t>(c * stride + i)]),
                bits_of(x[static_cast<std::size_t>(c * stride + i)] * gf));
    for (std::int64_t i = n; i < stride; ++i)
      ASSERT_TRUE(is_poison(y[static_cast<std::size_t>(c * stride + i)]));
  }
  // In place.
  kc::gain(d_x.data(), stride, d_x.data(), stride, ch, n, 2.0f, s());
  // Zero [0, 100) and [n - 7, n).
  kc::zero_outside(d_y.data(), stride, ch, n, 100, n - 7, s());
  sync();
  y = to_host(d_y);
  const auto x2 = to_host(d_x);
  for (int c = 0; c < ch; ++c) {
    for (std::int64_t i = 0; i < n; ++i) {
      const auto at = static_cast<std::size_t>(c * stride + i);
      ASSERT_EQ(bits_of(x2[at]), bits_of(x[at] * 2.0f));
      if (i < 100 || i >= n - 7)
        ASSERT_EQ(bits_of(y[at]), 0u) << c << " " << i;
      else
        ASSERT_EQ(bits_of(y[at]), bits_of(x[at] * gf));
    }
    ASSERT_TRUE(is_poison(y[static_cast<std::size_t>(c * stride + n)]));
  }
  EXPECT_THROW(kc::zero_outside(d_y.data(), stride, ch, n, 10, 5, s()), Error);
  EXPECT_NO_THROW(kc::zero_outside(d_y.data(), stride, ch, n, 0, n, s()));
  sync();
}

TEST_F(LayoutTest, BadBitsThrow) {
  kc::DeviceBuffer<float> d(16);
  kc::DeviceBuffer<unsigned long long> c(1);
  EXPECT_THROW(kc::interleave(d.data(), 4, 1, 4, SampleType::i16, 24, d.data(), c.data(), s()),
               Error);
  EXPECT_THROW(kc::interleave(d.data(), 4, 1, 4, SampleType::i32, 0, d.data(), c.data(), s()),
               Error);
}

// ---------------------------------------------------------------------------
// Errors and resources

TEST(CudaCheck, ErrorsNameTheCallAndTheCudaError) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  try {
    SIGSTREAM_CUDA_TRY(cudaSetDevice(1 << 20));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda);
    const std::string m = e.what();
    EXPECT_NE(m.find("test_cuda_kernels.cu:"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaSetDevice"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaErrorInvalidDevice"), std::string::npos) << m;
  }
  static_cast<void>(cudaGetLastError());
}

TEST(CudaResources, MoveOnlyOwners) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  auto s = kc::Stream::create();
  kc::Stream s2 = std::move(s);
  EXPECT_EQ(s.get(), nullptr);
  EXPECT_NE(s2.get(), nullptr);
  kc::DeviceBuffer<int> a(10);
  kc::DeviceBuffer<int> b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.size(), 10u);
  kc::PinnedBuffer<int> p(3);
  p[0] = 1;
  kc::PinnedBuffer<int> q = std::move(p);
  EXPECT_EQ(q[0], 1);
  auto e0 = kc::Event::create(true);
  auto e1 = kc::Event::create(true);
  e0.record(s2.get());
  e1.record(s2.get());
  e1.synchronize();
  EXPECT_GE(e1.elapsed_ms_since(e0), 0.0f);
}

} // namespace
} // namespace sigstream
