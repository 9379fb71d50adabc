// QA of the iir stage on CUDA: the cascade kernels against the CPU's
// sosfilt (random stable sections 1..17, so one group and several; lengths
// that leave partial segments and tiles; strided planes; a signal in pieces
// with its state carried; float and float64 planes), the step's restart,
// and whole runs (iir then a centred FIR whose halo reaches back into the
// iir's earlier frames, metrics and a spectrum) against the CPU backend
// over chunkings down to 1 frame, and a stream of unknown length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "kernels/cpu/iir.hpp"
#include "kernels/cuda/iir.cuh"
#include "kernels/cuda/resources.hpp"
#include "model/plan.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/iir/design.hpp"
#include "stages/iir/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

namespace kc = kernels::cuda;
using kernels::cpu::Biquad;

// Stable sections: poles at radius 0.3 .. 0.995, random zeros and gains.
std::vector<Biquad> random_sections(int count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> r(0.3, 0.995), th(0.0, 3.14159), b(-1.0, 1.0);
  std::vector<Biquad> s(static_cast<std::size_t>(count));
  for (Biquad& q : s) {
    const double rad = r(rng), ang = th(rng);
    q = {b(rng), b(rng), b(rng), -2.0 * rad * std::cos(ang), rad * rad};
  }
  return s;
}

std::vector<Biquad> butter(FilterKind kind, std::vector<double> cutoff, int order) {
  IirDesignSpec d;
  d.kind = kind;
  d.cutoff_hz = std::move(cutoff);
  d.order = order;
  return design_iir(d, 48000.0);
}

double rel_l2(const std::vector<float>& ref, const std::vector<float>& got) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += (static_cast<double>(got[i]) - ref[i]) * (static_cast<double>(got[i]) - ref[i]);
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct KernelCase {
  const char* name;
  std::vector<Biquad> sections;
};

class IirCudaKernel : public ::testing::TestWithParam<KernelCase> {};

// Channels planes at a stride, filtered in pieces (the state carried),
// against the CPU's sosfilt of the whole: outputs and final states.
TEST_P(IirCudaKernel, MatchesTheCpuInPieces) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const std::vector<Biquad>& s = GetParam().sections;
  const int ch = 3;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{31}, std::int64_t{4097},
                               std::int64_t{100003}, std::int64_t{(1 << 20) + 13}}) {
    const std::int64_t stride = n + 37;
    std::vector<float> x(static_cast<std::size_t>(ch * stride), 7.0f);
    for (int c = 0; c < ch; ++c) {
      const std::vector<float> r = test::random_samples(static_cast<std::size_t>(n),
                                                        static_cast<std::uint32_t>(n + c), 0.9f);
      std::copy(r.begin(), r.end(), x.begin() + c * stride);
    }
    // The CPU, channel by channel, in one pass.
    std::vector<float> want(x.size(), 0.0f);
    std::vector<std::vector<double>> want_state(ch, std::vector<double>(2 * s.size(), 0.0));
    for (int c = 0; c < ch; ++c)
      kernels::cpu::sosfilt(s, want_state[static_cast<std::size_t>(c)], x.data() + c * stride,
                            want.data() + c * stride, n);

    kc::IirCascade cascade(s);
    kc::Stream stream = kc::Stream::create();
    kc::DeviceBuffer<float> d_x(x.size()), d_y(x.size());
    kc::DeviceBuffer<double> d_state(static_cast<std::size_t>(ch * cascade.state_size()));
    kc::DeviceBuffer<double> d_work(cascade.workspace_doubles(ch, n));
    ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_y.data(), 0, d_y.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_state.data(), 0, d_state.bytes()), cudaSuccess);
    // Pieces of odd lengths: 1 frame, a tile and a bit, the rest.
    std::vector<std::int64_t> cuts = {0, std::min<std::int64_t>(1, n),
                                      std::min<std::int64_t>(4099, n), n};
    for (std::size_t p = 0; p + 1 < cuts.size(); ++p)
      cascade.run(d_x.data() + cuts[p], stride, d_y.data() + cuts[p], stride, ch,
                  cuts[p + 1] - cuts[p], d_state.data(), d_work.data(), stream.get());
    stream.synchronize();
    std::vector<float> got(x.size());
    std::vector<double> got_state(d_state.size());
    ASSERT_EQ(cudaMemcpy(got.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got_state.data(), d_state.data(), d_state.bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int c = 0; c < ch; ++c) {
      const std::vector<float> w(want.begin() + c * stride, want.begin() + c * stride + n);
      const std::vector<float> g(got.begin() + c * stride, got.begin() + c * stride + n);
      EXPECT_LE(rel_l2(w, g), 1e-6) << GetParam().name << " n " << n << " channel " << c;
      // Nothing written past the plane's frames.
      for (std::int64_t i = n; i < stride; ++i)
        ASSERT_EQ(got[static_cast<std::size_t>(c * stride + i)], 0.0f) << "n " << n;
      double scale = 1e-30;
      for (double v : want_state[static_cast<std::size_t>(c)])
        scale = std::max(scale, std::abs(v));
      for (std::size_t k = 0; k < want_state[0].size(); ++k)
        EXPECT_NEAR(got_state[static_cast<std::size_t>(c) * want_state[0].size() + k],
                    want_state[static_cast<std::size_t>(c)][k], 1e-9 * scale)
            << GetParam().name << " n " << n << " channel " << c << " state " << k;
    }
  }
}

// float64 planes (zero-phase's path) against the CPU's float64 sosfilt.
TEST_P(IirCudaKernel, Float64Planes) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const std::vector<Biquad>& s = GetParam().sections;
  const std::int64_t n = 50021;
  std::mt19937 rng(5);
  std::normal_distribution<double> nd;
  std::vector<double> x(static_cast<std::size_t>(n)), want(x.size());
  for (double& v : x)
    v = nd(rng);
  std::vector<double> z(2 * s.size(), 0.0);
  kernels::cpu::sosfilt(s, z, x.data(), want.data(), n);
  kc::IirCascade cascade(s);
  kc::Stream stream = kc::Stream::create();
  kc::DeviceBuffer<double> d_x(x.size()), d_state(z.size()),
      d_work(cascade.workspace_doubles(1, n));
  ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_state.data(), 0, d_state.bytes()), cudaSuccess);
  cascade.run(d_x.data(), n, d_x.data(), n, 1, n, d_state.data(), d_work.data(), stream.get());
  stream.synchronize();
  std::vector<double> got(x.size());
  ASSERT_EQ(cudaMemcpy(got.data(), d_x.data(), d_x.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_LE(test::rel_l2(want, got), 1e-11) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Sections, IirCudaKernel,
    ::testing::Values(KernelCase{"one", random_sections(1, 1)},
                      KernelCase{"four", random_sections(4, 2)},
                      KernelCase{"eight", random_sections(8, 3)},
                      KernelCase{"ten_two_groups", random_sections(10, 4)},
                      KernelCase{"seventeen_three_groups", random_sections(17, 5)},
                      KernelCase{"butter_highpass_80hz", butter(FilterKind::highpass, {80.0}, 4)},
                      KernelCase{"butter_bandpass_order4",
                                 butter(FilterKind::bandpass, {300.0, 3400.0}, 4)}),
    [](const auto& info) { return std::string(info.param.name); });

// Zero phase on the device against the CPU's sosfiltfilt (odd padding,
// both passes float64): planes at a stride, lengths just over the padding.
TEST_P(IirCudaKernel, FiltfiltMatchesTheCpu) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  const std::vector<Biquad>& s = GetParam().sections;
  kc::IirCascade cascade(s);
  const int ch = 2;
  for (const std::int64_t n : {cascade.pad() + 1, std::int64_t{70001}}) {
    const std::int64_t stride = n + 5;
    std::vector<float> x(static_cast<std::size_t>(ch * stride), 0.0f), want(x.size(), 0.0f);
    for (int c = 0; c < ch; ++c) {
      const std::vector<float> r =
          test::random_samples(static_cast<std::size_t>(n), static_cast<std::uint32_t>(c + 40));
      std::copy(r.begin(), r.end(), x.begin() + c * stride);
      kernels::cpu::sosfiltfilt(s, x.data() + c * stride, want.data() + c * stride, n);
    }
    kc::Stream stream = kc::Stream::create();
    kc::DeviceBuffer<float> d_x(x.size()), d_y(x.size());
    kc::DeviceBuffer<double> d_ext(cascade.ext_doubles(ch, n));
    kc::DeviceBuffer<double> d_state(static_cast<std::size_t>(ch * cascade.state_size()));
    kc::DeviceBuffer<double> d_work(cascade.workspace_doubles(ch, n + 2 * cascade.pad()));
    ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemset(d_y.data(), 0, d_y.bytes()), cudaSuccess);
    cascade.filtfilt(d_x.data(), stride, d_y.data(), stride, ch, n, d_ext.data(), d_state.data(),
                     d_work.data(), stream.get());
    stream.synchronize();
    std::vector<float> got(x.size());
    ASSERT_EQ(cudaMemcpy(got.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_LE(rel_l2(want, got), 1e-6) << GetParam().name << " n " << n;
  }
}

// A step kept for the next file (restart) starts from zero again.
TEST(IirCudaStep, RestartStartsFromZero) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  PlannedStage st;
  st.type = kIirType;
  st.name = "i";
  st.as<IirPlan>().sections = random_sections(3, 9);
  const std::int64_t n = 9001;
  const std::unique_ptr<CudaStageStep> step = make_cuda_step(st, CudaStepShape{n, 1});
  const std::vector<float> x = test::random_samples(static_cast<std::size_t>(n), 3, 0.9f);
  kc::Stream stream = kc::Stream::create();
  kc::DeviceBuffer<float> d_x(x.size()), d_y(x.size());
  ASSERT_EQ(cudaMemcpy(d_x.data(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<float> first(x.size()), second(x.size());
  step->run(d_x.data(), 0, n, d_y.data(), 0, n, n, 1, stream.get());
  stream.synchronize();
  ASSERT_EQ(cudaMemcpy(first.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  step->restart();
  step->run(d_x.data(), 0, n, d_y.data(), 0, n, n, 1, stream.get());
  stream.synchronize();
  ASSERT_EQ(cudaMemcpy(second.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(first, second);
  // Without a restart the second pass starts from the first's state: different.
  step->run(d_x.data(), n, n, d_y.data(), n, n, n, 1, stream.get());
  stream.synchronize();
  ASSERT_EQ(cudaMemcpy(second.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_NE(first, second);
}

StageSpec iir_stage(std::vector<Biquad> sections) {
  StageSpec s;
  s.type = kIirType;
  s.name = "i";
  for (const Biquad& q : sections)
    s.as<IirSpec>().sos.push_back({q.b0, q.b1, q.b2, 1.0, q.a1, q.a2});
  return s;
}

// The chain iir -> centred FIR -> metrics with a spectrum, CPU and CUDA,
// over chunkings: within 1e-6 of the CPU's samples; statistics close.
TEST(IirCudaRun, MatchesTheCpuOverChunkings) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(100003, 2, 23);
  c.stages = {
      iir_stage(butter(FilterKind::highpass, {80.0}, 4)),
      test::fir_stage("f", test::random_taps_unit_energy(33, 2), FirMode::same, FirMethod::direct),
      test::spectrum_stage("m", 256, 0.5, WindowKind::hann), iir_stage(random_sections(5, 11))};
  c.stages.back().name = "i2";
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  const test::Audio want = test::read_audio(dir.file("cpu.wav"));
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}, std::int64_t{17}}) {
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = chunk;
    c.execution.streams = 3;
    c.sink.file = dir.file("cuda" + std::to_string(chunk) + ".wav");
    const RunReport gpu = run_pipeline(c, RunOptions{});
    const test::Audio got = test::read_audio(*c.sink.file);
    ASSERT_EQ(got.samples.size(), want.samples.size()) << "chunk " << chunk;
    EXPECT_LE(rel_l2(want.samples, got.samples), 1e-6) << "chunk " << chunk;
    ASSERT_EQ(cpu.metrics.size(), gpu.metrics.size());
    for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot)
      for (std::size_t ch = 0; ch < cpu.metrics[slot].totals.size(); ++ch)
        EXPECT_NEAR(cpu.metrics[slot].totals[ch].energy, gpu.metrics[slot].totals[ch].energy,
                    1e-6 * cpu.metrics[slot].totals[ch].energy)
            << "chunk " << chunk << " slot " << slot;
  }
}

// Chunks of 1 frame (each call one frame, the halo after it from the kept
// frames) and a stream of unknown length through a FIFO: the CPU's samples
// within 1e-6.
TEST(IirCudaRun, OneFrameChunksAndAStream) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2,
                    test::random_samples(2 * 3001, 77, 0.9f));
  Config c;
  c.origin = "test";
  c.source.file = in;
  c.stages = {
      iir_stage(random_sections(3, 13)),
      test::fir_stage("f", test::random_taps_unit_energy(9, 6), FirMode::same, FirMethod::direct)};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  run_pipeline(c, RunOptions{});
  const test::Audio want = test::read_audio(dir.file("cpu.wav"));
  c.execution.backend = BackendKind::cuda;
  c.execution.chunk_frames = 1;
  c.sink.file = dir.file("one.wav");
  run_pipeline(c, RunOptions{});
  EXPECT_LE(rel_l2(want.samples, test::read_audio(*c.sink.file).samples), 1e-6);
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  {
    test::FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), 5, 700);
    c.source.file = dir.file("in.fifo");
    c.execution.chunk_frames = 499;
    c.sink.file = dir.file("stream.wav");
    run_pipeline(c, RunOptions{});
  }
  const test::Audio got = test::read_audio(*c.sink.file);
  ASSERT_EQ(got.samples.size(), want.samples.size());
  EXPECT_LE(rel_l2(want.samples, got.samples), 1e-6);
}

// zero_phase through whole runs: CUDA within 1e-6 of the CPU whatever
// chunk_frames says (the stage makes the run one chunk).
TEST(IirCudaRun, ZeroPhaseMatchesTheCpu) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(90001, 2, 29);
  c.stages = {
      iir_stage(butter(FilterKind::bandpass, {300.0, 3400.0}, 4)),
      test::fir_stage("f", test::random_taps_unit_energy(31, 4), FirMode::same, FirMethod::direct)};
  c.stages.front().as<IirSpec>().zero_phase = true;
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  run_pipeline(c, RunOptions{});
  const test::Audio want = test::read_audio(dir.file("cpu.wav"));
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}}) {
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = chunk;
    c.sink.file = dir.file("cuda" + std::to_string(chunk) + ".wav");
    run_pipeline(c, RunOptions{});
    const test::Audio got = test::read_audio(*c.sink.file);
    ASSERT_EQ(got.samples.size(), want.samples.size());
    EXPECT_LE(rel_l2(want.samples, got.samples), 1e-6) << "chunk " << chunk;
  }
}

} // namespace
} // namespace sigstream
