#pragma once
// One chunk through the stages of a plan, on the CPU, in float (what the CPU
// backend runs) or double (the float64 verification reference). Both follow
// the frame geometry of pipeline/plan.hpp and run each stage's step
// (stages/stage.hpp), so they differ only in precision and, where a step has
// a faster method (FFT overlap-save for fir), in the kernel: the double path
// is always the step's direct float64 evaluation, the reference that method
// is checked against.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "pipeline/backends/chunk_math.hpp"
#include "pipeline/plan.hpp"
#include "stages/registry.hpp"

namespace sigstream {

// The CPU steps of a plan's stages (stages/registry.hpp), null for
// observers. Made once after the methods are resolved, then only read, by
// every worker at once.
using CpuSteps = std::vector<std::unique_ptr<const CpuStageStep>>;

inline CpuSteps make_cpu_steps(const Plan& plan) {
  CpuSteps steps(plan.stages.size());
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const StageKind& kind = stage_kind(plan.stages[j].type);
    if (!kind.observer)
      steps[j] = kind.cpu_step(plan.stages[j]);
  }
  return steps;
}

// A worker's working memory for one chunk at a time: two ping-pong planes
// and each step's own scratch (made on first use).
template <typename T> struct ChunkScratch {
  std::vector<T> a, b;
  std::vector<std::unique_ptr<StepScratch>> step;
  std::vector<FrameWindow> windows;
};

// Runs every stage on `src`: planar, the chunk's source window
// (plan.windows(start, frames)[0]) of a source `source_frames` long (see
// ChunkJob::source_frames). For each observer (metrics) stage j,
// `on_metrics(stage, y, x, n, first)` gets the n frames of the stage's input
// that the chunk counts (y[c], from frame `first`: Plan::owned clamped to the
// defined length; with a spectrum, the stage's look-back before them is
// there too) and the source at the same frames (x[c]; null after a rate
// change, where the source has other frames). Returns the output planes ([start, start +
// frames)), which point into `scratch` (or are `src` when no stage
// transforms). If `stage_ns` is given, each stage's time is added to its
// entry (nanoseconds).
template <typename T, typename OnMetrics>
std::vector<const T*>
run_stages(const Plan& plan, const CpuSteps& steps, std::int64_t start, std::int64_t frames,
           std::int64_t source_frames, const std::vector<const T*>& src, ChunkScratch<T>& scratch,
           OnMetrics&& on_metrics, std::vector<std::int64_t>* stage_ns = nullptr) {
  const auto ch = static_cast<std::size_t>(plan.channels);
  plan.windows(start, frames, scratch.windows);
  const std::vector<FrameWindow>& w = scratch.windows;
  std::int64_t stride = 0;
  for (const FrameWindow& v : w)
    stride = std::max(stride, v.size());
  scratch.a.resize(ch * static_cast<std::size_t>(stride));
  scratch.b.resize(scratch.a.size());
  std::vector<const T*> cur = src;
  std::vector<T>* next = &scratch.a;
  std::vector<T>* spare = &scratch.b;
  if (scratch.step.size() != plan.stages.size())
    scratch.step.resize(plan.stages.size());
  bool same_rate = true; // the stages so far keep the source's frames
  std::vector<const T*> y_at(ch), x_at(ch);
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    const auto t0 = std::chrono::steady_clock::now();
    auto charge = [&] {
      if (stage_ns != nullptr)
        (*stage_ns)[j] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - t0)
                              .count();
    };
    if (!steps[j]) { // an observer
      const FrameWindow own = plan.owned(j, start, frames);
      const std::int64_t n = frames_inside(own.lo, own.size(), plan.defined_in(j, source_frames));
      for (std::size_t c = 0; c < ch; ++c) {
        y_at[c] = cur[c] + (own.lo - w[j].lo);
        x_at[c] = same_rate ? src[c] + (own.lo - w[0].lo) : nullptr;
      }
      on_metrics(st, y_at, x_at, n, own.lo);
      // It passes its input on: from the frame the next stage's window starts
      // at (later, by its look-back, when it has a spectrum).
      for (std::size_t c = 0; c < ch; ++c)
        cur[c] += w[j + 1].lo - w[j].lo;
      charge();
      continue;
    }
    const std::int64_t first = w[j + 1].lo;
    const std::int64_t out_len = w[j + 1].size();
    const ValidRange valid = valid_range(first, out_len, plan.defined_out(j, source_frames));
    const CpuStageStep& step = *steps[j];
    if constexpr (std::is_same_v<T, float>)
      if (!scratch.step[j])
        scratch.step[j] = step.make_scratch();
    std::vector<const T*> out(ch);
    for (std::size_t c = 0; c < ch; ++c) {
      T* y = next->data() + c * static_cast<std::size_t>(stride);
      out[c] = y;
      std::fill(y, y + valid.lo, T(0));
      if (valid.hi > valid.lo) {
        if constexpr (std::is_same_v<T, float>)
          step.run(cur[c], w[j].lo, y + valid.lo, first + valid.lo, valid.hi - valid.lo,
                   scratch.step[j].get());
        else
          step.run(cur[c], w[j].lo, y + valid.lo, first + valid.lo, valid.hi - valid.lo);
      }
      std::fill(y + valid.hi, y + out_len, T(0));
    }
    same_rate = same_rate && !st.changes_rate();
    cur = std::move(out);
    std::swap(next, spare);
    charge();
  }
  return cur;
}

} // namespace sigstream
