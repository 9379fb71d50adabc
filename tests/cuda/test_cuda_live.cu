// Live mode on the GPU: the graph-captured partitioned step against the
// float64 sum, and whole live runs against the file path (SPEC §6).
#include <gtest/gtest.h>

#include <algorithm>

#include "cuda_test_support.hpp"
#include "stages/fir/block_convolver.hpp"
#include "stream_support.hpp"

namespace sigstream {
namespace {

TEST(CudaLive, PartitionedStepMatchesTheFloat64Sum) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  std::uint32_t seed = 40;
  for (int k : {1, 37, 48, 49, 1001, 4095, 65536}) {
    for (int block : {1, 48, 100}) {
      if (k == 65536 && block == 1)
        continue; // 65536 partitions: slow to check, nothing new
      for (int channels : {1, 3, 32}) {
        if (channels == 32 && k > 4095)
          continue;
        const auto h64 = test::random_taps(k, ++seed);
        const std::vector<float> h(h64.begin(), h64.end());
        const std::vector<double> hd(h.begin(), h.end());
        auto conv = make_cuda_block_convolver(h.data(), k, channels, block, 0);
        EXPECT_EQ(conv->partitions(), (k + block - 1) / block);
        const std::int64_t frames = std::max<std::int64_t>(3 * k / 2, 997);
        const std::int64_t steps = (frames + block - 1) / block;
        std::vector<std::vector<float>> x(static_cast<std::size_t>(channels)), y(x.size());
        for (int c = 0; c < channels; ++c) {
          x[static_cast<std::size_t>(c)] =
              test::random_samples(static_cast<std::size_t>(steps * block), ++seed);
          y[static_cast<std::size_t>(c)].resize(x[static_cast<std::size_t>(c)].size());
        }
        std::vector<const float*> xp(x.size());
        std::vector<float*> yp(y.size());
        for (std::int64_t s = 0; s < steps; ++s) {
          for (int c = 0; c < channels; ++c) {
            xp[static_cast<std::size_t>(c)] = x[static_cast<std::size_t>(c)].data() + s * block;
            yp[static_cast<std::size_t>(c)] = y[static_cast<std::size_t>(c)].data() + s * block;
          }
          conv->process(xp.data(), yp.data());
        }
        for (int c = 0; c < channels; c += std::max(1, channels / 3)) {
          const std::vector<double> xd(x[static_cast<std::size_t>(c)].begin(),
                                       x[static_cast<std::size_t>(c)].end());
          const auto ref = test::reference_fir(xd, hd, FirMode::causal);
          const std::vector<double> got(y[static_cast<std::size_t>(c)].begin(),
                                        y[static_cast<std::size_t>(c)].end());
          EXPECT_LT(test::rel_l2(ref, got), 2e-6)
              << "K " << k << " block " << block << " channels " << channels << " channel " << c;
        }
      }
    }
  }
}

TEST(CudaLive, LiveRunsMatchTheFilePathWithinSpec) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  const int channels = 4;
  const std::int64_t frames = 20011;
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, channels,
                    test::random_samples(static_cast<std::size_t>(frames * channels), 3, 0.9f, 16));
  for (FirMode mode : {FirMode::causal, FirMode::same, FirMode::full}) {
    Config cfg;
    cfg.origin = "test";
    cfg.stages = {
        test::fir_stage("a", test::random_taps_unit_energy(31, 5), FirMode::same,
                        FirMethod::direct),
        test::metrics_stage("m"),
        test::fir_stage("b", test::random_taps_unit_energy(3001, 6), mode, FirMethod::direct)};
    cfg.source.file = in;
    cfg.sink.file = dir.file("file.wav");
    cfg.sink.format = SampleFormat::float32;
    cfg.execution.backend = BackendKind::cpu;
    run_pipeline(cfg, {});
    cfg.sink.file = dir.file("live.wav");
    cfg.execution.backend = BackendKind::cuda;
    cfg.execution.latency_ms = 1.0;
    const RunReport r = run_pipeline(cfg, {});
    ASSERT_TRUE(r.latency.has_value());
    EXPECT_EQ(r.backend, "cuda");
    const test::Audio a = test::read_audio(dir.file("file.wav")),
                      b = test::read_audio(dir.file("live.wav"));
    ASSERT_EQ(a.frames, b.frames) << to_string(mode);
    const std::vector<double> ad(a.samples.begin(), a.samples.end()),
        bd(b.samples.begin(), b.samples.end());
    EXPECT_LT(test::rel_l2(ad, bd), 1e-5) << to_string(mode);
  }
}

// execution.redundant on the GPU: two lanes, each with its own graph,
// streams and delay line, race every block; the output is one lane's, bit
// for bit (the same kernels on the same data), with every block written once.
TEST(CudaLive, RedundantLanesGiveOneLanesOutput) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  const int channels = 3;
  const std::int64_t frames = 24007;
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, channels,
                    test::random_samples(static_cast<std::size_t>(frames * channels), 9, 0.9f));
  Config cfg;
  cfg.origin = "test";
  cfg.stages = {test::fir_stage("long", test::random_taps_unit_energy(8191, 10), FirMode::causal,
                                FirMethod::fft),
                test::metrics_stage("m")};
  cfg.source.file = in;
  cfg.sink.format = SampleFormat::float32;
  cfg.execution.backend = BackendKind::cuda;
  cfg.execution.latency_ms = 0.5;
  cfg.sink.file = dir.file("one.wav");
  const RunReport one = run_pipeline(cfg, {});
  cfg.execution.redundant = true;
  cfg.sink.file = dir.file("two.wav");
  const RunReport two = run_pipeline(cfg, {});
  EXPECT_EQ(two.backend, "cuda");
  ASSERT_TRUE(two.latency.has_value());
  ASSERT_EQ(two.latency->lanes.size(), 2u);
  EXPECT_EQ(two.latency->lanes[0].written + two.latency->lanes[1].written, two.latency->chunks);
  EXPECT_EQ(two.latency->chunks, one.latency->chunks);
  EXPECT_TRUE(test::slurp_bytes(dir.file("one.wav")) == test::slurp_bytes(dir.file("two.wav")));
  ASSERT_EQ(one.metrics.size(), two.metrics.size());
  for (std::size_t s = 0; s < one.metrics.size(); ++s)
    for (std::size_t c = 0; c < one.metrics[s].totals.size(); ++c)
      EXPECT_EQ(one.metrics[s].totals[c].energy, two.metrics[s].totals[c].energy)
          << one.metrics[s].name << c;
}

} // namespace
} // namespace sigstream
