// QA of the resample stage (the unit's own test, as GNU Radio's qa_ files):
// the pipeline's output against a float64 reference written here from the
// definition (firwin with a Kaiser window from first principles, then the
// zero-stuffed up-sampled signal filtered and decimated, as upfirdn does),
// on random data, odd lengths and odd ratios; chunkings, a stream of
// unknown length and live mode give the same bytes as one pass.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

// scipy.signal.firwin(2*half*m + 1, 1/m, window=('kaiser', beta)) * up,
// m = max(up, down): sinc low-pass, Kaiser window, unit DC gain.
std::vector<double> resample_taps(int up, int down, int half, double beta) {
  const int m = std::max(up, down);
  const int k = 2 * half * m + 1;
  const double fc = 1.0 / m;
  std::vector<double> h(static_cast<std::size_t>(k));
  const double alpha = (k - 1) / 2.0;
  for (int n = 0; n < k; ++n) {
    const double x = n - alpha;
    const double sinc =
        x == 0 ? 1.0 : std::sin(std::numbers::pi * fc * x) / (std::numbers::pi * fc * x);
    const double r = (n - alpha) / alpha;
    const double w = std::cyl_bessel_i(0.0, beta * std::sqrt(std::max(0.0, 1.0 - r * r))) /
                     std::cyl_bessel_i(0.0, beta);
    h[static_cast<std::size_t>(n)] = fc * sinc * w;
  }
  const double sum = std::accumulate(h.begin(), h.end(), 0.0);
  for (double& v : h)
    v = v / sum * up;
  return h;
}

// resample_poly(x, up, down): ceil(N*up/down) outputs of the zero-phase filter.
std::vector<double> reference(const std::vector<double>& x, int up, int down, int half = 10,
                              double beta = 5.0) {
  const int g = std::gcd(up, down);
  up /= g;
  down /= g;
  if (up == 1 && down == 1)
    return x;
  const std::vector<double> h = resample_taps(up, down, half, beta);
  const auto k = static_cast<std::int64_t>(h.size());
  const std::int64_t delay = (k - 1) / 2;
  const auto n_in = static_cast<std::int64_t>(x.size());
  const std::int64_t n_out = (n_in * up + down - 1) / down;
  std::vector<double> y(static_cast<std::size_t>(n_out), 0.0);
  for (std::int64_t i = 0; i < n_out; ++i) {
    double acc = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t u = i * down + delay - j; // index into the zero-stuffed signal
      if (u < 0 || u % up != 0 || u / up >= n_in)
        continue;
      acc += h[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(u / up)];
    }
    y[static_cast<std::size_t>(i)] = acc;
  }
  return y;
}

using test::Ratio;
using test::resample_stage;

class ResampleQa : public ::testing::TestWithParam<Ratio> {};

TEST_P(ResampleQa, MatchesTheDefinitionAndChunkingIsInvisible) {
  const auto [up, down] = GetParam();
  test::TempDir dir;
  for (const std::int64_t frames :
       {std::int64_t{1}, std::int64_t{2}, std::int64_t{37}, std::int64_t{3001}}) {
    SCOPED_TRACE("frames " + std::to_string(frames));
    Config c;
    c.origin = "test";
    c.source.synth = test::noise_synth(frames, 2, 11 + static_cast<std::uint64_t>(frames));
    c.stages = {resample_stage("r", up, down), test::metrics_stage("m")};
    c.execution.backend = BackendKind::cpu;
    c.sink.format = SampleFormat::float32;
    std::vector<unsigned char> first;
    for (const std::int64_t chunk :
         {std::int64_t{1048576}, std::int64_t{1}, std::int64_t{17}, std::int64_t{1000}}) {
      if (chunk == 1 && frames > 100)
        continue; // one frame a chunk: slow, and 37 frames cover it
      c.execution.chunk_frames = chunk;
      c.sink.file = dir.file("o" + std::to_string(chunk) + ".wav");
      const RunReport r = run_pipeline(c, RunOptions{});
      const test::Audio a = test::read_audio(*c.sink.file);
      const auto planes = test::source_planes(*c.source.synth);
      for (int ch = 0; ch < 2; ++ch) {
        const std::vector<double> want = reference(planes[static_cast<std::size_t>(ch)], up, down);
        ASSERT_EQ(a.frames, static_cast<std::int64_t>(want.size()));
        std::vector<double> got;
        for (std::int64_t i = 0; i < a.frames; ++i)
          got.push_back(a.samples[static_cast<std::size_t>(i * 2 + ch)]);
        if (want.size() >= 16) {
          EXPECT_LT(test::rel_l2(want, got), 1e-6) << "channel " << ch << ", chunk " << chunk;
        } else { // a few outputs may be sums that cancel: bound the error absolutely
          for (std::size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(got[i], want[i], 1e-6) << "frame " << i;
        }
      }
      EXPECT_EQ(a.rate, 48000 / (down / std::gcd(up, down)) * (up / std::gcd(up, down)));
      EXPECT_EQ(r.metrics[0].totals[0].frames, a.frames);
      const std::vector<unsigned char> bytes = test::slurp_bytes(*c.sink.file);
      if (first.empty())
        first = bytes;
      EXPECT_EQ(bytes, first) << "chunk_frames " << chunk << " changes the output";
    }
  }
}

// From 48 kHz: 52.2449 kHz is not a rate a file can hold, so 160/147 runs
// from 44.1 kHz's multiple of 147 below (48000 * 160 / 150 = 51200).
INSTANTIATE_TEST_SUITE_P(Ratios, ResampleQa,
                         ::testing::Values(Ratio{160, 150}, Ratio{147, 160}, Ratio{1, 3},
                                           Ratio{6, 1}, Ratio{101, 75}, Ratio{37, 125}, Ratio{4, 6},
                                           Ratio{5, 5}),
                         [](const auto& info) {
                           return std::to_string(info.param.up) + "_" +
                                  std::to_string(info.param.down);
                         });

TEST(ResampleQa, AStreamOfUnknownLengthGivesTheFilesBytes) {
  for (const std::int64_t chunk : {std::int64_t{997}, std::int64_t{30011}}) {
    test::StreamCase c;
    c.name = "resample";
    c.stages = {test::fir_stage("f", test::random_taps_unit_energy(31, 5), FirMode::same,
                                FirMethod::direct),
                test::metrics_stage("m1"), resample_stage("r", 147, 160), test::metrics_stage("m2"),
                test::fir_stage("f2", test::random_taps_unit_energy(9, 6), FirMode::full,
                                FirMethod::direct)};
    c.frames = 30011;
    c.channels = 2;
    c.chunk_frames = chunk;
    c.max_write = 913;
    const auto [file, stream] = test::file_and_stream_outputs(c, BackendKind::cpu, 77);
    EXPECT_EQ(file, stream) << "chunk " << chunk;
    EXPECT_GT(file.size(), 1000u);
  }
}

TEST(ResampleQa, AStreamsStatisticsCountTheOutputAndLeaveUnpairedDotsEmpty) {
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  test::write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2,
                    test::random_samples(30011 * 2, 4, 0.9f, 16));
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  Config c;
  c.origin = "test";
  c.stages = {test::metrics_stage("before"), resample_stage("r", 1, 3),
              test::metrics_stage("after")};
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = 997;
  c.source.file = dir.file("in.fifo");
  c.sink.file = dir.file("out.wav");
  c.stats.csv = dir.file("m.csv");
  RunReport r;
  {
    test::FifoFeeder feed(*c.source.file, std::move(bytes), 5, 4099);
    r = run_pipeline(c, RunOptions{});
  }
  const test::Audio a = test::read_audio(*c.sink.file);
  EXPECT_EQ(a.frames, (30011 + 2) / 3);
  EXPECT_EQ(r.output_frames, a.frames);
  EXPECT_EQ(r.output_sample_rate, 16000);
  EXPECT_EQ(r.metrics[0].totals[0].frames, 30011); // "before" counts the input's frames
  EXPECT_EQ(r.metrics[1].totals[0].frames, a.frames);
  EXPECT_TRUE(r.metrics[0].paired);
  EXPECT_FALSE(r.metrics[1].paired);
  std::int64_t rows = 0;
  for (const auto& row : r.metrics[0].chunks)
    rows += row.frames;
  EXPECT_EQ(rows, 30011);
  // CSV: "after" rows leave dot_input and correlation_input empty.
  std::ifstream csv(*c.stats.csv);
  std::string line;
  int after = 0;
  while (std::getline(csv, line))
    if (line.rfind("after,", 0) == 0) {
      ++after;
      EXPECT_NE(line.find(",,"), std::string::npos) << line;
    }
  EXPECT_GT(after, 0);
}

TEST(ResampleQa, LiveModeGivesTheFilesBytes) {
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(20011, 2, 5);
  // 48000 -> 44100 -> 14700 Hz.
  c.stages = {
      resample_stage("r", 147, 160),
      test::fir_stage("f", test::random_taps_unit_energy(15, 9), FirMode::same, FirMethod::direct),
      resample_stage("r2", 1, 3)};
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  c.sink.file = dir.file("file.wav");
  run_pipeline(c, RunOptions{});
  c.execution.latency_ms = 1.0;
  c.sink.file = dir.file("live.wav");
  run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::slurp_bytes(dir.file("file.wav")), test::slurp_bytes(dir.file("live.wav")));
}

} // namespace
} // namespace sigstream
