#pragma once
// The mix stage kind (SPEC §11): changes the channel count. Output channel
// c = Σ_j matrix[c][j] · input_j, summed in ascending j with float32 fma on
// both backends (kernels/cpu/mix.hpp, kernels/cuda/mix.cuh), so they agree
// bit for bit; `select` copies planes (exact). Frame by frame, so chunking
// is invisible and it has no look-back or look-ahead.
#include <iosfwd>
#include <memory>
#include <string_view>

#include "stages/mix/spec.hpp"
#include "stages/stage.hpp"

namespace sigstream {

// The most output channels a mix makes.
inline constexpr int kMaxMixOutputs = 1024;

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& mix_schema();

// The gains or the selection for the input's channel count (stages/mix/mix.cpp).
// Throws Error(config) naming the stage and both counts when they disagree.
void plan_mix(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
std::unique_ptr<const CpuStageStep> make_mix_cpu_step(const PlannedStage& stage);
StatFields mix_stats(const StageReport& stage); // mix, channels_in, channels_out
void mix_facts(const StageSpec& spec, std::ostream& out);

// As the config and the statistics spell a preset ("mono", "5.1-stereo").
[[nodiscard]] std::string_view to_string(MixPreset p);

} // namespace sigstream
