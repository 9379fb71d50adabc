#pragma once
// EBU R128 / ITU-R BS.1770-4 loudness of a metrics block (SPEC §13), by
// libebur128 (EBU_R128_MODE_I | LRA | TRUE_PEAK | M | S), the reference the
// SPEC names: K-weighting, 400 ms blocks (75% overlap) with the absolute and
// relative gates, the loudness range from 3 s blocks, the true peak 4x
// oversampled; libebur128's channel map (0 L, 1 R, 2 C, 3 unused (the LFE of
// 5.1), 4 Ls, 5 Rs at +1.5 dB; further channels unused). The frames come in
// signal order; they are handed to libebur128 in steps of 100 ms of the
// signal's own frame grid, and after each step the momentary (400 ms) and
// short-term (3 s) loudness are read for their maxima, so the values do not
// depend on how the signal was cut into chunks.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "model/report.hpp" // LoudnessReport

namespace sigstream {

class LoudnessMeter {
public:
  // Throws Error(config) for a rate or channel count libebur128 refuses.
  LoudnessMeter(int channels, double sample_rate);
  ~LoudnessMeter();
  LoudnessMeter(const LoudnessMeter&) = delete;
  LoudnessMeter& operator=(const LoudnessMeter&) = delete;

  // The next n frames of each channel (planes[c][0..n)).
  void add(std::span<const float* const> planes, std::int64_t n);
  [[nodiscard]] LoudnessReport result() const;

private:
  void step(std::span<const float* const> planes, std::int64_t at, std::int64_t n);
  struct State; // libebur128's state (loudness.cpp)
  std::unique_ptr<State> state_;
  int channels_;
  std::int64_t step_frames_; // 100 ms
  std::int64_t done_ = 0;    // frames added so far
  std::vector<float> interleaved_;
  std::optional<double> max_m_, max_s_;
};

} // namespace sigstream
