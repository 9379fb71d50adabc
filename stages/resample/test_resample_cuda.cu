// QA of the resample stage on CUDA: the same bits as the CPU for common and
// odd ratios, chunkings and lanes, from a file and from a stream of unknown
// length; the kernel's shared-memory and global-memory paths alike (a long
// filter of a large ratio does not fit the block's shared memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using test::Ratio;
using test::resample_stage;

class ResampleCuda : public ::testing::TestWithParam<Ratio> {};

TEST_P(ResampleCuda, GivesTheCpusBits) {
  if (!test::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto [up, down] = GetParam();
  test::TempDir dir;
  Config c;
  c.origin = "test";
  // At most ~200k output frames (a large up makes a long output).
  const std::int64_t frames = std::min<std::int64_t>(48001, 200001LL * down / up);
  c.source.synth = test::noise_synth(frames, 3, 21);
  c.stages = {test::fir_stage("f", test::random_taps_unit_energy(63, 3), FirMode::same, FirMethod::direct),
              test::metrics_stage("m1"), resample_stage("r", up, down), test::metrics_stage("m2"),
              test::fir_stage("f2", test::random_taps_unit_energy(17, 4), FirMode::full, FirMethod::direct)};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}}) {
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = chunk;
    c.execution.streams = 3;
    c.sink.file = dir.file("cuda" + std::to_string(chunk) + ".wav");
    const RunReport gpu = run_pipeline(c, RunOptions{});
    EXPECT_EQ(test::slurp_bytes(dir.file("cpu.wav")), test::slurp_bytes(*c.sink.file)) << "chunk " << chunk;
    EXPECT_EQ(cpu.output_frames, gpu.output_frames);
    EXPECT_EQ(cpu.output_sample_rate, gpu.output_sample_rate);
    for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot) {
      EXPECT_EQ(cpu.metrics[slot].paired, gpu.metrics[slot].paired);
      std::int64_t rows = 0;  // the chunks' rows cover the block's frames once
      for (const auto& row : gpu.metrics[slot].chunks) rows += row.frames;
      EXPECT_EQ(rows, gpu.metrics[slot].totals[0].frames) << "slot " << slot << ", chunk " << chunk;
    }
    for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot)
      for (std::size_t ch = 0; ch < 3; ++ch) {
        EXPECT_EQ(cpu.metrics[slot].totals[ch].frames, gpu.metrics[slot].totals[ch].frames);
        EXPECT_NEAR(cpu.metrics[slot].totals[ch].energy, gpu.metrics[slot].totals[ch].energy,
                    1e-9 * cpu.metrics[slot].totals[ch].energy);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Ratios, ResampleCuda,
                         ::testing::Values(Ratio{147, 160}, Ratio{160, 150}, Ratio{1, 3}, Ratio{6, 1},
                                           Ratio{37, 125}, Ratio{101, 75}, Ratio{1, 200}, Ratio{1, 1200},
                                           Ratio{625, 1}),
                         [](const auto& info) {
                           return std::to_string(info.param.up) + "_" + std::to_string(info.param.down);
                         });

TEST(ResampleCudaStream, AStreamOfUnknownLengthGivesTheFilesBytes) {
  if (!test::have_device()) GTEST_SKIP() << "no CUDA device";
  test::StreamCase c;
  c.name = "resample";
  c.stages = {resample_stage("r", 147, 160), test::metrics_stage("m"),
              test::fir_stage("f", test::random_taps_unit_energy(9, 6), FirMode::same, FirMethod::direct)};
  c.frames = 30011;
  c.channels = 2;
  c.chunk_frames = 997;
  c.max_write = 613;
  const auto [file, stream] = test::file_and_stream_outputs(c, BackendKind::cuda, 78);
  EXPECT_EQ(file, stream);
}

}  // namespace
}  // namespace sigstream
