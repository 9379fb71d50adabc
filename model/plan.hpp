#pragma once
// The resolved pipeline: taps designed or loaded, each stage's look-back and
// look-ahead, the defined length of every intermediate signal, and the chunk
// geometry. A plan is plain data; backends execute it chunk by chunk.
//
// Frame coordinates are shared by all stages (a `full` stage extends the
// defined range, it does not shift it). Chunk c yields output frames
// [start(c), start(c) + frames(c)) and reads source frames
// [start(c) - back, start(c) + frames(c) + ahead) (zeros outside the source).
// Stage j reads its input buffer over [start - in_back, end + in_ahead) and
// writes [start - in_back + lookback, end + in_ahead - lookahead); samples
// outside [0, frames_out) are set to zero, so cascades stay exact.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kind_data.hpp"
#include "core/sample_block.hpp"
#include "model/stage_type.hpp"

namespace sigstream {

// SourceInfo::frames of a stream whose length is known only at its end.
inline constexpr std::int64_t kUnknownFrames = -1;
// The length a plan takes for such a stream until its end is seen: far
// beyond any real signal, and still safe to add filter lengths to.
inline constexpr std::int64_t kOpenEnd = std::int64_t{1} << 60;

// A range of frames [lo, hi) of one signal, in that signal's own frames.
struct FrameWindow {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  [[nodiscard]] std::int64_t size() const noexcept { return hi - lo; }
};

struct PlannedStage {
  StageType type; // the kind (stages/<kind>/spec.hpp), by name
  std::string name;
  // The kind's own plan (stages/<kind>/spec.hpp: FirPlan, ResamplePlan,
  // GainPlan, MetricsPlan, ...), read back by type: stage.as<FirPlan>().
  KindData params;
  // What the stage is, for logs and the statistics' detail, e.g.
  // "lowpass 3000 Hz, hamming" (the kind says).
  std::string detail;
  // An observer's (metrics') index into Plan::metric_names; -1 for the others.
  int metrics_slot = -1;
  // geometry
  std::int64_t lookback = 0;  // frames of input before an output frame it needs
  std::int64_t lookahead = 0; // frames of input after it
  // Rate change (resample; 1/1 for every other kind): output frame i reads
  // the input frames n with 0 <= i*down + lookahead - n*up <= lookback +
  // lookahead, so lookback and lookahead count frames of the up-sampled grid.
  std::int64_t up = 1;
  std::int64_t down = 1;
  // Frames added at the end beyond ceil(in * up / down) (a `full` fir's K-1).
  std::int64_t extra = 0;
  // Channels of its input and output signals (mix changes them; every other
  // kind keeps them: the planner sets both to the input's before the kind plans).
  int channels_in = 1;
  int channels_out = 1;
  // Its output channel c is not its input channel c (mix): what follows no
  // longer pairs with the source channel by channel.
  bool mixes_channels = false;
  // Its output frame depends on every input frame before it (iir): no halo
  // covers that, so its step keeps state and takes its frames in order; an
  // executor runs a plan with such a stage chunk after chunk.
  bool carries_state = false;
  // Its output frame depends on every input frame, before and after it (a
  // zero-phase iir): the plan runs as one chunk, so a stream of unknown
  // length cannot have it (make_plan refuses), nor live mode.
  bool whole_signal = false;
  std::int64_t in_back = 0;    // halo of this stage's input buffer before the chunk
  std::int64_t in_ahead = 0;   // ... and after it
  std::int64_t frames_in = 0;  // defined length of the input signal
  std::int64_t frames_out = 0; // defined length of the output signal
  // Frames that `full` stages up to here added to the source's length, so
  // that a stream's lengths follow from its frame count once it has ended.
  std::int64_t grow_in = 0;
  std::int64_t grow_out = 0;
  [[nodiscard]] std::int64_t defined_in(std::int64_t source_frames) const noexcept {
    return source_frames + grow_in;
  }
  [[nodiscard]] std::int64_t defined_out(std::int64_t source_frames) const noexcept {
    return source_frames + grow_out;
  }
  [[nodiscard]] bool changes_rate() const noexcept { return up != down; }
  // Its output pairs with its input frame by frame and channel by channel.
  [[nodiscard]] bool keeps_pairing() const noexcept { return !changes_rate() && !mixes_channels; }
  template <class T> [[nodiscard]] const T& as() const { return params.get<T>(); }
  template <class T> [[nodiscard]] T& as() { return params.get<T>(); }
  // The input frames that output frames `out` need.
  [[nodiscard]] FrameWindow input_window(FrameWindow out) const noexcept;
  // The defined output length for `in` defined input frames (an open end stays open).
  [[nodiscard]] std::int64_t length_out(std::int64_t in) const noexcept;
  // The first input frame that output frame `f` owns: the frames
  // [owned_from(s), owned_from(e)) are those an output range [s, e) counts
  // in a metrics block before this stage (a partition over the chunks).
  [[nodiscard]] std::int64_t owned_from(std::int64_t f) const noexcept;
};

struct Plan {
  double sample_rate = 0.0;
  int channels = 0;        // the source's
  int output_channels = 0; // after the stages (a mix stage changes them)
  int max_channels = 0;    // the most any signal has (what buffers are sized for)
  // A stream of unknown length is planned as kOpenEnd frames long; each
  // chunk job carries the length known when it was read (ChunkJob::source_frames).
  bool length_known = true;
  std::int64_t source_frames = 0;
  std::int64_t output_frames = 0;
  std::int64_t output_grow = 0; // output_frames - source_frames
  std::int64_t back = 0;        // total look-back (halo before each chunk)
  std::int64_t ahead = 0;       // total look-ahead
  std::int64_t chunk_frames = 0;
  std::int64_t num_chunks = 0;
  std::vector<PlannedStage> stages;
  std::vector<std::string> metric_names; // metrics stages in order, then "output"
  SampleType input_type = SampleType::f32;
  SampleType output_type = SampleType::f32;
  int output_bits = 0; // 8/16/24/32 for PCM sinks (quantize and clip), 0 for float

  double output_rate = 0.0; // after the stages (a resample stage changes it)
  // True when a stage changes the rate: then back/ahead, in_back/in_ahead and
  // the grow fields do not describe the geometry; windows(), defined_in/out()
  // and max_window do, for every plan.
  bool rate_changes = false;
  // The most frames any signal has per output frame (> 1 behind a
  // down-sampler): chunk_frames counts output frames, divided by this so
  // that windows stay near execution.chunk_frames.
  double in_per_out = 1.0;
  // The longest window each signal needs over all chunks: [j] for stage j's
  // input, [stages.size()] for the output (what buffers are sized for).
  std::vector<std::int64_t> max_window;

  [[nodiscard]] std::int64_t chunk_start(std::int64_t c) const noexcept { return c * chunk_frames; }
  [[nodiscard]] std::int64_t chunk_length(std::int64_t c) const noexcept {
    return chunk_length(c, source_frames);
  }
  // Chunk c's output frames for a source of `frames` frames (0 past the end).
  [[nodiscard]] std::int64_t chunk_length(std::int64_t c, std::int64_t frames) const noexcept {
    const std::int64_t left = output_length(frames) - chunk_start(c);
    return left < 0 ? 0 : left < chunk_frames ? left : chunk_frames;
  }
  // The output's defined length for a source of `frames` frames.
  [[nodiscard]] std::int64_t output_length(std::int64_t frames) const noexcept {
    return rate_changes ? defined_in(stages.size(), frames) : frames + output_grow;
  }
  // Stage j's defined input length (j = stages.size(): the output's) for a
  // source of `frames` frames.
  [[nodiscard]] std::int64_t defined_in(std::size_t j, std::int64_t frames) const noexcept;
  [[nodiscard]] std::int64_t defined_out(std::size_t j, std::int64_t frames) const noexcept {
    return defined_in(j + 1, frames);
  }
  // The frames each signal of the chunk with output frames [start, start +
  // frames) covers: [j] is stage j's input window, [stages.size()] the output.
  // [0] is the source block the chunk reads (zeros outside the source).
  [[nodiscard]] std::vector<FrameWindow> windows(std::int64_t start, std::int64_t frames) const;
  // The same into `out` (reusing its memory: for the per-chunk path).
  void windows(std::int64_t start, std::int64_t frames, std::vector<FrameWindow>& out) const;
  // Only [0]: the source frames the chunk reads.
  [[nodiscard]] FrameWindow source_window(std::int64_t start, std::int64_t frames) const noexcept;
  // The frames of stage j's input that the chunk counts in a metrics block
  // there (over the chunks, a partition of the signal; before clamping to
  // its defined length).
  [[nodiscard]] FrameWindow owned(std::size_t j, std::int64_t start,
                                  std::int64_t frames) const noexcept;
  // The longest chunk (what buffers are sized for).
  [[nodiscard]] std::int64_t max_chunk_frames() const noexcept {
    return std::max<std::int64_t>(1, std::min(chunk_frames, output_frames));
  }
  [[nodiscard]] std::int64_t block_frames(std::int64_t c) const noexcept {
    return chunk_length(c) + back + ahead;
  }
  [[nodiscard]] int output_slot() const noexcept {
    return static_cast<int>(metric_names.size()) - 1;
  }
  // Stage j's input channels (j = stages.size(): the output's).
  [[nodiscard]] int channels_in(std::size_t j) const noexcept {
    return j < stages.size() ? stages[j].channels_in : output_channels;
  }
  // Whether stage j's input (j = stages.size(): the output) pairs with the
  // source frame by frame and channel by channel (no rate change or mix
  // before it): then metrics there have dot_input and correlation_input.
  [[nodiscard]] bool paired(std::size_t j) const noexcept;
  // The channels of each metrics slot (Plan::metric_names' order).
  [[nodiscard]] std::vector<int> metric_channels() const;
  // A stage carries state (PlannedStage::carries_state): the chunks must
  // run in order, one at a time.
  [[nodiscard]] bool carries_state() const noexcept {
    return std::any_of(stages.begin(), stages.end(),
                       [](const PlannedStage& s) { return s.carries_state; });
  }
};

// Facts about the source needed to plan (from the file header or the synth spec).
struct SourceInfo {
  double sample_rate = 0.0;
  int channels = 0;
  std::int64_t frames = 0;
  SampleType sample_type = SampleType::f32;
  int bits = 0; // PCM bits of the source, 0 for float/compressed
  // A stream (standard input, a pipe): read front to back, whether or not
  // its header states a length (frames may also be what a read-ahead found
  // when the stream ended within it).
  bool open_ended = false;
};

} // namespace sigstream
