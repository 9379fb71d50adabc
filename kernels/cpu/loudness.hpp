#pragma once
// ITU-R BS.1770-4 / EBU R128 loudness of planar float frames fed in signal
// order (SPEC §13): K-weighting (the shelving pre-filter and the RLB
// high-pass as one 4th-order section in float64, direct form II), the
// K-weighted energy of every 100 ms of the signal's frame grid (rate / 10
// frames, rounded), momentary blocks of 4 of them every 100 ms and
// short-term blocks of 30, the absolute (-70 LUFS) and relative (-10 LU)
// gates for the integrated loudness, EBU Tech 3342's loudness range from the
// short-term blocks every second (the -20 LU gate, the 10th and 95th
// percentiles), and the true peak from a 4x (2x from 96 kHz, none from
// 192 kHz) polyphase interpolation by a 49-tap Hann-windowed sinc. Channel
// weights as BS.1770 and libebur128's default map: L, R, C at 1; the 4th
// channel of 6 (the LFE of 5.1) and channels beyond 6 left out; Ls, Rs (the
// 5th and 6th of 6, the 3rd and 4th of 4, the 4th and 5th of 5) at 1.41.
// The values equal libebur128's (its I | LRA | TRUE_PEAK | M | S modes)
// within float64 rounding (stages/metrics/test_loudness.cpp checks).
//
// The K-weighting (to 192 kHz) runs on a fixed grid of the signal's frames,
// groups of kLanes segments of kSegment frames, the segments of a group side
// by side in vector lanes (its recursion is otherwise one frame after
// another): frames wait in the meter until their group is complete, and the
// last group's are filtered one by one when the values are read. The grid is
// the signal's, never the caller's chunks, so every chunking of add() gives
// the same values to the bit. (The CPU backend's workers and the GPU measure
// pieces on their own instead, settled from rest: measure(), add_measured();
// their values agree with add()'s to 1e-9 LU.)
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernels/cpu/iir.hpp" // Biquad

namespace sigstream::kernels::cpu {

class Bs1770Meter {
public:
  // channels 1..64, rate 16..2822400 Hz (whole Hz): what the caller checks.
  Bs1770Meter(int channels, long rate);

  // The next n frames of each channel (planes[c][0..n)).
  void add(std::span<const float* const> planes, std::int64_t n);

  // Once 400 ms / 3 s are in: the largest momentary / short-term loudness
  // seen at the end of a 100 ms step (none while silent or too short).
  // (The values read cover every frame added; reading them may copy the
  // meter, see settled(), so they are not for threads reading at once.)
  [[nodiscard]] std::optional<double> max_momentary() const { return settled().max_m_; }
  [[nodiscard]] std::optional<double> max_short_term() const { return settled().max_s_; }
  // None: no 400 ms block above the gates.
  [[nodiscard]] std::optional<double> integrated() const;
  // Loudness range in LU; 0 where no 3 s block passes the gates.
  [[nodiscard]] double range() const;
  // The largest of the channels' true peaks (never below the sample peak), linear.
  [[nodiscard]] double true_peak() const noexcept;
  [[nodiscard]] std::int64_t frames() const noexcept { return done_; }
  [[nodiscard]] std::int64_t step_frames() const noexcept { return step_; }

  // The arithmetic, for a meter that computes a chunk's share elsewhere
  // (the CUDA path, kernels/cuda/loudness.cuh) and hands it to add_measured():
  // the K-weighting section (b[0..5), a[0..5), a[0] = 1, direct form II) ...
  [[nodiscard]] const double* k_b() const noexcept { return b_; }
  [[nodiscard]] const double* k_a() const noexcept { return a_; }
  // (the same as its two second-order sections, the shelf and the high-pass,
  // before they were multiplied into one) ...
  [[nodiscard]] const std::array<Biquad, 2>& k_sections() const noexcept { return sections_; }
  // ... the true-peak interpolator's phases (output = sum over t of
  // coeff[t] * x[i - delay[t]], in float64 in tap order, rounded to float32;
  // none from 192 kHz) ...
  struct Phase {
    std::vector<double> coeff;
    std::vector<int> delay;
  };
  [[nodiscard]] const std::vector<Phase>& phases() const noexcept { return phases_; }
  [[nodiscard]] int history() const noexcept { return history_; }
  // ... and how many frames the K-weighting takes to forget where it
  // started: run from rest that many frames early (at least the
  // interpolator's history), it gives the output of the run from the
  // signal's start to 1e-13 of full scale.
  [[nodiscard]] std::int64_t settle_frames() const noexcept { return settle_; }
  // How many of the 100 ms steps frames [first, first + n) touch.
  [[nodiscard]] std::int64_t steps_touched(std::int64_t first, std::int64_t n) const noexcept {
    return n > 0 ? (first + n - 1) / step_ - first / step_ + 1 : 0;
  }
  // The next n frames, measured elsewhere: per channel c, the K-weighted
  // energy (sum of squares) of those of them in each step they touch
  // (energy[c * steps + k], k = 0 the step holding the meter's next frame;
  // steps = steps_touched(frames(), n)), and their sample and true peaks
  // (linear, per channel). The K-weighting's state is not carried over
  // such frames: an add() after them would start from a stale one (the
  // hybrid backend does not split a plan that measures loudness).
  void add_measured(std::int64_t n, std::span<const double> energy,
                    std::span<const double> sample_peak, std::span<const double> true_peak);
  // What add_measured takes for the signal's frames [first, first + n), at
  // planes[c][0..n), measured here: settle_frames() frames before each are
  // readable (zeros before the signal), the K-weighting runs from rest there
  // (as on the GPU; kernels/cuda/loudness.cuh) and the interpolator reads
  // its history there. So pieces of a signal measure on any thread, in any
  // order (the CPU backend's workers). Uses nothing of the meter's state.
  // `peak_seen` (shared by the calls for one signal, from 0): the largest
  // peak found so far, which lets the interpolator skip quiet tiles (a
  // call's true peak may then stay under its own, never under the signal's).
  void measure(std::span<const float* const> planes, std::int64_t first, std::int64_t n,
               std::vector<double>& energy, std::vector<double>& sample_peak,
               std::vector<double>& true_peak, std::atomic<float>* peak_seen = nullptr) const;
  // The K-weighting's grid: a group of kLanes segments of kSegment frames.
  static constexpr int kLanes = 8;
  static constexpr std::int64_t kSegment = 2048;
  static constexpr std::int64_t kGroup = kLanes * kSegment;

private:
  void filter(std::span<const float* const> planes, std::int64_t at, std::int64_t n);
  void filter_group(std::span<const float* const> planes, std::int64_t at);
  void filter_steps(std::span<const float* const> planes, std::int64_t at, std::int64_t n);
  void filter_pending();
  void peaks(int c, const float* x, std::int64_t n);
  void step_done();
  // This meter where no frames wait for their group, else a copy of it that
  // has filtered them one by one (the meter itself keeps its grid).
  [[nodiscard]] const Bs1770Meter& settled() const;

  int channels_;
  std::int64_t step_;                         // frames in 100 ms
  std::int64_t settle_ = 0;                   // settle_frames()
  std::vector<double> weight_;                // per channel; 0 = left out
  double b_[5] = {}, a_[5] = {};              // the K-weighting section
  std::array<Biquad, 2> sections_{};          // ... as two
  std::vector<std::array<double, 5>> v_;      // its state per channel
  std::vector<double> acc_;                   // K-weighted energy of the step so far, per channel
  std::int64_t done_ = 0;                     // frames added
  static constexpr std::int64_t kRing = 30;   // a short-term block's steps
  std::array<double, kRing> steps_{};         // weighted energy of the last steps (a ring)
  std::int64_t steps_done_ = 0;               // complete steps
  std::vector<double> blocks_, short_blocks_; // gated 400 ms and 3 s block energies
  std::optional<double> max_m_, max_s_;
  // The K-weighting's grid: frames [filtered_, done_) wait in pending_ (the
  // weighted channels') for their group to complete; m_ carries a state
  // over a segment of zeros (m_[r * 4 + c]: v(r + 1) from v(c + 1)).
  bool lanes_ = true; // else one frame after another, no frames wait
  std::int64_t filtered_ = 0;
  long double m_[16] = {};
  std::vector<std::vector<float>> pending_;
  std::vector<double> scratch_;   // a group's frames, the lanes interleaved
  std::vector<std::int64_t> cut_; // where some lane of a segment begins a step
  std::vector<double> part_;      // per channel, cut interval and lane: the energy
  mutable std::shared_ptr<const Bs1770Meter> settled_; // settled()'s copy; add() drops it
  // True peak: the interpolator's phases (taps and their delays), each
  // channel's last inputs, and the peaks.
  int factor_ = 1;
  std::vector<Phase> phases_;
  int history_ = 0;
  double phase_gain_ = 0.0;              // max over phases of the sum of |coefficients|
  std::vector<std::vector<float>> last_; // per channel, the last history_ inputs
  std::vector<float> window_;            // scratch: history + a tile of inputs
  std::vector<float> tile_peak_;         // scratch: the peak of each tile of a call's inputs
  std::vector<double> sample_peak_, true_peak_;
};

} // namespace sigstream::kernels::cpu
