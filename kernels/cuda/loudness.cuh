#pragma once
// A metrics block's loudness on the GPU (SPEC §13): per chunk, the
// K-weighted energy of each 100 ms step of the signal's frame grid and the
// sample and true peaks, per channel, which the host's meter
// (kernels/cpu/loudness.hpp, Bs1770Meter::add_measured) takes in chunk
// order for the gating, the range and the maxima. So chunks measure on any
// lane in any order: the K-weighting of a piece starts from rest
// `settle` frames before it (Bs1770Meter::settle_frames: the filter has
// forgotten its start to 1e-13 of full scale by then), which the stage's
// look-back provides; the interpolator reads its history from there too.
//
// Per call, on the caller's stream:
//   - the K-weighting: the frames from the look-back on, widened to float64,
//     through kernels/cuda/iir.cuh's cascade (the shelf and the high-pass as
//     two sections, in parallel over time by its scan) from rest;
//   - a block per (channel, step) sums the squares of its frames in a fixed
//     tree (deterministic);
//   - a thread per frame and channel for the peaks: each phase's output
//     summed in float64 in tap order and rounded to float32 (the CPU's
//     arithmetic), the maxima of |x| and |y| by atomicMax on their bits;
//   - two small copies to pinned memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/loudness.hpp"
#include "kernels/cuda/iir.cuh"
#include "kernels/cuda/resources.hpp"

namespace sigstream::kernels::cuda {

// The most phases and taps per phase the interpolator has (4x: 3 phases of
// 12-13 taps, the 4th is the input itself; 2x: one of 24).
inline constexpr int kLoudnessPhases = 3;
inline constexpr int kLoudnessTaps = 25;

// What the kernels compute with, passed by value.
struct LoudnessDesign {
  double b[5];
  double a[5];
  std::int64_t step = 1;   // frames in 100 ms
  std::int64_t settle = 0; // frames of look-back each piece starts from rest
  int phases = 0;
  int taps[kLoudnessPhases];
  double coeff[kLoudnessPhases][kLoudnessTaps];
  int delay[kLoudnessPhases][kLoudnessTaps];
};

// One lane's loudness measurement for one metrics block.
class DeviceLoudness {
public:
  // `meter`: a meter for the block's channels and rate (its arithmetic is
  // copied); `channels` its channels; at most `max_frames` frames a call.
  // Throws Error(invalid_argument) for an interpolator larger than the
  // kernels hold, Error(cuda) when it cannot allocate.
  DeviceLoudness(const cpu::Bs1770Meter& meter, int channels, std::int64_t max_frames);

  // The frames each piece starts from rest before its first (the look-back
  // a call needs).
  [[nodiscard]] std::int64_t look_back() const noexcept { return design_.settle; }

  // Enqueues on `stream` the measurement of the signal's frames [first,
  // first + n), channel c at d_x + c * x_stride (d_x: frame `first`), with
  // look_back() frames readable before each (zeros before the signal).
  // Throws Error(invalid_argument) for n over max_frames, Error(cuda).
  void measure(const float* d_x, std::int64_t x_stride, std::int64_t first, std::int64_t n,
               cudaStream_t stream);

  // After the stream has finished the last measure(): its first frame and count,
  // per channel the energy of each step they touch (energy[c * steps + k])
  // and the peaks, as Bs1770Meter::add_measured takes them.
  void read(std::int64_t& first, std::int64_t& n, std::vector<double>& energy,
            std::vector<double>& sample_peak, std::vector<double>& true_peak) const;

private:
  LoudnessDesign design_;
  int channels_;
  std::int64_t max_frames_;
  std::int64_t max_steps_;
  std::int64_t plane_; // a channel's float64 plane: look-back + max_frames, rounded up
  IirCascade k_weighting_;
  // The last call's.
  std::int64_t first_ = 0, n_ = 0, steps_ = 0;
  DeviceBuffer<double> d_y_;           // [channel][plane_]: the K-weighted frames
  DeviceBuffer<double> d_state_;       // the cascade's state, from rest each call
  DeviceBuffer<double> d_work_;        // the cascade's scratch
  DeviceBuffer<double> d_energy_;      // [channel][step]
  DeviceBuffer<unsigned int> d_peaks_; // [channel][sample, true]: float bits
  PinnedBuffer<double> h_energy_;
  PinnedBuffer<unsigned int> h_peaks_;
};

} // namespace sigstream::kernels::cuda
