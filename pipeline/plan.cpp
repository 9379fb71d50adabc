#include "pipeline/plan.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "stages/design.hpp"
#include "stages/registry.hpp"

namespace sigstream {

Plan make_plan(const Config& config, const SourceInfo& source, int output_bits) {
  Plan plan;
  plan.sample_rate = source.sample_rate;
  plan.channels = source.channels;
  plan.length_known = source.frames != kUnknownFrames;
  plan.source_frames = plan.length_known ? source.frames : kOpenEnd;
  plan.input_type = source.sample_type;
  plan.output_bits = output_bits;
  plan.output_type = output_bits == 0    ? SampleType::f32
                     : output_bits <= 16 ? SampleType::i16
                                         : SampleType::i32;

  std::int64_t frames = plan.source_frames;
  double rate = source.sample_rate;
  int channels = source.channels;
  plan.max_channels = channels;
  for (std::size_t index = 0; index < config.stages.size(); ++index) {
    const StageSpec& s = config.stages[index];
    PlannedStage p;
    p.type = s.type;
    p.name = s.name;
    p.frames_in = frames;
    p.channels_in = channels;
    p.channels_out = channels;
    const StageKind& kind = stage_kind(s.type);
    kind.plan(s, StagePlanContext{config, index, rate, frames, channels}, p);
    channels = p.channels_out;
    plan.max_channels = std::max(plan.max_channels, channels);
    if (p.changes_rate()) {
      plan.rate_changes = true;
      rate = rate * static_cast<double>(p.up) / static_cast<double>(p.down);
    }
    if (kind.observer) {
      p.metrics_slot = static_cast<int>(plan.metric_names.size());
      plan.metric_names.push_back(s.name);
    }
    frames = p.frames_out;
    p.grow_in = p.frames_in - plan.source_frames;
    p.grow_out = p.frames_out - plan.source_frames;
    plan.stages.push_back(std::move(p));
  }
  plan.metric_names.emplace_back("output");
  plan.output_rate = rate;
  plan.output_channels = channels;
  plan.output_frames = frames;
  plan.output_grow = frames - plan.source_frames;

  // Halos: a stage's input buffer must cover what every later stage still needs.
  std::int64_t back = 0;
  std::int64_t ahead = 0;
  for (auto it = plan.stages.rbegin(); it != plan.stages.rend(); ++it) {
    back += it->lookback;
    ahead += it->lookahead;
    it->in_back = back;
    it->in_ahead = ahead;
  }
  plan.back = back;
  plan.ahead = ahead;
  plan.chunk_frames = config.execution.chunk_frames;
  // chunk_frames bounds memory: behind a down-sampler a chunk of output
  // frames reads down/up times as many, so the chunk shrinks until no
  // signal's window is longer than chunk_frames (plus halos). Live mode
  // reads blocks of source frames and keeps its chunk as set.
  for (std::size_t j = plan.stages.size(); j-- > 0;) {
    double in_per_out = 1.0;
    for (std::size_t i = j; i < plan.stages.size(); ++i)
      in_per_out *=
          static_cast<double>(plan.stages[i].down) / static_cast<double>(plan.stages[i].up);
    plan.in_per_out = std::max(plan.in_per_out, in_per_out);
  }
  if (plan.in_per_out > 1.0 && !config.execution.latency_ms)
    plan.chunk_frames = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(config.execution.chunk_frames) /
                                     plan.in_per_out));
  // A stage that needs the whole signal (a zero-phase iir) makes it one chunk.
  for (std::size_t j = 0; j < plan.stages.size(); ++j)
    if (plan.stages[j].whole_signal) {
      if (!plan.length_known || source.open_ended)
        throw config_error(
            stage_where(StagePlanContext{config, j, 0.0, 0, 1}, config.stages[j]) +
            ": zero_phase filters forward and backward over the whole signal, whose length it "
            "needs first: a file whose header states it, not a stream (nor a file FFmpeg "
            "decodes)");
      plan.chunk_frames = std::max<std::int64_t>(1, plan.output_frames);
    }
  plan.num_chunks = (plan.output_frames + plan.chunk_frames - 1) / plan.chunk_frames;
  // The longest windows: a chunk's windows grow with its length, and behind
  // a rate change their lengths also vary with the phase of its start (the
  // floor and ceil of the mapping: by one frame there, by down/up frames
  // per frame of variation after it).
  const std::int64_t longest = plan.max_chunk_frames();
  const std::vector<FrameWindow> w = plan.windows(0, longest);
  plan.max_window.resize(w.size());
  std::int64_t slack = 0;
  plan.max_window.back() = w.back().size();
  for (std::size_t j = plan.stages.size(); j-- > 0;) {
    const PlannedStage& st = plan.stages[j];
    if (st.changes_rate())
      slack = ceil_div(slack * st.down, st.up) + 1;
    plan.max_window[j] = w[j].size() + slack;
  }
  return plan;
}

namespace {

// Every field but the lengths that follow from the source's (frames_in, frames_out).
bool same_stage_shape(const PlannedStage& a, const PlannedStage& b) {
  return a.type == b.type && a.name == b.name && a.params == b.params &&
         a.metrics_slot == b.metrics_slot && a.lookback == b.lookback &&
         a.lookahead == b.lookahead && a.up == b.up && a.down == b.down && a.extra == b.extra &&
         a.channels_in == b.channels_in && a.channels_out == b.channels_out &&
         a.mixes_channels == b.mixes_channels && a.in_back == b.in_back &&
         a.in_ahead == b.in_ahead && a.grow_in == b.grow_in && a.grow_out == b.grow_out;
}

} // namespace

bool same_shape(const Plan& a, const Plan& b) {
  if (a.sample_rate != b.sample_rate || a.channels != b.channels ||
      a.output_channels != b.output_channels || a.max_channels != b.max_channels ||
      a.length_known != b.length_known || a.output_grow != b.output_grow || a.back != b.back ||
      a.ahead != b.ahead || a.chunk_frames != b.chunk_frames || a.metric_names != b.metric_names ||
      a.input_type != b.input_type || a.output_type != b.output_type ||
      a.output_bits != b.output_bits || a.output_rate != b.output_rate ||
      a.rate_changes != b.rate_changes || a.in_per_out != b.in_per_out ||
      a.max_window.size() != b.max_window.size() || a.stages.size() != b.stages.size())
    return false;
  for (std::size_t j = 0; j < a.stages.size(); ++j)
    if (!same_stage_shape(a.stages[j], b.stages[j]))
      return false;
  return true;
}

bool fits_prepared(const Plan& plan, const Plan& prepared, std::int64_t max_chunk,
                   const std::vector<std::int64_t>& windows) {
  if (!same_shape(plan, prepared) || plan.max_chunk_frames() > max_chunk ||
      plan.max_window.size() > windows.size())
    return false;
  for (std::size_t j = 0; j < plan.max_window.size(); ++j)
    if (plan.max_window[j] > windows[j])
      return false;
  return true;
}

} // namespace sigstream
