// Live mode runs a kind without a live op of its own by its CPU step over
// the stage's history (stages/step_live.hpp), on the chain walk's rule
// (pipeline/backends/chain_walk.hpp): every such kind, in one chain with
// observers between, gives the file path's bytes and measurements at block
// sizes that cut the signal anywhere (1 frame, odd, longer than a FIR).
// (The file run here is the CPU backend in chunks of 4099 frames.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

// 3 channels of 16 kHz noise (odd length), then every kind that runs live by
// its step: gain, a down-sampler by 5/2 (the first resampler; its history
// trimmed past what a block brings), iir (state across blocks), mix (3 -> 2, then a select),
// resample both ways, fir direct in same, full and causal mode (the last one
// a response per channel); metrics between them, paired with the source
// before the rate change and not after it.
std::string chain_yaml() {
  return R"(version: 1
source: {synth: {sample_rate: 16000, frames: 20011, channels: 3,
  tones: [{freq_hz: 440, amplitude: 0.3, phase_deg: 0, channel: 1}],
  noise: {kind: uniform, amplitude: 0.2, seed: 7}}}
stages:
  - {type: gain, name: g, db: -2.5}
  - {type: metrics, name: source_side}
  - {type: resample, name: d5, up: 2, down: 5}
  - {type: iir, name: hp, design: {kind: highpass, cutoff_hz: 120, order: 4}}
  - {type: metrics, name: before_mix}
  - {type: mix, name: mx, matrix: [[0.5, 0.25, 0.25], [0, 0.7, 0.3]]}
  - {type: resample, name: up, up: 3, down: 2}
  - {type: fir, name: same, taps: [0.1, -0.2, 0.45, 0.3, -0.05, 0.12, 0.02], mode: same, method: direct}
  - {type: metrics, name: mid}
  - {type: resample, name: down, to_hz: 16000}
  - {type: mix, name: swap, select: [1, 0]}
  - {type: fir, name: full, taps: [0.3, 0.5, 0.2, -0.1], mode: full, method: direct}
  - {type: fir, name: pc, taps: [[0.2, 0.5, 0.3], [1.0, -0.4]], method: direct}
sink: {format: float}
execution: {backend: cpu, chunk_frames: 4099}
)";
}

struct Outcome {
  std::vector<unsigned char> audio;
  RunReport report;
};

Outcome run(const test::TempDir& dir, const std::string& name, double latency_ms) {
  Config c = parse_config(chain_yaml(), "chain.yaml");
  c.sink.file = dir.file(name + ".wav");
  if (latency_ms > 0)
    c.execution.latency_ms = latency_ms;
  RunReport report = run_pipeline(c, RunOptions{});
  return {test::slurp_bytes(*c.sink.file), std::move(report)};
}

// The sums of one block's frames, in another order than the file's chunks:
// equal to within rounding; the counts and the peak exactly.
void expect_same_measures(const RunReport& file, const RunReport& live) {
  ASSERT_EQ(file.metrics.size(), live.metrics.size());
  for (std::size_t m = 0; m < file.metrics.size(); ++m) {
    SCOPED_TRACE(file.metrics[m].name);
    EXPECT_EQ(file.metrics[m].paired, live.metrics[m].paired);
    ASSERT_EQ(file.metrics[m].totals.size(), live.metrics[m].totals.size());
    for (std::size_t c = 0; c < file.metrics[m].totals.size(); ++c) {
      const ChannelMetrics& a = file.metrics[m].totals[c];
      const ChannelMetrics& b = live.metrics[m].totals[c];
      EXPECT_EQ(a.frames, b.frames);
      EXPECT_EQ(a.peak, b.peak);
      EXPECT_NEAR(a.energy, b.energy, 1e-12 * a.energy);
      EXPECT_NEAR(a.sum, b.sum, 1e-9 * (std::abs(a.sum) + a.energy));
      EXPECT_NEAR(a.dot, b.dot, 1e-12 * (a.energy + a.source_energy));
    }
  }
}

TEST(StepLiveOp, EveryKindRunByItsStepGivesTheFilesBytesAtAnyBlock) {
  test::TempDir dir;
  const Outcome file = run(dir, "file", 0);
  ASSERT_GT(file.audio.size(), 44u);
  ASSERT_EQ(file.report.metrics.size(), 4u); // source_side, before_mix, mid, output
  EXPECT_TRUE(file.report.metrics[0].paired);
  EXPECT_FALSE(file.report.metrics[1].paired);
  // 1 frame (1/16 ms at 16 kHz), 13 frames, 160 frames, 4000 frames.
  for (const double ms : {0.0625, 0.8125, 10.0, 250.0}) {
    SCOPED_TRACE(ms);
    const Outcome live = run(dir, "live", ms);
    EXPECT_EQ(live.report.device.rfind("live on", 0), 0u) << live.report.device;
    EXPECT_EQ(file.audio, live.audio);
    expect_same_measures(file.report, live.report);
  }
}

} // namespace
} // namespace sigstream
