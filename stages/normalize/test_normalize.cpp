// QA of the normalize stage (SPEC §13) on the CPU backend, each result
// measured independently: libebur128 fed the output whole (integrated
// loudness within 0.01 LU of the target, true peak under its cap), the
// output's own sample peak and RMS in float64; random programme in 1, 2 and
// 5.1 channels at odd lengths; the first pass measures at the stage's point
// of the chain (after a FIR); every chunking gives the same bytes; silence
// leaves the signal as it is with a warning; streams and live mode are
// config errors, and so are bad keys, with the file and line.
#include <gtest/gtest.h>

#include <ebur128.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/normalize/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

constexpr int kRate = 48000;

// Noise whose level moves every 0.7 s, around `db` dBFS.
std::vector<float> programme(int channels, std::int64_t frames, double db, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::uniform_real_distribution<double> level(db - 12.0, db + 3.0);
  std::vector<float> x(static_cast<std::size_t>(frames * channels));
  double a = 0.1;
  for (std::int64_t i = 0; i < frames; ++i) {
    if (i % (kRate * 7 / 10) == 0)
      a = std::pow(10.0, level(rng) / 20.0);
    for (int c = 0; c < channels; ++c)
      x[static_cast<std::size_t>(i * channels + c)] = static_cast<float>(a) * n(rng);
  }
  return x;
}

struct Ebu {
  double integrated = 0.0, true_peak_db = -1e9;
};

Ebu libebur128(int channels, const std::vector<float>& x) {
  ebur128_state* st =
      ebur128_init(static_cast<unsigned>(channels), kRate, EBUR128_MODE_I | EBUR128_MODE_TRUE_PEAK);
  if (channels == 6) // 5.1: L R C LFE Ls Rs
    ebur128_set_channel(st, 3, EBUR128_UNUSED);
  ebur128_add_frames_float(st, x.data(), x.size() / static_cast<std::size_t>(channels));
  Ebu e;
  ebur128_loudness_global(st, &e.integrated);
  for (int c = 0; c < channels; ++c) {
    double tp = 0.0;
    ebur128_true_peak(st, static_cast<unsigned>(c), &tp);
    if (tp > 0.0)
      e.true_peak_db = std::max(e.true_peak_db, 20.0 * std::log10(tp));
  }
  ebur128_destroy(&st);
  return e;
}

std::vector<float> read_all(const std::string& path) {
  return test::read_audio(path).samples;
}

StageSpec normalize_stage(NormalizeMode mode, double target,
                          std::optional<double> cap = std::nullopt) {
  StageSpec s;
  s.type = kNormalizeType;
  s.name = "norm";
  NormalizeSpec n;
  n.mode = mode;
  n.target_db = target;
  n.true_peak_max_db = cap;
  s.params = KindData(n);
  return s;
}

struct Outcome {
  RunReport report;
  std::vector<float> y;
  std::vector<std::string> log;
};

Outcome run(test::TempDir& dir, const std::string& in, std::vector<StageSpec> stages,
            std::int64_t chunk = 1048576) {
  Config c;
  c.origin = "test";
  c.source.file = in;
  c.stages = std::move(stages);
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = chunk;
  c.sink.file = dir.file("out_" + std::to_string(chunk) + ".wav");
  c.sink.format = SampleFormat::float32;
  Outcome r;
  RunOptions o;
  o.log = [&](const std::string& m) { r.log.push_back(m); };
  r.report = run_pipeline(c, o);
  r.y = read_all(*c.sink.file);
  return r;
}

const NormalizePlan& plan_of(const RunReport& r) {
  for (const StageReport& s : r.stages)
    if (s.type == kNormalizeType)
      return s.as<NormalizePlan>();
  throw std::runtime_error("no normalize stage in the report");
}

std::string write(test::TempDir& dir, const std::string& name, int channels,
                  const std::vector<float>& x) {
  const std::string path = dir.file(name);
  test::write_audio(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kRate, channels, x);
  return path;
}

struct Shape {
  int channels;
  std::int64_t frames;
  double level_db;
  double target;
};

class NormalizeLufs : public ::testing::TestWithParam<Shape> {};

// To an integrated loudness: libebur128 on the output reads the target.
TEST_P(NormalizeLufs, TheOutputIsAtTheTargetForLibebur128) {
  const Shape& k = GetParam();
  test::TempDir dir;
  const std::vector<float> x = programme(k.channels, k.frames, k.level_db, 7 + k.channels);
  const Ebu before = libebur128(k.channels, x);
  const Outcome r = run(dir, write(dir, "in.wav", k.channels, x),
                        {normalize_stage(NormalizeMode::lufs, k.target, 0.0)});
  const NormalizePlan& p = plan_of(r.report);
  ASSERT_TRUE(p.result.measured_db.has_value());
  EXPECT_NEAR(*p.result.measured_db, before.integrated, 0.01);
  const Ebu after = libebur128(k.channels, r.y);
  if (!p.result.limited) {
    EXPECT_NEAR(after.integrated, k.target, 0.01);
    EXPECT_NEAR(p.result.gain_db, k.target - before.integrated, 0.01);
  }
  EXPECT_LE(after.true_peak_db, 0.0 + 0.05);
  // One linear gain: every sample is the input's times it.
  for (std::size_t i = 0; i < x.size(); i += 997)
    EXPECT_FLOAT_EQ(r.y[i], static_cast<float>(x[i] * static_cast<float>(p.linear)));
}

INSTANTIATE_TEST_SUITE_P(Shapes, NormalizeLufs,
                         ::testing::Values(Shape{1, 7 * kRate + 13, -35.0, -23.0},
                                           Shape{2, 11 * kRate + 1, -20.0, -23.0},
                                           Shape{2, 9 * kRate + 377, -40.0, -16.0},
                                           Shape{6, 6 * kRate + 5, -30.0, -24.0}));

// A loud target whose gain would push the true peak past its cap is lowered to it.
TEST(Normalize, TheTruePeakCapLowersTheGain) {
  test::TempDir dir;
  const std::vector<float> x = programme(2, 8 * kRate + 3, -30.0, 11);
  const Outcome r =
      run(dir, write(dir, "in.wav", 2, x), {normalize_stage(NormalizeMode::lufs, -5.0, -3.0)});
  const NormalizePlan& p = plan_of(r.report);
  EXPECT_TRUE(p.result.limited);
  const Ebu after = libebur128(2, r.y);
  EXPECT_NEAR(after.true_peak_db, -3.0, 0.05);
  EXPECT_LT(after.integrated, -5.0);
  EXPECT_TRUE(std::any_of(r.log.begin(), r.log.end(), [](const std::string& m) {
    return m.find("gain lowered") != std::string::npos;
  }));
}

double peak_db(const std::vector<float>& y) {
  double p = 0.0;
  for (float v : y)
    p = std::max(p, std::abs(static_cast<double>(v)));
  return 20.0 * std::log10(p);
}

double rms_db(const std::vector<float>& y) {
  double e = 0.0;
  for (float v : y)
    e += static_cast<double>(v) * v;
  return 10.0 * std::log10(e / static_cast<double>(y.size()));
}

// To a sample peak, after a FIR: the first pass measures the FIR's output.
TEST(Normalize, PeakTargetAfterAFilter) {
  test::TempDir dir;
  const std::vector<float> x = programme(2, 5 * kRate + 101, -20.0, 3);
  const StageSpec fir =
      test::fir_stage("lp", test::random_taps_unit_energy(63, 5), FirMode::same, FirMethod::direct);
  const Outcome r =
      run(dir, write(dir, "in.wav", 2, x), {fir, normalize_stage(NormalizeMode::peak, -1.5)});
  EXPECT_NEAR(peak_db(r.y), -1.5, 1e-4);
  // Without the normalize stage: the same bytes times the gain.
  const Outcome plain = run(dir, write(dir, "in2.wav", 2, x), {fir});
  const double g = plan_of(r.report).linear;
  ASSERT_EQ(plain.y.size(), r.y.size());
  for (std::size_t i = 0; i < r.y.size(); i += 101)
    EXPECT_FLOAT_EQ(r.y[i], static_cast<float>(plain.y[i] * static_cast<float>(g)));
}

// To an RMS level, capped so that no sample clips.
TEST(Normalize, RmsTargetAndItsPeakCap) {
  test::TempDir dir;
  const std::vector<float> x = programme(1, 4 * kRate + 9, -30.0, 5);
  const Outcome r =
      run(dir, write(dir, "in.wav", 1, x), {normalize_stage(NormalizeMode::rms, -26.0)});
  EXPECT_NEAR(rms_db(r.y), -26.0, 1e-3);
  EXPECT_FALSE(plan_of(r.report).result.limited);
  const Outcome loud =
      run(dir, write(dir, "in2.wav", 1, x), {normalize_stage(NormalizeMode::rms, -3.0)});
  EXPECT_TRUE(plan_of(loud.report).result.limited);
  EXPECT_LE(peak_db(loud.y), 20.0 * std::log10(32767.0 / 32768.0) + 1e-5);
}

// Every chunking gives the same bytes (the gain comes from the whole signal).
TEST(Normalize, ChunkingIsInvisible) {
  test::TempDir dir;
  const std::vector<float> x = programme(2, 6 * kRate + 17, -28.0, 9);
  const std::string in = write(dir, "in.wav", 2, x);
  const Outcome a = run(dir, in, {normalize_stage(NormalizeMode::lufs, -23.0)}, 1048576);
  const Outcome b = run(dir, in, {normalize_stage(NormalizeMode::lufs, -23.0)}, 4099);
  const Outcome c = run(dir, in, {normalize_stage(NormalizeMode::lufs, -23.0)}, 17);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.y, c.y);
}

// Silence: no gated block, gain 0 dB, the signal unchanged, a warning.
TEST(Normalize, SilenceIsLeftAsItIsWithAWarning) {
  test::TempDir dir;
  std::vector<float> x(2 * 3 * kRate, 0.0f);
  x[1000] = 1e-6f; // far under the absolute gate
  const Outcome r =
      run(dir, write(dir, "in.wav", 2, x), {normalize_stage(NormalizeMode::lufs, -23.0)});
  EXPECT_FALSE(plan_of(r.report).result.measured_db.has_value());
  EXPECT_EQ(plan_of(r.report).linear, 1.0);
  EXPECT_EQ(r.y, x);
  EXPECT_TRUE(std::any_of(r.log.begin(), r.log.end(), [](const std::string& m) {
    return m.find("warning") != std::string::npos && m.find("silence") != std::string::npos;
  }));
}

// The config errors SPEC §13 names, with the file and line.
TEST(Normalize, BadKeysAreConfigErrorsWithTheLine) {
  const std::string head = "version: 1\nsource: {file: in.wav}\nstages:\n";
  const std::pair<std::string, std::string> cases[] = {
      {"  - {type: normalize, lufs: -23, loud: 1}\n", "loud"},
      {"  - {type: normalize, lufs: -23, peak_db: -1}\n", "exactly one"},
      {"  - {type: normalize, peak_db: 2}\n", "above full scale"},
      {"  - {type: normalize, lufs: 1}\n", "above full scale"},
      {"  - {type: normalize, rms_db: -20, true_peak_max_db: -1}\n", "true_peak_max_db"},
      {"  - {type: normalize}\n", "exactly one"},
  };
  for (const auto& [stage, words] : cases) {
    const std::optional<Error> e = test::pipeline_error(head + stage, "n.yaml");
    ASSERT_TRUE(e.has_value()) << stage;
    EXPECT_EQ(e->kind(), ErrorKind::config) << stage;
    const std::string m = e->what();
    EXPECT_NE(m.find("n.yaml:4"), std::string::npos) << m;
    EXPECT_NE(m.find(words), std::string::npos) << m;
  }
}

// A stream cannot be read twice; nor can live mode's blocks.
TEST(Normalize, StreamsAndLiveModeAreConfigErrors) {
  test::TempDir dir;
  const std::string in = write(dir, "in.wav", 2, programme(2, kRate, -20.0, 1));
  Config c;
  c.origin = "live.yaml";
  c.source.file = in;
  c.stages = {normalize_stage(NormalizeMode::peak, -1.0)};
  c.stages[0].line = 7;
  c.sink.file = dir.file("out.wav");
  c.execution.latency_ms = 5.0;
  try {
    (void)run_pipeline(c, RunOptions{});
    ADD_FAILURE() << "live mode ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("two passes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("live.yaml:7"), std::string::npos) << e.what();
  }
  // A pipe (a WAV whose header leaves its length open, as a stream's does).
  // The run refuses it after its header: the feeder's writes then fail
  // (EPIPE, not a SIGPIPE that would end the test).
  const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  c.execution.latency_ms.reset();
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  c.source.file = dir.file("in.fifo");
  {
    test::FifoFeeder feed(*c.source.file, std::move(bytes), 3, 5000);
    try {
      (void)run_pipeline(c, RunOptions{});
      ADD_FAILURE() << "a pipe ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::config);
      EXPECT_NE(std::string(e.what()).find("is a stream (a pipe)"), std::string::npos) << e.what();
    }
  } // the feeder's thread has ended
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.wav")));
  std::signal(SIGPIPE, old_pipe);
}

} // namespace
} // namespace sigstream
