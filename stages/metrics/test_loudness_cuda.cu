// QA of the metrics stage's loudness on CUDA (kernels/cuda/loudness.cu): the
// CPU backend's values (which equal libebur128's: test_loudness.cpp) to
// 1e-9 LU and 1e-6 dB of true peak, for random programme in 1, 2 and 5.1
// channels at odd lengths, chunkings down to 997 frames on three lanes, at
// 44.1, 96 (2x true peak) and 192 kHz (sample peak), behind a FIR and a
// resampler; the GPU's audio is the CPU's, byte for byte; a normalize to
// -23 LUFS measured on the GPU gives the CPU's gain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "loudness_programme.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/normalize/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

StageSpec loudness_stage(const std::string& name) {
  StageSpec s = test::metrics_stage(name);
  s.as<MetricsSpec>().loudness = true;
  return s;
}

// Noise whose level moves, with clicks (tests/support/loudness_programme.hpp).
std::vector<float> programme(int channels, int rate, std::int64_t frames, std::uint32_t seed) {
  return test::loudness_programme(channels, rate, frames, seed, /*clicks=*/true);
}

void expect_same_loudness(const LoudnessReport& cpu, const LoudnessReport& gpu) {
  ASSERT_TRUE(cpu.integrated_lufs && cpu.true_peak_dbtp && cpu.max_momentary_lufs);
  ASSERT_TRUE(gpu.integrated_lufs && gpu.true_peak_dbtp && gpu.max_momentary_lufs);
  EXPECT_NEAR(*gpu.integrated_lufs, *cpu.integrated_lufs, 1e-9);
  EXPECT_NEAR(*gpu.true_peak_dbtp, *cpu.true_peak_dbtp, 1e-6);
  EXPECT_NEAR(*gpu.max_momentary_lufs, *cpu.max_momentary_lufs, 1e-9);
  ASSERT_EQ(cpu.range_lu.has_value(), gpu.range_lu.has_value());
  if (cpu.range_lu)
    EXPECT_NEAR(*gpu.range_lu, *cpu.range_lu, 1e-9);
  ASSERT_EQ(cpu.max_short_term_lufs.has_value(), gpu.max_short_term_lufs.has_value());
  if (cpu.max_short_term_lufs)
    EXPECT_NEAR(*gpu.max_short_term_lufs, *cpu.max_short_term_lufs, 1e-9);
}

// Runs `c` on the CPU, then on CUDA after `for_cuda`, into `dir`: the block's
// loudness agrees (expect_same_loudness).
void expect_cuda_measures_as_the_cpu(Config c, const test::TempDir& dir,
                                     const std::function<void(Config&)>& for_cuda) {
  c.origin = "test";
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  c.execution.backend = BackendKind::cuda;
  for_cuda(c);
  c.sink.file = dir.file("cuda.wav");
  const RunReport gpu = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(cpu.metrics.front().loudness && gpu.metrics.front().loudness);
  expect_same_loudness(*cpu.metrics.front().loudness, *gpu.metrics.front().loudness);
}

struct Case {
  const char* name;
  int channels;
  int rate;
  double seconds;
};

class LoudnessCuda : public ::testing::TestWithParam<Case> {};

TEST_P(LoudnessCuda, GivesTheCpusValues) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const Case k = GetParam();
  test::TempDir dir;
  const auto frames = static_cast<std::int64_t>(k.seconds * k.rate) + 4099;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, k.rate, k.channels,
                    programme(k.channels, k.rate, frames, 31 + k.channels));
  Config c;
  c.origin = "test";
  c.source.file = in;
  c.stages = {
      loudness_stage("in"),
      test::fir_stage("f", test::random_taps_unit_energy(63, 5), FirMode::same, FirMethod::direct),
      loudness_stage("out")};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}, std::int64_t{997}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = chunk;
    c.execution.streams = 3;
    c.sink.file = dir.file("cuda.wav");
    const RunReport gpu = run_pipeline(c, RunOptions{});
    ASSERT_EQ(gpu.metrics.size(), cpu.metrics.size());
    int blocks = 0;
    for (std::size_t slot = 0; slot < gpu.metrics.size(); ++slot) {
      SCOPED_TRACE("block " + gpu.metrics[slot].name);
      ASSERT_EQ(cpu.metrics[slot].loudness.has_value(), gpu.metrics[slot].loudness.has_value());
      if (!gpu.metrics[slot].loudness)
        continue;
      ++blocks;
      expect_same_loudness(*cpu.metrics[slot].loudness, *gpu.metrics[slot].loudness);
    }
    EXPECT_EQ(blocks, 2);
    EXPECT_EQ(test::slurp_bytes(dir.file("cpu.wav")), test::slurp_bytes(dir.file("cuda.wav")));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LoudnessCuda,
                         ::testing::Values(Case{"mono_48k", 1, 48000, 9.3},
                                           Case{"stereo_44k1", 2, 44100, 11.7},
                                           Case{"surround_48k", 6, 48000, 7.1},
                                           Case{"stereo_96k", 2, 96000, 4.2},
                                           Case{"mono_192k", 1, 192000, 3.3}),
                         [](const auto& info) { return std::string(info.param.name); });

// Behind a resampler (48 -> 32 kHz) the block measures at its own rate on
// the GPU too.
TEST(LoudnessCudaChain, AfterARateChange) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2,
                    programme(2, 48000, 48000 * 6 + 313, 7));
  Config c;
  c.source.file = in;
  c.stages = {test::resample_stage("r", 2, 3), loudness_stage("m")};
  expect_cuda_measures_as_the_cpu(c, dir, [](Config& g) { g.execution.chunk_frames = 7919; });
}

// A full FIR after the block: the last chunk owns no frames of the block's
// signal and hands the meter nothing (the CPU's values).
TEST(LoudnessCudaChain, ALaterStagesTailLeavesTheBlockNothingToAdd) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, programme(2, 48000, 199900, 13));
  Config c;
  c.source.file = in;
  c.stages = {loudness_stage("m"), test::fir_stage("f", test::random_taps_unit_energy(255, 7),
                                                   FirMode::full, FirMethod::direct)};
  c.execution.chunk_frames = 100000;
  expect_cuda_measures_as_the_cpu(c, dir, [](Config& g) { g.execution.streams = 3; });
}

// normalize's first pass measures on the GPU: the CPU's gain, and the same
// audio to float32 rounding.
TEST(LoudnessCudaChain, NormalizeMeasuresOnTheGpu) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2,
                    programme(2, 48000, 48000 * 8 + 77, 9));
  Config c;
  c.origin = "test";
  c.source.file = in;
  StageSpec n;
  n.name = "n";
  n.type = kNormalizeType;
  NormalizeSpec spec;
  spec.mode = NormalizeMode::lufs;
  spec.target_db = -23.0;
  spec.true_peak_max_db = -1.0;
  n.params = KindData(spec);
  c.stages = {n, loudness_stage("m")};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  c.execution.backend = BackendKind::cuda;
  c.execution.chunk_frames = 65537;
  c.sink.file = dir.file("cuda.wav");
  const RunReport gpu = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(cpu.metrics.front().loudness && gpu.metrics.front().loudness);
  expect_same_loudness(*cpu.metrics.front().loudness, *gpu.metrics.front().loudness);
  const auto result = [](const RunReport& r) {
    for (const StageReport& s : r.stages)
      if (s.type == kNormalizeType)
        return s.as<NormalizePlan>().result;
    ADD_FAILURE() << "no normalize stage in the report";
    return NormalizeResult{};
  };
  EXPECT_NEAR(result(gpu).gain_db, result(cpu).gain_db, 1e-9);
  EXPECT_EQ(result(gpu).limited, result(cpu).limited);
  // At the target, or lowered to the true-peak cap (the programme's clicks).
  const LoudnessReport& out = *gpu.metrics.front().loudness;
  if (result(gpu).limited)
    EXPECT_NEAR(*out.true_peak_dbtp, -1.0, 0.05);
  else
    EXPECT_NEAR(*out.integrated_lufs, -23.0, 0.05);
  const std::vector<float> a = test::read_audio(dir.file("cpu.wav")).samples;
  const std::vector<float> b = test::read_audio(dir.file("cuda.wav")).samples;
  ASSERT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  EXPECT_LT(worst, 1e-6);
}

} // namespace
} // namespace sigstream
