#pragma once
// Configs the spectrum tests of both backends share (stages/metrics/test_spectrum*).
#include <sndfile.h>

#include <string>

#include "pipeline/config.hpp"
#include "stage_builders.hpp"
#include "test_support.hpp"

namespace sigstream::test {

// 30011 frames of stereo noise through a 63-tap direct FIR, a plain metrics
// block (stages[1]: a test swaps in a spectrum) and a full 17-tap FFT FIR,
// chunks of 4099 frames. The direct FIR before the block: its look-back
// makes the stages before it compute nfft - 1 more frames a chunk once the
// block has a spectrum.
inline Config spectrum_invariance_config(BackendKind backend) {
  Config c;
  c.origin = "test";
  c.source.synth = noise_synth(30011, 2, 43);
  c.stages = {fir_stage("f", random_taps_unit_energy(63, 3), FirMode::causal, FirMethod::direct),
              metrics_stage("m"),
              fir_stage("f2", random_taps_unit_energy(17, 4), FirMode::full, FirMethod::fft)};
  c.execution.backend = backend;
  c.execution.chunk_frames = 4099;
  return c;
}

// Writes 30011 frames of stereo 16-bit noise to the WAV `in` and returns a
// CPU config reading it through a 31-tap FIR and a 1000-point spectrum.
inline Config spectrum_file_config(const std::string& in) {
  write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2,
              random_samples(30011 * 2, 4, 0.9f, 16));
  Config c;
  c.origin = "test";
  c.stages = {fir_stage("f", random_taps_unit_energy(31, 5), FirMode::same, FirMethod::direct),
              spectrum_stage("m", 1000, 0.5, WindowKind::hann)};
  c.execution.backend = BackendKind::cpu;
  c.source.file = in;
  return c;
}

} // namespace sigstream::test
