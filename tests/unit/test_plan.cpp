// The plan: halos per mode, lengths through cascades, chunk geometry, taps files.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/plan.hpp"
#include "stage_builders.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/spec.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

StageSpec fir(std::vector<double> taps, FirMode mode) {
  StageSpec s;
  s.type = kFirType;
  s.name = "f";
  s.as<FirSpec>().taps = std::move(taps);
  s.as<FirSpec>().mode = mode;
  return s;
}

SourceInfo source(std::int64_t frames) {
  return test::pcm16_stereo_source(frames);
}

TEST(Plan, HalosAndLengthsFollowTheModes) {
  Config c;
  c.execution.chunk_frames = 100;
  c.stages = {fir(std::vector<double>(10, 0.1), FirMode::same),   // K=10: back 5, ahead 4
              fir(std::vector<double>(7, 0.1), FirMode::full),    // back 6, length +6
              fir(std::vector<double>(3, 0.1), FirMode::causal)}; // back 2
  const Plan p = make_plan(c, source(1000), 16);
  EXPECT_EQ(p.stages[0].lookback, 5);
  EXPECT_EQ(p.stages[0].lookahead, 4);
  EXPECT_EQ(p.stages[1].lookback, 6);
  EXPECT_EQ(p.stages[1].frames_out, 1006);
  EXPECT_EQ(p.output_frames, 1006);
  EXPECT_EQ(p.back, 5 + 6 + 2);
  EXPECT_EQ(p.ahead, 4);
  EXPECT_EQ(p.stages[0].in_back, 13);
  EXPECT_EQ(p.stages[2].in_back, 2);
  EXPECT_EQ(p.num_chunks, 11);
  EXPECT_EQ(p.chunk_length(10), 6);
  EXPECT_EQ(p.block_frames(0), 100 + 13 + 4);
  EXPECT_EQ(p.output_type, SampleType::i16);
  EXPECT_EQ(p.metric_names.back(), "output");
}

TEST(Plan, DesignedFilterAboveNyquistOfTheFileIsAConfigError) {
  Config c;
  StageSpec s;
  s.type = kFirType;
  s.name = "lp";
  s.as<FirSpec>().design = DesignSpec{FilterKind::lowpass, {30000.0}, 31, {}};
  c.stages = {s};
  try {
    (void)make_plan(c, source(10), 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("stage 'lp'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("24000"), std::string::npos) << e.what();
  }
}

TEST(TapsFile, ReadsNumbersCommentsAndBlankLines) {
  test::TempDir dir;
  const std::string path = dir.file("taps.txt");
  std::ofstream(path) << "# designed somewhere\n0.25\n\n  -0.5  # middle\n1e-3\r\n";
  const auto taps = read_taps_file(path);
  ASSERT_EQ(taps.size(), 3u);
  EXPECT_EQ(taps[0], 0.25);
  EXPECT_EQ(taps[1], -0.5);
  EXPECT_EQ(taps[2], 1e-3);
}

TEST(TapsFile, BadLinesNameFileAndLine) {
  test::TempDir dir;
  const std::string path = dir.file("bad.txt");
  std::ofstream(path) << "0.5\nabc\n";
  try {
    (void)read_taps_file(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "0.5\nnan\n";
  EXPECT_THROW((void)read_taps_file(path), Error);
  std::ofstream(path) << "# only a comment\n";
  EXPECT_THROW((void)read_taps_file(path), Error);
  try {
    (void)read_taps_file(dir.file("missing.txt"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
  }
}

// Issue P10: a taps file is bounded: lines of at most 4096 characters (a
// binary file is not read into memory whole) and at most kMaxTaps numbers;
// a last line without a newline still counts.
TEST(TapsFile, LongLinesAndTooManyTapsAreConfigErrors) {
  test::TempDir dir;
  const std::string path = dir.file("taps.txt");
  auto message = [&] {
    try {
      (void)read_taps_file(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::config) << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::ofstream(path) << "0.5\n"
                      << std::string(4000, ' ') << "0.25 # padded to 4096 characters"
                      << std::string(60, ' ') << "\n-1e-3";
  const auto taps = read_taps_file(path);
  ASSERT_EQ(taps.size(), 3u);
  EXPECT_EQ(taps[2], -1e-3);
  std::ofstream(path) << "0.5\n" << std::string(5000, '1') << "\n";
  EXPECT_NE(message().find("taps.txt:2: line longer than 4096 characters"), std::string::npos)
      << message();
  {
    std::ofstream out(path);
    const std::string line = "0.125\n";
    std::string block;
    for (int i = 0; i < 4096; ++i)
      block += line;
    for (int i = 0; i < kMaxTaps / 4096; ++i)
      out << block;
    out << "7\n";
  }
  EXPECT_NE(message().find("taps.txt:" + std::to_string(kMaxTaps + 1) +
                           ": more than 16777216 coefficients"),
            std::string::npos)
      << message();
}

// A file's seconds on one GPU (cuda_seconds_estimate), for a batch's choice
// of GPUs: the GPU-bound bench file (30 s stereo, 65,536 taps direct, a
// resample to 44.1 kHz) took 7.3 ms a file on an H100 (bench/RESULTS.md,
// stop 47); a direct FIR grows with its taps; the FFT method and a light
// file are a fraction of a millisecond, bound by the copies.
TEST(Plan, AFilesGpuSecondsFollowTheKernelsAndTheCopies) {
  const std::int64_t frames = 30 * 48000 + 17;
  const auto gpu_s = [&](std::vector<StageSpec> stages) {
    Config c;
    c.stages = std::move(stages);
    Plan p = make_plan(c, source(frames), 0);
    resolve_methods(p, "cuda");
    return cuda_seconds_estimate(p);
  };
  const std::vector<double> long_taps(65536, 1.0 / 65536);
  const double heavy = gpu_s({test::fir_stage("lp", long_taps, FirMode::causal, FirMethod::direct),
                              test::resample_stage("r", 147, 160)});
  EXPECT_GT(heavy, 0.005);
  EXPECT_LT(heavy, 0.012);
  const double copies = gpu_s({});
  const double fir_only =
      gpu_s({test::fir_stage("lp", long_taps, FirMode::causal, FirMethod::direct)});
  const double half = gpu_s({test::fir_stage("lp", std::vector<double>(32768, 1.0 / 32768),
                                             FirMode::causal, FirMethod::direct)});
  EXPECT_NEAR((fir_only - copies) / (half - copies), 2.0, 0.01);
  const double fft = gpu_s({test::fir_stage("lp", long_taps, FirMode::causal, FirMethod::fft)});
  const double light = gpu_s({test::fir_stage("lp", std::vector<double>(255, 1.0 / 255),
                                              FirMode::causal, FirMethod::automatic)});
  for (const double s : {fft, light}) {
    EXPECT_GT(s, 1e-4);
    EXPECT_LT(s, 1e-3);
  }
  EXPECT_GT(copies, 1e-4);
  // A batch runs fewer files a GPU where the GPU bounds them
  // (gpu_bound_file): the GPU-bound bench file (a 16-bit WAV in, a WAV out
  // at 44.1 kHz) is past that line per sample the host reads or writes, a
  // light one well under it; the same work is not GPU-bound from a
  // compressed input, into a compressed output, or of unknown length.
  const double in = static_cast<double>(frames) * 2;
  const double wav_bytes = in * 2 + 44;
  FileSeconds est;
  est.cuda = heavy;
  est.samples = in;
  est.output_samples = in * 147 / 160;
  EXPECT_GE(heavy / (est.samples + est.output_samples), 1.5 * kGpuBoundSecondsPerHostSample);
  EXPECT_LT(light / (2 * in), kGpuBoundSecondsPerHostSample / 2);
  EXPECT_TRUE(gpu_bound_file(est, wav_bytes));
  EXPECT_TRUE(gpu_bound_file(est, 2 * wav_bytes));   // float32
  EXPECT_FALSE(gpu_bound_file(est, wav_bytes / 2));  // FLAC-like
  EXPECT_FALSE(gpu_bound_file(est, wav_bytes / 10)); // MP3-like
  FileSeconds out = est;
  out.output_compressed = true;
  EXPECT_FALSE(gpu_bound_file(out, wav_bytes));
  FileSeconds up = est; // to 4 x the rate: four times the samples written
  up.output_samples = 8 * in;
  EXPECT_FALSE(gpu_bound_file(up, wav_bytes));
  FileSeconds lit = est;
  lit.cuda = light;
  lit.output_samples = in;
  EXPECT_FALSE(gpu_bound_file(lit, wav_bytes));
  FileSeconds unknown = est;
  unknown.samples = 0.0;
  EXPECT_FALSE(gpu_bound_file(unknown, wav_bytes));
  unknown = est;
  unknown.cuda = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(gpu_bound_file(unknown, wav_bytes));
}

// How many GPUs a batch lets the driver see (gpus_that_pay): one more while
// it saves more than a GPU's start and release (0.6 s), W / k - W / (k + 1).
TEST(Plan, AFurtherGpuOnlyWhereItsStartPays) {
  EXPECT_EQ(gpus_that_pay(0.0, 4), 1);
  EXPECT_EQ(gpus_that_pay(1.19, 4), 1); // a second saves 0.595 s
  EXPECT_EQ(gpus_that_pay(1.5, 4), 2);  // 200 GPU-bound files: two (measured best)
  EXPECT_EQ(gpus_that_pay(3.61, 4), 3); // a third saves 0.602 s
  EXPECT_EQ(gpus_that_pay(7.19, 4), 3);
  EXPECT_EQ(gpus_that_pay(7.3, 4), 4);
  EXPECT_EQ(gpus_that_pay(100.0, 4), 4); // never more than listed
  EXPECT_EQ(gpus_that_pay(100.0, 1), 1);
  EXPECT_EQ(gpus_that_pay(100.0, 64), 13); // 0.6 x 13 x 14 = 109.2
  EXPECT_EQ(gpus_that_pay(std::numeric_limits<double>::infinity(), 8), 8);
  // A list: keeping its first k, the driver sees the GPUs up to the k-th.
  EXPECT_EQ(gpus_that_pay(1.0, std::vector<int>{2, 3}), 1); // 0.6 x 3 + 1.0 < 0.6 x 4 + 0.5
  EXPECT_EQ(gpus_that_pay(2.0, std::vector<int>{2, 3}), 2); // 3.8 > 3.4
  EXPECT_EQ(gpus_that_pay(3.0, std::vector<int>{0, 5}), 1); // 3.6 < 0.6 x 6 + 1.5
  EXPECT_EQ(gpus_that_pay(1.5, std::vector<int>{0, 1, 2, 3}), gpus_that_pay(1.5, 4));
  EXPECT_EQ(gpus_that_pay(std::numeric_limits<double>::infinity(), std::vector<int>{0, 5}), 2);
  EXPECT_EQ(gpus_that_pay(9.0, std::vector<int>{7}), 1);
  // The least over every k, not the first that stops paying: 7.6, 7.7, 7.13, 7.15 s.
  EXPECT_EQ(gpus_that_pay(7.0, std::vector<int>{0, 6, 7, 8}), 3);
}

} // namespace
} // namespace sigstream
