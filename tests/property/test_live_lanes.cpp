// Live mode's redundant lanes (execution.redundant): two threads compute
// every block, whichever reads a block first shares it, whichever finishes
// it first writes it. However the two race, the output must be the file
// path's bytes (direct method: SPEC §6, "a stream changes no bit"), written
// once and in order, and the statistics those of one lane.
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/error.hpp"
#include "pipeline/io/byte_stream.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/resource_limits.hpp"
#include "stream_support.hpp"

namespace sigstream {
namespace {

std::vector<StageSpec> chain_for(FirMode mode) {
  return {
      test::fir_stage("a", test::random_taps_unit_energy(31, 41), FirMode::same, FirMethod::direct),
      test::metrics_stage("m"),
      test::fir_stage("b", test::random_taps_unit_energy(301, 42), mode, FirMethod::direct),
      test::gain_stage("g", 0.8)};
}

// `tol` 0: the same sums in the same order (one lane against two); else
// relative (the file path sums chunk by chunk, live block by block).
void expect_same_totals(const RunReport& a, const RunReport& b, double tol = 0.0) {
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (std::size_t s = 0; s < a.metrics.size(); ++s) {
    ASSERT_EQ(a.metrics[s].totals.size(), b.metrics[s].totals.size());
    for (std::size_t c = 0; c < a.metrics[s].totals.size(); ++c) {
      const ChannelMetrics& x = a.metrics[s].totals[c];
      const ChannelMetrics& y = b.metrics[s].totals[c];
      const std::string what = a.metrics[s].name + " ch" + std::to_string(c);
      EXPECT_EQ(x.frames, y.frames) << what;
      EXPECT_EQ(x.peak, y.peak) << what;
      EXPECT_NEAR(x.energy, y.energy, tol * std::abs(x.energy)) << what;
      EXPECT_NEAR(x.dot, y.dot, tol * std::abs(x.source_energy)) << what;
    }
  }
}

void expect_lanes_wrote_every_block(const RunReport& r) {
  ASSERT_TRUE(r.latency.has_value());
  ASSERT_EQ(r.latency->lanes.size(), 2u);
  EXPECT_EQ(r.latency->lanes[0].written + r.latency->lanes[1].written, r.latency->chunks);
}

TEST(LiveLanes, RedundantLanesOnAFifoWriteTheFilePathsBytes) {
  for (FirMode mode : {FirMode::causal, FirMode::same, FirMode::full}) {
    test::TempDir dir;
    const std::string in = dir.file("in.wav");
    const std::int64_t frames = 12007;
    test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 3,
                      test::random_samples(static_cast<std::size_t>(frames * 3),
                                           50 + static_cast<int>(mode), 0.9f, 16));
    Config cfg;
    cfg.origin = "test";
    cfg.stages = chain_for(mode);
    cfg.execution.backend = BackendKind::cpu;
    cfg.source.file = in;
    cfg.sink.file = dir.file("file.wav");
    const RunReport file = run_pipeline(cfg, {});

    std::vector<unsigned char> bytes = test::slurp_bytes(in);
    test::mark_unknown_length(bytes);
    cfg.execution.latency_ms = 0.1; // 5 frames a block
    cfg.execution.redundant = true;
    cfg.sink.file = dir.file("live.wav");
    RunReport live;
    {
      test::FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), 77, 61); // writes of 1..61 bytes
      cfg.source.file = dir.file("in.fifo");
      live = run_pipeline(cfg, {});
    }
    const std::vector<unsigned char> a = test::slurp_bytes(dir.file("file.wav"));
    const std::vector<unsigned char> b = test::slurp_bytes(dir.file("live.wav"));
    ASSERT_GT(a.size(), 44u);
    EXPECT_TRUE(a == b) << to_string(mode) << ": " << a.size() << " vs " << b.size() << " bytes";
    expect_lanes_wrote_every_block(live);
    EXPECT_EQ(live.output_frames, file.output_frames) << to_string(mode);
    expect_same_totals(file, live, 1e-12);
  }
}

TEST(LiveLanes, RedundantLanesRacingOnAFileMatchOneLane) {
  // A file in: nothing paces the lanes, so they race block for block (and
  // a lane is often several blocks behind). Two frames a block.
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  const std::int64_t frames = 30011;
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2,
                    test::random_samples(static_cast<std::size_t>(frames * 2), 61, 0.9f));
  Config cfg;
  cfg.origin = "test";
  cfg.stages = chain_for(FirMode::same);
  cfg.stages.push_back(test::resample_stage("r", 3, 2));
  cfg.stages.push_back(test::metrics_stage("after"));
  cfg.execution.backend = BackendKind::cpu;
  cfg.execution.latency_ms = 0.05;
  cfg.source.file = in;
  cfg.sink.file = dir.file("one.wav");
  cfg.sink.format = SampleFormat::float32;
  const RunReport one = run_pipeline(cfg, {});
  for (int run = 0; run < 3; ++run) {
    cfg.execution.redundant = true;
    cfg.sink.file = dir.file("two.wav");
    const RunReport two = run_pipeline(cfg, {});
    EXPECT_TRUE(test::slurp_bytes(dir.file("one.wav")) == test::slurp_bytes(dir.file("two.wav")))
        << "run " << run;
    ASSERT_TRUE(one.latency.has_value());
    EXPECT_TRUE(one.latency->lanes.empty());
    expect_lanes_wrote_every_block(two);
    EXPECT_EQ(two.latency->chunks, one.latency->chunks);
    EXPECT_EQ(two.output_frames, one.output_frames);
    expect_same_totals(one, two);
  }
}

TEST(LiveLanes, RedundantLanesWithNoSinkKeepOneLanesStatistics) {
  // No audio out: the lanes race to "write" (account for) each block; the
  // metrics come from the first lane's chain all the same.
  test::TempDir dir;
  Config cfg;
  cfg.origin = "test";
  cfg.source.synth = test::noise_synth(9001, 2, 5);
  cfg.stages = chain_for(FirMode::full);
  cfg.execution.backend = BackendKind::cpu;
  cfg.execution.latency_ms = 0.07;
  const RunReport one = run_pipeline(cfg, {});
  cfg.execution.redundant = true;
  const RunReport two = run_pipeline(cfg, {});
  expect_lanes_wrote_every_block(two);
  EXPECT_EQ(two.output_frames, one.output_frames);
  EXPECT_EQ(two.latency->chunks, one.latency->chunks);
  expect_same_totals(one, two);
}

TEST(LiveLanes, ByteSourceIsReadyWhenABlocksBytesAreThere) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    ByteSource src(fds[0], "pipe");
    src.release_header();
    EXPECT_FALSE(src.ready_now(100)) << "an empty pipe";
    const std::vector<unsigned char> bytes(20000, 7);
    ASSERT_EQ(::write(fds[1], bytes.data(), 60), 60);
    EXPECT_FALSE(src.ready_now(100)) << "60 of 100 bytes";
    EXPECT_TRUE(src.ready_now(60));
    ASSERT_EQ(::write(fds[1], bytes.data(), 40), 40);
    EXPECT_TRUE(src.ready_now(100));
    std::vector<unsigned char> got(100);
    SF_VIRTUAL_IO* io = src.io();
    ASSERT_EQ(io->read(got.data(), 100, src.user()), 100);
    EXPECT_FALSE(src.ready_now(1)) << "all read";
    ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    EXPECT_TRUE(src.ready_now(std::int64_t{1} << 24))
        << "a block larger than a pipe starts at 16 KiB";
    ASSERT_EQ(io->read(got.data(), 100, src.user()), 100);
    ::close(fds[1]);
    EXPECT_TRUE(src.ready_now(std::int64_t{1} << 24)) << "the writer has gone: the end";
  }
  ::close(fds[0]);
}

TEST(LiveLanes, RedundantIsForLiveModeOnly) {
  ExecutionSpec e;
  e.redundant = true;
  EXPECT_THROW(check_execution_limits(e), Error);
  e.latency_ms = 1.0;
  EXPECT_NO_THROW(check_execution_limits(e));
}

} // namespace
} // namespace sigstream
