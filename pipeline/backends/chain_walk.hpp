#pragma once
// One walk through a plan's stages (DESIGN §1b: one chain walker). Its rule,
// walk_stages: the stages in plan order; an observer (metrics) reads its
// input and passes it on unchanged, every other kind's step turns its input
// into the next stage's. Every executor follows it: the chunk flow's CPU
// executor (cpu_chunk.hpp, in float and in the float64 reference) and CUDA
// executor (cuda_backend.cu) through walk_chunk, and live mode's lanes
// (pipeline/live.cpp) block by block. walk_chunk adds a chunk's geometry: the
// frames each signal of the chunk covers (Plan::windows), for an observer the
// frames it counts and whether the source pairs with them, for a step the
// frames it writes and which of those lie inside its signal (the executor
// zeroes the rest). Live mode's steps follow the same geometry over their
// inputs' history as frames come (stages/step_live.hpp). The executor holds
// the planes and runs the kernels, so every backend follows one rule by
// construction.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "pipeline/backends/chunk_math.hpp"
#include "pipeline/plan.hpp"
#include "stages/registry.hpp"

namespace sigstream {

// An observer's turn: it reads its input window's frames
// [offset, offset + frames), which are the signal's frames [first_frame,
// first_frame + frames) (Plan::owned, clamped to the signal's length; with a
// spectrum or loudness its look-back lies before them), and passes its input on.
struct ObserverVisit {
  std::size_t index;
  const PlannedStage& stage;
  std::int64_t offset;
  std::int64_t frames;
  std::int64_t first_frame;
  // The source has the same frames and channels there (no rate change or mix
  // before), at source_offset in the source window.
  bool paired;
  std::int64_t source_offset;
  // How far the next stage's input window starts after this one's.
  std::int64_t pass_on;
};

// A step's turn: from its input window (first frame x_first) it writes the
// output window [first, first + length), of which [valid.lo, valid.hi) lies
// inside its output signal.
struct StepVisit {
  std::size_t index;
  const PlannedStage& stage;
  std::int64_t x_first;
  std::int64_t first;
  std::int64_t length;
  ValidRange valid;
};

// Which of the plan's stages observe (their kinds' StageKind::observer):
// looked up once for an executor that walks the chain often (live mode, a
// block a millisecond).
inline std::vector<bool> observer_stages(const Plan& plan) {
  std::vector<bool> out;
  out.reserve(plan.stages.size());
  for (const PlannedStage& st : plan.stages)
    out.push_back(stage_kind(st.type).observer);
  return out;
}

// Calls observe(j, stage) or step(j, stage) for each stage j in order, as
// is_observer(j) says.
template <typename IsObserver, typename Observe, typename Step>
void walk_stages_by(const Plan& plan, IsObserver&& is_observer, Observe&& observe, Step&& step) {
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    if (is_observer(j))
      observe(j, plan.stages[j]);
    else
      step(j, plan.stages[j]);
  }
}
// With the roles looked up once (`observers` = observer_stages(plan)).
template <typename Observe, typename Step>
void walk_stages(const Plan& plan, const std::vector<bool>& observers, Observe&& observe,
                 Step&& step) {
  walk_stages_by(
      plan, [&](std::size_t j) { return static_cast<bool>(observers[j]); },
      std::forward<Observe>(observe), std::forward<Step>(step));
}
// With each stage's role looked up as it comes (a walk now and then: a
// chunk), so that no walk allocates.
template <typename Observe, typename Step>
void walk_stages(const Plan& plan, Observe&& observe, Step&& step) {
  walk_stages_by(
      plan, [&](std::size_t j) { return stage_kind(plan.stages[j].type).observer; },
      std::forward<Observe>(observe), std::forward<Step>(step));
}

// `w` = plan.windows(start, frames) of the chunk with output frames [start,
// start + frames) of a source `source_frames` long (ChunkJob::source_frames).
// Calls observe(ObserverVisit) or step(StepVisit) for each stage in order.
template <typename Observe, typename Step>
void walk_chunk(const Plan& plan, const std::vector<FrameWindow>& w, std::int64_t start,
                std::int64_t frames, std::int64_t source_frames, Observe&& observe, Step&& step) {
  walk_stages(
      plan,
      [&](std::size_t j, const PlannedStage& st) {
        const FrameWindow own = plan.owned(j, start, frames);
        observe(ObserverVisit{j, st, own.lo - w[j].lo,
                              frames_inside(own.lo, own.size(), plan.defined_in(j, source_frames)),
                              own.lo, plan.paired(j), own.lo - w[0].lo, w[j + 1].lo - w[j].lo});
      },
      [&](std::size_t j, const PlannedStage& st) {
        const std::int64_t first = w[j + 1].lo;
        const std::int64_t length = w[j + 1].size();
        step(StepVisit{j, st, w[j].lo, first, length,
                       valid_range(first, length, plan.defined_out(j, source_frames))});
      });
}

} // namespace sigstream
