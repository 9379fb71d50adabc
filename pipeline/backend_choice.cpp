// What the engine decides from the plan before a run: each stage's method
// for the backend that runs it (the kinds' own rules: stages/fir/method_rule.cpp
// for the FIR's, with its measurements), and, for backend auto, whether the
// CPU alone finishes before CUDA could start.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "pipeline/plan.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace {

// The frames one call of the stage's kernel computes: a chunk, or the whole
// signal when it is shorter than a chunk.
std::int64_t frames_per_call(const Plan& plan, const PlannedStage& st) {
  return std::max<std::int64_t>(1, std::min(plan.chunk_frames, st.frames_out));
}

// The ns of a run of `plan`: `overhead_ns` per sample and channel of its
// output, and each stage's cost per frame and channel of its own output (its
// kind's `per_frame` hook, times `factor`) at its own length (a resampler
// changes it). A kind without the hook costs next to nothing.
double plan_ns(const Plan& plan, double overhead_ns,
               double (*StageKind::*per_frame)(const PlannedStage&, std::int64_t), double factor) {
  const auto stage_frames = [&](const PlannedStage& st) {
    return plan.rate_changes ? static_cast<double>(st.frames_out)
                             : static_cast<double>(plan.output_frames);
  };
  double ns = overhead_ns * static_cast<double>(plan.output_frames) *
              static_cast<double>(plan.max_channels);
  for (const PlannedStage& st : plan.stages)
    if (const auto cost = stage_kind(st.type).*per_frame)
      ns += stage_frames(st) * st.channels_out * factor * cost(st, frames_per_call(plan, st));
  return ns;
}

} // namespace

void resolve_methods(Plan& plan, const std::string& backend, CudaFftEngine engine) {
  for (PlannedStage& st : plan.stages) {
    if (const auto resolve = stage_kind(st.type).resolve)
      resolve(st,
              MethodContext{backend == "cuda", engine, frames_per_call(plan, st), st.channels_in});
  }
}

// Backend auto on a machine with a GPU: whether the CPU alone should finish
// the job before CUDA could start and pay for itself. Measured on the lent
// H100 machine (16 cores, 2026-11-23, bench/e2e_gpu.py with SIGSTREAM_TRACE=1,
// 255 taps, stereo 16-bit): cuInit ~100-125 ms, the context ~105-120 ms, lanes
// ~20 ms, and ~100 ms more at process exit for the driver's teardown; started
// beside 16 busy CPU threads the GPU was ready only after 361 ms. The CPU
// backend ran 10/30/60-minute files in 0.19/0.37/0.54 s (~10 GFMA/s per
// thread with I/O, layout and metrics), CUDA in 0.42/0.48/0.63 s and the
// hybrid in -/0.44/0.59 s: up to an hour of audio at 255 taps the GPU's fixed
// cost is never won back there. So a job whose estimated CPU time is under
// 0.6 s runs on the CPU without touching the driver; longer ones start the
// GPU beside it.
// The estimate scales the kernels' cost model (one thread, kernel alone) by
// what the whole run cost there: ~10 GFMA/s per thread at 255 taps direct,
// where the model says ~40, so x4.
constexpr double kCudaStartCostS = 0.6;
constexpr double kCpuEndToEndFactor = 4.0;
constexpr double kCpuOverheadNsPerSample = 1.0; // I/O, layout, metrics per sample and thread

double cpu_seconds_estimate(const Plan& plan, int threads) {
  return plan_ns(plan, kCpuOverheadNsPerSample, &StageKind::cpu_ns_per_frame, kCpuEndToEndFactor) *
         1e-9 / std::max(1, threads);
}

// A file's seconds on one GPU, for a batch's choice of how many GPUs pay
// for their start (gpus_that_pay): each stage's kernel (its kind's
// cuda_ns_per_frame) and, per sample and channel of the output, the copies to
// and from the device and the steps bound by memory (layout, gain, metrics):
// a 30 s stereo file of 255 taps is ~0.6 ms of it, the copies of its 23 MB
// at ~40 GB/s.
constexpr double kCudaOverheadNsPerSample = 0.2;

double cuda_seconds_estimate(const Plan& plan) {
  return plan_ns(plan, kCudaOverheadNsPerSample, &StageKind::cuda_ns_per_frame, 1.0) * 1e-9;
}

bool cpu_finishes_before_cuda_starts(const Plan& plan, int threads) {
  return cpu_seconds_estimate(plan, threads) < kCudaStartCostS;
}

// A block that takes half the target on the CPU leaves no room for the read,
// the write and a late wake-up (bench/RESULTS.md, stop 9: live latency).
constexpr double kLiveCpuShareOfTarget = 0.5;

bool live_block_too_slow(double block_ms, double target_ms) {
  return block_ms > kLiveCpuShareOfTarget * target_ms;
}

bool live_moves_to_gpu(double cpu_block_ms, double target_ms, bool have_gpu) {
  return have_gpu && live_block_too_slow(cpu_block_ms, target_ms);
}

// A batch's next GPU. Its start (a context, lanes, buffers: measured as the
// last device's, from its start to its first worker's lanes) runs on the
// host's cores while they decode and encode for the running devices, and
// the device helps only after it. With R the seconds the work left lasts at
// the running devices' rate and c the start, a second device ends the batch
// at about c + (R - c) / 2 at best: a gain only when R > c, and the start's
// CPU time comes off the running devices meanwhile. Measured (2 x H100, 200
// files x 30 s, 255-tap FIR, I/O-bound): GPU 0 alone 0.99 s, GPUs 0,1 1.03 s
// when the second started as soon as the first had its lanes. So the rule
// asks for twice the start's time of work left.
constexpr double kNextDevicePayBack = 2.0;

bool next_device_pays(double start_cost_s, double elapsed_s, double done, double total) {
  if (done <= 0.0 || elapsed_s <= 0.0)
    return total > 0.0; // nothing measured yet: work remains, so a start may pay
  const double left_s = (total - done) * elapsed_s / done;
  return left_s > kNextDevicePayBack * start_cost_s;
}

// An auto batch's first GPU, once the driver is up beside the CPU workers:
// what is left of its start is the context and the first lanes, 0.12-0.16 s
// on a 1 x H100 host and 0.2-0.3 s on a 4 x H100 one (bench/RESULTS.md,
// P11), the driver's own start (0.1-1 s) being paid already.
constexpr double kContextStartCostS = 0.3;

bool first_device_pays(double elapsed_s, double done, double total) {
  return next_device_pays(kContextStartCostS, elapsed_s, done, total);
}

// How many GPUs a batch should let the driver see. Each one seen costs the
// driver's start, its context, its workers' lanes and their release at exit,
// whether or not it gets a file, and a batch starts its devices one after
// another (start_contexts). On a 4 x H100 host (bench/RESULTS.md, stop 47):
// bench_gpu_start, a context on each GPU seen, took 0.45-0.74 / 0.76-0.85 /
// 1.22-1.26 / 1.54-1.56 s of process with 1 / 2 / 3 / 4 GPUs seen; a batch's
// exit took 0.28 s with one GPU's lanes and 0.5 s with three. With W the
// batch's seconds on one GPU, k GPUs end it at about c k + W / k: one more
// pays while W / k - W / (k + 1) > c, that is W > c k (k + 1). Measured
// there, GPU-bound files (65,536 taps direct, W ~7.5 ms a file): 200 files
// 2.11-2.18 s on GPU 0, 2.01-2.02 s on two, 2.61-2.70 s on four; 600 files
// 3.31-3.45 / 3.36-3.43 / 3.46-3.58 s on two / three / four (5.05-5.08 s on
// one, stop 45): c ~0.6 s.
constexpr double kGpuSeenCostS = 0.6;

int gpus_that_pay(double gpu_batch_s, const std::vector<int>& lowest) {
  const int most = static_cast<int>(lowest.size());
  if (most <= 1 || !std::isfinite(gpu_batch_s))
    return std::max(1, most);
  // Keeping the first k, the driver sees the GPUs up to lowest[k - 1]: the
  // cost is of those seen, the gain of those used.
  int best = 1;
  double best_s = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= most; ++k) {
    const double s = kGpuSeenCostS * (lowest[static_cast<std::size_t>(k - 1)] + 1) +
                     gpu_batch_s / static_cast<double>(k);
    if (s < best_s) {
      best = k;
      best_s = s;
    }
  }
  return best;
}

int gpus_that_pay(double gpu_batch_s, int most) {
  std::vector<int> every(static_cast<std::size_t>(std::max(1, most)));
  std::iota(every.begin(), every.end(), 0);
  return gpus_that_pay(gpu_batch_s, every);
}

// A CPU worker of an auto batch runs its file whole; the batch ends when the
// last file does. A file the CPU takes longer on than CUDA takes to start
// (kCudaStartCostS, above) could end after the GPUs finished the rest, so
// such files are left to the GPUs from the start (the GPU-bound config of
// bench/batch_bench.py: a 65,536-tap direct FIR, ~19 s a file on one core).
bool batch_cpu_helps(double cpu_file_s) {
  return cpu_file_s < kCudaStartCostS;
}

// A whole batch the CPU ends before CUDA's start would pay for itself runs
// on every core and never waits for the driver. Measured (4 x H100, 64
// cores, 30 s stereo files, 255 taps, best of 3): the CPU alone 0.29 s for
// 200 files and 0.95 s for 800, where CPU workers beside the GPUs' start
// took 0.51 s and 1.77 s, and CUDA alone 1.5 s and 2.2 s (the driver's
// start there is ~1 s). The estimate (0.039 s a file on one thread) puts
// those batches at 0.12 s and 0.49 s.
bool batch_cpu_alone_finishes(double cpu_batch_s) {
  return cpu_batch_s < kCudaStartCostS;
}

} // namespace sigstream
