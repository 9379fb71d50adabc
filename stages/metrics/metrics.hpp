#pragma once
// The metrics stage kind: an observer. It passes the signal on unchanged;
// the backends compute its block (energy, sum, peak, dot with the source,
// non-finite count; core/channel_metrics.hpp) on the planes it sees.
#include <iosfwd>

#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& metrics_schema();

// Its output is its input (the planner gives it its metrics slot).
void plan_metrics(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
// Its spectrum's nfft, overlap and window, if it asks for one (a batch's fingerprint).
void metrics_facts(const StageSpec& spec, std::ostream& out);

} // namespace sigstream
