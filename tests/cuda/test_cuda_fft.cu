// The FFT (overlap-save) FIR, both engines (the fused cuFFTDx kernel and
// cuFFT's passes), against the direct kernel and a float64 reference:
// relative L2 error <= 1e-6 (SPEC §3), every output written, nothing around
// it touched. The CUDA backend's fft stages are tested in
// test_cuda_fft_backend.cu. Every test skips when no CUDA device is present.
#include <gtest/gtest.h>

#include "cuda_test_support.hpp"
#include "test_support.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_direct.cuh"
#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/resources.hpp"

namespace sigstream {
namespace {

namespace kc = kernels::cuda;

constexpr double kTolerance = 1e-6;

using test::have_device;

#define REQUIRE_DEVICE()                                                                           \
  if (!have_device())                                                                              \
  GTEST_SKIP() << "no CUDA device"

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

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v)
    x = d(rng) * scale;
  return v;
}

// Waits for the upload: kernels on non-blocking streams do not wait for a
// pageable legacy-stream copy.
template <typename T> kc::DeviceBuffer<T> to_device(const std::vector<T>& h) {
  kc::DeviceBuffer<T> d(h.size());
  if (!h.empty()) {
    SIGSTREAM_CUDA_TRY(
        cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());
  }
  return d;
}
template <typename T> std::vector<T> to_host(const kc::DeviceBuffer<T>& d) {
  std::vector<T> h(d.size());
  if (!h.empty())
    SIGSTREAM_CUDA_TRY(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

using test::rel_l2;

struct FftCase {
  std::int64_t n;
  int taps;
  int channels;
  int fft_size = 0;             // 0: the default for (taps, max_n)
  std::int64_t group_bytes = 0; // 0: the default
  std::int64_t max_n = 0;       // 0: n
  int x_offset = 1;             // floats before channel 0's input (misaligned)
  int y_offset = 3;
  bool in_place = true;
  kc::FftEngine engine = kc::FftEngine::automatic;
};

const char* engine_name(kc::FftEngine e) {
  return e == kc::FftEngine::fused ? "fused" : e == kc::FftEngine::cufft ? "cufft" : "automatic";
}
// Both engines: cuFFT, and the fused kernel where it runs (else cuFFT again).
constexpr kc::FftEngine kEngines[] = {kc::FftEngine::cufft, kc::FftEngine::automatic};

std::string describe(const FftCase& c) {
  return "n=" + std::to_string(c.n) + " K=" + std::to_string(c.taps) +
         " ch=" + std::to_string(c.channels) + " L=" + std::to_string(c.fft_size) +
         " group_bytes=" + std::to_string(c.group_bytes) + " max_n=" + std::to_string(c.max_n) +
         (c.in_place ? "" : " out-of-place") + " " + engine_name(c.engine);
}

// FftFir on one case against fir_direct (same inputs, same float taps) and a
// float64 reference computed from the definition; checks that every output
// was written and nothing around the outputs was.
void check_fft_case(const FftCase& c, cudaStream_t stream, std::uint32_t seed) {
  SCOPED_TRACE(describe(c));
  const std::int64_t x_len = c.n + c.taps - 1;
  const std::int64_t x_stride = x_len + 7;
  const std::int64_t y_stride = c.n + 5;
  const auto hx = random_floats(static_cast<std::size_t>(c.x_offset + c.channels * x_stride), seed);
  const auto hh = random_floats(static_cast<std::size_t>(c.taps), seed + 1,
                                1.0f / std::sqrt(static_cast<float>(c.taps)));
  const std::size_t y_count = static_cast<std::size_t>(c.y_offset + c.channels * y_stride + 9);
  const std::vector<float> poisoned(y_count, poison());
  auto d_x = to_device(hx);
  auto d_h = to_device(hh);
  auto d_y = to_device(poisoned);
  auto d_direct = to_device(poisoned);

  kc::FftFirOptions o;
  o.fft_size = c.fft_size;
  o.group_bytes = c.group_bytes;
  o.in_place = c.in_place;
  o.engine = c.engine;
  kc::FftFir fir(hh.data(), c.taps, c.max_n > 0 ? c.max_n : c.n, c.channels, o);
  if (c.engine != kc::FftEngine::automatic)
    EXPECT_EQ(fir.engine(), c.engine);
  fir.run(d_x.data() + c.x_offset, c.n, d_y.data() + c.y_offset, c.channels, x_stride, y_stride,
          stream);
  kc::fir_direct(d_x.data() + c.x_offset, c.n, d_h.data(), c.taps, d_direct.data() + c.y_offset,
                 c.channels, x_stride, y_stride, stream);
  SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(stream));
  const auto y = to_host(d_y);
  const auto direct = to_host(d_direct);

  for (int ch = 0; ch < c.channels; ++ch) {
    SCOPED_TRACE("channel " + std::to_string(ch));
    const float* x = hx.data() + c.x_offset + ch * x_stride;
    std::vector<double> ref(static_cast<std::size_t>(c.n), 0.0);
    for (int k = 0; k < c.taps; ++k) { // an axpy per tap: vectorises, unlike a dot per output
      const double hk = hh[static_cast<std::size_t>(k)];
      const float* xk = x + (c.taps - 1 - k);
      for (std::int64_t i = 0; i < c.n; ++i)
        ref[static_cast<std::size_t>(i)] += hk * xk[i];
    }
    const float* got = y.data() + c.y_offset + ch * y_stride;
    const float* dir = direct.data() + c.y_offset + ch * y_stride;
    std::int64_t unwritten = 0;
    for (std::int64_t i = 0; i < c.n; ++i)
      unwritten += is_poison(got[i]) ? 1 : 0;
    ASSERT_EQ(unwritten, 0) << "outputs left unwritten";
    for (std::int64_t i = c.n; i < y_stride; ++i)
      ASSERT_TRUE(is_poison(got[i])) << "wrote past the output at " << i;
    const double e_ref = rel_l2(ref.data(), got, c.n);
    const double e_dir_ref = rel_l2(ref.data(), dir, c.n);
    const double e_dir = rel_l2(dir, got, c.n);
    EXPECT_LE(e_ref, kTolerance) << "fft vs float64";
    // The direct method's own float32 error grows like sqrt(K) (about 3e-6
    // at 16384 taps): fft and direct agree to 1e-6 beyond that.
    EXPECT_LE(e_dir, kTolerance + e_dir_ref)
        << "fft vs direct (direct vs float64: " << e_dir_ref << ")";
    if (ch == 0)
      std::printf("[fft] %-80s L=%6d %-5s fft-ref %.2e  direct-ref %.2e  fft-direct %.2e\n",
                  describe(c).c_str(), fir.fft_size(), engine_name(fir.engine()), e_ref, e_dir_ref,
                  e_dir);
  }
  for (int i = 0; i < c.y_offset; ++i)
    EXPECT_TRUE(is_poison(y[static_cast<std::size_t>(i)]));
}

class FftFirTest : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_DEVICE();
    stream_ = kc::Stream::create();
  }
  cudaStream_t s() const { return stream_.get(); }
  kc::Stream stream_;
};

TEST_F(FftFirTest, NamedTapCountsAgainstDirectAndFloat64) {
  // The float64 reference costs n * K per channel: lengths keep it to ~1e9.
  const std::vector<FftCase> cases = {
      {1, 1, 1},
      {1001, 1, 3},
      {999, 2, 2},
      {4097, 3, 1},
      {30001, 17, 8},
      {20001, 64, 5},
      {12345, 255, 4},
      {25001, 1023, 2},
      {40001, 4095, 1},
      {30003, 4096, 2},
      {9999, 4095, 1, 0, 0, 1 << 20}, // max_n large: the FFT size for long calls, one short call
      {60001, 16383, 1},
      {40003, 16384, 1, 32768}, // several segments of a smaller FFT
      {30001, 17, 8, 0, 0, 0, 2, 1, false},
      {40001, 4095, 3, 0, 3 * (16384 * 4 + 8194 * 8), 0, 0, 0, false}, // groups of 3 rows
      {50001, 16383, 1, 0, 0, 0, 1, 3, false},
  };
  std::uint32_t seed = 10;
  for (const kc::FftEngine engine : kEngines)
    for (FftCase c : cases) {
      c.engine = engine;
      check_fft_case(c, s(), seed++);
      if (HasFatalFailure())
        return;
    }
}

TEST_F(FftFirTest, RandomTapCountsChannelsAndGroups) {
  std::mt19937 rng(2024);
  for (int t = 0; t < 24; ++t) {
    FftCase c{};
    const int log_k = static_cast<int>(rng() % 15); // K up to 2^14 + ...
    c.taps = std::max(1, static_cast<int>((1u << log_k) + rng() % (1u << log_k)));
    c.taps = std::min(c.taps, 16384);
    c.channels = 1 + static_cast<int>(rng() % 8);
    // Odd n, a few segments, float64 work kept below ~1e8 multiply-adds.
    const std::int64_t budget = 100'000'000 / (static_cast<std::int64_t>(c.taps) * c.channels);
    c.n = std::max<std::int64_t>(1, std::min<std::int64_t>(budget, 1 + rng() % 60000)) | 1;
    c.x_offset = static_cast<int>(rng() % 4);
    c.y_offset = static_cast<int>(rng() % 4);
    c.in_place = (rng() % 2) == 0;
    switch (rng() % 3) {
      case 0:
        break; // default size and group
      case 1:  // the smallest power of two >= K + 1: B small, many segments
        c.fft_size = 64;
        while (c.fft_size < c.taps + 1)
          c.fft_size *= 2;
        break;
      default: // 3 * 2^p, groups of 2 rows: many cuFFT calls, a partial last group
        c.fft_size = 96;
        while (c.fft_size < 2 * c.taps)
          c.fft_size *= 2;
        c.group_bytes = 2 * static_cast<std::int64_t>(c.fft_size + 2) * 4;
        break;
    }
    if (c.fft_size > 0 &&
        (c.n + c.fft_size - c.taps) / (c.fft_size - c.taps + 1) * c.channels > 1000)
      c.group_bytes = 0; // keep the number of groups (launches) reasonable
    for (const kc::FftEngine engine : kEngines) {
      c.engine = engine;
      check_fft_case(c, s(), 100 + static_cast<std::uint32_t>(t));
      if (HasFatalFailure())
        return;
    }
  }
}

TEST_F(FftFirTest, ReusedForShorterCallsAndFewerChannels) {
  const int taps = 777;
  const std::int64_t max_n = 50000;
  const int max_ch = 4;
  const auto hh = random_floats(taps, 5, 0.05f);
  for (const kc::FftEngine engine : kEngines) {
    SCOPED_TRACE(engine_name(engine));
    kc::FftFirOptions o;
    o.group_bytes = 3 * (4096 + 2) * 4; // several groups
    o.engine = engine;
    kc::FftFir fir(hh.data(), taps, max_n, max_ch, o);
    ASSERT_EQ(fir.taps(), taps);
    ASSERT_GE(fir.fft_size(), taps);
    ASSERT_EQ(fir.block(), fir.fft_size() - taps + 1);
    const std::int64_t stride = max_n + taps + 3;
    const auto hx = random_floats(static_cast<std::size_t>(max_ch * stride), 6);
    auto d_x = to_device(hx);
    auto d_h = to_device(hh);
    kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(max_ch * stride));
    kc::DeviceBuffer<float> d_ref(static_cast<std::size_t>(max_ch * stride));
    for (const auto& [n, ch] : std::vector<std::pair<std::int64_t, int>>{{max_n, 4},
                                                                         {1, 1},
                                                                         {12345, 3},
                                                                         {0, 2},
                                                                         {49999, 2},
                                                                         {fir.block(), 1},
                                                                         {fir.block() + 1, 4}}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " ch=" + std::to_string(ch));
      const std::vector<float> poisoned(d_y.size(), poison());
      SIGSTREAM_CUDA_TRY(
          cudaMemcpy(d_y.data(), poisoned.data(), d_y.bytes(), cudaMemcpyHostToDevice));
      SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());
      fir.run(d_x.data(), n, d_y.data(), ch, stride, stride, s());
      kc::fir_direct(d_x.data(), n, d_h.data(), taps, d_ref.data(), ch, stride, stride, s());
      SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(s()));
      const auto y = to_host(d_y);
      const auto ref = to_host(d_ref);
      for (int c = 0; c < max_ch; ++c) {
        const float* got = y.data() + c * stride;
        if (c < ch) {
          for (std::int64_t i = 0; i < n; ++i)
            ASSERT_FALSE(is_poison(got[i])) << c << ":" << i;
          EXPECT_LE(rel_l2(ref.data() + c * stride, got, n), kTolerance);
        }
        for (std::int64_t i = c < ch ? n : 0; i < stride; ++i)
          ASSERT_TRUE(is_poison(got[i])) << "channel " << c << " written at " << i;
      }
    }
  }
}

// Many threads making, running and dropping filters at once (a batch's
// workers starting): every filter still computes its own taps' result, and
// filters of the same taps share one spectrum. (Concurrent cuFFT plan
// creation once failed with CUFFT_INTERNAL_ERROR and an illegal address.)
TEST_F(FftFirTest, ConcurrentFiltersFromManyThreads) {
  constexpr int kThreads = 24;
  constexpr int kRounds = 4;
  const std::int64_t n = 30011;
  const int ch = 2;
  const std::int64_t stride = n + 1024;
  const auto hx = random_floats(static_cast<std::size_t>(ch * stride), 21);
  auto d_x = to_device(hx);
  std::vector<std::vector<float>> taps;
  for (int t = 0; t < 3; ++t)
    taps.push_back(random_floats(255 + 2 * t, 30 + t, 0.05f));
  std::vector<kc::DeviceBuffer<float>> refs; // the direct kernel's result per taps
  for (const auto& h : taps) {
    auto d_h = to_device(h);
    refs.emplace_back(static_cast<std::size_t>(ch * stride));
    kc::fir_direct(d_x.data(), n, d_h.data(), static_cast<int>(h.size()), refs.back().data(), ch,
                   stride, stride, s());
  }
  SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(s()));
  std::vector<std::vector<float>> ref_host;
  for (const auto& r : refs)
    ref_host.push_back(to_host(r));
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      try {
        SIGSTREAM_CUDA_TRY(cudaSetDevice(0));
        const kc::Stream stream = kc::Stream::create();
        for (int round = 0; round < kRounds; ++round) {
          const auto& h = taps[static_cast<std::size_t>((t + round) % 3)];
          kc::FftFirOptions o;
          o.engine = (t + round) % 2 == 0 ? kc::FftEngine::automatic : kc::FftEngine::cufft;
          kc::FftFir fir(h.data(), static_cast<int>(h.size()), n, ch, o);
          kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(ch * stride));
          fir.run(d_x.data(), n, d_y.data(), ch, stride, stride, stream.get());
          stream.synchronize();
          std::vector<float> y(d_y.size());
          SIGSTREAM_CUDA_TRY(cudaMemcpy(y.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost));
          const auto& ref = ref_host[static_cast<std::size_t>((t + round) % 3)];
          for (int c = 0; c < ch; ++c)
            if (!(rel_l2(ref.data() + c * stride, y.data() + c * stride, n) <= kTolerance))
              throw std::runtime_error("thread " + std::to_string(t) + " round " +
                                       std::to_string(round) + ": wrong result on channel " +
                                       std::to_string(c));
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : pool)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t;
  // One spectrum per taps and length, shared.
  const auto a = kc::taps_spectrum(taps[0].data(), 255, 4096);
  const auto b = kc::taps_spectrum(taps[0].data(), 255, 4096);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(kc::taps_spectrum(taps[1].data(), 257, 4096).get(), a.get());
}

// A clip without padding (FirInputSpan), between NaNs: equal to the direct
// kernel on a zero-padded copy within FFT rounding, and nothing around the
// clip is read (a NaN would spread over a whole segment).
TEST_F(FftFirTest, InputSpanFiltersAClipInPlace) {
  std::uint32_t seed = 700;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int k : {1, 3, 64, 255, 1023, 4095})
    for (std::int64_t len : {1, 37, 4100, 70001}) {
      if (len > 5000 && k > 255)
        continue; // the float64 reference costs len * K
      const int rows = 3;
      const std::int64_t stride = len + 5;
      for (int mode = 0; mode < 3; ++mode) {
        SCOPED_TRACE("K=" + std::to_string(k) + " len=" + std::to_string(len) +
                     " mode=" + std::to_string(mode));
        const std::int64_t lead = mode == 1 ? (k - 1) - (k - 1) / 2 : k - 1;
        const std::int64_t n = mode == 2 ? len + k - 1 : len;
        std::vector<float> x(static_cast<std::size_t>(2 + rows * stride), nan);
        const std::vector<float> data = random_floats(static_cast<std::size_t>(rows * len), seed++);
        for (int r = 0; r < rows; ++r)
          std::copy_n(data.begin() + r * len, len, x.begin() + 2 + r * stride);
        const std::vector<float> h = random_floats(static_cast<std::size_t>(k), seed++);
        auto d_x = to_device(x);
        kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(rows * n));
        for (const kc::FftEngine engine : kEngines) {
          SCOPED_TRACE(engine_name(engine));
          kc::FftFirOptions o;
          o.engine = engine;
          kc::FftFir fir(h.data(), k, n, rows, o);
          fir.run(d_x.data() + 2, n, d_y.data(), rows, stride, n, s(), kc::FirInputSpan{lead, len});
          SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(s()));
          const std::vector<float> y = to_host(d_y);
          std::vector<double> padded(static_cast<std::size_t>(n + k - 1));
          for (int r = 0; r < rows; ++r) {
            std::fill(padded.begin(), padded.end(), 0.0);
            for (std::int64_t i = 0; i < len && lead + i < n + k - 1; ++i)
              padded[static_cast<std::size_t>(lead + i)] =
                  data[static_cast<std::size_t>(r * len + i)];
            // FFT rounding scales with the segment's inputs (|x| <= 1) times the
            // taps' L1 norm, not with each output: an rms bound of that scale.
            double l1 = 0.0;
            for (float t : h)
              l1 += std::fabs(t);
            double err2 = 0.0;
            for (std::int64_t i = 0; i < n; ++i) {
              double acc = 0.0;
              for (int t = 0; t < k; ++t)
                acc += static_cast<double>(h[static_cast<std::size_t>(t)]) *
                       padded[static_cast<std::size_t>(i + k - 1 - t)];
              const double got = y[static_cast<std::size_t>(r * n + i)];
              ASSERT_TRUE(std::isfinite(got))
                  << "row " << r << " output " << i << " read outside the clip";
              err2 += (got - acc) * (got - acc);
            }
            EXPECT_LE(std::sqrt(err2 / static_cast<double>(n)), 1e-6 * l1) << "row " << r;
          }
        }
      }
    }
}

// The fused engine is the default where it runs (a compute capability 9.0
// device), reads a huge grid of short segments right (more blocks than a
// grid's y dimension holds), and asking for it where it cannot run is an
// error, not a silent fallback.
TEST_F(FftFirTest, FusedEngineWhereAvailable) {
  const std::vector<float> h = random_floats(1023, 31, 0.03f);
  if (!kc::fused_fft_available(4096)) {
    kc::FftFirOptions o;
    o.engine = kc::FftEngine::fused;
    EXPECT_THROW(kc::FftFir(h.data(), 1023, 100000, 1, o), Error);
    GTEST_SKIP() << "no fused engine on this device or build";
  }
  kc::FftFir automatic(h.data(), 1023, 1 << 20, 2);
  EXPECT_EQ(automatic.engine(), kc::FftEngine::fused) << automatic.describe();
  EXPECT_EQ(automatic.group_segments(), 0);
  EXPECT_NE(automatic.describe().find("fused"), std::string::npos) << automatic.describe();
  // Over 32768 taps the automatic engine takes cuFFT's longer transforms (the
  // longest fused length would leave few outputs a segment); asked for, fused runs.
  const std::vector<float> long_taps = random_floats(40000, 32, 0.005f);
  EXPECT_EQ(kc::FftFir(long_taps.data(), 40000, 1 << 20, 1).engine(), kc::FftEngine::cufft);
  kc::FftFirOptions forced;
  forced.engine = kc::FftEngine::fused;
  kc::FftFir forced_fir(long_taps.data(), 40000, 1 << 20, 1, forced);
  EXPECT_EQ(forced_fir.engine(), kc::FftEngine::fused);
  EXPECT_EQ(forced_fir.fft_size(), 65536);
  EXPECT_EQ(kc::fft_size_automatic(1023, 1 << 20), 4096);
  EXPECT_EQ(kc::fft_size_automatic(40000, 1 << 20), kc::fft_size_for(40000, 1 << 20));
  for (const int bad : {96 * 32, 512, 1 << 17}) { // not compiled: 3 * 2^p, too short, too long
    kc::FftFirOptions o;
    o.engine = kc::FftEngine::fused;
    o.fft_size = bad;
    EXPECT_THROW(kc::FftFir(h.data(), 300, 1 << 20, 1, o), Error) << bad;
  }
  // 66000 segments (L = 1024, K = 15: 1010 outputs each) in one call: a
  // one-dimensional grid past the 65535 rows a cuFFT group holds.
  FftCase c{};
  c.taps = 15;
  c.channels = 1;
  c.n = 1010LL * 65999 + 7;
  c.fft_size = 1024;
  c.engine = kc::FftEngine::fused;
  check_fft_case(c, s(), 77);
}

TEST_F(FftFirTest, BadArgumentsAreErrors) {
  const std::vector<float> h(100, 0.01f);
  auto expect_invalid = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("fir_fft"), std::string::npos) << e.what();
    }
  };
  expect_invalid([&] { kc::FftFir f(h.data(), 0, 100, 1); });
  expect_invalid([&] { kc::FftFir f(h.data(), 100, 0, 1); });
  expect_invalid([&] { kc::FftFir f(h.data(), 100, 100, 0); });
  expect_invalid([&] { kc::FftFir f(h.data(), 100, 100, 1, {64, 0}); });  // L < K
  expect_invalid([&] { kc::FftFir f(h.data(), 100, 100, 1, {257, 0}); }); // odd L
  kc::FftFir f(h.data(), 100, 1000, 2);
  kc::DeviceBuffer<float> x(4000), y(4000);
  expect_invalid([&] { f.run(x.data(), 1001, y.data(), 1, 2000, 2000, s()); });
  expect_invalid([&] { f.run(x.data(), 10, y.data(), 3, 2000, 2000, s()); });
  expect_invalid([&] { f.run(x.data(), 100, y.data(), 2, 2000, 50, s()); });
  expect_invalid([&] { f.run(nullptr, 10, y.data(), 1, 0, 0, s()); });
  kc::FftFir empty;
  expect_invalid([&] { empty.run(x.data(), 10, y.data(), 1, 0, 0, s()); });
  EXPECT_NE(f.describe().find("L="), std::string::npos) << f.describe();
}

TEST(FftFirSize, PowersOfTwoAtLeastTheTapsAndBoundedByTheCall) {
  for (int k : {1, 2, 3, 15, 255, 1023, 1024, 4095, 4096, 16383, 16384, 50000}) {
    for (std::int64_t max_n :
         {std::int64_t{1}, std::int64_t{1000}, std::int64_t{1} << 20, std::int64_t{1} << 26}) {
      const int l = kc::fft_size_for(k, max_n);
      EXPECT_GE(l, k) << k << " " << max_n;
      EXPECT_EQ(l & (l - 1), 0) << k << " " << max_n;
      EXPECT_LE(static_cast<std::int64_t>(l), std::max<std::int64_t>(64, 2 * (max_n + k)))
          << k << " " << max_n;
    }
  }
}

} // namespace
} // namespace sigstream
