#pragma once
// Builders for configs and stages, the synthetic test signal, and the float64
// reference of a stage chain (SPEC §3), shared by the pipeline tests of both
// backends.
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/pipeline.hpp"
#include "stages/fir/spec.hpp"
#include "stages/gain/spec.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/resample/spec.hpp"
#include "test_support.hpp"

namespace sigstream::test {

// How a YAML config (`origin` names it in messages) ends when it is run:
// the error it throws, or nothing when it runs through (bad-input tests).
inline std::optional<Error> pipeline_error(const std::string& yaml, const std::string& origin) {
  try {
    run_pipeline(parse_config(yaml, origin), RunOptions{});
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// What a stereo 16-bit 48 kHz file of `frames` frames tells the planner.
inline SourceInfo pcm16_stereo_source(std::int64_t frames) {
  SourceInfo i;
  i.sample_rate = 48000;
  i.channels = 2;
  i.frames = frames;
  i.sample_type = SampleType::i16;
  i.bits = 16;
  return i;
}

inline StageSpec fir_stage(const std::string& name, std::vector<double> taps, FirMode mode,
                           FirMethod method = FirMethod::automatic) {
  StageSpec s;
  s.type = kFirType;
  s.name = name;
  s.as<FirSpec>().taps = std::move(taps);
  s.as<FirSpec>().mode = mode;
  s.as<FirSpec>().method = method;
  return s;
}

inline StageSpec gain_stage(const std::string& name, double linear) {
  StageSpec s;
  s.type = kGainType;
  s.name = name;
  s.as<GainSpec>().linear = linear;
  return s;
}

inline StageSpec resample_stage(const std::string& name, int up, int down) {
  StageSpec s;
  s.type = kResampleType;
  s.name = name;
  s.as<ResampleSpec>().up = up;
  s.as<ResampleSpec>().down = down;
  return s;
}

// A resampling ratio, for parameterised tests.
struct Ratio {
  int up, down;
};

inline StageSpec metrics_stage(const std::string& name) {
  StageSpec s;
  s.type = kMetricsType;
  s.name = name;
  return s;
}

// A metrics stage with a spectrum (SPEC §8).
inline StageSpec spectrum_stage(const std::string& name, int nfft, double overlap,
                                WindowKind window) {
  StageSpec s = metrics_stage(name);
  SpectrumSpec sp;
  sp.nfft = nfft;
  sp.overlap = overlap;
  sp.window = WindowSpec{window, 0.0};
  s.as<MetricsSpec>().spectrum = sp;
  return s;
}

// Two tones (one on channel 0 only) plus seeded uniform noise at 48 kHz.
inline SynthSpec noise_synth(std::int64_t frames, int channels, std::uint64_t seed) {
  SynthSpec s;
  s.sample_rate = 48000;
  s.frames = frames;
  s.channels = channels;
  s.tones = {{440.0, 0.3, 10.0, std::nullopt}, {3000.0, 0.2, 0.0, 0}};
  s.noise = NoiseSpec{NoiseKind::uniform, 0.3, seed};
  return s;
}

// Random taps with unit energy overall (each ~1/sqrt(K)).
inline std::vector<double> random_taps_unit_energy(int k, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> t(static_cast<std::size_t>(k));
  for (double& v : t)
    v = d(rng) / std::sqrt(static_cast<double>(k));
  return t;
}

// The source signal the pipeline sees, planar, as float values.
inline std::vector<std::vector<double>> source_planes(const SynthSpec& spec) {
  auto src = make_synth_source(spec);
  const auto& info = src->info();
  HostBlock b;
  b.type = SampleType::f32;
  b.channels = info.channels;
  b.frames = info.frames;
  std::vector<float> data(static_cast<std::size_t>(info.frames * info.channels));
  b.data = std::shared_ptr<std::byte>(reinterpret_cast<std::byte*>(data.data()), [](std::byte*) {});
  src->read(b, 0, info.frames);
  std::vector<std::vector<double>> planes(static_cast<std::size_t>(info.channels));
  for (int c = 0; c < info.channels; ++c)
    for (std::int64_t i = 0; i < info.frames; ++i)
      planes[static_cast<std::size_t>(c)].push_back(
          data[static_cast<std::size_t>(i * info.channels + c)]);
  return planes;
}

// Applies the fir and gain stages in float64 (SPEC §3).
inline std::vector<double> reference_chain(std::vector<double> x,
                                           const std::vector<StageSpec>& stages) {
  for (const StageSpec& s : stages) {
    if (s.type == kFirType)
      x = reference_fir(x, s.as<FirSpec>().taps, s.as<FirSpec>().mode);
    if (s.type == kGainType)
      for (double& v : x)
        v *= s.as<GainSpec>().linear;
  }
  return x;
}

} // namespace sigstream::test
