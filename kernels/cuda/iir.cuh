#pragma once
// A cascade of second-order sections on the GPU (SPEC §12), the recursion
// of kernels/cpu/iir.hpp (transposed direct form II, float64 state), run in
// parallel over time rather than one thread per channel (Nehab et al. 2011;
// the "chunk-level state propagation" of CuPy's _iir_utils):
//   1. each thread filters a segment of 32 samples from a zero state; the
//      state a segment leaves is its input's contribution, e;
//   2. the cascade's state is linear, z' = M z + (input terms), so the state
//      after k samples from z is M^k z + e: states join by a scan whose
//      operator needs M^(2^j) only (a warp's shuffles, then the tile's
//      warps, then the tiles of a channel, each a power of two long);
//   3. each segment reruns from its true start state and writes its output.
// Per sample the signal is read twice and written once. The arithmetic is
// float64 throughout; each segment's run is the CPU's recursion (with fused
// multiply-adds), and the joined states differ from the CPU's sequential
// ones by rounding only: outputs agree with the CPU to ~1e-12 relative.
// Cascades of more than eight sections run as groups of up to eight, passing
// float64 between groups as the CPU passes it between sections.
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
};

} // namespace sigstream::kernels::cuda
