#pragma once
// The list of stage kinds (see stages/stage.hpp). Adding a kind: its folder
// under stages/, an entry here (registry.cpp) and one in the CUDA table
// (stages/cuda_steps.cu); README "Adding a stage kind" walks through it.
#include <span>
#include <string_view>

#include "stages/stage.hpp"

namespace sigstream {

// Every kind, in the order the README documents them.
[[nodiscard]] std::span<const StageKind> stage_kinds() noexcept;
// The kind of `type` (every StageType has one).
[[nodiscard]] const StageKind& stage_kind(StageType type) noexcept;

}  // namespace sigstream
