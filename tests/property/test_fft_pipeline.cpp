// The FFT method through the whole CPU pipeline: every mode and a cascade
// against float64 (SPEC §3), chunk-size invariance within 1e-6 (SPEC §3:
// "within 1e-6 relative for the FFT method"), thread-count invariance
// (bitwise: a chunk's arithmetic does not depend on the thread), and the
// auto rule (direct for short filters, fft for long ones) as the plan, the
// run report and the statistics JSON show it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/cpu/fir_fft.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/plan.hpp"
#include "stage_builders.hpp"
#include "stages/fir/spec.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using test::gain_stage;
using test::noise_synth;
using test::reference_chain;
using test::source_planes;

// The FFT method unless told otherwise: that is what these tests are about.
StageSpec fir_stage(const std::string& name, std::vector<double> taps, FirMode mode,
                    FirMethod method = FirMethod::fft) {
  return test::fir_stage(name, std::move(taps), mode, method);
}

struct Outcome {
  RunReport report;
  test::Audio audio;
};

Outcome run_to(const test::TempDir& dir, Config c, const std::string& name, std::int64_t chunk,
               int threads, bool verify = false) {
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = chunk;
  c.execution.threads = threads;
  c.sink.file = dir.file(name + ".wav");
  c.sink.format = SampleFormat::float32;
  RunOptions o;
  o.verify = verify;
  Outcome r;
  r.report = run_pipeline(c, o);
  r.audio = test::read_audio(*c.sink.file);
  return r;
}

std::vector<double> channel_of(const test::Audio& a, int c) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.frames; ++i)
    v.push_back(a.samples[static_cast<std::size_t>(i * a.channels + c)]);
  return v;
}

// Checks `base` against float64 and then every chunking against `base`.
void check_against_reference_and_chunkings(const test::TempDir& dir, const Config& c,
                                           const Outcome& base, std::int64_t expect_frames,
                                           std::initializer_list<std::int64_t> chunks) {
  ASSERT_EQ(base.audio.frames, expect_frames);
  const auto src = source_planes(*c.source.synth);
  for (int ch = 0; ch < base.audio.channels; ++ch) {
    const auto ref = reference_chain(src[static_cast<std::size_t>(ch)], c.stages);
    EXPECT_LE(test::rel_l2(ref, channel_of(base.audio, ch)), 1e-6) << "channel " << ch;
  }
  for (std::int64_t chunk : chunks) {
    const Outcome r = run_to(dir, c, "c" + std::to_string(chunk), chunk, 2);
    ASSERT_EQ(r.audio.frames, base.audio.frames) << "chunk " << chunk;
    for (int ch = 0; ch < base.audio.channels; ++ch)
      EXPECT_LE(test::rel_l2(channel_of(base.audio, ch), channel_of(r.audio, ch)), 1e-6)
          << "chunk " << chunk << " channel " << ch;
  }
}

class FftModeTest : public ::testing::TestWithParam<FirMode> {};

TEST_P(FftModeTest, MatchesFloat64AndIsChunkInvariant) {
  const FirMode mode = GetParam();
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(6007, 3, 11);
  c.stages = {fir_stage("long", test::random_taps(4095, 21), mode)};
  const Outcome base = run_to(dir, c, "base", 1 << 20, 1, /*verify=*/true);
  ASSERT_EQ(base.report.stages.size(), 1u);
  EXPECT_EQ(base.report.stages[0].as<FirPlan>().method, FirMethod::fft);
  EXPECT_TRUE(base.report.verification.ran);
  EXPECT_TRUE(base.report.verification.passed);
  EXPECT_LE(base.report.verification.rel_l2_error, 1e-6);
  check_against_reference_and_chunkings(dir, c, base, mode == FirMode::full ? 6007 + 4094 : 6007,
                                        {1, 997, 4096});
  // Threads only change which worker runs a chunk, not its arithmetic.
  const Outcome t2 = run_to(dir, c, "t2", 997, 2), t1 = run_to(dir, c, "t1", 997, 1);
  EXPECT_TRUE(t1.audio.samples == t2.audio.samples);
}

INSTANTIATE_TEST_SUITE_P(AllModes, FftModeTest,
                         ::testing::Values(FirMode::causal, FirMode::same, FirMode::full));

TEST(FftPipeline, CascadeOfModesMatchesFloat64ForEveryChunking) {
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(5003, 2, 12);
  c.stages = {fir_stage("a", test::random_taps(1023, 31), FirMode::same),
              gain_stage("g", 0.7),
              fir_stage("b", test::random_taps(600, 32), FirMode::full),
              fir_stage("c", test::random_taps(31, 33), FirMode::causal, FirMethod::direct),
              fir_stage("d", test::random_taps(2048, 34), FirMode::same),
              fir_stage("e", test::random_taps(3, 35), FirMode::full)};
  const Outcome base = run_to(dir, c, "base", 1 << 20, 2, /*verify=*/true);
  EXPECT_TRUE(base.report.verification.passed);
  check_against_reference_and_chunkings(dir, c, base, 5003 + 599 + 2, {1, 997, 4096});
}

TEST(FftPipeline, EveryTapCountOnALongerSignal) {
  // Several chunks of many FFT blocks each, odd channel count, K at the edges.
  test::TempDir dir;
  for (int k : {1, 2, 3, 4096, 16383}) {
    Config c;
    c.source.synth = noise_synth(70001, 3, static_cast<std::uint64_t>(k));
    c.stages = {
        fir_stage("f", test::random_taps(k, static_cast<std::uint32_t>(k)), FirMode::causal)};
    const Outcome base = run_to(dir, c, "k" + std::to_string(k), 1 << 20, 2, /*verify=*/true);
    EXPECT_TRUE(base.report.verification.passed) << "K = " << k;
    EXPECT_LE(base.report.verification.rel_l2_error, 1e-6) << "K = " << k;
    const Outcome chunked = run_to(dir, c, "k" + std::to_string(k) + "c", 12345, 2);
    for (int ch = 0; ch < 3; ++ch)
      EXPECT_LE(test::rel_l2(channel_of(base.audio, ch), channel_of(chunked.audio, ch)), 1e-6)
          << "K = " << k;
  }
}

// Plans a one-stage fir of K taps and resolves its method for `backend`.
FirMethod resolved(int k, FirMethod requested, const std::string& backend,
                   std::int64_t chunk = 1 << 20, std::int64_t frames = 480000,
                   CudaFftEngine engine = CudaFftEngine::cufft) {
  Config c;
  c.source.synth = noise_synth(frames, 1, 1);
  c.stages = {fir_stage("f", test::random_taps(k, 1), FirMode::causal, requested)};
  c.execution.chunk_frames = chunk;
  SourceInfo si;
  si.sample_rate = 48000;
  si.channels = 1;
  si.frames = frames;
  Plan plan = make_plan(c, si, 0);
  resolve_methods(plan, backend, engine);
  return plan.stages.at(0).as<FirPlan>().method;
}

TEST(FftPipeline, AutoRulePicksByTapsAndChunk) {
  // CPU: the FFT where the cost model says it is >= 20% cheaper (from ~80 taps).
  EXPECT_EQ(resolved(31, FirMethod::automatic, "cpu"), FirMethod::direct);
  EXPECT_EQ(resolved(255, FirMethod::automatic, "cpu"),
            kernels::cpu::FirFft::available() ? FirMethod::fft : FirMethod::direct);
  if (kernels::cpu::FirFft::available()) {
    EXPECT_EQ(resolved(4095, FirMethod::automatic, "cpu"), FirMethod::fft);
    EXPECT_EQ(resolved(1023, FirMethod::automatic, "cpu"), FirMethod::fft);
  }
  // Chunks (or a whole signal) too short for a block to pay off stay direct.
  EXPECT_EQ(resolved(4095, FirMethod::automatic, "cpu", 1), FirMethod::direct);
  EXPECT_EQ(resolved(600, FirMethod::automatic, "cpu", 1 << 20, 64), FirMethod::direct);
  // Asked for is what runs.
  EXPECT_EQ(resolved(31, FirMethod::fft, "cpu"), FirMethod::fft);
  EXPECT_EQ(resolved(4095, FirMethod::direct, "cpu"), FirMethod::direct);
  EXPECT_EQ(resolved(4095, FirMethod::fft, "cpu", 1), FirMethod::fft);
  EXPECT_EQ(resolved(31, FirMethod::automatic, "cuda"), FirMethod::direct);
  // cuFFT: FFT when K >= 384 + 2^25 / (frames per call x channels).
  EXPECT_EQ(resolved(255, FirMethod::automatic, "cuda"), FirMethod::direct);
  EXPECT_EQ(resolved(511, FirMethod::automatic, "cuda"),
            FirMethod::fft); // 1M frames: crossover ~416
  EXPECT_EQ(resolved(1023, FirMethod::automatic, "cuda", 16384, 1 << 20),
            FirMethod::direct); // 16k: ~2432
  // The fused FFT kernel: FFT when K >= 96 + 2^22 / (frames per call x channels).
  const auto fused = [](int k, std::int64_t chunk) {
    return resolved(k, FirMethod::automatic, "cuda", chunk, 1 << 20, CudaFftEngine::fused);
  };
  EXPECT_EQ(fused(63, 1 << 20), FirMethod::direct); // 1M frames: crossover ~100
  EXPECT_EQ(fused(127, 1 << 20), FirMethod::fft);
  EXPECT_EQ(fused(255, 16384), FirMethod::direct); // 16k: ~352
  EXPECT_EQ(fused(511, 16384), FirMethod::fft);
  EXPECT_EQ(fused(4095, 1000), FirMethod::direct); // shorter than a few filter lengths
  // Always from 4096 taps, unless the call is shorter than a few filter lengths.
  EXPECT_EQ(resolved(4095, FirMethod::automatic, "cuda", 16384, 1 << 20), FirMethod::fft);
  EXPECT_EQ(resolved(4095, FirMethod::automatic, "cuda"), FirMethod::fft);
  EXPECT_EQ(resolved(4095, FirMethod::automatic, "cuda", 1000), FirMethod::direct);
}

TEST(FftPipeline, StatsShowTheResolvedMethod) {
  if (!kernels::cpu::FirFft::available())
    GTEST_SKIP() << "built without a CPU FFT library";
  test::TempDir dir;
  Config c;
  c.source.synth = noise_synth(20000, 2, 5);
  c.stages = {fir_stage("short", test::random_taps(31, 1), FirMode::causal, FirMethod::automatic),
              fir_stage("long", test::random_taps(4095, 2), FirMode::same, FirMethod::automatic)};
  c.stats.json = dir.file("stats.json");
  const Outcome r = run_to(dir, c, "auto", 1 << 20, 2);
  ASSERT_EQ(r.report.stages.size(), 2u);
  EXPECT_EQ(r.report.stages[0].as<FirPlan>().method, FirMethod::direct);
  EXPECT_EQ(r.report.stages[1].as<FirPlan>().method, FirMethod::fft);
  std::ifstream in(*c.stats.json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("stages").size(), 2u);
  EXPECT_EQ(j.at("stages")[0].at("name"), "short");
  EXPECT_EQ(j.at("stages")[0].at("method"), "direct");
  EXPECT_EQ(j.at("stages")[1].at("name"), "long");
  EXPECT_EQ(j.at("stages")[1].at("method"), "fft");
}

} // namespace
} // namespace sigstream
