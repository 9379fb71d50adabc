#pragma once
// A fir stage as the config gives it (SPEC §2): its taps (designed, inline
// or from a file), mode and method. StageSpec::params holds it.
#include <optional>
#include <string>
#include <vector>

#include "stages/types.hpp"

namespace sigstream {

struct FirSpec {
  std::optional<DesignSpec> design;    // exactly one of design / taps / taps_file
  std::vector<double> taps;            // inline taps (non-empty when chosen)
  std::optional<std::string> taps_file;
  FirMode mode = FirMode::causal;
  FirMethod method = FirMethod::automatic;
};

}  // namespace sigstream
