#pragma once
// Making a plan (model/plan.hpp) from a config and a source, and what the
// engine decides from it: methods, backend auto's CPU estimate.
#include <cstdint>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "pipeline/config.hpp"

namespace sigstream {

// Whether two plans differ at most in the source's length: the same stages
// (taps, methods, geometry), channels, rates, sample types and chunk size, so
// that a backend prepared for one runs the other (Backend::adopt) when the
// other's windows (max_window) are no longer.
[[nodiscard]] bool same_shape(const Plan& a, const Plan& b);

// Whether a backend prepared for `prepared`, with room for chunks of up to
// `max_chunk` frames and stage windows of up to `windows` (max_window's
// entries), runs `plan` on what it allocated (Backend::adopt): the same
// shape, no longer chunk, no longer window.
[[nodiscard]] bool fits_prepared(const Plan& plan, const Plan& prepared, std::int64_t max_chunk,
                                 const std::vector<std::int64_t>& windows);

// Resolves stages (designs taps, reads taps files), halos, lengths and chunks.
// `output_bits` is 0 for a float sink. Throws Error(config) for bad stages
// (e.g. a cutoff at or above this source's Nyquist) naming the stage.
Plan make_plan(const Config& config, const SourceInfo& source, int output_bits);

// Decides, for each fir stage, the method that runs on `backend` ("cpu" or
// "cuda"): `direct` and `fft` are kept as asked; `automatic` follows the rule
// measured for that backend (the kind's StageKind::resolve: fir's in
// stages/fir/method_rule.cpp, with the measurements; bench/ repeats them), on
// CUDA for `engine` (what the device runs).
void resolve_methods(Plan& plan, const std::string& backend,
                     CudaFftEngine engine = CudaFftEngine::cufft);

// Seconds the CPU backend should take for `plan` on `threads` threads (direct
// FIR), and whether that is less than a CUDA start costs: backend auto then
// uses the CPU without starting the driver (rule and measurements in
// pipeline/backend_choice.cpp).
[[nodiscard]] double cpu_seconds_estimate(const Plan& plan, int threads);
[[nodiscard]] bool cpu_finishes_before_cuda_starts(const Plan& plan, int threads);

// A file's seconds on one GPU (kernels, copies, memory-bound steps; the
// CUDA methods resolved), for a batch's choice of GPUs (gpus_that_pay).
[[nodiscard]] double cuda_seconds_estimate(const Plan& plan);

// Live mode (pipeline/live.cpp): whether a block's compute (`block_ms`,
// measured) leaves too little of the latency target for the read, the write
// and a late wake-up; and backend auto's rule: the CPU, unless it is too
// slow there and a GPU is there to take the FIR stages.
[[nodiscard]] bool live_block_too_slow(double block_ms, double target_ms);
[[nodiscard]] bool live_moves_to_gpu(double cpu_block_ms, double target_ms, bool have_gpu);

// A batch on several GPUs (pipeline/batch.cpp): whether starting one more
// device pays, when the last one took `start_cost_s` to start and the
// running devices did `done` of `total` (bytes) in the `elapsed_s` since
// they began (rule and measurement in pipeline/backend_choice.cpp).
[[nodiscard]] bool next_device_pays(double start_cost_s, double elapsed_s, double done,
                                    double total);
// A batch under backend auto: whether CPU workers take files while the GPUs
// start, given one file's CPU estimate on one thread (cpu_seconds_estimate of
// its largest file): only files the CPU ends about when a GPU would have
// started, so that none holds up the batch's end.
[[nodiscard]] bool batch_cpu_helps(double cpu_file_s);
// And whether its CPU alone should end the whole batch before CUDA could
// start (cpu_finishes_before_cuda_starts for a batch): `cpu_batch_s` is the
// largest file's estimate scaled by the batch's bytes over the CPU threads.
[[nodiscard]] bool batch_cpu_alone_finishes(double cpu_batch_s);
// How many of at most `most` GPUs a batch of `gpu_batch_s` seconds on one
// GPU should use (and let the driver see), each further one's start and
// release being paid only where it shortens the batch by more (rule and
// measurements in pipeline/backend_choice.cpp). At least 1.
[[nodiscard]] int gpus_that_pay(double gpu_batch_s, int most);
// The same for a list of GPUs (distinct, ascending, not negative), of which
// the first k are kept: the driver then sees those up to lowest[k - 1].
[[nodiscard]] int gpus_that_pay(double gpu_batch_s, const std::vector<int>& lowest);
// And whether its first GPU, listed while the CPU workers did `done` of
// `total` in `elapsed_s`, pays for the rest of its start (a context).
[[nodiscard]] bool first_device_pays(double elapsed_s, double done, double total);

} // namespace sigstream
