#pragma once
// A fir stage's own data: as the config gives it (SPEC §2: its taps,
// designed, inline or from a file; mode and method), held by
// StageSpec::params, and as planned, held by PlannedStage::params and the
// run's StageReport::params.
#include <optional>
#include <string>
#include <vector>

#include "model/stage_type.hpp"
#include "stages/types.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: fir`).
inline constexpr StageType kFirType{"fir"};

struct FirSpec {
  std::optional<DesignSpec> design; // exactly one of design / taps / taps_file
  std::vector<double> taps;         // inline taps (non-empty when chosen)
  // Inline taps as a list of lists (SPEC §11): one response per channel
  // (empty unless given so; then `taps` is empty).
  std::vector<std::vector<double>> channel_taps;
  std::optional<std::string> taps_file;
  FirMode mode = FirMode::causal;
  FirMethod method = FirMethod::automatic;
};

struct FirPlan {
  std::vector<double> taps;    // float64 taps (design or file); channel 0's when per channel
  std::vector<float> taps_f32; // the taps that run
  // One response per input channel, each zero-padded to the longest (SPEC
  // §11: a multi-channel taps file or a list of lists); empty: `taps` filters
  // every channel. A per-channel stage runs as one single-channel FIR per
  // channel (stages/fir/per_channel.hpp).
  std::vector<std::vector<double>> channel_taps;
  FirMode mode = FirMode::causal;
  FirMethod requested = FirMethod::automatic; // what the config asked for
  FirMethod method = FirMethod::direct;       // what runs: direct or fft (see resolve_methods)
  bool operator==(const FirPlan&) const = default;
};

} // namespace sigstream
