#pragma once
// A stage kind as a unit (DESIGN §1a): stages/<kind>/ holds its YAML keys
// (the config side, pipeline/config/), its plan contribution, its CPU step
// and its CUDA step (stages/cuda_steps.cuh), each calling kernels in
// kernels/. stages/registry.hpp lists the kinds; the config reader, the
// planner, both backends and the README's YAML reference iterate it, so a
// backend runs a chain of steps without knowing what a FIR is.
//
// Frame coordinates (pipeline/plan.hpp): a step writes output frames
// [y_first, y_first + n) of its stage, reading its input signal from a buffer
// whose element 0 is input frame x_first. Which input frames an output frame
// needs is the plan's business (PlannedStage::lookback/lookahead); the step
// trusts the buffer to hold them.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "stages/types.hpp"

namespace sigstream {

struct Config;
struct StageSpec;
struct PlannedStage;
struct StageSchema;  // pipeline/config/stage_schema.hpp: the kind's keys and reader

// Working memory a step keeps per CPU worker (e.g. FFT buffers); made once.
class StepScratch {
 public:
  virtual ~StepScratch() = default;
};

// A stage's computation on the CPU, made once per plan and shared by every
// worker (const; per-worker state lives in the StepScratch it makes).
class CpuStageStep {
 public:
  virtual ~CpuStageStep() = default;
  [[nodiscard]] virtual std::unique_ptr<StepScratch> make_scratch() const { return nullptr; }
  // float32, what the CPU backend runs.
  virtual void run(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                   std::int64_t n, StepScratch* scratch) const = 0;
  // float64, the reference that --verify checks every backend against (a
  // direct evaluation, whatever method the float path uses).
  virtual void run(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                   std::int64_t n) const = 0;
};

// What a kind's plan step knows: where the stage sits (for messages) and
// the rate and defined length of its input signal.
struct StagePlanContext {
  const Config& config;
  std::size_t index = 0;
  double sample_rate = 0.0;
  std::int64_t frames_in = 0;
};

struct StageKind {
  StageType type;
  std::string_view name;     // as YAML spells it (`type: fir`)
  std::string_view summary;  // one line, for --help and the README
  // An observer (metrics) reads the signal and passes it on unchanged: the
  // backends hand it the planes instead of running a step.
  bool observer = false;
  // Its keys under `stages[]` and the reader that fills a StageSpec from
  // them (defined in stages/<kind>/schema.cpp).
  const StageSchema& (*schema)() = nullptr;
  // Fills the kind's part of the planned stage from its spec: parameters,
  // lookback/lookahead, frames_out. Throws Error(config) naming the stage.
  void (*plan)(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) = nullptr;
  // The CPU step of a planned stage of this kind (null for observers).
  std::unique_ptr<const CpuStageStep> (*cpu_step)(const PlannedStage& stage) = nullptr;
};

// "stages.2 (stage 'lp')" with the config file and line, or "filter for
// x.wav" for the filter command: where a stage's plan error is.
[[nodiscard]] std::string stage_where(const StagePlanContext& where, const StageSpec& spec);

}  // namespace sigstream
