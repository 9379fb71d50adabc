// QA of the metrics stage's spectrum (SPEC §8) on the CPU backend: Welch's
// PSD against a float64 reference written here from the definition (a
// periodic window from its formula, a direct DFT of each windowed segment,
// the one-sided density scaling of scipy.signal.welch(detrend=False)), on
// noise with tones, odd nfft and overlaps, a block before and after a FIR
// and a gain; chunkings, pieces, a stream of unknown length and live mode
// count the same segments and give the same spectrum; asking for it
// changes no byte of the audio; a signal shorter than nfft has none.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "spectrum_cases.hpp"
#include "stage_builders.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"
#include "welch_reference.hpp"

namespace sigstream {
namespace {

using test::max_rel_to_peak;
using test::spectrum_stage;

// scipy.signal.welch(x, rate, window, nperseg=nfft, noverlap, detrend=False).
std::vector<double> welch_reference(const std::vector<double>& x, double rate, WindowKind kind,
                                    int nfft, int noverlap) {
  return test::welch_reference(x, test::periodic_window(kind, nfft), nfft - noverlap, rate);
}

struct Case {
  int nfft;
  double overlap;
  WindowKind window;
};

class SpectrumQa : public ::testing::TestWithParam<Case> {};

TEST_P(SpectrumQa, EqualsWelchAndChunkingIsInvisible) {
  const auto [nfft, overlap, window] = GetParam();
  const int noverlap = static_cast<int>(std::floor(nfft * overlap));
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(20011, 2, 41);
  c.stages = {
      spectrum_stage("before", nfft, overlap, window),
      test::fir_stage("f", test::random_taps_unit_energy(31, 3), FirMode::same, FirMethod::direct),
      test::gain_stage("g", 0.5), spectrum_stage("after", nfft, overlap, window)};
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  const auto planes = test::source_planes(*c.source.synth);
  std::vector<SpectrumReport> first; // the first chunking's blocks
  for (const std::int64_t chunk :
       {std::int64_t{1048576}, std::int64_t{1}, std::int64_t{997}, std::int64_t{4096}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    c.execution.chunk_frames = chunk;
    c.sink.file = dir.file("o.wav");
    const RunReport r = run_pipeline(c, RunOptions{});
    ASSERT_TRUE(r.metrics[0].spectrum && r.metrics[1].spectrum);
    EXPECT_FALSE(r.metrics.back().spectrum) << "the output block has no spectrum";
    const SpectrumReport& b = *r.metrics[0].spectrum;
    const SpectrumReport& f = *r.metrics[1].spectrum;
    EXPECT_EQ(b.segments, (20011 - nfft) / (nfft - noverlap) + 1);
    EXPECT_EQ(f.segments, b.segments);
    EXPECT_DOUBLE_EQ(b.freq_hz[1], 48000.0 / nfft);
    if (first.empty()) { // against the definition, on the source and on the output file
      const test::Audio a = test::read_audio(*c.sink.file);
      for (int ch = 0; ch < 2; ++ch) {
        std::vector<double> out;
        for (std::int64_t i = 0; i < a.frames; ++i)
          out.push_back(a.samples[static_cast<std::size_t>(i * 2 + ch)]);
        const auto cc = static_cast<std::size_t>(ch);
        const std::vector<double> want_before =
            welch_reference(planes[cc], 48000, window, nfft, noverlap);
        ASSERT_EQ(b.psd[cc].size(), want_before.size());
        EXPECT_LT(max_rel_to_peak(b.psd[cc], want_before), 1e-9) << "channel " << ch;
        EXPECT_LT(max_rel_to_peak(f.psd[cc], welch_reference(out, 48000, window, nfft, noverlap)),
                  1e-9)
            << "channel " << ch;
      }
      first = {b, f};
      continue;
    }
    for (std::size_t ch = 0; ch < 2; ++ch) { // the same segments, summed in another order
      EXPECT_LT(max_rel_to_peak(b.psd[ch], first[0].psd[ch]), 1e-12);
      EXPECT_LT(max_rel_to_peak(f.psd[ch], first[1].psd[ch]), 1e-12);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SpectrumQa,
                         ::testing::Values(Case{256, 0.5, WindowKind::hann},
                                           Case{199, 0.3, WindowKind::hamming},
                                           Case{64, 0.0, WindowKind::hann},
                                           Case{300, 0.9, WindowKind::hann}));

TEST(SpectrumQa, AskingForItChangesNoByteOfTheAudio) {
  test::TempDir dir;
  Config c = test::spectrum_invariance_config(BackendKind::cpu);
  c.sink.file = dir.file("plain.wav");
  const RunReport plain = run_pipeline(c, RunOptions{});
  c.stages[1] = spectrum_stage("m", 512, 0.5, WindowKind::hann);
  c.sink.file = dir.file("spectrum.wav");
  const RunReport with = run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::slurp_bytes(dir.file("plain.wav")), test::slurp_bytes(dir.file("spectrum.wav")));
  EXPECT_EQ(plain.metrics[0].totals[0].energy, with.metrics[0].totals[0].energy);
  EXPECT_FALSE(plain.metrics[0].spectrum);
  ASSERT_TRUE(with.metrics[0].spectrum);
  EXPECT_EQ(with.metrics[0].spectrum->segments, (30011 - 512) / 256 + 1);
}

TEST(SpectrumQa, AStreamAndLiveModeGiveTheFilesSpectrum) {
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  Config c = test::spectrum_file_config(in);
  c.execution.chunk_frames = 997;
  c.sink.file = dir.file("file.wav");
  const RunReport file = run_pipeline(c, RunOptions{});
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  RunReport stream;
  {
    test::FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), 5, 4099);
    c.source.file = dir.file("in.fifo");
    c.sink.file = dir.file("stream.wav");
    stream = run_pipeline(c, RunOptions{});
  }
  c.source.file = in;
  c.execution.latency_ms = 1.0;
  c.sink.file = dir.file("live.wav");
  const RunReport live = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(file.metrics[0].spectrum && stream.metrics[0].spectrum && live.metrics[0].spectrum);
  EXPECT_EQ(file.metrics[0].spectrum->segments, (30011 - 1000) / 500 + 1);
  for (const RunReport* r : {static_cast<const RunReport*>(&stream), &live}) {
    EXPECT_EQ(r->metrics[0].spectrum->segments, file.metrics[0].spectrum->segments);
    for (std::size_t ch = 0; ch < 2; ++ch)
      EXPECT_LT(max_rel_to_peak(r->metrics[0].spectrum->psd[ch], file.metrics[0].spectrum->psd[ch]),
                1e-12);
  }
}

TEST(SpectrumQa, ASignalShorterThanNfftHasNone) {
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(100, 1, 3);
  c.stages = {spectrum_stage("m", 256, 0.5, WindowKind::hann)};
  c.execution.backend = BackendKind::cpu;
  const RunReport r = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(r.metrics[0].spectrum);
  EXPECT_EQ(r.metrics[0].spectrum->segments, 0);
  EXPECT_EQ(r.metrics[0].spectrum->freq_hz.size(), 129u);
}

// The figures' excerpt (RunReport::excerpt): the source and the output
// over the same time, whatever the chunking, also across a rate change.
TEST(FigureData, TheExcerptIsTheSourceAndTheOutputAtItsFrames) {
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(50021, 2, 47);
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  const auto planes = test::source_planes(*c.source.synth);
  for (const bool resample : {false, true}) {
    c.stages = {test::fir_stage("f", test::random_taps_unit_energy(31, 3), FirMode::same,
                                FirMethod::direct)};
    if (resample)
      c.stages.push_back(test::resample_stage("r", 1, 3));
    for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{997}}) {
      SCOPED_TRACE(std::string(resample ? "resample" : "fir") + ", chunk " + std::to_string(chunk));
      c.execution.chunk_frames = chunk;
      c.sink.file = dir.file("o.wav");
      const RunReport r = run_pipeline(c, RunOptions{});
      ASSERT_TRUE(r.excerpt);
      const ExcerptReport& e = *r.excerpt;
      EXPECT_EQ(e.source_start, 50021 / 4);
      EXPECT_EQ(e.source[0].size(), 1920u); // 40 ms at 48 kHz
      EXPECT_EQ(e.output_rate, resample ? 16000.0 : 48000.0);
      EXPECT_EQ(e.output_start, resample ? e.source_start / 3 : e.source_start);
      EXPECT_EQ(e.output[0].size(), resample ? 640u : 1920u);
      const test::Audio a = test::read_audio(*c.sink.file);
      for (std::size_t ch = 0; ch < 2; ++ch) {
        for (std::size_t i = 0; i < e.source[ch].size(); ++i)
          ASSERT_EQ(e.source[ch][i],
                    static_cast<float>(planes[ch][static_cast<std::size_t>(e.source_start) + i]));
        for (std::size_t i = 0; i < e.output[ch].size(); ++i)
          ASSERT_EQ(e.output[ch][i],
                    a.samples[(static_cast<std::size_t>(e.output_start) + i) * 2 + ch]);
      }
    }
  }
  // Live mode records the same excerpt.
  c.stages = {
      test::fir_stage("f", test::random_taps_unit_energy(31, 3), FirMode::same, FirMethod::direct)};
  c.execution.chunk_frames = 1048576;
  c.sink.file = dir.file("file.wav");
  const RunReport file = run_pipeline(c, RunOptions{});
  c.execution.latency_ms = 1.0;
  for (const bool with_sink : {true, false}) {
    c.sink.file = with_sink ? std::optional<std::string>(dir.file("live.wav")) : std::nullopt;
    const RunReport live = run_pipeline(c, RunOptions{});
    ASSERT_TRUE(live.excerpt && file.excerpt);
    EXPECT_EQ(live.excerpt->source, file.excerpt->source);
    EXPECT_EQ(live.excerpt->output, file.excerpt->output)
        << (with_sink ? "with" : "without") << " a sink";
  }
  c.execution.latency_ms.reset();
  c.source.synth = test::noise_synth(10, 1, 3); // shorter than 40 ms: all of it
  c.stages = {};
  c.sink.file = dir.file("short.wav");
  const RunReport r = run_pipeline(c, RunOptions{});
  ASSERT_TRUE(r.excerpt);
  EXPECT_EQ(r.excerpt->source_start, 0);
  EXPECT_EQ(r.excerpt->source[0].size(), 10u);
}

} // namespace
} // namespace sigstream
