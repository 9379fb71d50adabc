// QA of the mix stage (SPEC §11): the pipeline's output against a reference
// written here from the definition (each output the ascending-j sum of
// gain times input with one float32 fma a term, and a float64 sum), on
// random data of odd lengths and channel counts; select copies exactly;
// chunkings, a stream of unknown length and live mode give the same bytes
// as one pass; the stages after a mix see its channel count; and the config
// errors SPEC §11 names, with the file, line, stage and both counts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/mix/spec.hpp"
#include "stages/mix/test_support.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

StageSpec matrix_stage(const std::string& name, std::vector<std::vector<double>> m) {
  StageSpec s;
  s.type = kMixType;
  s.name = name;
  s.as<MixSpec>().matrix = std::move(m);
  return s;
}

StageSpec preset_stage(const std::string& name, MixPreset p) {
  StageSpec s;
  s.type = kMixType;
  s.name = name;
  s.as<MixSpec>().preset = p;
  return s;
}

StageSpec select_stage(const std::string& name, std::vector<int> pick) {
  StageSpec s;
  s.type = kMixType;
  s.name = name;
  s.as<MixSpec>().select = std::move(pick);
  return s;
}

using test::random_matrix;

// The definition in float32: acc = fma(float(g[c][j]), x_j, acc) from 0,
// ascending j, terms of gain 0 left out.
float mix_f32(const std::vector<std::vector<double>>& m, std::size_t c,
              const std::vector<std::vector<double>>& x, std::size_t i) {
  float acc = 0.0f;
  for (std::size_t j = 0; j < x.size(); ++j)
    if (const auto g = static_cast<float>(m[c][j]); g != 0.0f)
      acc = std::fma(g, static_cast<float>(x[j][i]), acc);
  return acc;
}

double mix_f64(const std::vector<std::vector<double>>& m, std::size_t c,
               const std::vector<std::vector<double>>& x, std::size_t i) {
  double acc = 0.0;
  for (std::size_t j = 0; j < x.size(); ++j)
    acc += m[c][j] * x[j][i];
  return acc;
}

Config base_config(std::int64_t frames, int channels, std::uint64_t seed) {
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(frames, channels, seed);
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  return c;
}

struct Shape {
  int in, out;
};

class MixQa : public ::testing::TestWithParam<Shape> {};

TEST_P(MixQa, MatrixGivesTheDefinitionsBitsAndChunkingIsInvisible) {
  const auto [in, out] = GetParam();
  test::TempDir dir;
  const auto m = random_matrix(out, in, static_cast<std::uint32_t>(in * 100 + out));
  for (const std::int64_t frames : {std::int64_t{1}, std::int64_t{37}, std::int64_t{30011}}) {
    SCOPED_TRACE("frames " + std::to_string(frames));
    Config c = base_config(frames, in, 5 + static_cast<std::uint64_t>(frames));
    c.stages = {test::metrics_stage("before"), matrix_stage("mx", m), test::metrics_stage("after")};
    const auto x = test::source_planes(*c.source.synth);
    std::vector<unsigned char> first;
    for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{17}, std::int64_t{4099}}) {
      c.execution.chunk_frames = chunk;
      c.sink.file = dir.file("o" + std::to_string(chunk) + ".wav");
      const RunReport r = run_pipeline(c, RunOptions{});
      const test::Audio a = test::read_audio(*c.sink.file);
      ASSERT_EQ(a.channels, out);
      ASSERT_EQ(a.frames, frames);
      std::vector<double> want, got;
      for (std::size_t i = 0; i < static_cast<std::size_t>(frames); ++i)
        for (std::size_t ch = 0; ch < static_cast<std::size_t>(out); ++ch) {
          const float y = a.samples[i * static_cast<std::size_t>(out) + ch];
          ASSERT_EQ(y, mix_f32(m, ch, x, i)) << "frame " << i << ", channel " << ch;
          want.push_back(mix_f64(m, ch, x, i));
          got.push_back(y);
        }
      if (frames > 100) {
        EXPECT_LT(test::rel_l2(want, got), 1e-6);
      }
      ASSERT_EQ(r.metrics.size(), 3u);
      EXPECT_EQ(r.metrics[0].totals.size(), static_cast<std::size_t>(in));
      EXPECT_EQ(r.metrics[1].totals.size(), static_cast<std::size_t>(out));
      EXPECT_EQ(r.metrics[2].totals.size(), static_cast<std::size_t>(out));
      EXPECT_TRUE(r.metrics[0].paired);
      EXPECT_FALSE(r.metrics[1].paired); // output c is no longer source channel c
      EXPECT_FALSE(r.metrics[2].paired);
      EXPECT_EQ(r.output_channels, out);
      const std::vector<unsigned char> bytes = test::slurp_bytes(*c.sink.file);
      if (first.empty())
        first = bytes;
      EXPECT_EQ(bytes, first) << "chunk_frames " << chunk << " changes the output";
    }
  }
}

// Down, up, square, one channel, and wider than the CUDA kernel's registers.
INSTANTIATE_TEST_SUITE_P(Shapes, MixQa,
                         ::testing::Values(Shape{6, 2}, Shape{2, 5}, Shape{3, 3}, Shape{1, 1},
                                           Shape{19, 3}),
                         [](const auto& info) {
                           return std::to_string(info.param.in) + "_to_" +
                                  std::to_string(info.param.out);
                         });

TEST(MixQa, PresetsAreTheirMatrices) {
  test::TempDir dir;
  const double k = 0.7071068;
  // 5.1-stereo: L' = L + k C + k Ls, R' = R + k C + k Rs (inputs L R C LFE Ls Rs).
  const std::vector<std::vector<double>> itu = {{1, 0, k, 0, k, 0}, {0, 1, k, 0, 0, k}};
  Config c = base_config(20011, 6, 9);
  c.stages = {preset_stage("down", MixPreset::surround_stereo)};
  c.sink.file = dir.file("itu.wav");
  const RunReport r = run_pipeline(c, RunOptions{});
  const auto x = test::source_planes(*c.source.synth);
  test::Audio a = test::read_audio(*c.sink.file);
  ASSERT_EQ(a.channels, 2);
  for (std::size_t i = 0; i < 20011; ++i)
    for (std::size_t ch = 0; ch < 2; ++ch)
      ASSERT_EQ(a.samples[i * 2 + ch], mix_f32(itu, ch, x, i)) << "frame " << i;
  EXPECT_EQ(r.stages[0].detail, "5.1-stereo, 6 -> 2 channels");

  // mono: the mean of the inputs, as gains of 1/N.
  for (const int in : {2, 5}) {
    Config m = base_config(3001, in, 12);
    m.stages = {preset_stage("mono", MixPreset::mono)};
    m.sink.file = dir.file("mono.wav");
    run_pipeline(m, RunOptions{});
    const auto xs = test::source_planes(*m.source.synth);
    const std::vector<std::vector<double>> mean = {
        std::vector<double>(static_cast<std::size_t>(in), 1.0 / in)};
    a = test::read_audio(*m.sink.file);
    ASSERT_EQ(a.channels, 1);
    for (std::size_t i = 0; i < 3001; ++i) {
      ASSERT_EQ(a.samples[i], mix_f32(mean, 0, xs, i)) << "frame " << i;
      double avg = 0.0;
      for (const auto& plane : xs)
        avg += plane[i];
      ASSERT_NEAR(a.samples[i], avg / in, 1e-6);
    }
  }
}

TEST(MixQa, AChannelARowDoesNotUseDoesNotReachIt) {
  // 5.1-stereo drops the LFE (channel 3): an Inf or NaN there leaves both
  // outputs finite; one in the centre (channel 2) reaches both.
  test::TempDir dir;
  std::vector<float> frames = test::random_samples(6 * 3001, 8, 0.5f);
  frames[6 * 100 + 3] = std::numeric_limits<float>::infinity();
  frames[6 * 200 + 3] = std::numeric_limits<float>::quiet_NaN();
  frames[6 * 300 + 2] = std::numeric_limits<float>::infinity();
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 6, frames);
  Config c;
  c.origin = "test";
  c.source.file = in;
  c.stages = {preset_stage("down", MixPreset::surround_stereo)};
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  c.sink.file = dir.file("out.wav");
  const RunReport r = run_pipeline(c, RunOptions{});
  const test::Audio a = test::read_audio(*c.sink.file);
  for (std::size_t i = 0; i < 3001; ++i)
    for (std::size_t ch = 0; ch < 2; ++ch)
      EXPECT_EQ(std::isfinite(a.samples[i * 2 + ch]), i != 300) << "frame " << i;
  EXPECT_EQ(r.metrics.back().totals[0].nonfinite, 1);
}

TEST(MixQa, SelectCopiesReordersAndDuplicatesExactly) {
  test::TempDir dir;
  Config c = base_config(12347, 3, 4);
  c.stages = {select_stage("pick", {2, 0, 2, 1})};
  c.sink.file = dir.file("sel.wav");
  run_pipeline(c, RunOptions{});
  const auto x = test::source_planes(*c.source.synth);
  const test::Audio a = test::read_audio(*c.sink.file);
  ASSERT_EQ(a.channels, 4);
  const int pick[] = {2, 0, 2, 1};
  for (std::size_t i = 0; i < 12347; ++i)
    for (std::size_t ch = 0; ch < 4; ++ch)
      ASSERT_EQ(a.samples[i * 4 + ch],
                static_cast<float>(x[static_cast<std::size_t>(pick[ch])][i]));
}

TEST(MixQa, StagesAfterAMixSeeItsChannels) {
  // A FIR and a resampler after a 6 -> 2 mix give what they give on the
  // mix's own output, written first and read back.
  test::TempDir dir;
  const auto taps = test::random_taps_unit_energy(31, 3);
  Config c = base_config(24001, 6, 8);
  c.stages = {preset_stage("down", MixPreset::surround_stereo),
              test::fir_stage("f", taps, FirMode::same, FirMethod::direct),
              test::resample_stage("r", 1, 2), test::metrics_stage("m")};
  c.sink.file = dir.file("chain.wav");
  run_pipeline(c, RunOptions{});

  Config first = base_config(24001, 6, 8);
  first.stages = {preset_stage("down", MixPreset::surround_stereo)};
  first.sink.file = dir.file("mixed.wav");
  run_pipeline(first, RunOptions{});
  Config rest;
  rest.origin = "test";
  rest.source.file = *first.sink.file;
  rest.stages = {test::fir_stage("f", taps, FirMode::same, FirMethod::direct),
                 test::resample_stage("r", 1, 2), test::metrics_stage("m")};
  rest.execution.backend = BackendKind::cpu;
  rest.sink.format = SampleFormat::float32;
  rest.sink.file = dir.file("rest.wav");
  run_pipeline(rest, RunOptions{});
  const test::Audio a = test::read_audio(*c.sink.file);
  const test::Audio b = test::read_audio(*rest.sink.file);
  EXPECT_EQ(a.channels, 2);
  EXPECT_EQ(a.rate, 24000);
  EXPECT_EQ(a.samples, b.samples);
}

TEST(MixQa, AStreamOfUnknownLengthAndLiveModeGiveTheFilesBytes) {
  for (const std::int64_t chunk : {std::int64_t{997}, std::int64_t{30011}}) {
    test::StreamCase c;
    c.name = "mix";
    c.stages = {test::metrics_stage("m0"), matrix_stage("mx", random_matrix(3, 2, 7)),
                test::metrics_stage("m1"),
                test::fir_stage("f", test::random_taps_unit_energy(9, 6), FirMode::full,
                                FirMethod::direct)};
    c.frames = 30011;
    c.channels = 2;
    c.chunk_frames = chunk;
    c.max_write = 913;
    const auto [file, stream] = test::file_and_stream_outputs(c, BackendKind::cpu, 31);
    EXPECT_EQ(file, stream) << "chunk " << chunk;
    EXPECT_GT(file.size(), 1000u);
  }
  test::TempDir dir;
  Config c = base_config(20011, 6, 5);
  c.stages = {preset_stage("down", MixPreset::surround_stereo), test::metrics_stage("m"),
              test::resample_stage("r", 147, 160), select_stage("swap", {1, 0})};
  c.sink.file = dir.file("file.wav");
  run_pipeline(c, RunOptions{});
  c.execution.latency_ms = 1.0;
  c.sink.file = dir.file("live.wav");
  const RunReport live = run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::slurp_bytes(dir.file("file.wav")), test::slurp_bytes(dir.file("live.wav")));
  EXPECT_EQ(live.metrics[0].totals.size(), 2u);
}

// The config's errors: exit 2 (ErrorKind::config), the file and line, the stage, both counts.
std::string config_error_of(const std::string& stage_yaml, int channels) {
  const std::string yaml = "version: 1\n"
                           "source:\n"
                           "  synth: {sample_rate: 48000, channels: " +
                           std::to_string(channels) +
                           ", frames: 1000, noise: {kind: uniform, amplitude: 0.1, seed: 1}}\n"
                           "stages:\n"
                           "  - type: gain\n"
                           "    db: 0\n" +
                           stage_yaml + "execution: {backend: cpu}\n";
  const std::optional<Error> e = test::pipeline_error(yaml, "mix.yaml");
  if (!e) {
    ADD_FAILURE() << "no error for\n" << stage_yaml;
    return {};
  }
  EXPECT_EQ(e->kind(), ErrorKind::config) << e->what();
  return e->what();
}

TEST(MixQa, BadMixesAreConfigErrorsNamingTheStageAndBothCounts) {
  std::string m =
      config_error_of("  - type: mix\n    name: down\n    matrix: [[0.5, 0.5, 0.5]]\n", 2);
  EXPECT_NE(m.find("mix.yaml:7"), std::string::npos) << m;
  EXPECT_NE(m.find("stage 'down'"), std::string::npos) << m;
  EXPECT_NE(m.find("3 columns"), std::string::npos) << m;
  EXPECT_NE(m.find("2 channels"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    name: pick\n    select: [0, 4]\n", 3);
  EXPECT_NE(m.find("mix.yaml:7"), std::string::npos) << m;
  EXPECT_NE(m.find("stage 'pick'"), std::string::npos) << m;
  EXPECT_NE(m.find("select[1] is 4"), std::string::npos) << m;
  EXPECT_NE(m.find("3 channels"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    preset: 5.1-stereo\n", 2);
  EXPECT_NE(m.find("6 input channels"), std::string::npos) << m;
  EXPECT_NE(m.find("the input has 2"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    matrix: [[1, 0], []]\n", 2);
  EXPECT_NE(m.find("mix.yaml:8"), std::string::npos) << m;
  EXPECT_NE(m.find("row 1 is empty"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    matrix: [[1, 0], [1]]\n", 2);
  EXPECT_NE(m.find("row 1 has 1 gains, row 0 has 2"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    select: [-1]\n", 2);
  EXPECT_NE(m.find("select"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    select: [0]\n    preset: mono\n", 2);
  EXPECT_NE(m.find("exactly one of"), std::string::npos) << m;

  m = config_error_of("  - type: mix\n    preset: stereo\n", 2);
  EXPECT_NE(m.find("5.1-stereo"), std::string::npos) << m; // the choices are listed
}

} // namespace
} // namespace sigstream
