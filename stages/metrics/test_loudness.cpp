// QA of the metrics stage's loudness (SPEC §13) on the CPU backend: EBU
// Tech 3341 and 3342 cases synthesised here (1 kHz tones at -23 and -33
// dBFS, level steps with the gates' effect, the LRA of a 20 dB step);
// random programme at odd lengths in 1, 2 and 5.1 channels against
// libebur128 fed the whole signal at once (integrated, range, true peak);
// every chunking down to 17 frames and a stream of unknown length give the
// same values; after a rate change the block measures at its own rate;
// silence has no integrated loudness; the meter fed per-step energies and
// peaks (the CUDA path's hand-over, computed here by plain loops, exactly and
// settled from rest), and pieces measured anywhere by measure() (the CPU
// backend's workers) give the meter's values (the CUDA backend itself:
// test_loudness_cuda.cu; live mode: tests/cli/test_loudness_cli.py).
#include <gtest/gtest.h>

#include <ebur128.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/cpu/loudness.hpp"
#include "loudness_programme.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/metrics/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

constexpr int kRate = 48000;

StageSpec loudness_stage(const std::string& name) {
  StageSpec s = test::metrics_stage(name);
  s.as<MetricsSpec>().loudness = true;
  return s;
}

// Pieces of 1 kHz tone (every channel alike), each {seconds, dBFS of its peak}.
std::vector<float> tones(int channels, const std::vector<std::pair<double, double>>& pieces) {
  std::vector<float> x;
  std::int64_t i = 0;
  for (const auto& [seconds, dbfs] : pieces) {
    const double a = std::pow(10.0, dbfs / 20.0);
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(seconds * kRate); ++k, ++i) {
      const auto v = static_cast<float>(
          a * std::sin(2.0 * std::numbers::pi * 1000.0 * static_cast<double>(i) / kRate));
      for (int c = 0; c < channels; ++c)
        x.push_back(v);
    }
  }
  return x;
}

// Noise whose level moves every 1.3 s (tests/support/loudness_programme.hpp).
std::vector<float> programme(int channels, std::int64_t frames, std::uint32_t seed) {
  return test::loudness_programme(channels, kRate, frames, seed);
}

LoudnessReport measure(const std::string& in, std::int64_t chunk, test::TempDir& dir) {
  Config c;
  c.origin = "test";
  c.source.file = in;
  c.stages = {loudness_stage("m")};
  c.execution.backend = BackendKind::cpu;
  c.execution.chunk_frames = chunk;
  c.sink.file = dir.file("out.wav");
  const RunReport r = run_pipeline(c, RunOptions{});
  EXPECT_TRUE(r.metrics.front().loudness.has_value());
  return r.metrics.front().loudness.value_or(LoudnessReport{});
}

std::string write(test::TempDir& dir, const std::string& name, int channels,
                  const std::vector<float>& x) {
  const std::string path = dir.file(name);
  test::write_audio(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, kRate, channels, x);
  return path;
}

struct Tech3341 {
  const char* name;
  int channels;
  std::vector<std::pair<double, double>> pieces;
  double integrated;
};

class LoudnessEbu : public ::testing::TestWithParam<Tech3341> {};

// EBU Tech 3341's cases 1-4: the integrated loudness within its 0.1 LU.
TEST_P(LoudnessEbu, IntegratedAsTech3341) {
  const Tech3341& k = GetParam();
  test::TempDir dir;
  const LoudnessReport r =
      measure(write(dir, "in.wav", k.channels, tones(k.channels, k.pieces)), 1048576, dir);
  ASSERT_TRUE(r.integrated_lufs.has_value());
  EXPECT_NEAR(*r.integrated_lufs, k.integrated, 0.1) << k.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LoudnessEbu,
    ::testing::Values(
        Tech3341{"case1_minus23", 2, {{20.0, -23.0}}, -23.0},
        Tech3341{"case2_minus33", 2, {{20.0, -33.0}}, -33.0},
        Tech3341{"case3_relative_gate", 2, {{10.0, -36.0}, {60.0, -23.0}, {10.0, -36.0}}, -23.0},
        Tech3341{"case4_absolute_gate",
                 2,
                 {{10.0, -72.0}, {10.0, -36.0}, {60.0, -23.0}, {10.0, -36.0}, {10.0, -72.0}},
                 -23.0}),
    [](const auto& info) { return std::string(info.param.name); });

// EBU Tech 3342 case 1: 20 s at -20 dBFS then 20 s at -30: LRA 10 +- 1 LU;
// and the max momentary / short-term of a steady tone are its level.
TEST(Loudness, RangeAsTech3342AndMaxima) {
  test::TempDir dir;
  const LoudnessReport r =
      measure(write(dir, "in.wav", 2, tones(2, {{20.0, -20.0}, {20.0, -30.0}})), 1048576, dir);
  ASSERT_TRUE(r.range_lu.has_value());
  EXPECT_NEAR(*r.range_lu, 10.0, 1.0);
  const LoudnessReport s = measure(write(dir, "s.wav", 2, tones(2, {{20.0, -23.0}})), 4099, dir);
  ASSERT_TRUE(s.max_momentary_lufs && s.max_short_term_lufs && s.true_peak_dbtp);
  EXPECT_NEAR(*s.max_momentary_lufs, -23.0, 0.1);
  EXPECT_NEAR(*s.max_short_term_lufs, -23.0, 0.1);
  EXPECT_NEAR(*s.true_peak_dbtp, -23.0, 0.05); // a sine's true peak is its peak
}

// libebur128 fed the whole signal at once, as a user of the library would.
LoudnessReport direct(int channels, const std::vector<float>& x) {
  ebur128_state* st = ebur128_init(static_cast<unsigned>(channels), kRate,
                                   EBUR128_MODE_I | EBUR128_MODE_LRA | EBUR128_MODE_TRUE_PEAK);
  ebur128_add_frames_float(st, x.data(), x.size() / static_cast<std::size_t>(channels));
  LoudnessReport r;
  double v = 0.0;
  if (ebur128_loudness_global(st, &v) == EBUR128_SUCCESS && std::isfinite(v))
    r.integrated_lufs = v;
  if (ebur128_loudness_range(st, &v) == EBUR128_SUCCESS)
    r.range_lu = v;
  double peak = 0.0;
  for (int c = 0; c < channels; ++c)
    if (ebur128_true_peak(st, static_cast<unsigned>(c), &v) == EBUR128_SUCCESS)
      peak = std::max(peak, v);
  r.true_peak_dbtp = 20.0 * std::log10(peak);
  ebur128_destroy(&st);
  return r;
}

class LoudnessProgramme : public ::testing::TestWithParam<int> {};

// Random programme at an odd length: libebur128's values for the whole
// signal, and the same values (to 1e-9) for every chunking: chunks of 1M
// frames are measured by the workers (each piece's K-weighting settled from
// rest), short ones by the writer's meter one frame after another.
TEST_P(LoudnessProgramme, EqualsLibebur128ForEveryChunking) {
  const int channels = GetParam();
  test::TempDir dir;
  const std::vector<float> x = programme(channels, kRate * 11 + 4099, 17 + channels);
  const std::string in = write(dir, "in.wav", channels, x);
  const LoudnessReport want = direct(channels, x);
  std::optional<LoudnessReport> first;
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}, std::int64_t{17}}) {
    const LoudnessReport r = measure(in, chunk, dir);
    ASSERT_TRUE(r.integrated_lufs && r.range_lu && r.true_peak_dbtp && r.max_momentary_lufs &&
                r.max_short_term_lufs)
        << "chunk " << chunk;
    EXPECT_NEAR(*r.integrated_lufs, *want.integrated_lufs, 1e-9) << "chunk " << chunk;
    EXPECT_NEAR(*r.range_lu, *want.range_lu, 1e-9) << "chunk " << chunk;
    EXPECT_NEAR(*r.true_peak_dbtp, *want.true_peak_dbtp, 1e-9) << "chunk " << chunk;
    if (!first) {
      first = r;
      continue;
    }
    EXPECT_NEAR(*r.max_momentary_lufs, *first->max_momentary_lufs, 1e-9) << "chunk " << chunk;
    EXPECT_NEAR(*r.max_short_term_lufs, *first->max_short_term_lufs, 1e-9) << "chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(Channels, LoudnessProgramme, ::testing::Values(1, 2, 6));

// A stream of unknown length gives the file's values.
TEST(Loudness, AStreamGivesTheFilesValues) {
  test::TempDir dir;
  const std::vector<float> x = programme(2, kRate * 5 + 77, 5);
  const std::string in = write(dir, "in.wav", 2, x);
  const LoudnessReport file = measure(in, 4096, dir);
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  test::FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), 3, 5000);
  const LoudnessReport stream = measure(dir.file("in.fifo"), 4096, dir);
  ASSERT_TRUE(file.integrated_lufs && stream.integrated_lufs);
  EXPECT_EQ(*stream.integrated_lufs, *file.integrated_lufs);
  EXPECT_EQ(*stream.true_peak_dbtp, *file.true_peak_dbtp);
  EXPECT_EQ(stream.max_momentary_lufs, file.max_momentary_lufs);
}

// Behind a resampler (48 -> 32 kHz) the block measures its own signal at
// its own rate: a -23 dBFS tone still reads -23 LUFS.
TEST(Loudness, AfterARateChangeAtTheBlocksRate) {
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.file = write(dir, "in.wav", 2, tones(2, {{12.0, -23.0}}));
  c.stages = {test::resample_stage("r", 2, 3), loudness_stage("m")};
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("out.wav");
  const RunReport r = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(r.metrics.front().loudness && r.metrics.front().loudness->integrated_lufs);
  EXPECT_NEAR(*r.metrics.front().loudness->integrated_lufs, -23.0, 0.1);
}

// Silence: no block passes the absolute gate, so no integrated loudness.
TEST(Loudness, SilenceHasNoIntegratedLoudness) {
  test::TempDir dir;
  const LoudnessReport r =
      measure(write(dir, "in.wav", 2, std::vector<float>(2 * kRate * 4, 0.0f)), 1048576, dir);
  EXPECT_FALSE(r.integrated_lufs.has_value());
  EXPECT_FALSE(r.true_peak_dbtp.has_value());
}

// What the CUDA path hands the meter (kernels/cuda/loudness.cuh), computed
// here by plain loops: frames [first, first + n) of channel c's K-weighted
// energy per 100 ms step they touch, the filter run from rest at frame
// `from` (0: the exact run; first - settle_frames(): the GPU's).
std::vector<double> step_energies(const kernels::cpu::Bs1770Meter& m, const std::vector<float>& x,
                                  int channels, int c, std::int64_t from, std::int64_t first,
                                  std::int64_t n) {
  const double* a = m.k_a();
  const double* b = m.k_b();
  const std::int64_t step = m.step_frames();
  std::vector<double> e(static_cast<std::size_t>(m.steps_touched(first, n)), 0.0);
  double w[5] = {};
  for (std::int64_t i = std::max<std::int64_t>(from, 0); i < first + n; ++i) {
    w[0] = static_cast<double>(x[static_cast<std::size_t>(i * channels + c)]) - a[1] * w[1] -
           a[2] * w[2] - a[3] * w[3] - a[4] * w[4];
    const double y = b[0] * w[0] + b[1] * w[1] + b[2] * w[2] + b[3] * w[3] + b[4] * w[4];
    std::copy_backward(w, w + 4, w + 5);
    if (i >= first)
      e[static_cast<std::size_t>(i / step - first / step)] += y * y;
  }
  return e;
}

// Feeds `fed` the signal in pieces of `piece` frames as add_measured takes
// them, each piece's K-weighting run from `settle` frames before it (-1:
// exactly, from the signal's start), the peaks by the interpolator's phases;
// with `mixed`, the first pieces go through add() instead (frames may then
// wait for the meter's K-weighting group).
void feed_measured(kernels::cpu::Bs1770Meter& fed, const std::vector<float>& x, int channels,
                   std::int64_t piece, std::int64_t settle, bool mixed = false) {
  const auto frames = static_cast<std::int64_t>(x.size()) / channels;
  for (std::int64_t first = 0; first < frames; first += piece) {
    const std::int64_t n = std::min(piece, frames - first);
    if (mixed && first < frames / 3) {
      std::vector<std::vector<float>> planes(static_cast<std::size_t>(channels));
      std::vector<const float*> p;
      for (int c = 0; c < channels; ++c) {
        for (std::int64_t i = first; i < first + n; ++i)
          planes[static_cast<std::size_t>(c)].push_back(
              x[static_cast<std::size_t>(i * channels + c)]);
        p.push_back(planes[static_cast<std::size_t>(c)].data());
      }
      fed.add(p, n);
      continue;
    }
    std::vector<double> energy, sample(static_cast<std::size_t>(channels)),
        truep(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) {
      const std::vector<double> e =
          step_energies(fed, x, channels, c, settle < 0 ? 0 : first - settle, first, n);
      energy.insert(energy.end(), e.begin(), e.end());
      const auto at = [&](std::int64_t i) {
        return i < 0 ? 0.0f : x[static_cast<std::size_t>(i * channels + c)];
      };
      for (std::int64_t i = first; i < first + n; ++i) {
        sample[static_cast<std::size_t>(c)] =
            std::max(sample[static_cast<std::size_t>(c)], std::abs(static_cast<double>(at(i))));
        for (const auto& p : fed.phases()) {
          double acc = 0.0;
          for (std::size_t t = 0; t < p.coeff.size(); ++t)
            acc += p.coeff[t] * static_cast<double>(at(i - p.delay[t]));
          truep[static_cast<std::size_t>(c)] =
              std::max(truep[static_cast<std::size_t>(c)],
                       std::abs(static_cast<double>(static_cast<float>(acc))));
        }
      }
    }
    fed.add_measured(n, energy, sample, truep);
  }
}

// The meter fed per-step energies and peaks (the CUDA path's hand-over)
// gives the values of the meter fed the frames, exactly computed or
// settled from rest settle_frames() before each piece (what the GPU does;
// its error is under 1e-13 of full scale), at 44.1 and 48 kHz, in pieces
// that do not fall on the 100 ms grid, also after pieces by add() (frames
// waiting for the meter's K-weighting group are filtered first).
TEST(Loudness, MeasuredStepsGiveTheMetersValues) {
  for (const long rate : {44100L, 48000L}) {
    const int channels = 2;
    const std::vector<float> x = programme(channels, rate * 7 + 1234, 41);
    kernels::cpu::Bs1770Meter want(channels, rate);
    std::vector<std::vector<float>> planes(channels);
    for (std::size_t i = 0; i < x.size(); ++i)
      planes[i % channels].push_back(x[i]);
    const float* p[2] = {planes[0].data(), planes[1].data()};
    want.add(p, static_cast<std::int64_t>(planes[0].size()));
    for (const int way : {0, 1, 2}) {
      const bool settled = way > 0, mixed = way == 2;
      SCOPED_TRACE(std::to_string(rate) + (settled ? " Hz, settled" : " Hz, exact") +
                   (mixed ? ", the first third by add()" : ""));
      kernels::cpu::Bs1770Meter got(channels, rate);
      const std::int64_t settle = settled ? got.settle_frames() : -1;
      if (settled) { // 0.18-0.23 s: the 38 Hz high-pass's double pole
        EXPECT_GT(settle, rate / 10);
        EXPECT_LT(settle, rate / 2);
      }
      feed_measured(got, x, channels, 20011, settle, mixed);
      ASSERT_EQ(got.frames(), want.frames());
      ASSERT_TRUE(got.integrated() && want.integrated());
      EXPECT_NEAR(*got.integrated(), *want.integrated(), 1e-9);
      EXPECT_NEAR(got.range(), want.range(), 1e-9);
      EXPECT_NEAR(*got.max_momentary(), *want.max_momentary(), 1e-9);
      EXPECT_NEAR(*got.max_short_term(), *want.max_short_term(), 1e-9);
      EXPECT_NEAR(got.true_peak(), want.true_peak(), 1e-7 * want.true_peak());
    }
  }
}

// measure() (the CPU backend's workers) gives the values of the meter fed
// the frames, for pieces measured out of order, pieces shorter than the
// settling, and pieces across the K-weighting groups, at 44.1, 48 and 96 kHz
// and in 1, 2 and 6 channels.
TEST(Loudness, PiecesMeasuredAnywhereGiveTheMetersValues) {
  for (const auto& [rate, channels, piece] :
       {std::tuple{48000L, 2, std::int64_t{65536}}, std::tuple{44100L, 1, std::int64_t{40009}},
        std::tuple{96000L, 6, std::int64_t{131072}}, std::tuple{48000L, 2, std::int64_t{3001}}}) {
    SCOPED_TRACE(std::to_string(rate) + " Hz, " + std::to_string(channels) + " ch, pieces of " +
                 std::to_string(piece));
    const std::int64_t frames = rate * 6 + 977;
    const std::vector<float> x = programme(channels, frames, 57);
    kernels::cpu::Bs1770Meter want(channels, rate);
    // Planes with the settling's zeros before the signal.
    const std::int64_t pad = want.settle_frames();
    std::vector<std::vector<float>> planes(static_cast<std::size_t>(channels),
                                           std::vector<float>(static_cast<std::size_t>(pad)));
    for (std::size_t i = 0; i < x.size(); ++i)
      planes[i % static_cast<std::size_t>(channels)].push_back(x[i]);
    std::vector<const float*> whole;
    for (const auto& p : planes)
      whole.push_back(p.data() + pad);
    want.add(whole, frames);
    // Measured last piece first, then fed in order.
    struct Part {
      std::int64_t first, n;
      std::vector<double> energy, sample, truep;
    };
    std::vector<Part> parts;
    for (std::int64_t first = 0; first < frames; first += piece)
      parts.push_back({first, std::min(piece, frames - first), {}, {}, {}});
    const kernels::cpu::Bs1770Meter measurer(channels, rate);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      std::vector<const float*> at;
      for (const auto& p : planes)
        at.push_back(p.data() + pad + it->first);
      measurer.measure(at, it->first, it->n, it->energy, it->sample, it->truep);
    }
    kernels::cpu::Bs1770Meter got(channels, rate);
    for (const Part& p : parts)
      got.add_measured(p.n, p.energy, p.sample, p.truep);
    ASSERT_TRUE(got.integrated() && want.integrated());
    EXPECT_NEAR(*got.integrated(), *want.integrated(), 1e-9);
    EXPECT_NEAR(got.range(), want.range(), 1e-9);
    EXPECT_NEAR(*got.max_momentary(), *want.max_momentary(), 1e-9);
    EXPECT_NEAR(*got.max_short_term(), *want.max_short_term(), 1e-9);
    EXPECT_EQ(got.true_peak(), want.true_peak());
  }
}

// A stage after the block that lengthens the signal (a full FIR) gives the
// block's last chunk, or a chunk's last piece, no frames of its own: it
// hands the meter nothing (the block's values are libebur128's of the
// source). Chunks of 100,000 with a source that ends 100 frames before one;
// pieces of 16 settlings (162,000 frames at 48 kHz) likewise.
TEST(Loudness, ALaterStagesTailLeavesTheBlockNothingToAdd) {
  for (const auto& [frames, chunk] : {std::pair{std::int64_t{199900}, std::int64_t{100000}},
                                      std::pair{std::int64_t{323900}, std::int64_t{1048576}}}) {
    SCOPED_TRACE(std::to_string(frames) + " frames, chunks of " + std::to_string(chunk));
    test::TempDir dir;
    const std::vector<float> x = programme(2, frames, 71);
    Config c;
    c.origin = "test";
    c.source.file = write(dir, "in.wav", 2, x);
    c.stages = {loudness_stage("m"), test::fir_stage("f", test::random_taps_unit_energy(255, 7),
                                                     FirMode::full, FirMethod::direct)};
    c.execution.backend = BackendKind::cpu;
    c.execution.chunk_frames = chunk;
    c.sink.file = dir.file("out.wav");
    const RunReport r = run_pipeline(c, RunOptions{});
    ASSERT_TRUE(r.metrics.front().loudness && r.metrics.front().loudness->integrated_lufs);
    EXPECT_EQ(r.output_frames, frames + 254);
    const LoudnessReport want = direct(2, x);
    EXPECT_NEAR(*r.metrics.front().loudness->integrated_lufs, *want.integrated_lufs, 1e-9);
    EXPECT_NEAR(*r.metrics.front().loudness->true_peak_dbtp, *want.true_peak_dbtp, 1e-9);
  }
}

// A piece's sizes must match the steps it touches.
TEST(Loudness, MeasuredStepsOfTheWrongShapeAreRefused) {
  kernels::cpu::Bs1770Meter m(2, 48000);
  const std::vector<double> peaks(2, 0.5);
  EXPECT_THROW(m.add_measured(4801, std::vector<double>(2, 1.0), peaks, peaks),
               std::invalid_argument);
  EXPECT_NO_THROW(m.add_measured(4801, std::vector<double>(4, 1.0), peaks, peaks));
  EXPECT_EQ(m.frames(), 4801);
}

} // namespace
} // namespace sigstream
