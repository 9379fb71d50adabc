#pragma once
// A cascade of second-order sections on the GPU (SPEC §12), the recursion
// of kernels/cpu/iir.hpp (transposed direct form II, float64 state), run in
// parallel over time rather than one thread per channel (Nehab et al. 2011;
// the "chunk-level state propagation" of CuPy's _iir_utils):
//   1. each thread filters a segment (64 samples; 32 on float64 planes)
//      from a zero state; the state a segment leaves is its input's
//      contribution, e, kept for step 3;
//   2. the cascade's state is linear, z' = M z + (input terms), so the state
//      after k samples from z is M^k z + e: states join by a scan whose
//      operator needs M^(2^j) only (a warp's shuffles, then the block's
//      warps, then levels of 128 tiles with a fix-up each);
//   3. each segment reruns from its true start state and writes its output.
// Per sample the signal is read twice and written once, plus e (a few
// bytes a sample). The arithmetic is float64 throughout; each segment's run
// is the CPU's recursion (with fused multiply-adds), and the joined states
// differ from the CPU's sequential ones by rounding only: the float32
// outputs agree with the CPU's to ~6e-11 relative L2 (a last bit here and
// there). Zero phase (filtfilt) pads, runs forward, reverses and runs
// again, on float64 planes. Cascades of more than eight sections run as
// groups of up to eight, passing float64 between groups as the CPU passes
// it between sections.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/iir.hpp"
#include "kernels/cuda/resources.hpp"

namespace sigstream::kernels::cuda {

class IirCascade {
public:
  // The sections' transition powers, uploaded before this returns. Throws
  // Error(invalid_argument) for no sections.
  explicit IirCascade(std::span<const cpu::Biquad> sections);

  [[nodiscard]] int sections() const noexcept { return static_cast<int>(sections_.size()); }
  // Doubles of state per channel (z0, z1 a section, as the CPU's sosfilt).
  [[nodiscard]] int state_size() const noexcept { return 2 * sections(); }
  // Scratch `run` needs for `channels` planes of up to `n` frames (doubles).
  [[nodiscard]] std::size_t workspace_doubles(int channels, std::int64_t n) const;

  // Filters frames [0, n) of each channel c (x + c * x_stride into
  // y + c * y_stride; x == y allowed) from and into the state at
  // d_state + c * state_size(). Enqueues on `stream` and returns; n == 0
  // launches nothing. d_work holds workspace_doubles(channels, n).
  void run(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride, int channels,
           std::int64_t n, double* d_state, double* d_work, cudaStream_t stream) const;
  void run(const double* x, std::int64_t x_stride, double* y, std::int64_t y_stride, int channels,
           std::int64_t n, double* d_state, double* d_work, cudaStream_t stream) const;

  // scipy.signal.sosfiltfilt with its defaults, as kernels/cpu/iir.hpp's
  // sosfiltfilt (the odd padding in float32, then both passes in float64):
  // frames [0, n) of each channel, n > pad(). d_ext holds
  // ext_doubles(channels, n); d_state channels x state_size() (clobbered).
  [[nodiscard]] std::int64_t pad() const noexcept { return pad_; }
  [[nodiscard]] std::size_t ext_doubles(int channels, std::int64_t n) const;
  void filtfilt(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride,
                int channels, std::int64_t n, double* d_ext, double* d_state, double* d_work,
                cudaStream_t stream) const;

private:
  struct Group {
    int first = 0, count = 0;
    DeviceBuffer<double> powers; // M^(2^k), k = 0 .. kPowers-1, each (2 count)^2, row-major
  };
  template <typename TX, typename TY>
  void run_group(const Group& g, const TX* x, std::int64_t x_stride, TY* y, std::int64_t y_stride,
                 int channels, std::int64_t n, double* d_state, double* d_work,
                 cudaStream_t stream) const;
  template <typename T>
  void run_all(const T* x, std::int64_t x_stride, T* y, std::int64_t y_stride, int channels,
               std::int64_t n, double* d_state, double* d_work, cudaStream_t stream) const;

  std::vector<cpu::Biquad> sections_;
  std::vector<Group> groups_;
  std::int64_t pad_ = 0;
  DeviceBuffer<double> zi_; // sosfilt_zi, state_size() values
};

} // namespace sigstream::kernels::cuda
