#pragma once
// The normalize stage kind (SPEC §13): y = g·x with one gain g for the whole
// signal, from a first pass over the signal at the stage's point of the chain
// (the engine's, through StageKind::first_pass and ::measured): to an
// integrated loudness (LUFS), a sample peak or an RMS level, lowered where
// the (true) peak would pass its cap. Files and batches only.
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "stages/stage.hpp"

namespace sigstream {

struct MetricsReport;

// Its YAML keys and their reader (schema.cpp).
[[nodiscard]] const StageSchema& normalize_schema();

void plan_normalize(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
std::unique_ptr<const CpuStageStep> make_normalize_cpu_step(const PlannedStage& stage);
StatFields normalize_stats(const StageReport& stage);
void normalize_facts(const StageSpec& spec, std::ostream& out); // mode, target, cap
// The metrics stage of the first pass (loudness for lufs); nullopt once measured.
std::optional<StageSpec> normalize_first_pass(const StageSpec& spec);
// The gain from the first pass's block; `log` gets a capped or silent case.
void normalize_measured(StageSpec& spec, const MetricsReport& block,
                        const std::function<void(const std::string&)>& log);

} // namespace sigstream
