#pragma once
// The figures' excerpt (SPEC §8, RunReport::excerpt), captured as a run passes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/sample_block.hpp"
#include "kernels/cpu/layout.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/plan.hpp"

namespace sigstream {

// The excerpt of the figures' before/after waveforms (SPEC §8): 40 ms (at
// most 4096 frames) of the source from a quarter into a signal of known
// length (at most 60 s in), 0.5 s into a stream, and the output over the
// same time. The chunk flow hands it the source blocks as they are submitted
// (the main thread) and the output blocks as they are written (the writer);
// live mode its blocks as they pass (its output planes when it has no sink).
class ExcerptCapture {
public:
  explicit ExcerptCapture(const Plan& plan)
      : rate_in_(plan.sample_rate), rate_out_(plan.output_rate) {
    len_ = std::clamp<std::int64_t>(std::llround(0.04 * rate_in_), 1, 4096);
    if (plan.length_known) {
      start_ = std::min<std::int64_t>(plan.source_frames / 4, std::llround(60.0 * rate_in_));
      start_ = std::max<std::int64_t>(0, std::min(start_, plan.source_frames - len_));
      len_ = std::min(len_, plan.source_frames - start_);
    } else {
      start_ = std::llround(0.5 * rate_in_);
    }
    const double ratio = rate_out_ / rate_in_;
    out_start_ = static_cast<std::int64_t>(std::floor(static_cast<double>(start_) * ratio));
    out_len_ = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(static_cast<double>(len_) * ratio)));
    source_.assign(static_cast<std::size_t>(plan.channels),
                   std::vector<float>(static_cast<std::size_t>(len_), 0.0f));
    output_.assign(static_cast<std::size_t>(plan.output_channels),
                   std::vector<float>(static_cast<std::size_t>(out_len_), 0.0f));
  }
  // `block` holds frames [first, first + block.frames) of the source / the output.
  void source_block(const HostBlock& block, std::int64_t first) {
    copy(block, first, start_, source_);
  }
  void output_block(const HostBlock& block, std::int64_t first) {
    copy(block, first, out_start_, output_);
  }
  // Planar float frames [first, first + n) of the output.
  void output_planes(const std::vector<std::vector<float>>& planes, std::int64_t n,
                     std::int64_t first) {
    const FrameWindow w = overlap(first, n, out_start_, output_);
    for (std::size_t c = 0; c < output_.size() && w.size() > 0; ++c)
      std::copy(planes[c].begin() + (w.lo - first), planes[c].begin() + (w.hi - first),
                output_[c].begin() + (w.lo - out_start_));
  }
  // What the signal held of it, given the final lengths; none when it ended before the excerpt.
  [[nodiscard]] std::optional<ExcerptReport> result(std::int64_t source_frames,
                                                    std::int64_t output_frames) const {
    const std::int64_t n_in = std::min(len_, source_frames - start_);
    const std::int64_t n_out = std::min(out_len_, output_frames - out_start_);
    if (n_in < 1 || n_out < 1)
      return std::nullopt;
    ExcerptReport e;
    e.source_start = start_;
    e.output_start = out_start_;
    e.source_rate = rate_in_;
    e.output_rate = rate_out_;
    for (const auto& a : source_)
      e.source.emplace_back(a.begin(), a.begin() + n_in);
    for (const auto& b : output_)
      e.output.emplace_back(b.begin(), b.begin() + n_out);
    return e;
  }

private:
  // The frames of [first, first + n) that planes `to`, from frame `at`, hold.
  static FrameWindow overlap(std::int64_t first, std::int64_t n, std::int64_t at,
                             const std::vector<std::vector<float>>& to) {
    const auto held = static_cast<std::int64_t>(to.empty() ? 0 : to[0].size());
    return {std::max(first, at), std::max(std::max(first, at), std::min(first + n, at + held))};
  }
  void copy(const HostBlock& block, std::int64_t first, std::int64_t at,
            std::vector<std::vector<float>>& to) {
    const FrameWindow w = overlap(first, block.frames, at, to);
    if (w.size() == 0)
      return;
    std::vector<float*> planes;
    for (auto& plane : to)
      planes.push_back(plane.data() + (w.lo - at));
    kernels::cpu::deinterleave(block, w.lo - first, w.size(), planes.data());
  }
  double rate_in_, rate_out_;
  std::int64_t start_ = 0, len_ = 0, out_start_ = 0, out_len_ = 0;
  std::vector<std::vector<float>> source_, output_;
};

} // namespace sigstream
