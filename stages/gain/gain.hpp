#pragma once
// The gain stage kind: y = g·x, g from dB or linear (SPEC §2).
#include <memory>

#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& gain_schema();

void plan_gain(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
std::unique_ptr<const CpuStageStep> make_gain_cpu_step(const PlannedStage& stage);
// The same step for a factor known otherwise (normalize's measured gain).
std::unique_ptr<const CpuStageStep> make_gain_cpu_step(double linear);
StatFields gain_stats(const StageReport& stage);           // linear
void gain_facts(const StageSpec& spec, std::ostream& out); // the linear factor

} // namespace sigstream
