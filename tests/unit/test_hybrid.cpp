// The hybrid backend (backend auto) on machines without a GPU: its hand-over
// logic driven with a second CPU backend standing in for the GPU, so that CI
// checks what the GPU tests check on a device (tests/cuda/test_cuda_backend.cu):
// results in chunk order across both backends, the same bytes as one backend
// alone, the split reported, a start that finds no device or fails.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend_jobs.hpp"
#include "pipeline/backends/backend.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "stage_builders.hpp"

namespace sigstream {
namespace {

Plan stereo_plan(std::int64_t frames, std::int64_t chunk) {
  Config config;
  config.stages = {
      test::fir_stage("lp", test::random_taps_unit_energy(33, 5), FirMode::same, FirMethod::direct),
      test::metrics_stage("m")};
  config.execution.chunk_frames = chunk;
  return make_plan(config, test::pcm16_stereo_source(frames), 16);
}

// Interleaved stereo 16-bit samples, seeded.
HostBlock random_pcm(std::int64_t frames, std::uint32_t seed) {
  HostBlock b;
  b.type = SampleType::i16;
  b.channels = 2;
  b.frames = b.capacity = frames;
  b.data = std::shared_ptr<std::byte>(new std::byte[static_cast<std::size_t>(frames) * 4](),
                                      std::default_delete<std::byte[]>());
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < 2 * frames; ++i)
    b.as<std::int16_t>()[i] = static_cast<std::int16_t>(static_cast<int>(rng() % 50001) - 25000);
  return b;
}

// Every chunk through `b` as the pipeline drives it (at most depth() in
// flight, oldest retired first); the output bytes in order.
std::vector<std::byte> drive(Backend& b, const Plan& plan, const HostBlock& src,
                             std::int64_t pause_after = -1,
                             const std::function<void()>& at_pause = {}) {
  BackendOptions o;
  o.threads = 2;
  b.prepare(plan, o);
  std::vector<std::byte> out;
  std::int64_t next_index = 0;
  auto take = [&] {
    ChunkResult r = b.retire();
    EXPECT_EQ(r.index, next_index++);
    const auto* p = reinterpret_cast<const std::byte*>(r.output.data.get());
    out.insert(out.end(), p, p + r.output.bytes());
  };
  int in_flight = 0;
  for (std::int64_t c = 0; c < plan.num_chunks; ++c) {
    ChunkJob job = test::make_chunk_job(b, plan, src, c);
    while (in_flight > 0 && (in_flight >= b.depth() || b.oldest_ready())) {
      take();
      --in_flight;
    }
    b.submit(std::move(job));
    ++in_flight;
    // Let a "GPU" that is starting become ready mid-job.
    if (c == pause_after) {
      if (at_pause)
        at_pause();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  while (in_flight-- > 0)
    take();
  return out;
}

TEST(HybridBackend, HandOverMidJobKeepsOrderAndBytes) {
  const Plan plan = stereo_plan(20011, 997);
  const auto src = random_pcm(20011, 3);
  auto alone = make_cpu_backend();
  const auto ref = drive(*alone, plan, src);

  // The stand-in GPU starts only once the CPU has taken chunks 0-4.
  auto go = std::make_shared<std::atomic<bool>>(false);
  auto hybrid = make_hybrid_backend(
      make_cpu_backend(), [] { return 1; },
      [go] {
        while (!go->load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return make_cpu_backend();
      },
      nullptr);
  const auto got = drive(*hybrid, plan, src, /*pause_after=*/4, [go] { go->store(true); });
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_EQ(std::memcmp(got.data(), ref.data(), got.size()), 0);
  const std::string said = hybrid->summary();
  EXPECT_NE(said.find("the CPU computed 5 of 21 chunks"), std::string::npos) << said;
  EXPECT_EQ(hybrid->name(), "cpu+cpu"); // the stand-in "GPU" is a CPU backend
}

TEST(HybridBackend, NoDeviceMeansTheCpuDoesEverything) {
  const Plan plan = stereo_plan(5003, 1000);
  const auto src = random_pcm(5003, 4);
  bool made = false;
  auto hybrid = make_hybrid_backend(
      make_cpu_backend(), [] { return 0; },
      [&made] {
        made = true;
        return make_cpu_backend();
      },
      nullptr);
  auto alone = make_cpu_backend();
  EXPECT_EQ(drive(*hybrid, plan, src, 0), drive(*alone, plan, src));
  EXPECT_FALSE(made);
  EXPECT_NE(hybrid->summary().find("no CUDA device found"), std::string::npos) << hybrid->summary();
  EXPECT_EQ(hybrid->name(), "cpu");
}

TEST(HybridBackend, AFailedStartIsLoggedAndTheCpuGoesOn) {
  const Plan plan = stereo_plan(5003, 1000);
  const auto src = random_pcm(5003, 5);
  std::vector<std::string> log;
  auto hybrid = make_hybrid_backend(
      make_cpu_backend(), [] { return 1; },
      []() -> std::unique_ptr<Backend> { throw std::runtime_error("out of device memory"); },
      [&log](const std::string& m) { log.push_back(m); });
  auto alone = make_cpu_backend();
  EXPECT_EQ(drive(*hybrid, plan, src, 0), drive(*alone, plan, src));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("out of device memory"), std::string::npos) << log[0];
  EXPECT_EQ(hybrid->name(), "cpu");
}

} // namespace
} // namespace sigstream
