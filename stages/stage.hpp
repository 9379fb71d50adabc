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
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/channel_metrics.hpp"
#include "core/spectrum_sums.hpp"
#include "kernels/cpu/response.hpp"
#include "model/loudness_report.hpp"
#include "model/stage_type.hpp"
#include "stages/types.hpp"

namespace sigstream {

struct Config;
struct StageSpec;
struct PlannedStage;
struct StageSchema;   // pipeline/config/stage_schema.hpp: the kind's keys and reader
struct StageReport;   // model/report.hpp: what a run reports of a stage
struct MetricsReport; // model/report.hpp: a metrics block's measurement

// A kind's own fields of a stage in the statistics JSON (SPEC §4 `stages`),
// in order, after `name` and `type`.
using StatValue = std::variant<std::int64_t, double, std::string>;
using StatFields = std::vector<std::pair<std::string, StatValue>>;

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
  // How the step runs, for the backend's log ("" = nothing to say).
  [[nodiscard]] virtual std::string describe() const { return {}; }
  // The fewest output frames one call should get so that chunking stays
  // invisible within the stage's tolerance (an FFT's group of blocks); 0 = any.
  [[nodiscard]] virtual std::int64_t min_frames_per_call() const { return 0; }
  // Output frames [y_first, y_first + n) of every output plane (y[c], the
  // stage's channels_out of them) from the input planes (x[c], channels_in;
  // element 0 of each is input frame x_first). float32, what the CPU backend
  // runs.
  virtual void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
                   std::int64_t y_first, std::int64_t n, StepScratch* scratch) const = 0;
  // float64, the reference that --verify checks every backend against (a
  // direct evaluation, whatever method the float path uses).
  virtual void run(std::span<const double* const> x, std::int64_t x_first,
                   std::span<double* const> y, std::int64_t y_first, std::int64_t n) const = 0;
};

// A step that treats each channel alone, the same way (fir, gain,
// resample): it says how to compute one plane.
class ChannelwiseCpuStep : public CpuStageStep {
public:
  void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
           std::int64_t y_first, std::int64_t n, StepScratch* scratch) const final {
    for (std::size_t c = 0; c < y.size(); ++c)
      run_plane(x[c], x_first, y[c], y_first, n, scratch);
  }
  void run(std::span<const double* const> x, std::int64_t x_first, std::span<double* const> y,
           std::int64_t y_first, std::int64_t n) const final {
    for (std::size_t c = 0; c < y.size(); ++c)
      run_plane(x[c], x_first, y[c], y_first, n);
  }
  // One channel: y[0..n) are output frames [y_first, y_first + n).
  virtual void run_plane(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                         std::int64_t n, StepScratch* scratch) const = 0;
  virtual void run_plane(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                         std::int64_t n) const = 0;
};

// What a kind's plan step knows: where the stage sits (for messages) and
// the rate, defined length and channels of its input signal.
struct StagePlanContext {
  const Config& config;
  std::size_t index = 0;
  double sample_rate = 0.0;
  std::int64_t frames_in = 0;
  int channels = 1;
};

// Live mode (SPEC §6, pipeline/live.hpp): a stage as a running operation
// over frames in order, with its own history; planes are [channel][frame].
using LivePlanes = std::vector<std::vector<float>>;

class LiveOp {
public:
  virtual ~LiveOp() = default;
  // in[c][0..n) in; the outputs that are ready are appended to out[c].
  virtual void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) = 0;
  // The input has ended: appends what is still owed (tails, held-back frames).
  virtual void finish(LivePlanes& out) = 0;
};

// What a kind prepares once per live run and shares between the chains made
// from it (e.g. the FIR's partitioned convolver, on the CPU or a GPU).
class LiveKernel {
public:
  virtual ~LiveKernel() = default;
  // For the start-up log: "fir 'lp' (4095 taps): partitioned, 86 partitions of 48".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Added to the stage's `detail` in the statistics ("" = nothing).
  [[nodiscard]] virtual std::string detail() const { return {}; }
  // The method the stage runs by, for kinds that have methods (fir).
  [[nodiscard]] virtual std::optional<FirMethod> method() const { return std::nullopt; }
  // Where it runs: true when on a GPU.
  [[nodiscard]] virtual bool on_gpu() const noexcept { return false; }
  // For SIGSTREAM_TRACE's list of late blocks: where the last step's time
  // went ("" = nothing to say).
  [[nodiscard]] virtual std::string last_step() const { return {}; }
};

// What a live op is made with: the kind's prepared kernel (null where it
// prepares none), its input's channels, its `phase` (frames held back by the
// stages before it: their look-ahead, so blocks can line up with the steps)
// and, for an observer, whether its frames pair with the source's (no rate
// change or mix before it; Plan::paired).
struct LiveOpContext {
  LiveKernel* kernel = nullptr;
  int channels = 1;
  std::int64_t phase = 0;
  bool paired = false;
};

// An observer's live op (metrics) measures the frames that pass it: live
// mode's walk (pipeline/live.cpp, by chain_walk.hpp's rule) hands it its
// input planes with measure() and passes them on itself, hands it the source
// frames of each step (kept where it pairs with them) and takes the step's
// metrics after the chain has run. As a LiveOp it passes its input on too.
class LiveObserver : public LiveOp {
public:
  // The source's n new frames of this step, in[c][0..n).
  virtual void feed_source(const LivePlanes& in, std::int64_t n) = 0;
  // Measures in[c][0..n) (its input in the chain, or the chain's output).
  virtual void measure(const LivePlanes& in, std::int64_t n) = 0;
  // As an op: measures the frames and appends them to out unchanged.
  void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) final {
    measure(in, n);
    for (std::size_t c = 0; c < in.size(); ++c)
      out[c].insert(out[c].end(), in[c].begin(), in[c].begin() + n);
  }
  void finish(LivePlanes& /*out*/) final {}
  // This step's metrics per channel, then resets; returns the frames it saw
  // (0 when none).
  virtual std::int64_t take(std::vector<ChannelMetrics>& out) = 0;
  // The Welch sums so far (empty power: no spectrum asked for).
  [[nodiscard]] virtual const SpectrumSums& spectrum() const = 0;
  // The loudness of everything measured so far (none: not asked for).
  [[nodiscard]] virtual std::optional<LoudnessReport> loudness() const { return std::nullopt; }
};

struct LiveContext {
  int channels = 1;
  std::int64_t block = 1; // frames a live step takes
  int device = -1;        // a CUDA device for the kernels that can use one; -1: the CPU
};

// Where a planned stage runs, for a kind that chooses how by it (fir's
// `method: auto`): the backend, its FFT engine, the frames one call of the
// stage's kernel computes (a chunk, or the whole signal when shorter) and
// the channels.
struct MethodContext {
  bool cuda = false;
  CudaFftEngine engine = CudaFftEngine::cufft;
  std::int64_t frames_per_call = 1;
  int channels = 1;
};

struct StageKind {
  StageType type;           // its name, as YAML spells it (`type: fir`): type.name()
  std::string_view summary; // one line, for --help and the README
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
  // Live mode: the kernel to prepare (null: nothing to prepare), and the
  // running operation (an observer's is a LiveObserver). Null live_op: live
  // mode runs the kind's cpu_step over the stage's history
  // (stages/step_live.hpp), which most kinds want.
  std::unique_ptr<LiveKernel> (*live_kernel)(const PlannedStage& stage,
                                             const LiveContext& context) = nullptr;
  std::unique_ptr<LiveOp> (*live_op)(const PlannedStage& stage,
                                     const LiveOpContext& where) = nullptr;
  // Its fields in the statistics (null: none).
  StatFields (*stats)(const StageReport& stage) = nullptr;
  // Decides what the stage left to the backend (fir: method auto) for
  // `where` (pipeline's resolve_methods). Null: nothing to decide.
  void (*resolve)(PlannedStage& stage, const MethodContext& where) = nullptr;
  // ns per output frame and channel of its CPU kernel alone on one thread,
  // for backend auto's estimate of a CPU run (pipeline/backend_choice.cpp).
  // Null: next to nothing (gain, metrics).
  double (*cpu_ns_per_frame)(const PlannedStage& stage, std::int64_t frames_per_call) = nullptr;
  // The same for its CUDA kernel on one GPU (all channels of a call in one
  // launch), for a batch's choice of how many GPUs pay for their start
  // (pipeline/backend_choice.cpp). Null: bound by memory, which the batch's
  // per-sample term counts (gain, mix, metrics, iir).
  double (*cuda_ns_per_frame)(const PlannedStage& stage, std::int64_t frames_per_call) = nullptr;
  // The filter's response at the stage's input rate, for the statistics and
  // the figure (null, or nullopt: none).
  std::optional<kernels::cpu::FilterResponse> (*response)(const PlannedStage& stage,
                                                          double rate_in) = nullptr;
  // What of its spec decides its output, for a batch's resume fingerprint
  // (pipeline/batch.cpp): written after ":name", at the stream's precision
  // (17 digits). Null: nothing beyond its kind and name.
  void (*facts)(const StageSpec& spec, std::ostream& out) = nullptr;
  // The files its spec reads (a taps file), whose changes make a batch's
  // outputs out of date. Null: none.
  std::vector<std::string> (*files)(const StageSpec& spec) = nullptr;
  // What of this stage's settings has no CUDA path yet (e.g. a setting a kind adds first on the
  // CPU), or null: the job runs on the CPU backend, as for a kind without a CUDA step.
  const char* (*cpu_only)(const StageSpec& spec) = nullptr;
  // A stage that needs a first pass over its input before the run
  // (normalize; pipeline/first_pass.hpp): the metrics stage that measures
  // it, run after the stages before it with no outputs (nullopt once
  // measured), and what the stage makes of that block: its spec for the run
  // (`log` gets what the user should know). Null: a single pass.
  std::optional<StageSpec> (*first_pass)(const StageSpec& spec) = nullptr;
  void (*measured)(StageSpec& spec, const MetricsReport& block,
                   const std::function<void(const std::string&)>& log) = nullptr;
};

// "stages.2 (stage 'lp')" with the config file and line, or "filter for
// x.wav" for the filter command: where a stage's plan error is.
[[nodiscard]] std::string stage_where(const StagePlanContext& where, const StageSpec& spec);

} // namespace sigstream
