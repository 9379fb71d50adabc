#pragma once
// One chunk through the stages of a plan, on the CPU, in float (what the CPU
// backend runs) or double (the float64 verification reference): the CPU
// executor of the chain walk (chain_walk.hpp). Both follow
// the frame geometry of pipeline/plan.hpp and run each stage's step
// (stages/stage.hpp), so they differ only in precision and, where a step has
// a faster method (FFT overlap-save for fir), in the kernel: the double path
// is always the step's direct float64 evaluation, the reference that method
// is checked against.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "pipeline/backends/chain_walk.hpp"
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
// `first`: Plan::owned clamped to the defined length; with a spectrum or loudness, the
// stage's look-back before them is there too) and the source at the same
// frames (x[c]; null after a rate change or a mix, where the source has other
// frames or channels). Returns the output planes ([start, start + frames),
// Plan::output_channels of them), which point into `scratch` (or are `src`
// when no stage transforms). If `stage_ns` is given, each stage's time is added to its
// entry (nanoseconds). `before_state`, if given, is called before each step of
// a stage that carries state (the executor takes the chunk's turn there).
template <typename T, typename OnMetrics>
std::vector<const T*>
run_stages(const Plan& plan, const CpuSteps& steps, std::int64_t start, std::int64_t frames,
           std::int64_t source_frames, const std::vector<const T*>& src, ChunkScratch<T>& scratch,
           OnMetrics&& on_metrics, std::vector<std::int64_t>* stage_ns = nullptr,
           const std::function<void()>& before_state = {}) {
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
  // Each stage's time, when asked for.
  auto timed = [&](std::size_t j, auto&& body) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    if (stage_ns != nullptr)
      (*stage_ns)[j] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
  };
  walk_chunk(
      plan, w, start, frames, source_frames,
      [&](const ObserverVisit& v) {
        timed(v.index, [&] {
          const auto ch = static_cast<std::size_t>(v.stage.channels_in);
          y_at.resize(ch);
          x_at.resize(ch);
          for (std::size_t c = 0; c < ch; ++c) {
            y_at[c] = cur[c] + v.offset;
            x_at[c] = v.paired ? src[c] + v.source_offset : nullptr;
          }
          on_metrics(v.stage, y_at, x_at, v.frames, v.first_frame);
          for (std::size_t c = 0; c < ch; ++c)
            cur[c] += v.pass_on;
        });
      },
      [&](const StepVisit& v) {
        if (v.stage.carries_state && before_state)
          before_state();
        timed(v.index, [&] {
          const CpuStageStep& step = *steps[v.index];
          if constexpr (std::is_same_v<T, float>)
            if (!scratch.step[v.index])
              scratch.step[v.index] = step.make_scratch();
          const auto ch_out = static_cast<std::size_t>(v.stage.channels_out);
          std::vector<const T*> out(ch_out);
          y_valid.resize(ch_out);
          for (std::size_t c = 0; c < ch_out; ++c) {
            T* y = next->data() + c * static_cast<std::size_t>(stride);
            out[c] = y;
            y_valid[c] = y + v.valid.lo;
            std::fill(y, y + v.valid.lo, T(0));
            std::fill(y + v.valid.hi, y + v.length, T(0));
          }
          if (v.valid.hi > v.valid.lo) {
            if constexpr (std::is_same_v<T, float>)
              step.run(cur, v.x_first, y_valid, v.first + v.valid.lo, v.valid.hi - v.valid.lo,
                       scratch.step[v.index].get());
            else
              step.run(cur, v.x_first, y_valid, v.first + v.valid.lo, v.valid.hi - v.valid.lo);
          }
          cur = std::move(out);
          std::swap(next, spare);
        });
      });
  return cur;
}

} // namespace sigstream
