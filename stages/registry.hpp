#pragma once
// The list of stage kinds (see stages/stage.hpp). Adding a kind: its folder
// under stages/, an entry here (registry.cpp) and one in the CUDA table
// (stages/cuda_steps.cu); README "Adding a stage kind" walks through it.
#include <memory>
#include <span>
#include <string_view>

#include "stages/stage.hpp"

namespace sigstream {

// Every kind, in the order the README documents them.
[[nodiscard]] std::span<const StageKind> stage_kinds() noexcept;
// The kind named `name` (`type: fir`), or null.
[[nodiscard]] const StageKind* find_stage_kind(std::string_view name) noexcept;
// The kind of `type`; a StageType no row names is an internal error.
[[nodiscard]] const StageKind& stage_kind(StageType type);

// Whether a kind has a CUDA step (an observer needs none). CUDA builds only
// (stages/cuda_steps.cu).
[[nodiscard]] bool has_cuda_step(StageType type);

// Live mode on a GPU: the kind's kernel on context.device, or null where
// the kind has none there (its live op then runs on the CPU). CUDA builds
// only (stages/cuda_steps.cu).
[[nodiscard]] std::unique_ptr<LiveKernel> make_cuda_live_kernel(const PlannedStage& stage,
                                                                const LiveContext& context);

} // namespace sigstream
