// QA of the resample stage on CUDA: the same bits as the CPU for common and
// odd ratios, chunkings and lanes, from a file and from a stream of unknown
// length; the kernel's shared-memory and global-memory paths alike (a long
// filter of a large ratio does not fit the block's shared memory). And the
// kernel alone against the CPU kernel: every launch path (class tiles,
// blocked, one output at a time), outputs that start past frame 0, lengths
// that leave partial blocks, planes with strides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "kernels/cpu/resample.hpp"
#include "kernels/cuda/resample.cuh"
#include "kernels/cuda/resources.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/resample/resample.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using test::Ratio;
using test::resample_stage;

class ResampleCuda : public ::testing::TestWithParam<Ratio> {};

TEST_P(ResampleCuda, GivesTheCpusBits) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const auto [up, down] = GetParam();
  test::TempDir dir;
  Config c;
  c.origin = "test";
  // At most ~200k output frames (a large up makes a long output).
  const std::int64_t frames = std::min<std::int64_t>(48001, 200001LL * down / up);
  c.source.synth = test::noise_synth(frames, 3, 21);
  c.stages = {
      test::fir_stage("f", test::random_taps_unit_energy(63, 3), FirMode::same, FirMethod::direct),
      test::metrics_stage("m1"), resample_stage("r", up, down), test::metrics_stage("m2"),
      test::fir_stage("f2", test::random_taps_unit_energy(17, 4), FirMode::full,
                      FirMethod::direct)};
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
    EXPECT_EQ(test::slurp_bytes(dir.file("cpu.wav")), test::slurp_bytes(*c.sink.file))
        << "chunk " << chunk;
    EXPECT_EQ(cpu.output_frames, gpu.output_frames);
    EXPECT_EQ(cpu.output_sample_rate, gpu.output_sample_rate);
    for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot) {
      EXPECT_EQ(cpu.metrics[slot].paired, gpu.metrics[slot].paired);
      std::int64_t rows = 0; // the chunks' rows cover the block's frames once
      for (const auto& row : gpu.metrics[slot].chunks)
        rows += row.frames;
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
                         ::testing::Values(Ratio{147, 160}, Ratio{160, 150}, Ratio{1, 3},
                                           Ratio{6, 1}, Ratio{37, 125}, Ratio{101, 75},
                                           Ratio{1, 200}, Ratio{1, 1200}, Ratio{625, 1}),
                         [](const auto& info) {
                           return std::to_string(info.param.up) + "_" +
                                  std::to_string(info.param.down);
                         });

class ResampleCudaKernel : public ::testing::TestWithParam<Ratio> {};

TEST_P(ResampleCudaKernel, GivesTheCpuKernelsBits) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  namespace kc = kernels::cuda;
  const auto [up, down] = GetParam();
  WindowSpec window;
  window.kind = WindowKind::kaiser;
  window.beta = 5.0;
  const std::vector<double> h = resample_filter(up, down, 10, window);
  const auto k = static_cast<std::int64_t>(h.size());
  const std::int64_t delay = (k - 1) / 2;
  const auto p = kernels::cpu::make_polyphase(h, up, down, delay);
  std::vector<float> taps(h.begin(), h.end());
  kc::DeviceBuffer<float> d_taps(taps.size());
  ASSERT_EQ(cudaMemcpy(d_taps.data(), taps.data(), d_taps.bytes(), cudaMemcpyHostToDevice),
            cudaSuccess);
  kc::DevicePolyphase f;
  f.d_taps = d_taps.data();
  f.taps = static_cast<int>(k);
  f.up = up;
  f.down = down;
  f.delay = delay;
  f.lookback = k - 1 - delay;
  std::mt19937 rng(static_cast<unsigned>(up * 7919 + down));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int kChannels = 3;
  for (const std::int64_t y_first : {std::int64_t{0}, std::int64_t{12345}}) {
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{63}, std::int64_t{1001},
                                 std::int64_t{256} * up + 37, std::int64_t{777} * up + 5}) {
      SCOPED_TRACE("y_first " + std::to_string(y_first) + " n " + std::to_string(n));
      // The input the outputs read, from 5 frames before the oldest; planes
      // 11 floats apart beyond their length.
      const std::int64_t x_first = kernels::cpu::ceil_div(y_first * down - f.lookback, up) - 5;
      const std::int64_t x_frames =
          kernels::cpu::floor_div((y_first + n - 1) * down + delay, up) + 1 - x_first;
      const std::int64_t x_stride = x_frames + 11, y_stride = n + 11;
      std::vector<float> x(static_cast<std::size_t>(x_stride * kChannels));
      for (float& v : x)
        v = u(rng);
      std::vector<float> want(static_cast<std::size_t>(y_stride * kChannels), -3.0f);
      for (int c = 0; c < kChannels; ++c)
        kernels::cpu::resample_direct(x.data() + c * x_stride, x_first, want.data() + c * y_stride,
                                      y_first, n, p);
      kc::DeviceBuffer<float> d_x(x.size()), d_y(want.size());
      ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
      std::vector<float> init(want.size(), -3.0f);
      ASSERT_EQ(cudaMemcpy(d_y.data(), init.data(), d_y.bytes(), cudaMemcpyHostToDevice),
                cudaSuccess);
      kc::resample(d_x.data(), x_first, x_stride, d_y.data(), y_first, y_stride, n, kChannels, f,
                   nullptr);
      std::vector<float> got(want.size());
      ASSERT_EQ(cudaMemcpy(got.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost),
                cudaSuccess);
      std::int64_t wrong = 0, first_wrong = -1;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
          if (first_wrong < 0)
            first_wrong = static_cast<std::int64_t>(i);
          ++wrong;
        }
      EXPECT_EQ(wrong, 0) << "first at " << first_wrong
                          << " (the gaps between planes must stay -3)";
    }
  }
}

// 160/147 .. 1000/999 and 17/3, 33/1: class tiles (up >= 16; 17 and 33 leave
// most of a block's warps without a class); 37/125: its tile does not fit
// (blocked); 6/1, 1/3: blocked; 1/1200, 3/4001: one output at a time.
INSTANTIATE_TEST_SUITE_P(
    Paths, ResampleCudaKernel,
    ::testing::Values(Ratio{160, 147}, Ratio{147, 160}, Ratio{16, 15}, Ratio{101, 75},
                      Ratio{625, 1}, Ratio{37, 16}, Ratio{1000, 999}, Ratio{17, 3}, Ratio{33, 1},
                      Ratio{37, 125}, Ratio{6, 1}, Ratio{1, 3}, Ratio{1, 1200}, Ratio{3, 4001}),
    [](const auto& info) {
      return std::to_string(info.param.up) + "_" + std::to_string(info.param.down);
    });

TEST(ResampleCudaStream, AStreamOfUnknownLengthGivesTheFilesBytes) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::StreamCase c;
  c.name = "resample";
  c.stages = {
      resample_stage("r", 147, 160), test::metrics_stage("m"),
      test::fir_stage("f", test::random_taps_unit_energy(9, 6), FirMode::same, FirMethod::direct)};
  c.frames = 30011;
  c.channels = 2;
  c.chunk_frames = 997;
  c.max_write = 613;
  const auto [file, stream] = test::file_and_stream_outputs(c, BackendKind::cuda, 78);
  EXPECT_EQ(file, stream);
}

} // namespace
} // namespace sigstream
