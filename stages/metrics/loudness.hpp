#pragma once
// EBU R128 / ITU-R BS.1770-4 loudness of a metrics block (SPEC §13):
// integrated loudness, loudness range, true peak, max momentary and max
// short-term, by kernels/cpu/loudness.hpp's meter, which gives libebur128's
// values (the reference the SPEC names; stages/metrics/test_loudness.cpp
// compares them) at a fraction of its time. The frames come in signal
// order, measured on the signal's own 100 ms grid, so the values do not
// depend on how the signal was cut into chunks.
#include <cstdint>
#include <span>

#include "kernels/cpu/loudness.hpp"
#include "model/report.hpp" // LoudnessReport

namespace sigstream {

class LoudnessMeter {
public:
  // Throws Error(config) for a rate or channel count BS.1770's meter refuses.
  LoudnessMeter(int channels, double sample_rate);

  // The next n frames of each channel (planes[c][0..n)).
  void add(std::span<const float* const> planes, std::int64_t n);
  // Frames [first, first + n) as measured elsewhere (the CPU's workers, a GPU)
  // (kernels::cpu::Bs1770Meter::add_measured); first must be the next frame.
  void add_measured(std::int64_t first, std::int64_t n, std::span<const double> energy,
                    std::span<const double> sample_peak, std::span<const double> true_peak);
  // The meter's arithmetic, for the GPU's share (kernels/cuda/loudness.cuh).
  [[nodiscard]] const kernels::cpu::Bs1770Meter& meter() const noexcept { return meter_; }
  [[nodiscard]] LoudnessReport result() const;

private:
  kernels::cpu::Bs1770Meter meter_;
};

} // namespace sigstream
