#pragma once
// A fir stage's own data: as the config gives it (SPEC §2: its taps,
// designed, inline or from a file; mode and method), held by
// StageSpec::params, and as planned, held by PlannedStage::params and the
// run's StageReport::params.
#include <optional>
#include <string>
#include <vector>

#include "stages/types.hpp"

namespace sigstream {

struct FirSpec {
  std::optional<DesignSpec> design; // exactly one of design / taps / taps_file
  std::vector<double> taps;         // inline taps (non-empty when chosen)
  std::optional<std::string> taps_file;
  FirMode mode = FirMode::causal;
  FirMethod method = FirMethod::automatic;
};

struct FirPlan {
  std::vector<double> taps;    // float64 taps (design or file)
  std::vector<float> taps_f32; // the taps that run
  FirMode mode = FirMode::causal;
  FirMethod requested = FirMethod::automatic; // what the config asked for
  FirMethod method = FirMethod::direct;       // what runs: direct or fft (see resolve_methods)
  bool operator==(const FirPlan&) const = default;
};

} // namespace sigstream
