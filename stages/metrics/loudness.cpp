#include "stages/metrics/loudness.hpp"

#include <ebur128.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace sigstream {

struct LoudnessMeter::State {
  explicit State(ebur128_state* s) : st(s) {}
  ~State() { ebur128_destroy(&st); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ebur128_state* st;
};

LoudnessMeter::LoudnessMeter(int channels, double sample_rate) : channels_(channels) {
  const auto rate = static_cast<unsigned long>(std::llround(sample_rate));
  if (channels < 1 || rate < 1 || static_cast<double>(rate) != sample_rate)
    throw config_error("loudness: " + std::to_string(channels) + " channel(s) at " +
                       std::to_string(sample_rate) +
                       " Hz (libebur128 takes whole-number rates and at least one channel)");
  ebur128_state* st = ebur128_init(static_cast<unsigned>(channels), rate,
                                   EBUR128_MODE_I | EBUR128_MODE_LRA | EBUR128_MODE_TRUE_PEAK |
                                       EBUR128_MODE_M | EBUR128_MODE_S);
  if (st == nullptr)
    throw config_error("loudness: libebur128 refuses " + std::to_string(channels) +
                       " channel(s) at " + std::to_string(rate) + " Hz");
  state_ = std::make_unique<State>(st);
  step_frames_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(rate / 10));
}

LoudnessMeter::~LoudnessMeter() = default;

void LoudnessMeter::add(std::span<const float* const> planes, std::int64_t n) {
  std::int64_t at = 0;
  while (at < n) {
    // Up to the next 100 ms boundary of the signal's frame grid.
    const std::int64_t room = step_frames_ - done_ % step_frames_;
    const std::int64_t k = std::min(room, n - at);
    step(planes, at, k);
    at += k;
  }
}

void LoudnessMeter::step(std::span<const float* const> planes, std::int64_t at, std::int64_t n) {
  const auto ch = static_cast<std::size_t>(channels_);
  interleaved_.resize(static_cast<std::size_t>(n) * ch);
  for (std::size_t c = 0; c < ch; ++c)
    for (std::int64_t i = 0; i < n; ++i)
      interleaved_[static_cast<std::size_t>(i) * ch + c] = planes[c][at + i];
  if (ebur128_add_frames_float(state_->st, interleaved_.data(), static_cast<std::size_t>(n)) !=
      EBUR128_SUCCESS)
    throw Error(ErrorKind::internal, "loudness: libebur128 could not add frames");
  done_ += n;
  if (done_ % step_frames_ != 0)
    return;
  double v = 0.0;
  if (done_ >= 4 * step_frames_ && ebur128_loudness_momentary(state_->st, &v) == EBUR128_SUCCESS &&
      std::isfinite(v))
    max_m_ = std::max(max_m_.value_or(v), v);
  if (done_ >= 30 * step_frames_ && ebur128_loudness_shortterm(state_->st, &v) == EBUR128_SUCCESS &&
      std::isfinite(v))
    max_s_ = std::max(max_s_.value_or(v), v);
}

LoudnessReport LoudnessMeter::result() const {
  LoudnessReport r;
  double v = 0.0;
  ebur128_state* s = state_->st;
  if (ebur128_loudness_global(s, &v) == EBUR128_SUCCESS && std::isfinite(v))
    r.integrated_lufs = v;
  if (ebur128_loudness_range(s, &v) == EBUR128_SUCCESS && std::isfinite(v) && r.integrated_lufs &&
      done_ >= 30 * step_frames_)
    r.range_lu = v;
  double peak = 0.0;
  for (int c = 0; c < channels_; ++c)
    if (ebur128_true_peak(s, static_cast<unsigned>(c), &v) == EBUR128_SUCCESS)
      peak = std::max(peak, v);
  if (peak > 0.0)
    r.true_peak_dbtp = 20.0 * std::log10(peak);
  r.max_momentary_lufs = max_m_;
  r.max_short_term_lufs = max_s_;
  return r;
}

} // namespace sigstream
