#pragma once
// A metrics stage as the config gives it: optionally a spectrum (SPEC §8),
// Welch's PSD per channel, as scipy.signal.welch(x, fs, window,
// nperseg=nfft, noverlap=floor(nfft * overlap), detrend=False,
// scaling='density'). StageSpec::params holds it.
#include <optional>

#include "stages/types.hpp"

namespace sigstream {

struct SpectrumSpec {
  int nfft = 4096;
  double overlap = 0.5;  // [0, 1): the segments' overlap as a fraction of nfft
  WindowSpec window{WindowKind::hann, 0.0};
};

struct MetricsSpec {
  std::optional<SpectrumSpec> spectrum;  // when the stage asks for one
};

}  // namespace sigstream
