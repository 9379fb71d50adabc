#pragma once
// A normalize stage (SPEC §13): one gain for the whole signal, from a first
// pass over the signal at its point of the chain. StageSpec::params holds the
// target and, once the engine's first pass has measured the signal
// (StageKind::first_pass), the gain; PlannedStage::params and
// StageReport::params hold what ran.
#include <optional>

#include "model/stage_type.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: normalize`).
inline constexpr StageType kNormalizeType{"normalize"};

// What the gain brings to its target: integrated loudness (LUFS, EBU R128),
// the sample peak (dBFS) or the RMS over all channels (dBFS).
enum class NormalizeMode { lufs, peak, rms };

// The first pass's measurement and the gain it gives.
struct NormalizeResult {
  std::optional<double> measured_db; // LUFS, peak or RMS dB; none: silence (no gated block)
  std::optional<double> peak_db;     // the (true) peak the cap is checked against
  double gain_db = 0.0;
  bool limited = false; // lowered so that the peak stays at its cap
};

struct NormalizeSpec {
  NormalizeMode mode = NormalizeMode::lufs;
  double target_db = -23.0;
  // The cap on the peak after the gain: true peak (dBTP) for lufs (default
  // -1, EBU R128's limit), sample peak for rms (0 dBFS: no clipping); for
  // peak the target is the cap.
  std::optional<double> true_peak_max_db;
  std::optional<NormalizeResult> result; // set by the first pass
};

struct NormalizePlan {
  NormalizeMode mode = NormalizeMode::lufs;
  double target_db = 0.0;
  double cap_db = 0.0;
  NormalizeResult result;
  double linear = 1.0; // 10^(gain_db / 20), what runs
  bool operator==(const NormalizePlan& o) const {
    return mode == o.mode && target_db == o.target_db && cap_db == o.cap_db && linear == o.linear &&
           result.measured_db == o.result.measured_db && result.peak_db == o.result.peak_db &&
           result.limited == o.result.limited;
  }
};

} // namespace sigstream
