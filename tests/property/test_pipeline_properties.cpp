// Whole-pipeline properties on the CPU backend: SPEC §3 output for every
// mode and cascade against a float64 reference, chunk-size and thread-count
// invariance (bitwise), statistics against float64 sums, PCM paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using test::fir_stage;
using test::gain_stage;
using test::metrics_stage;
using test::noise_synth;
using test::reference_chain;
using test::source_planes;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Outcome {
  RunReport report;
  test::Audio audio;
  std::string bytes;
};

Outcome run_to(const test::TempDir& dir, Config c, const std::string& name, std::int64_t chunk,
               int threads, SampleFormat format = SampleFormat::float32) {
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = chunk;
  c.execution.threads = threads;
  c.sink.file = dir.file(name + ".wav");
  c.sink.format = format;
  Outcome r;
  r.report = run_pipeline(c, RunOptions{});
  r.audio = test::read_audio(*c.sink.file);
  r.bytes = slurp(*c.sink.file);
  return r;
}

std::vector<double> channel_of(const test::Audio& a, int c) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.frames; ++i)
    v.push_back(a.samples[static_cast<std::size_t>(i * a.channels + c)]);
  return v;
}

class ModeTest : public ::testing::TestWithParam<FirMode> {};

TEST_P(ModeTest, MatchesFloat64ReferenceAndIsChunkInvariant) {
  const FirMode mode = GetParam();
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(5003, 3, 7);
  c.stages = {fir_stage("f", test::random_taps(63, 3), mode), metrics_stage("m")};
  const Outcome base = run_to(dir, c, "base", 1 << 20, 1);
  const auto src = source_planes(*c.source.synth);
  const std::int64_t expect_frames = mode == FirMode::full ? 5003 + 62 : 5003;
  ASSERT_EQ(base.audio.frames, expect_frames);
  for (int ch = 0; ch < 3; ++ch) {
    const auto ref = reference_chain(src[static_cast<std::size_t>(ch)], c.stages);
    EXPECT_LE(test::rel_l2(ref, channel_of(base.audio, ch)), 1e-6) << "channel " << ch;
  }
  for (std::int64_t chunk : {1, 2, 61, 62, 63, 997, 5002}) {
    for (int threads : {1, 3}) {
      const Outcome r = run_to(dir, c, "c" + std::to_string(chunk) + "t" + std::to_string(threads),
                               chunk, threads);
      ASSERT_EQ(r.audio.frames, base.audio.frames);
      std::size_t diffs = 0, first = 0;
      for (std::size_t i = r.audio.samples.size(); i-- > 0;)
        if (r.audio.samples[i] != base.audio.samples[i])
          ++diffs, first = i;
      EXPECT_EQ(diffs, 0u) << "chunk " << chunk << " threads " << threads
                           << " first diff at sample " << first;
      EXPECT_TRUE(r.bytes == base.bytes) << "chunk " << chunk << " threads " << threads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, ModeTest,
                         ::testing::Values(FirMode::causal, FirMode::same, FirMode::full));

TEST(PipelineCpu, CascadeOfModesMatchesReferenceForEveryChunking) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(3001, 2, 9);
  c.stages = {fir_stage("a", test::random_taps(31, 1), FirMode::same),
              metrics_stage("after_a"),
              fir_stage("b", test::random_taps(20, 2), FirMode::full),
              gain_stage("g", 0.7),
              fir_stage("c", test::random_taps(9, 3), FirMode::causal),
              fir_stage("d", test::random_taps(16, 4), FirMode::same)};
  const Outcome base = run_to(dir, c, "base", 4096, 2);
  const auto src = source_planes(*c.source.synth);
  ASSERT_EQ(base.audio.frames, 3001 + 19);
  for (int ch = 0; ch < 2; ++ch) {
    const auto ref = reference_chain(src[static_cast<std::size_t>(ch)], c.stages);
    EXPECT_LE(test::rel_l2(ref, channel_of(base.audio, ch)), 1e-6);
  }
  for (std::int64_t chunk : {1, 7, 100, 1000}) {
    const Outcome r = run_to(dir, c, "c" + std::to_string(chunk), chunk, 3);
    EXPECT_TRUE(r.bytes == base.bytes) << "chunk " << chunk;
  }
}

TEST(PipelineCpu, MetricsTotalsMatchFloat64AndChunksAddUp) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(10007, 2, 3);
  c.stages = {metrics_stage("in"), fir_stage("f", test::random_taps(15, 8), FirMode::full),
              gain_stage("g", 1.5), metrics_stage("late")};
  const Outcome r = run_to(dir, c, "m", 999, 3);
  const auto src = source_planes(*c.source.synth);
  ASSERT_EQ(r.report.metrics.size(), 3u);
  EXPECT_EQ(r.report.metrics[0].name, "in");
  EXPECT_EQ(r.report.metrics[2].name, "output");
  for (int ch = 0; ch < 2; ++ch) {
    const auto y = channel_of(r.audio, ch); // float sink: the exact float32 signal
    const auto& x = src[static_cast<std::size_t>(ch)];
    double e = 0, s = 0, p = 0, d = 0, ex = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double xi = i < x.size() ? x[i] : 0.0;
      e += y[i] * y[i];
      s += y[i];
      p = std::max(p, std::fabs(y[i]));
      d += xi * y[i];
      ex += xi * xi;
    }
    for (int slot : {1, 2}) { // "late" and "output" see the same signal
      const ChannelMetrics& m =
          r.report.metrics[static_cast<std::size_t>(slot)].totals[static_cast<std::size_t>(ch)];
      EXPECT_EQ(m.frames, static_cast<std::int64_t>(y.size()));
      EXPECT_NEAR(m.energy, e, 1e-9 * e);
      EXPECT_NEAR(m.sum, s, 1e-9 * std::fabs(s) + 1e-12);
      EXPECT_EQ(m.peak, p);
      EXPECT_NEAR(m.dot, d, 1e-9 * std::fabs(d));
      EXPECT_NEAR(m.correlation(), d / std::sqrt(e * ex), 1e-9);
    }
    // The input block counts the source frames only.
    const ChannelMetrics& in = r.report.metrics[0].totals[static_cast<std::size_t>(ch)];
    double exs = 0;
    for (double v : x)
      exs += v * v;
    EXPECT_EQ(in.frames, 10007);
    EXPECT_NEAR(in.energy, exs, 1e-9 * exs);
    EXPECT_NEAR(in.correlation(), 1.0, 1e-12);
  }
  std::int64_t frames = 0;
  for (const auto& row : r.report.metrics[2].chunks)
    frames += row.frames;
  EXPECT_EQ(frames, 10007 + 14);
}

// Chunks longer than the CPU backend's pieces (65536 frames) are computed in
// pieces on several threads: the audio must be the one-piece bytes, and the
// statistics (float64 sums merged piece by piece in order) must not depend on
// the thread count, and must still be the float64 values.
TEST(PipelineCpu, ChunksInPiecesGiveTheSameBytesAndThreadFreeStatistics) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(300007, 2, 11);
  c.stages = {fir_stage("f", test::random_taps(63, 12), FirMode::same), metrics_stage("m"),
              fir_stage("g", test::random_taps(9, 13), FirMode::full)};
  const Outcome small = run_to(dir, c, "small", 4096, 1); // chunks of one piece each
  const Outcome one = run_to(dir, c, "one", 250001, 1);   // 4 pieces per chunk
  const Outcome many = run_to(dir, c, "many", 250001, 5);
  EXPECT_TRUE(one.bytes == small.bytes);
  EXPECT_TRUE(many.bytes == small.bytes);
  ASSERT_EQ(one.report.metrics.size(), many.report.metrics.size());
  for (std::size_t slot = 0; slot < one.report.metrics.size(); ++slot)
    for (std::size_t ch = 0; ch < 2; ++ch) {
      const ChannelMetrics& a = one.report.metrics[slot].totals[ch];
      const ChannelMetrics& b = many.report.metrics[slot].totals[ch];
      const ChannelMetrics& ref = small.report.metrics[slot].totals[ch];
      EXPECT_EQ(a.energy, b.energy) << "slot " << slot << " channel " << ch;
      EXPECT_EQ(a.sum, b.sum);
      EXPECT_EQ(a.dot, b.dot);
      EXPECT_EQ(a.peak, b.peak);
      EXPECT_EQ(a.frames, ref.frames);
      EXPECT_EQ(a.peak, ref.peak);
      EXPECT_NEAR(a.energy, ref.energy, 1e-12 * ref.energy);
      EXPECT_NEAR(a.dot, ref.dot, 1e-12 * std::fabs(ref.dot) + 1e-12);
    }
}

TEST(PipelineCpu, Pcm16IdentityIsSampleExactAndFilterWithinHalfLsb) {
  test::TempDir dir;
  const int ch = 2;
  const std::int64_t n = 20011;
  const auto x = test::random_samples(static_cast<std::size_t>(n * ch), 4, 0.99f, 16);
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 44100, ch, x);
  Config c;
  c.source.file = in;
  c.stages = {fir_stage("id", {1.0}, FirMode::causal)};
  const Outcome id = run_to(dir, c, "id", 4093, 2, SampleFormat::same);
  const test::Audio src = test::read_audio(in);
  EXPECT_EQ(id.audio.format, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  EXPECT_EQ(id.audio.ints, src.ints) << "identity through pcm16 must be exact";

  const auto h = test::random_taps(101, 77);
  c.stages = {fir_stage("f", h, FirMode::same)};
  const Outcome pcm = run_to(dir, c, "pcm", 4093, 2, SampleFormat::same);
  for (int k = 0; k < ch; ++k) {
    std::vector<double> xs;
    for (std::int64_t i = 0; i < n; ++i)
      xs.push_back(src.ints[static_cast<std::size_t>(i * ch + k)] / 2147483648.0);
    const auto ref = test::reference_fir(xs, h, FirMode::same);
    for (std::int64_t i = 0; i < n; ++i) {
      const double got = pcm.audio.ints[static_cast<std::size_t>(i * ch + k)] / 2147483648.0;
      ASSERT_LE(std::fabs(got - ref[static_cast<std::size_t>(i)]), (0.5 + 1e-3) / 32768.0)
          << "frame " << i;
    }
  }
}

TEST(PipelineCpu, ClippingIsCountedNotWrapped) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(1000, 1, 1);
  c.stages = {gain_stage("loud", 100.0)};
  const Outcome r = run_to(dir, c, "clip", 333, 2, SampleFormat::pcm16);
  EXPECT_GT(r.report.clipped_samples, 100);
  std::int64_t at_rail = 0;
  for (std::int32_t v : r.audio.ints)
    at_rail += (v == INT32_MIN || v == (32767 << 16)) ? 1 : 0;
  EXPECT_EQ(at_rail, r.report.clipped_samples);
}

TEST(PipelineCpu, OneFrameInputAndShortLastChunk) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(1, 1, 5);
  c.stages = {fir_stage("f", {0.5, 0.25, 0.125}, FirMode::full)};
  const Outcome r = run_to(dir, c, "one", 2, 1);
  ASSERT_EQ(r.audio.frames, 3);
  const auto src = source_planes(*c.source.synth);
  EXPECT_FLOAT_EQ(r.audio.samples[0], static_cast<float>(0.5 * src[0][0]));
  EXPECT_FLOAT_EQ(r.audio.samples[2], static_cast<float>(0.125 * src[0][0]));
}

TEST(PipelineCpu, ImpulseInGivesTapsOut) {
  test::TempDir dir;
  std::vector<float> x(64, 0.0f);
  x[0] = 1.0f;
  const std::string in = dir.file("impulse.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 8000, 1, x);
  Config c;
  c.source.file = in;
  const auto h = test::random_taps(17, 21);
  c.stages = {fir_stage("f", h, FirMode::causal)};
  const Outcome r = run_to(dir, c, "imp", 5, 2);
  for (int k = 0; k < 17; ++k)
    EXPECT_EQ(r.audio.samples[static_cast<std::size_t>(k)],
              static_cast<float>(h[static_cast<std::size_t>(k)]));
  for (int k = 17; k < 64; ++k)
    EXPECT_EQ(r.audio.samples[static_cast<std::size_t>(k)], 0.0f);
}

TEST(PipelineCpu, VerifyReportsTinyErrorAgainstFloat64) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(4000, 2, 2);
  c.stages = {fir_stage("f", test::random_taps(255, 2), FirMode::same), gain_stage("g", 0.5)};
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = 1000;
  RunOptions o;
  o.verify = true;
  const RunReport r = run_pipeline(c, o);
  EXPECT_TRUE(r.verification.ran);
  EXPECT_TRUE(r.verification.passed);
  EXPECT_GT(r.verification.rel_l2_error, 0.0) << "float32 cannot be exact";
  EXPECT_LT(r.verification.rel_l2_error, 1e-6);
}

TEST(PipelineCpu, OutputEqualToInputIsRefusedAndNothingIsWritten) {
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1,
                    test::random_samples(100, 1, 0.5f, 16));
  const std::string before = slurp(in);
  Config c;
  c.source.file = in;
  c.stages = {fir_stage("f", {1.0}, FirMode::causal)};
  c.sink.file = in;
  try {
    run_pipeline(c, RunOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("input file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(in), before);
}

TEST(PipelineCpu, FailedRunLeavesNoFiles) {
  test::TempDir dir;
  // A truncated WAV: the header promises more frames than the file holds.
  const std::string in = dir.file("trunc.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1,
                    test::random_samples(50000, 1, 0.5f, 16));
  std::filesystem::resize_file(in, 30000);
  Config c;
  c.source.file = in;
  c.stages = {fir_stage("f", {1.0}, FirMode::causal)};
  c.sink.file = dir.file("out/x.wav");
  c.stats.json = dir.file("out/x.json");
  c.execution.chunk_frames = 1000;
  EXPECT_THROW(run_pipeline(c, RunOptions{}), Error);
  std::size_t files = 0;
  if (std::filesystem::exists(dir.file("out")))
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.file("out")))
      ++files;
  EXPECT_EQ(files, 0u);
}

} // namespace
} // namespace sigstream
