// QA of the per-channel FIR on CUDA (SPEC §11): direct gives the CPU's bits
// over chunkings and lanes, FFT (cuFFT or the fused kernel) its values
// within SPEC §3's tolerance, and live mode with --backend cuda (its FIR
// runs on the CPU, one response per channel) the file path's bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/fir/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

StageSpec per_channel_fir(FirMode mode, FirMethod method) {
  StageSpec s;
  s.type = kFirType;
  s.name = "f";
  s.as<FirSpec>().channel_taps = {test::random_taps_unit_energy(255, 1),
                                  test::random_taps_unit_energy(31, 2),
                                  test::random_taps_unit_energy(1023, 3)};
  s.as<FirSpec>().mode = mode;
  s.as<FirSpec>().method = method;
  return s;
}

TEST(FirChannelsCuda, DirectGivesTheCpusBitsAndFftItsValues) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  for (const FirMethod method : {FirMethod::direct, FirMethod::fft}) {
    test::TempDir dir;
    Config c;
    c.origin = "test";
    c.source.synth = test::noise_synth(200003, 3, 5);
    c.stages = {per_channel_fir(FirMode::same, method), test::metrics_stage("m")};
    c.sink.format = SampleFormat::float32;
    c.execution.backend = BackendKind::cpu;
    c.sink.file = dir.file("cpu.wav");
    run_pipeline(c, RunOptions{});
    const test::Audio cpu = test::read_audio(*c.sink.file);
    for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{9001}}) {
      c.execution.backend = BackendKind::cuda;
      c.execution.chunk_frames = chunk;
      c.execution.streams = 3;
      c.sink.file = dir.file("cuda" + std::to_string(chunk) + ".wav");
      const RunReport r = run_pipeline(c, RunOptions{});
      const test::Audio gpu = test::read_audio(*c.sink.file);
      ASSERT_EQ(gpu.frames, cpu.frames);
      if (method == FirMethod::direct) {
        EXPECT_EQ(gpu.samples, cpu.samples) << "chunk " << chunk;
      } else {
        const std::vector<double> want(cpu.samples.begin(), cpu.samples.end());
        EXPECT_LT(
            test::rel_l2(want.data(), gpu.samples.data(), static_cast<std::int64_t>(want.size())),
            1e-5)
            << "chunk " << chunk;
      }
      EXPECT_EQ(r.stages[0].as<FirPlan>().method, method);
    }
  }
}

TEST(FirChannelsCuda, LiveModeGivesTheFilesBytes) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(20011, 3, 7);
  c.stages = {per_channel_fir(FirMode::causal, FirMethod::direct)};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cuda;
  c.sink.file = dir.file("file.wav");
  run_pipeline(c, RunOptions{});
  c.execution.latency_ms = 2.0;
  c.sink.file = dir.file("live.wav");
  run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::slurp_bytes(dir.file("file.wav")), test::slurp_bytes(dir.file("live.wav")));
}

} // namespace
} // namespace sigstream
