#pragma once
// The metrics stage kind: an observer. It passes the signal on unchanged;
// the chunk flow's executors compute its block (energy, sum, peak, dot with
// the source, non-finite count; core/channel_metrics.hpp) on the planes the
// walker shows them, live mode runs its observer op (live.cpp).
#include <iosfwd>
#include <memory>

#include "stages/stage.hpp"

namespace sigstream {

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& metrics_schema();

// Its output is its input (the planner gives it its metrics slot).
void plan_metrics(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
// Its spectrum's nfft, overlap and window, if it asks for one (a batch's fingerprint).
void metrics_facts(const StageSpec& spec, std::ostream& out);

// Live mode (live.cpp): the stage's observer op, and one for the output of a
// live chain (no spectrum), which LiveRun measures each block with.
std::unique_ptr<LiveOp> make_metrics_live_op(const PlannedStage& stage, const LiveOpContext& where);
std::unique_ptr<LiveObserver> make_metrics_live_observer(int channels, bool paired);

} // namespace sigstream
