// QA of the metrics stage's spectrum on CUDA (kernels/cuda/welch.cu): the
// CPU backend's spectrum (checked against the definition in
// test_spectrum.cpp) to 1e-12, the same segment counts, over chunkings and
// lanes, blocks before and after a FIR and a resampler, and a stream of
// unknown length; asking for it changes no byte of the GPU's audio.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "pipeline/pipeline.hpp"
#include "spectrum_cases.hpp"
#include "stage_builders.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"
#include "welch_reference.hpp"

namespace sigstream {
namespace {

using test::max_rel_to_peak;

void expect_same_spectra(const RunReport& cpu, const RunReport& gpu) {
  ASSERT_EQ(cpu.metrics.size(), gpu.metrics.size());
  for (std::size_t slot = 0; slot < cpu.metrics.size(); ++slot) {
    ASSERT_EQ(cpu.metrics[slot].spectrum.has_value(), gpu.metrics[slot].spectrum.has_value())
        << "slot " << slot;
    if (!cpu.metrics[slot].spectrum)
      continue;
    const SpectrumReport& a = *cpu.metrics[slot].spectrum;
    const SpectrumReport& b = *gpu.metrics[slot].spectrum;
    EXPECT_GT(a.segments, 0);
    EXPECT_EQ(a.segments, b.segments) << "slot " << slot;
    EXPECT_EQ(a.freq_hz, b.freq_hz);
    for (std::size_t c = 0; c < a.psd.size(); ++c)
      EXPECT_LT(max_rel_to_peak(b.psd[c], a.psd[c]), 1e-12) << "slot " << slot << ", channel " << c;
  }
}

TEST(SpectrumCuda, GivesTheCpusSpectrum) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(70001, 3, 9);
  c.stages = {
      test::spectrum_stage("before", 1024, 0.5, WindowKind::hann),
      test::fir_stage("f", test::random_taps_unit_energy(63, 3), FirMode::same, FirMethod::direct),
      test::spectrum_stage("after", 999, 0.3, WindowKind::hann),
      test::resample_stage("r", 147, 160),
      test::spectrum_stage("resampled", 512, 0.75, WindowKind::hann),
      test::fir_stage("f2", test::random_taps_unit_energy(17, 4), FirMode::full,
                      FirMethod::direct)};
  c.sink.format = SampleFormat::float32;
  c.execution.backend = BackendKind::cpu;
  c.sink.file = dir.file("cpu.wav");
  const RunReport cpu = run_pipeline(c, RunOptions{});
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}, std::int64_t{997}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = chunk;
    c.execution.streams = 3;
    c.sink.file = dir.file("cuda.wav");
    const RunReport gpu = run_pipeline(c, RunOptions{});
    expect_same_spectra(cpu, gpu);
    EXPECT_EQ(test::slurp_bytes(dir.file("cpu.wav")), test::slurp_bytes(dir.file("cuda.wav")));
  }
}

TEST(SpectrumCuda, AskingForItChangesNoByteOfTheAudio) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  // Direct before the block: its look-back makes the stages before it
  // compute nfft - 1 more frames a chunk, which moves an FFT stage's blocks
  // (its output then moves within SPEC §3, as with another chunk size).
  Config c = test::spectrum_invariance_config(BackendKind::cuda);
  c.sink.file = dir.file("plain.wav");
  run_pipeline(c, RunOptions{});
  c.stages[1] = test::spectrum_stage("m", 512, 0.5, WindowKind::hann);
  c.sink.file = dir.file("spectrum.wav");
  const RunReport with = run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::slurp_bytes(dir.file("plain.wav")), test::slurp_bytes(dir.file("spectrum.wav")));
  ASSERT_TRUE(with.metrics[0].spectrum);
  EXPECT_EQ(with.metrics[0].spectrum->segments, (30011 - 512) / 256 + 1);
}

TEST(SpectrumCuda, AStreamOfUnknownLengthGivesTheFilesSpectrum) {
  if (!test::have_device())
    GTEST_SKIP() << "no CUDA device";
  test::TempDir dir;
  const std::string in = dir.file("in.wav");
  Config c = test::spectrum_file_config(in);
  c.sink.file = dir.file("file.wav");
  const RunReport file = run_pipeline(c, RunOptions{});
  std::vector<unsigned char> bytes = test::slurp_bytes(in);
  test::mark_unknown_length(bytes);
  RunReport stream;
  {
    test::FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), 5, 4099);
    c.source.file = dir.file("in.fifo");
    c.sink.file = dir.file("stream.wav");
    c.execution.backend = BackendKind::cuda;
    c.execution.chunk_frames = 997;
    stream = run_pipeline(c, RunOptions{});
  }
  expect_same_spectra(file, stream);
}

} // namespace
} // namespace sigstream
