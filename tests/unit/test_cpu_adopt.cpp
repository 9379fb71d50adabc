// A CPU backend kept from one file to the next (a batch worker's:
// CpuBackend::adopt) gives the bytes and metrics a backend made for the file
// gives: an FFT-method FIR, an IIR whose state must start again from zero,
// a spectrum and a loudness block, over a longer file and then a shorter
// one of the same shape; it refuses longer chunks than it was prepared for,
// another shape, other threads and --verify's float output (a fresh backend
// is made for those).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pipeline/backends/backend.hpp"
#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"
#include "tests/support/backend_jobs.hpp"
#include "tests/support/stage_builders.hpp"

namespace sigstream {
namespace {

constexpr const char* kStages =
    "  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 255, window: "
    "hamming}, method: fft}\n"
    "  - {type: iir, name: hp, design: {kind: highpass, cutoff_hz: 40, order: 2, ftype: butter}}\n"
    "  - {type: metrics, name: m, loudness: true, spectrum: {nfft: 256, overlap: 0.5, window: "
    "hann}}\n";

Plan plan_of(int channels, std::int64_t frames, std::int64_t chunk) {
  const Config config = parse_config(
      std::string("version: 1\nsource: {file: p.wav}\nsink: {file: q.wav}\nstages:\n") + kStages +
          "execution: {chunk_frames: " + std::to_string(chunk) + "}\n",
      "adopt.yaml");
  SourceInfo si = test::pcm16_stereo_source(frames);
  si.channels = channels;
  Plan p = make_plan(config, si, 16);
  resolve_methods(p, "cpu");
  return p;
}

HostBlock source_of(int channels, std::int64_t frames, std::uint32_t seed) {
  HostBlock b = make_host_block(SampleType::i16, channels, frames);
  b.frames = frames;
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < frames * channels; ++i)
    b.as<std::int16_t>()[i] = static_cast<std::int16_t>(static_cast<int>(rng() % 40001) - 20000);
  return b;
}

struct Ran {
  std::vector<std::byte> output;
  std::vector<ChunkResult> chunks;
};

Ran run_on(Backend& backend, const Plan& plan, const HostBlock& source) {
  Ran out;
  test::run_all_chunks(backend, plan, source, [&](ChunkResult r) {
    const auto* p = reinterpret_cast<const std::byte*>(r.output.data.get());
    out.output.insert(out.output.end(), p, p + r.output.bytes());
    out.chunks.push_back(std::move(r));
  });
  return out;
}

void expect_same(const Ran& a, const Ran& b) {
  ASSERT_EQ(a.output.size(), b.output.size());
  EXPECT_EQ(std::memcmp(a.output.data(), b.output.data(), a.output.size()), 0);
  ASSERT_EQ(a.chunks.size(), b.chunks.size());
  for (std::size_t i = 0; i < a.chunks.size(); ++i) {
    const ChunkResult& x = a.chunks[i];
    const ChunkResult& y = b.chunks[i];
    ASSERT_EQ(x.metrics.size(), y.metrics.size());
    for (std::size_t s = 0; s < x.metrics.size(); ++s)
      for (std::size_t c = 0; c < x.metrics[s].size(); ++c) {
        EXPECT_EQ(x.metrics[s][c].energy, y.metrics[s][c].energy) << "chunk " << i;
        EXPECT_EQ(x.metrics[s][c].peak, y.metrics[s][c].peak) << "chunk " << i;
        EXPECT_EQ(x.metrics[s][c].dot, y.metrics[s][c].dot) << "chunk " << i;
      }
    for (std::size_t s = 0; s < x.spectra.size(); ++s)
      EXPECT_EQ(x.spectra[s].power, y.spectra[s].power) << "chunk " << i;
    for (std::size_t s = 0; s < x.measured.size(); ++s)
      EXPECT_EQ(x.measured[s].energy, y.measured[s].energy) << "chunk " << i;
  }
}

TEST(CpuAdopt, AKeptBackendGivesAFreshOnesBytesAndMetrics) {
  constexpr int kChannels = 2;
  constexpr std::int64_t kChunk = 70001;
  const Plan long_plan = plan_of(kChannels, 250003, kChunk);
  const Plan short_plan = plan_of(kChannels, 123457, kChunk);
  ASSERT_TRUE(same_shape(long_plan, short_plan));
  const HostBlock long_source = source_of(kChannels, 250003, 11);
  const HostBlock short_source = source_of(kChannels, 123457, 12);
  BackendOptions o;
  o.threads = 3;
  auto kept = make_cpu_backend();
  kept->prepare(long_plan, o);
  const Ran first = run_on(*kept, long_plan, long_source);
  ASSERT_FALSE(first.output.empty());

  // The shorter file on the kept backend, against a backend made for it.
  ASSERT_TRUE(kept->adopt(short_plan, o));
  const Ran again = run_on(*kept, short_plan, short_source);
  auto fresh = make_cpu_backend();
  fresh->prepare(short_plan, o);
  expect_same(again, run_on(*fresh, short_plan, short_source));
  // And the first file again: the IIR's state and the chunk turns start over.
  ASSERT_TRUE(kept->adopt(long_plan, o));
  expect_same(run_on(*kept, long_plan, long_source), first);

  // A longer file runs on it where its chunks are no longer (they are as long).
  EXPECT_TRUE(kept->adopt(plan_of(kChannels, 400009, kChunk), o));
  // One whose chunks are longer than those it was prepared for (a file under
  // one chunk before), another shape, other options: no.
  auto small = make_cpu_backend();
  const Plan small_plan = plan_of(kChannels, 40009, kChunk);
  small->prepare(small_plan, o);
  static_cast<void>(run_on(*small, small_plan, source_of(kChannels, 40009, 13)));
  EXPECT_FALSE(small->adopt(long_plan, o));
  EXPECT_TRUE(small->adopt(plan_of(kChannels, 30011, kChunk), o));
  EXPECT_FALSE(kept->adopt(plan_of(kChannels + 1, 123457, kChunk), o));
  EXPECT_FALSE(kept->adopt(plan_of(kChannels, 123457, kChunk / 2), o));
  BackendOptions threads = o;
  threads.threads = 2;
  EXPECT_FALSE(kept->adopt(short_plan, threads));
  BackendOptions verify = o;
  verify.keep_float_output = true;
  EXPECT_FALSE(kept->adopt(short_plan, verify));
}

} // namespace
} // namespace sigstream
