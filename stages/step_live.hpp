#pragma once
// Live mode's run of a kind's CPU step (stages/stage.hpp): the step the CPU
// executor of the chain walk runs on chunks (pipeline/backends/cpu_chunk.hpp),
// here over a history of the stage's input as its frames come, on the same
// geometry (PlannedStage::input_window, length_out: look-back, look-ahead,
// up/down, a `full` FIR's extra frames). Output frame m is computed once every
// input frame it reads has come (at the input's end, zeros beyond it), and in
// frame order, so the bits are the file path's and a step that carries state
// (iir) gets its frames in order. A kind needs no live op of its own unless
// short blocks want another method (fir's partitioned convolver) or it
// observes (metrics).
#include <memory>

#include "model/plan.hpp"
#include "stages/stage.hpp"

namespace sigstream {

// The live op of `stage` by its kind's CPU step; the op keeps the stage (it
// may outlive the plan): pass a copy, or move one made for it.
[[nodiscard]] std::unique_ptr<LiveOp> make_step_live_op(PlannedStage stage);

} // namespace sigstream
