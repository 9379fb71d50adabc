// QA of the mix stage on CUDA: the CPU's bytes and metrics for downs, ups,
// one channel, a mix wider than the kernel's registers and select, over
// chunkings and lanes, from a file and from a stream of unknown length; and
// the kernels alone against the CPU kernel, on planes with strides and
// lengths that leave partial blocks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "kernels/cpu/mix.hpp"
#include "kernels/cuda/mix.cuh"
#include "kernels/cuda/resources.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/mix/spec.hpp"
#include "stages/mix/test_support.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

struct Case {
  const char* name;
  int in;
  std::vector<std::vector<double>> matrix; // empty: select
  std::vector<int> select;
};

using test::random_matrix;

StageSpec mix_stage(const Case& k) {
  StageSpec s;
  s.type = kMixType;
  s.name = "mx";
  s.as<MixSpec>().matrix = k.matrix;
  s.as<MixSpec>().select = k.select;
  return s;
}

class MixCuda : public ::testing::TestWithParam<Case> {};

TEST_P(MixCuda, GivesTheCpusBits) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const Case& k = GetParam();
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(100003, k.in, 17);
  c.stages = {
      test::metrics_stage("m0"), mix_stage(k), test::metrics_stage("m1"),
      test::fir_stage("f", test::random_taps_unit_energy(33, 2), FirMode::same, FirMethod::direct)};
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
    ASSERT_EQ(cpu.metrics.size(), gpu.metrics.size());
    for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot) {
      ASSERT_EQ(cpu.metrics[slot].totals.size(), gpu.metrics[slot].totals.size());
      EXPECT_EQ(cpu.metrics[slot].paired, gpu.metrics[slot].paired);
      for (std::size_t ch = 0; ch < cpu.metrics[slot].totals.size(); ++ch) {
        EXPECT_EQ(cpu.metrics[slot].totals[ch].frames, gpu.metrics[slot].totals[ch].frames);
        EXPECT_NEAR(cpu.metrics[slot].totals[ch].energy, gpu.metrics[slot].totals[ch].energy,
                    1e-9 * cpu.metrics[slot].totals[ch].energy);
        EXPECT_EQ(cpu.metrics[slot].totals[ch].peak, gpu.metrics[slot].totals[ch].peak);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MixCuda,
                         ::testing::Values(Case{"down_6_2", 6, random_matrix(2, 6, 1), {}},
                                           Case{"up_2_5", 2, random_matrix(5, 2, 2), {}},
                                           Case{"one", 1, random_matrix(1, 1, 3), {}},
                                           Case{"wide_19_3", 19, random_matrix(3, 19, 4), {}},
                                           Case{"itu_5_1_stereo",
                                                6,
                                                {{1, 0, 0.7071068, 0, 0.7071068, 0},
                                                 {0, 1, 0.7071068, 0, 0, 0.7071068}},
                                                {}},
                                           Case{"select", 3, {}, {2, 0, 2, 1}}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MixCudaStream, AStreamOfUnknownLengthGivesTheFilesBytes) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::StreamCase c;
  c.name = "mix";
  c.stages = {mix_stage(Case{"m", 2, random_matrix(3, 2, 9), {}}), test::metrics_stage("m1")};
  c.frames = 30011;
  c.channels = 2;
  c.chunk_frames = 997;
  c.max_write = 913;
  const auto [file, stream] = test::file_and_stream_outputs(c, BackendKind::cuda, 41);
  EXPECT_EQ(file, stream);
  EXPECT_GT(file.size(), 1000u);
}

TEST(MixCudaKernel, GivesTheCpuKernelsBits) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  namespace kc = kernels::cuda;
  // Each kernel path: few outputs (<= 8) narrow and wide, many outputs with the inputs in
  // registers (<= 16) and without.
  for (const auto [in, out] :
       {std::pair{6, 2}, std::pair{17, 4}, std::pair{2, 8}, std::pair{16, 16}, std::pair{17, 9}}) {
    const std::int64_t n = 70001, stride = n + 37;
    std::mt19937 rng(static_cast<unsigned>(in * 31 + out));
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(in * stride)),
        g(static_cast<std::size_t>(in * out));
    for (float& v : x)
      v = d(rng);
    for (float& v : g)
      v = d(rng);
    for (std::size_t i = 0; i < g.size(); i += 3)
      g[i] = 0.0f; // zero gains are left out by both kernels
    std::vector<const float*> xp;
    for (int j = 0; j < in; ++j)
      xp.push_back(x.data() + j * stride);
    std::vector<float> want(static_cast<std::size_t>(out * n));
    std::vector<float*> yp;
    for (int c = 0; c < out; ++c)
      yp.push_back(want.data() + c * n);
    kernels::cpu::mix(xp, g.data(), yp, n);

    kc::DeviceBuffer<float> d_x(x.size()), d_g(g.size()),
        d_y(static_cast<std::size_t>(out * stride));
    ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_g.data(), g.data(), d_g.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    kc::mix(d_x.data(), stride, in, d_g.data(), d_y.data(), stride, out, n, nullptr);
    std::vector<float> got(static_cast<std::size_t>(out * stride));
    ASSERT_EQ(cudaMemcpy(got.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int c = 0; c < out; ++c)
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(got[static_cast<std::size_t>(c * stride + i)],
                  want[static_cast<std::size_t>(c * n + i)])
            << in << " -> " << out << ", channel " << c << ", frame " << i;
  }
}

} // namespace
} // namespace sigstream
