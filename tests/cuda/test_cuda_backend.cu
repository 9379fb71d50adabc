// The CUDA backend against the CPU backend on whole (small) plans: the same
// output bytes, the same float output bits, the same clip counts, metrics to
// 1e-12; and chunk-size/stream-count invariance of the CUDA backend itself.
// Every test skips when no CUDA device is present.
// Over 600 lines (~620): every test here runs whole plans through the same
// helpers (make_source, plan_for, run, expect_same_output); splitting would
// move those into a header for two files of one subject.
#include <gtest/gtest.h>

#include "backend_jobs.hpp"
#include "cuda_test_support.hpp"
#include "stage_builders.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/memory_cache.hpp"
#include "pipeline/backends/backend.hpp"
#include "pipeline/backends/cuda_backend.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/resource_limits.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {
namespace {

using test::have_device;

StageSpec fir(const std::string& name, std::vector<double> taps, FirMode mode) {
  return test::fir_stage(name, std::move(taps), mode, FirMethod::direct);
}
const auto gain = &test::gain_stage;
const auto metrics = &test::metrics_stage;
const auto random_taps = &test::random_taps_unit_energy;

struct BackendCase {
  std::string name;
  SampleType in_type;
  int in_bits; // PCM bits of the source (0 for float)
  int channels;
  std::int64_t frames;
  int out_bits; // 0 = float sink
  std::int64_t chunk;
  int streams;
  std::vector<StageSpec> stages;
  bool nonfinite = false; // sprinkle NaN/Inf into a float source
  bool output_is_input = false;
};

std::ostream& operator<<(std::ostream& o, const BackendCase& c) {
  return o << c.name;
}

// The whole source, interleaved, in its own type.
HostBlock make_source(const BackendCase& c, std::uint32_t seed) {
  HostBlock b;
  b.type = c.in_type;
  b.channels = c.channels;
  b.frames = c.frames;
  b.capacity = c.frames;
  const std::size_t count = static_cast<std::size_t>(c.frames * c.channels);
  b.data = std::shared_ptr<std::byte>(new std::byte[count * sample_bytes(c.in_type) + 1](),
                                      std::default_delete<std::byte[]>());
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    switch (c.in_type) {
      case SampleType::i16:
        b.as<std::int16_t>()[i] =
            static_cast<std::int16_t>(static_cast<int>(rng() % 60001) - 30000);
        break;
      case SampleType::i32: // 24-bit samples, left-justified
        b.as<std::int32_t>()[i] = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(static_cast<int>(rng() % 16000001) - 8000000) << 8);
        break;
      case SampleType::f32:
        b.as<float>()[i] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        break;
    }
  }
  if (c.nonfinite && c.in_type == SampleType::f32 && count > 100) {
    b.as<float>()[count / 3] = std::numeric_limits<float>::quiet_NaN();
    b.as<float>()[count / 2] = std::numeric_limits<float>::infinity();
    b.as<float>()[count - 7] = -std::numeric_limits<float>::infinity();
  }
  return b;
}

Plan plan_for(const BackendCase& c, std::int64_t chunk) {
  Config config;
  config.stages = c.stages;
  config.execution.chunk_frames = chunk;
  config.execution.streams = c.streams;
  SourceInfo si;
  si.sample_rate = 48000.0;
  si.channels = c.channels;
  si.frames = c.frames;
  si.sample_type = c.in_type;
  si.bits = c.in_bits;
  return make_plan(config, si, c.out_bits);
}

struct RunResult {
  std::vector<ChunkResult> chunks;
  std::vector<std::byte> output; // every chunk's output bytes, in order
};

// Runs every chunk of `plan` through `backend` the way the pipeline does:
// blocks from make_block, [start - back, end + ahead) with zeros outside the
// source, at most depth() chunks in flight, results in order.
RunResult run(Backend& backend, const Plan& plan, const HostBlock& source, int streams) {
  BackendOptions o;
  o.threads = 4;
  o.streams = streams;
  o.keep_float_output = true;
  backend.prepare(plan, o);
  RunResult out;
  test::run_all_chunks(backend, plan, source, [&](ChunkResult r) {
    EXPECT_EQ(r.index, static_cast<std::int64_t>(out.chunks.size()));
    const auto* p = reinterpret_cast<const std::byte*>(r.output.data.get());
    EXPECT_EQ(r.output.frames, r.frames);
    out.output.insert(out.output.end(), p, p + r.output.bytes());
    out.chunks.push_back(std::move(r));
  });
  return out;
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
bool same_float(float a, float b) {
  return bits_of(a) == bits_of(b) || (std::isnan(a) && std::isnan(b));
}

bool near(double a, double b, double scale) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= 1e-12 * std::max({std::fabs(a), std::fabs(b), scale}) + 1e-300;
}

void expect_same_metrics(const ChannelMetrics& cpu, const ChannelMetrics& gpu,
                         const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(gpu.frames, cpu.frames);
  EXPECT_EQ(gpu.nonfinite, cpu.nonfinite);
  EXPECT_TRUE(gpu.peak == cpu.peak || (std::isnan(gpu.peak) && std::isnan(cpu.peak)))
      << gpu.peak << " vs " << cpu.peak;
  EXPECT_TRUE(near(gpu.energy, cpu.energy, 0)) << gpu.energy << " vs " << cpu.energy;
  EXPECT_TRUE(near(gpu.source_energy, cpu.source_energy, 0))
      << gpu.source_energy << " vs " << cpu.source_energy;
  // Sums that can cancel, against Cauchy-Schwarz bounds of their magnitude sums.
  const double sum_scale = std::sqrt(cpu.energy * static_cast<double>(cpu.frames));
  const double dot_scale = std::sqrt(cpu.energy * cpu.source_energy);
  EXPECT_TRUE(near(gpu.sum, cpu.sum, sum_scale)) << gpu.sum << " vs " << cpu.sum;
  EXPECT_TRUE(near(gpu.dot, cpu.dot, dot_scale)) << gpu.dot << " vs " << cpu.dot;
}

// The same chunks and the same output bytes (floats compared as bits, any NaN
// equal to any NaN) as the CPU reference run.
void expect_same_output(const RunResult& got, const RunResult& ref, const Plan& plan,
                        const char* who) {
  ASSERT_EQ(got.chunks.size(), ref.chunks.size());
  ASSERT_EQ(got.output.size(), ref.output.size());
  if (plan.output_type != SampleType::f32) {
    ASSERT_EQ(std::memcmp(got.output.data(), ref.output.data(), got.output.size()), 0);
    return;
  }
  for (std::size_t i = 0; i < got.output.size() / 4; ++i) {
    float a, b;
    std::memcpy(&a, got.output.data() + 4 * i, 4);
    std::memcpy(&b, ref.output.data() + 4 * i, 4);
    ASSERT_TRUE(same_float(a, b)) << "output sample " << i << ": " << who << " " << a << " cpu "
                                  << b;
  }
}

class CudaVsCpu : public ::testing::TestWithParam<BackendCase> {
protected:
  void SetUp() override {
    if (!have_device())
      GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(CudaVsCpu, SameOutputBitsMetricsAndClipCounts) {
  const BackendCase& c = GetParam();
  const HostBlock source = make_source(c, 1234);
  const Plan plan = plan_for(c, c.chunk);
  ASSERT_GT(plan.num_chunks, 0);

  auto cpu = make_cpu_backend();
  const RunResult ref = run(*cpu, plan, source, c.streams);
  auto gpu = make_cuda_backend();
  const RunResult got = run(*gpu, plan, source, c.streams);

  ASSERT_NO_FATAL_FAILURE(expect_same_output(got, ref, plan, "gpu"));
  if (c.output_is_input) {
    ASSERT_EQ(got.output.size(), source.bytes());
    EXPECT_EQ(std::memcmp(got.output.data(), source.data.get(), source.bytes()), 0);
  }

  std::int64_t clipped = 0;
  for (std::size_t k = 0; k < got.chunks.size(); ++k) {
    const ChunkResult& g = got.chunks[k];
    const ChunkResult& r = ref.chunks[k];
    const std::string where = "chunk " + std::to_string(k);
    EXPECT_EQ(g.start, r.start) << where;
    EXPECT_EQ(g.frames, r.frames) << where;
    EXPECT_EQ(g.clipped, r.clipped) << where;
    clipped += g.clipped;
    ASSERT_EQ(g.output_f32.size(), r.output_f32.size()) << where;
    for (std::size_t ch = 0; ch < g.output_f32.size(); ++ch) {
      ASSERT_EQ(g.output_f32[ch].size(), r.output_f32[ch].size());
      for (std::size_t i = 0; i < g.output_f32[ch].size(); ++i)
        ASSERT_TRUE(same_float(g.output_f32[ch][i], r.output_f32[ch][i]))
            << where << " channel " << ch << " frame " << i;
    }
    EXPECT_EQ(g.input.frames, r.input.frames) << where;
    ASSERT_EQ(g.metrics.size(), plan.metric_names.size());
    for (std::size_t slot = 0; slot < g.metrics.size(); ++slot)
      for (std::size_t ch = 0; ch < g.metrics[slot].size(); ++ch)
        expect_same_metrics(r.metrics[slot][ch], g.metrics[slot][ch],
                            where + " metrics '" + plan.metric_names[slot] + "' channel " +
                                std::to_string(ch));
  }
  RecordProperty("clipped", static_cast<int>(clipped));

  const auto ms = gpu->stage_ms();
  EXPECT_EQ(ms.size(), plan.stages.size());
  for (double v : ms)
    EXPECT_GE(v, 0.0);
}

// Chunking is invisible (SPEC §3): one chunk on one stream gives the same bits.
TEST_P(CudaVsCpu, ChunkSizeAndStreamsInvariant) {
  const BackendCase& c = GetParam();
  const HostBlock source = make_source(c, 99);
  const Plan plan_a = plan_for(c, c.chunk);
  const Plan plan_b = plan_for(c, std::max<std::int64_t>(1, c.frames + 100));
  const Plan plan_c = plan_for(c, std::max<std::int64_t>(1, c.chunk / 3 + 1));
  auto a = make_cuda_backend();
  auto b = make_cuda_backend();
  auto d = make_cuda_backend();
  const RunResult ra = run(*a, plan_a, source, c.streams);
  const RunResult rb = run(*b, plan_b, source, 1);
  const RunResult rc = run(*d, plan_c, source, 5);
  ASSERT_EQ(ra.output.size(), rb.output.size());
  ASSERT_EQ(ra.output.size(), rc.output.size());
  EXPECT_EQ(std::memcmp(ra.output.data(), rb.output.data(), ra.output.size()), 0);
  EXPECT_EQ(std::memcmp(ra.output.data(), rc.output.data(), ra.output.size()), 0);
}

// A backend kept from a longer file (a batch worker's) runs a shorter one
// with the bits of a backend made for it, and refuses a longer one.
TEST_P(CudaVsCpu, KeptBackendGivesAFreshOnesBits) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  const BackendCase& c = GetParam();
  BackendCase shorter = c;
  shorter.frames = std::max<std::int64_t>(1, c.frames / 2 + 3);
  const HostBlock long_source = make_source(c, 7);
  const HostBlock short_source = make_source(shorter, 8);
  const Plan long_plan = plan_for(c, c.chunk);
  const Plan short_plan = plan_for(shorter, c.chunk);
  ASSERT_TRUE(same_shape(long_plan, short_plan));
  auto kept = make_cuda_backend();
  static_cast<void>(run(*kept, long_plan, long_source, c.streams));
  BackendOptions o;
  o.threads = 4;
  o.streams = c.streams;
  o.keep_float_output = true;
  ASSERT_TRUE(kept->adopt(short_plan, o));
  RunResult again;
  test::run_all_chunks(*kept, short_plan, short_source, [&](ChunkResult r) {
    const auto* p = reinterpret_cast<const std::byte*>(r.output.data.get());
    again.output.insert(again.output.end(), p, p + r.output.bytes());
    again.chunks.push_back(std::move(r));
  });
  auto fresh = make_cuda_backend();
  const RunResult ref = run(*fresh, short_plan, short_source, c.streams);
  ASSERT_EQ(again.output.size(), ref.output.size());
  EXPECT_EQ(std::memcmp(again.output.data(), ref.output.data(), ref.output.size()), 0);
  ASSERT_EQ(again.chunks.size(), ref.chunks.size());
  for (std::size_t i = 0; i < ref.chunks.size(); ++i)
    for (std::size_t slot = 0; slot < ref.chunks[i].metrics.size(); ++slot)
      for (std::size_t ch = 0; ch < ref.chunks[i].metrics[slot].size(); ++ch)
        expect_same_metrics(ref.chunks[i].metrics[slot][ch], again.chunks[i].metrics[slot][ch],
                            "chunk " + std::to_string(i));
  // A longer file than it was made for, other options, another shape: no.
  BackendCase longer = c;
  longer.frames = c.frames * 2 + 5;
  if (plan_for(longer, c.chunk).max_window.front() > long_plan.max_window.front())
    EXPECT_FALSE(kept->adopt(plan_for(longer, c.chunk), o));
  BackendOptions other = o;
  other.streams = c.streams + 1;
  EXPECT_FALSE(kept->adopt(short_plan, other));
  BackendCase wider = shorter;
  wider.channels = c.channels + 1;
  EXPECT_FALSE(kept->adopt(plan_for(wider, c.chunk), o));
}

// The FFT method: a kept lane serves a shorter file only where a lane made
// for it would take the same FFT length (the length follows the longest call).
TEST(CudaBackend, KeptFftLanesServeOnlyTheSameFftLength) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  BackendCase c{
      "fft",
      SampleType::i16,
      16,
      2,
      300007,
      16,
      65536,
      2,
      {test::fir_stage("lp", random_taps(255, 11), FirMode::causal, FirMethod::fft), metrics("m")}};
  // make_plan leaves the method to the backend: explicit fft here.
  auto fft_plan = [&](const BackendCase& bc) {
    Plan p = plan_for(bc, c.chunk);
    resolve_methods(p, "cuda");
    EXPECT_EQ(p.stages[0].as<FirPlan>().method, FirMethod::fft);
    return p;
  };
  const Plan long_plan = fft_plan(c);
  const auto long_layout =
      kernels::cuda::FftFir::layout_for(255, long_plan.max_window[1], c.channels);
  auto kept = make_cuda_backend();
  static_cast<void>(run(*kept, long_plan, make_source(c, 1), c.streams));
  BackendOptions o;
  o.threads = 4;
  o.streams = c.streams;
  o.keep_float_output = true;
  for (const std::int64_t frames :
       {std::int64_t{100003}, std::int64_t{70001}, std::int64_t{1001}}) {
    BackendCase s = c;
    s.frames = frames;
    const Plan plan = fft_plan(s);
    const HostBlock source = make_source(s, static_cast<std::uint32_t>(frames));
    auto fresh = make_cuda_backend();
    const RunResult ref = run(*fresh, plan, source, c.streams);
    // Refused exactly where a filter made for this file takes another layout.
    const bool same_layout =
        kernels::cuda::FftFir::layout_for(255, plan.max_window[1], c.channels) == long_layout;
    if (frames == 1001)
      EXPECT_FALSE(same_layout) << "1001 frames: a shorter FFT than 65536 frames'";
    if (!kept->adopt(plan, o)) {
      EXPECT_FALSE(same_layout) << "refused a plan of " << frames << " frames";
      continue;
    }
    EXPECT_TRUE(same_layout) << "adopted a plan of " << frames << " frames of another FFT layout";
    RunResult again;
    test::run_all_chunks(*kept, plan, source, [&](ChunkResult r) {
      const auto* p = reinterpret_cast<const std::byte*>(r.output.data.get());
      again.output.insert(again.output.end(), p, p + r.output.bytes());
    });
    ASSERT_EQ(again.output.size(), ref.output.size());
    EXPECT_EQ(std::memcmp(again.output.data(), ref.output.data(), ref.output.size()), 0) << frames;
  }
}

// Forwards every call to `inner`; subclasses hook the calls they watch.
class Forwarding : public Backend {
public:
  explicit Forwarding(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::string device_name() const override { return inner_->device_name(); }
  void prepare(const Plan& plan, const BackendOptions& o) override { inner_->prepare(plan, o); }
  int depth() const override { return inner_->depth(); }
  HostBlock make_block(SampleType t, int ch, std::int64_t n) override {
    return inner_->make_block(t, ch, n);
  }
  void submit(ChunkJob job) override { inner_->submit(std::move(job)); }
  ChunkResult retire() override { return inner_->retire(); }
  bool oldest_ready() const override { return inner_->oldest_ready(); }
  std::vector<double> stage_ms() const override { return inner_->stage_ms(); }

protected:
  std::unique_ptr<Backend> inner_;
};

// The hybrid backend (backend auto) hands over from the CPU to the GPU in the
// middle of a job: the bytes must be the CPU backend's, chunk results in
// order. The GPU's start is held until the CPU has taken a third of the
// chunks, and the CPU side then waits until the GPU is up, so both compute.
TEST_P(CudaVsCpu, HybridHandOverGivesTheSameBits) {
  const BackendCase& c = GetParam();
  const HostBlock source = make_source(c, 4321);
  const Plan plan = plan_for(c, c.chunk);
  if (plan.num_chunks < 3)
    GTEST_SKIP() << "needs three chunks or more";
  auto ref_backend = make_cpu_backend();
  const RunResult ref = run(*ref_backend, plan, source, c.streams);

  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool open = false, gpu_ready = false;
  };
  auto gate = std::make_shared<Gate>();
  struct SlowGpu : Forwarding {
    std::shared_ptr<Gate> g;
    SlowGpu(std::shared_ptr<Gate> gate) : Forwarding(make_cuda_backend()), g(std::move(gate)) {}
    void prepare(const Plan& p, const BackendOptions& o) override {
      {
        std::unique_lock lock(g->m);
        g->cv.wait(lock, [&] { return g->open; });
      }
      inner_->prepare(p, o);
      std::lock_guard lock(g->m);
      g->gpu_ready = true;
      g->cv.notify_all();
    }
  };
  struct OpensTheGate : Forwarding {
    std::shared_ptr<Gate> g;
    std::int64_t at, submitted = 0;
    OpensTheGate(std::shared_ptr<Gate> gate, std::int64_t at_chunk)
        : Forwarding(make_cpu_backend()), g(std::move(gate)), at(at_chunk) {}
    void submit(ChunkJob job) override {
      inner_->submit(std::move(job));
      if (++submitted != at)
        return;
      std::unique_lock lock(g->m);
      g->open = true;
      g->cv.notify_all();
      g->cv.wait(lock, [&] { return g->gpu_ready; });
      lock.unlock();
      // prepare() has returned; the hybrid's start thread finishes right after.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  const std::int64_t at = std::max<std::int64_t>(1, plan.num_chunks / 3);
  auto hybrid = make_hybrid_backend(
      std::make_unique<OpensTheGate>(gate, at), [] { return 1; },
      [gate]() -> std::unique_ptr<Backend> { return std::make_unique<SlowGpu>(gate); }, nullptr);
  const RunResult got = run(*hybrid, plan, source, c.streams);
  EXPECT_EQ(hybrid->name(), "cuda+cpu") << hybrid->summary();
  EXPECT_NE(hybrid->summary().find("the CPU computed " + std::to_string(at) + " of"),
            std::string::npos)
      << hybrid->summary();
  ASSERT_NO_FATAL_FAILURE(expect_same_output(got, ref, plan, "hybrid"));
  for (std::size_t k = 0; k < got.chunks.size(); ++k) {
    EXPECT_EQ(got.chunks[k].clipped, ref.chunks[k].clipped) << "chunk " << k;
    for (std::size_t slot = 0; slot < got.chunks[k].metrics.size(); ++slot)
      for (std::size_t ch = 0; ch < got.chunks[k].metrics[slot].size(); ++ch)
        expect_same_metrics(ref.chunks[k].metrics[slot][ch], got.chunks[k].metrics[slot][ch],
                            "hybrid chunk " + std::to_string(k));
  }
}

std::vector<BackendCase> cases() {
  std::vector<BackendCase> v;
  v.push_back({"causal31_i16_stereo",
               SampleType::i16,
               16,
               2,
               10007,
               16,
               1000,
               3,
               {fir("lp", random_taps(31, 1), FirMode::causal), metrics("after_lp")}});
  v.push_back({"same255_f32_mono_nonfinite",
               SampleType::f32,
               0,
               1,
               20011,
               0,
               4096,
               2,
               {fir("lp", random_taps(255, 2), FirMode::same), metrics("m")},
               true});
  v.push_back({"cascade_i32_3ch",
               SampleType::i32,
               24,
               3,
               9001,
               24,
               777,
               4,
               {fir("wide", random_taps(64, 3), FirMode::full), gain("g", 0.7), metrics("a"),
                fir("narrow", random_taps(7, 4), FirMode::same), metrics("b")}});
  v.push_back({"long_filter_tap_tiles",
               SampleType::f32,
               0,
               2,
               20000,
               32,
               5000,
               2,
               {fir("long", random_taps(3000, 5), FirMode::causal)}});
  v.push_back({"no_stages_identity", SampleType::i16, 16, 2, 5000, 16, 999, 1, {}, false, true});
  v.push_back({"unit_tap_identity",
               SampleType::i16,
               16,
               1,
               7777,
               16,
               1024,
               2,
               {fir("one", {1.0}, FirMode::causal)},
               false,
               true});
  v.push_back({"tiny_chunks_full",
               SampleType::f32,
               0,
               2,
               50,
               0,
               1,
               4,
               {fir("f", random_taps(5, 6), FirMode::full), metrics("m")}});
  v.push_back({"gain_clips_pcm8", SampleType::i16, 16, 2, 3000, 8, 512, 2, {gain("loud", 4.0)}});
  v.push_back({"same_even_and_odd_one_chunk",
               SampleType::f32,
               0,
               1,
               1000,
               0,
               1 << 20,
               2,
               {fir("even", random_taps(64, 7), FirMode::same),
                fir("odd", random_taps(65, 8), FirMode::same), metrics("m")}});
  v.push_back({"metrics_beyond_defined_frames",
               SampleType::f32,
               0,
               1,
               100,
               0,
               30,
               3,
               {metrics("pre"), fir("f", random_taps(40, 9), FirMode::full), metrics("post")}});
  v.push_back({"five_channels_pcm16_clipping",
               SampleType::i16,
               16,
               5,
               12345,
               16,
               4000,
               3,
               {fir("boost", random_taps(17, 10), FirMode::same), gain("g", 3.0), metrics("m")}});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Plans, CudaVsCpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BackendCase>& i) {
                           return i.param.name;
                         });

TEST(CudaBackend, DevicesAndDescription) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  const auto devices = cuda_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_FALSE(devices[0].name.empty());
  EXPECT_GT(devices[0].memory_bytes, 0u);
  EXPECT_GT(devices[0].multiprocessors, 0);
  BackendCase c{"d",
                SampleType::i16,
                16,
                2,
                1000,
                16,
                256,
                2,
                {fir("lp", random_taps(31, 1), FirMode::causal)}};
  const Plan plan = plan_for(c, c.chunk);
  auto b = make_cuda_backend();
  BackendOptions o;
  o.streams = 3;
  b->prepare(plan, o);
  EXPECT_EQ(b->name(), "cuda");
  EXPECT_EQ(b->depth(), 3);
  EXPECT_EQ(b->device_name(), devices[0].name);
  EXPECT_NE(b->describe().find("fir_direct"), std::string::npos) << b->describe();
}

TEST(CudaBackend, BadJobsAndMisuseAreErrors) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  BackendCase c{"e",
                SampleType::i16,
                16,
                2,
                1000,
                16,
                256,
                2,
                {fir("lp", random_taps(31, 1), FirMode::causal)}};
  const Plan plan = plan_for(c, c.chunk);
  auto b = make_cuda_backend();
  BackendOptions o;
  o.streams = 2;
  b->prepare(plan, o);
  EXPECT_THROW(static_cast<void>(b->retire()), Error);
  ChunkJob job = chunk_job(plan, 0);
  job.input = b->make_block(plan.input_type, plan.channels, plan.chunk_frames + plan.back);
  job.input.frames = job.frames; // the halo is missing
  try {
    b->submit(job);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("chunk 0"), std::string::npos) << e.what();
  }
  BackendOptions bad = o;
  bad.device = 1 << 20;
  auto b2 = make_cuda_backend();
  EXPECT_THROW(b2->prepare(plan, bad), Error);
}

// Holds all but `leave` bytes of the GPU's free memory until destroyed.
class GpuMemoryHog {
public:
  explicit GpuMemoryHog(std::size_t leave) {
    std::size_t free_b = 0, total_b = 0;
    EXPECT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    constexpr std::size_t kBlock = std::size_t{64} << 20;
    // Big blocks first, then 1 MiB ones to land within a MiB of the target.
    for (std::size_t block : {kBlock, std::size_t{1} << 20}) {
      while (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b > leave + block) {
        void* p = nullptr;
        if (cudaMalloc(&p, block) != cudaSuccess) {
          static_cast<void>(cudaGetLastError());
          break;
        }
        blocks_.push_back(p);
      }
    }
  }
  GpuMemoryHog(const GpuMemoryHog&) = delete;
  GpuMemoryHog& operator=(const GpuMemoryHog&) = delete;
  ~GpuMemoryHog() {
    for (void* p : blocks_)
      static_cast<void>(cudaFree(p));
  }
  [[nodiscard]] static std::int64_t free_now() {
    std::size_t free_b = 0, total_b = 0;
    static_cast<void>(cudaMemGetInfo(&free_b, &total_b));
    return static_cast<std::int64_t>(free_b);
  }

private:
  std::vector<void*> blocks_;
};

std::string prepare_error(const Plan& plan, int streams, ErrorKind expected) {
  auto b = make_cuda_backend();
  BackendOptions o;
  o.streams = streams;
  try {
    b->prepare(plan, o);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "prepare succeeded with " << GpuMemoryHog::free_now() << " bytes free";
  return "";
}

// Issue P10: the lanes' memory is checked against the GPU's free memory
// before any is allocated (exit 2, the key, what fits); an allocation that
// fails all the same (cuFFT's plans) is ErrorKind::cuda_memory (exit 1)
// naming the stage and the chunk size; after either the device works.
TEST(CudaBackend, GpuMemoryIsBoundedAndOutOfMemoryIsClear) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  kernels::cuda::release_cached_memory(); // the earlier tests' parked blocks
  {
    GpuMemoryHog hog(std::size_t{1} << 30); // leave 1 GiB
    // One lane of 2^26 frames x 4 channels is ~4.8 GB: chunk_frames is the key.
    BackendCase big{"big",
                    SampleType::f32,
                    0,
                    4,
                    std::int64_t{1} << 27,
                    0,
                    std::int64_t{1} << 26,
                    1,
                    {fir("lp", random_taps(31, 1), FirMode::causal)}};
    std::string m = prepare_error(plan_for(big, big.chunk), 1, ErrorKind::config);
    EXPECT_NE(m.find("execution.chunk_frames: one chunk of 67108864 frames"), std::string::npos)
        << m;
    EXPECT_NE(m.find("set chunk_frames to at most "), std::string::npos) << m;
    // 16 lanes of ~300 MB each: streams is the key, with the count that fits.
    BackendCase many{"many",
                     SampleType::f32,
                     0,
                     4,
                     std::int64_t{1} << 24,
                     0,
                     std::int64_t{1} << 22,
                     16,
                     {fir("lp", random_taps(31, 1), FirMode::causal)}};
    const Plan many_plan = plan_for(many, many.chunk);
    const std::int64_t lane = lane_device_bytes(many_plan);
    m = prepare_error(many_plan, 16, ErrorKind::config);
    EXPECT_NE(m.find("execution.streams: 16 CUDA streams"), std::string::npos) << m;
    const std::string key = "set streams to at most ";
    ASSERT_NE(m.find(key), std::string::npos) << m;
    const long long fit = std::stoll(m.substr(m.find(key) + key.size()));
    EXPECT_GE(fit, 1) << m; // ~1 GiB free holds a ~300 MB lane or more
    EXPECT_LT(fit, 16) << m;
    EXPECT_LE(fit * lane, GpuMemoryHog::free_now()) << m;
  }
  {
    // Within the estimate, but a 2^22-tap FFT filter's spectra and cuFFT's
    // plan do not fit in the 16 MiB left beyond it.
    BackendCase fft{
        "fft",
        SampleType::f32,
        0,
        1,
        std::int64_t{1} << 20,
        0,
        std::int64_t{1} << 16,
        1,
        {test::fir_stage("long", random_taps((1 << 22) + 1, 3), FirMode::causal, FirMethod::fft)}};
    const Plan plan = plan_for(fft, fft.chunk);
    const auto lane = static_cast<std::size_t>(lane_device_bytes(plan));
    GpuMemoryHog hog(static_cast<std::size_t>(static_cast<double>(lane) / 0.9) +
                     (std::size_t{16} << 20));
    const std::string m = prepare_error(plan, 1, ErrorKind::cuda_memory);
    EXPECT_NE(m.find("out of GPU memory for 1 stream(s) of 65536-frame chunks x 1 channel(s)"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("stage 'long' (fir)"), std::string::npos) << m;
    EXPECT_NE(m.find("set execution.streams or execution.chunk_frames lower"), std::string::npos)
        << m;
  }
  // Nothing is left broken: the same backend kind runs a small plan now.
  BackendCase small{"small",
                    SampleType::i16,
                    16,
                    2,
                    5001,
                    16,
                    1000,
                    2,
                    {fir("lp", random_taps(31, 1), FirMode::causal)}};
  auto b = make_cuda_backend();
  const HostBlock src = make_source(small, 5);
  const RunResult r = run(*b, plan_for(small, small.chunk), src, 2);
  EXPECT_EQ(r.chunks.size(), 6u);
}

} // namespace
} // namespace sigstream
