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
// that the chunk counts (y[c] for each of its input channels, from frame
// `first`: Plan::owned clamped to the defined length; with a spectrum, the
// stage's look-back before them is there too) and the source at the same
// frames (x[c]; null after a rate change or a mix, where the source has other
// frames or channels). Returns the output planes ([start, start + frames),
// Plan::output_channels of them), which point into `scratch` (or are `src`
// when no stage transforms). If `stage_ns` is given, each stage's time is added to its
// entry (nanoseconds).
template <typename T, typename OnMetrics>
std::vector<const T*>
run_stages(const Plan& plan, const CpuSteps& steps, std::int64_t start, std::int64_t frames,
           std::int64_t source_frames, const std::vector<const T*>& src, ChunkScratch<T>& scratch,
           OnMetrics&& on_metrics, std::vector<std::int64_t>* stage_ns = nullptr) {
  const auto max_ch = static_cast<std::size_t>(plan.max_channels);
  plan.windows(start, frames, scratch.windows);
  const std::vector<FrameWindow>& w = scratch.windows;
  std::int64_t stride = 0;
  for (const FrameWindow& v : w)
    stride = std::max(stride, v.size());
  scratch.a.resize(max_ch * static_cast<std::size_t>(stride));
  scratch.b.resize(scratch.a.size());
  std::vector<const T*> cur = src;
  std::vector<T>* next = &scratch.a;
  std::vector<T>* spare = &scratch.b;
  if (scratch.step.size() != plan.stages.size())
    scratch.step.resize(plan.stages.size());
  std::vector<const T*> y_at, x_at;
  std::vector<T*> y_valid;
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    const auto ch_in = static_cast<std::size_t>(st.channels_in);
    const auto ch_out = static_cast<std::size_t>(st.channels_out);
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
      const bool paired = plan.paired(j);
      y_at.resize(ch_in);
      x_at.resize(ch_in);
      for (std::size_t c = 0; c < ch_in; ++c) {
        y_at[c] = cur[c] + (own.lo - w[j].lo);
        x_at[c] = paired ? src[c] + (own.lo - w[0].lo) : nullptr;
      }
      on_metrics(st, y_at, x_at, n, own.lo);
      // It passes its input on: from the frame the next stage's window starts
      // at (later, by its look-back, when it has a spectrum).
      for (std::size_t c = 0; c < ch_in; ++c)
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
    std::vector<const T*> out(ch_out);
    y_valid.resize(ch_out);
    for (std::size_t c = 0; c < ch_out; ++c) {
      T* y = next->data() + c * static_cast<std::size_t>(stride);
      out[c] = y;
      y_valid[c] = y + valid.lo;
      std::fill(y, y + valid.lo, T(0));
      std::fill(y + valid.hi, y + out_len, T(0));
    }
    if (valid.hi > valid.lo) {
      if constexpr (std::is_same_v<T, float>)
        step.run(cur, w[j].lo, y_valid, first + valid.lo, valid.hi - valid.lo,
                 scratch.step[j].get());
      else
        step.run(cur, w[j].lo, y_valid, first + valid.lo, valid.hi - valid.lo);
    }
    cur = std::move(out);
    std::swap(next, spare);
    charge();
  }
  return cur;
}

} // namespace sigstream
