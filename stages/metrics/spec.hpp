#pragma once
// A metrics stage as the config gives it: optionally a spectrum (SPEC §8),
// Welch's PSD per channel, as scipy.signal.welch(x, fs, window,
// nperseg=nfft, noverlap=floor(nfft * overlap), detrend=False,
// scaling='density'). StageSpec::params holds it; PlannedStage::params the
// planned spectrum.
#include <optional>
#include <string>
#include <vector>

#include "model/stage_type.hpp"
#include "stages/types.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: metrics`).
inline constexpr StageType kMetricsType{"metrics"};

struct SpectrumSpec {
  int nfft = 4096;
  double overlap = 0.5; // [0, 1): the segments' overlap as a fraction of nfft
  WindowSpec window{WindowKind::hann, 0.0};
};

struct MetricsSpec {
  std::optional<SpectrumSpec> spectrum; // when the stage asks for one
  bool loudness = false;                // EBU R128 (SPEC §13; stages/metrics/loudness.hpp)
};

// Welch segments of spectrum_window.size() frames (the periodic window's
// values), spectrum_hop apart on the global frame grid, at spectrum_rate Hz;
// the stage looks back nfft - 1 frames so that a chunk holds every segment
// that ends in its frames.
struct MetricsPlan {
  std::vector<double> spectrum_window; // empty: no spectrum
  int spectrum_hop = 0;
  double spectrum_rate = 0.0;
  std::string spectrum_window_name; // e.g. "hann", for the statistics
  // Loudness: the executors hand the block's frames to the writer, which
  // measures them in order (LoudnessMeter) at this rate.
  bool loudness = false;
  double loudness_rate = 0.0;
  // The name follows from the window's values; plans compare without it.
  bool operator==(const MetricsPlan& o) const {
    return spectrum_window == o.spectrum_window && spectrum_hop == o.spectrum_hop &&
           spectrum_rate == o.spectrum_rate && loudness == o.loudness &&
           loudness_rate == o.loudness_rate;
  }
};

} // namespace sigstream
