#pragma once
// Where and when chunks are computed. A backend takes chunks in order
// (submit), computes them asynchronously (threads, CUDA streams), and hands
// results back in the same order (retire). The pipeline keeps at most depth()
// chunks in flight, which bounds memory by chunk size x depth.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/channel_metrics.hpp"
#include "core/sample_block.hpp"
#include "core/spectrum_sums.hpp"
#include "pipeline/plan.hpp"

namespace sigstream {

struct ChunkJob {
  std::int64_t index = 0;
  std::int64_t start = 0;  // first output frame
  std::int64_t frames = 0; // output frames
  // The source's length as far as this chunk needs it: the true length, or
  // kOpenEnd for a stream not yet ended (its input block then lies wholly
  // inside the stream, so no stage's masking depends on the true length).
  std::int64_t source_frames = 0;
  HostBlock input; // source frames [start - back, start + frames + ahead), interleaved
};

// Chunk c's index, first output frame and frames (its input block still to fill).
inline ChunkJob chunk_job(const Plan& plan, std::int64_t c) {
  ChunkJob job;
  job.index = c;
  job.start = plan.chunk_start(c);
  job.frames = plan.chunk_length(c);
  job.source_frames = plan.source_frames;
  return job;
}

struct ChunkResult {
  std::int64_t index = 0;
  std::int64_t start = 0;
  std::int64_t frames = 0;
  std::int64_t source_frames = 0; // as in the job
  HostBlock output; // `frames` frames, interleaved, in plan.output_type (quantized, clipped)
  // metrics[slot][channel] for plan.metric_names[slot]
  std::vector<std::vector<ChannelMetrics>> metrics;
  // spectra[slot]: the spectrum sums of the blocks that have one (empty
  // elsewhere, and all empty when no block has one).
  std::vector<SpectrumSums> spectra;
  // observed[slot][channel]: a loudness block's own frames of this chunk, in
  // order (the writer measures them; empty for the other blocks).
  std::vector<std::vector<std::vector<float>>> observed;
  // measured[slot]: a loudness block's share of this chunk, measured where
  // its frames are (the CPU's workers: Bs1770Meter::measure; the GPU:
  // kernels/cuda/loudness.cuh), which the writer hands to its meter
  // (Bs1770Meter::add_measured) in chunk order; no frames where `observed`
  // holds them instead, or where the chunk holds none of the block's (a
  // later stage's tail).
  struct MeasuredLoudness {
    std::int64_t first = 0, frames = 0; // the block's signal's frames [first, first + frames)
    std::vector<double> energy;         // [channel * steps + step]
    std::vector<double> sample_peak, true_peak;
  };
  std::vector<MeasuredLoudness> measured;
  std::int64_t clipped = 0;
  // Planar float output before quantization ([channel][frame]), filled only
  // when BackendOptions::keep_float_output (for --verify).
  std::vector<std::vector<float>> output_f32;
  // Source block kept for verification (same condition).
  HostBlock input;
};

struct BackendOptions {
  int threads = 0; // CPU: worker threads (0 = hardware)
  int streams = 4; // CUDA: lanes
  int device = 0;  // CUDA: device ordinal
  bool keep_float_output = false;
};

class Backend {
public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;        // "cpu" or "cuda"
  [[nodiscard]] virtual std::string device_name() const = 0; // CPU model or GPU name
  // Allocates everything the plan needs (lanes, buffers, threads). Called once.
  virtual void prepare(const Plan& plan, const BackendOptions& options) = 0;
  // Takes `plan` for the next run of a prepared backend with nothing in
  // flight, keeping what prepare() allocated, when that fits: the same
  // options, a plan of the same shape (same_shape(): the same stages, methods,
  // channels, types and chunk size; another source length) whose windows are
  // no longer than those it was prepared for. False (the default): prepare a
  // new backend. A batch runs its files one after another on one backend so.
  [[nodiscard]] virtual bool adopt(const Plan& /*plan*/, const BackendOptions& /*options*/) {
    return false;
  }
  // Chunks that may be submitted and not yet retired.
  [[nodiscard]] virtual int depth() const = 0;
  // A host block the backend can transfer from/to quickly (pinned for CUDA).
  [[nodiscard]] virtual HostBlock make_block(SampleType type, int channels, std::int64_t frames);
  // Whether a recycled block made earlier still suits this backend (the
  // hybrid backend wants pinned blocks once its GPU is up).
  [[nodiscard]] virtual bool block_suits(const HostBlock& /*block*/) const { return true; }
  // Starts a chunk (in index order). May block until resources free up.
  virtual void submit(ChunkJob job) = 0;
  // Waits for and returns the oldest submitted chunk. Rethrows its error.
  virtual ChunkResult retire() = 0;
  // True when retire() would return at once (the oldest chunk is finished, or
  // failed). Lets the pipeline hand results to the writer as soon as they
  // exist instead of only when depth() chunks are in flight.
  [[nodiscard]] virtual bool oldest_ready() const { return false; }
  // Per-stage time in ms summed over chunks so far (stage order), if measured.
  [[nodiscard]] virtual std::vector<double> stage_ms() const { return {}; }
  // What the backend wants logged once (e.g. kernel policy); empty if nothing.
  [[nodiscard]] virtual std::string describe() const { return {}; }
  // What it wants logged after the last chunk (e.g. who computed what).
  [[nodiscard]] virtual std::string summary() const { return {}; }
};

std::unique_ptr<Backend> make_cpu_backend();

// A chunk's metrics before any are computed: [slot][channel], each slot
// with its own signal's channels (a mix stage changes them).
[[nodiscard]] std::vector<std::vector<ChannelMetrics>> empty_metrics(const Plan& plan);

// `backend: auto` on a machine that may have a GPU: the CPU backend takes
// chunks at once while, on a thread of its own, `count_gpus` starts the
// driver and, if it found any, `make_gpu` makes the GPU backend, which is
// then prepared there; once it is ready every new chunk goes to the GPU.
// Chunks are retired in order across both. Only for plans whose every stage
// gives the same bits on both backends (direct FIR, gain, metrics): which
// device computed a chunk then changes nothing in the audio. `log` receives
// the hand-over messages.
std::unique_ptr<Backend> make_hybrid_backend(std::unique_ptr<Backend> cpu,
                                             std::function<int()> count_gpus,
                                             std::function<std::unique_ptr<Backend>()> make_gpu,
                                             std::function<void(const std::string&)> log);

} // namespace sigstream
