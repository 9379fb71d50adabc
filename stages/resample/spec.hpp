#pragma once
// A resample stage as the config gives it (SPEC §7): to_hz, or up/down
// (reduced by their gcd when planned); the anti-alias filter as
// scipy.signal.resample_poly's. StageSpec::params holds it; PlannedStage::params
// and StageReport::params hold the planned filter (up and down are the plan's
// generic geometry).
#include <cstdint>
#include <optional>
#include <vector>

#include "model/stage_type.hpp"
#include "stages/types.hpp"

namespace sigstream {

// The kind's name in configs and the registry (`type: resample`).
inline constexpr StageType kResampleType{"resample"};

struct ResampleSpec {
  std::optional<double> to_hz; // exactly one of to_hz / (up, down)
  std::int64_t up = 0;
  std::int64_t down = 0;
  WindowSpec window{WindowKind::kaiser, 5.0};
  int half_taps_per_phase = 10; // K = 2 * this * max(up, down) + 1
};

struct ResamplePlan {
  std::vector<double> taps;    // resample_poly's filter, times up
  std::vector<float> taps_f32; // the taps that run
  bool operator==(const ResamplePlan&) const = default;
};

} // namespace sigstream
