#pragma once
// A gain stage as the config gives it: the linear factor (db converted,
// 10^(db/20)). StageSpec::params holds it; PlannedStage::params and
// StageReport::params hold the factor that runs.
#include "model/stage_type.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: gain`).
inline constexpr StageType kGainType{"gain"};

struct GainSpec {
  double linear = 1.0;
};

struct GainPlan {
  double gain = 1.0;
  bool operator==(const GainPlan&) const = default;
};

} // namespace sigstream
