#pragma once
// The metrics of SPEC §4 for one channel over a range of frames. Partial
// results of chunks merge, in chunk order, into totals.
#include <cmath>
#include <cstdint>

namespace sigstream {

struct ChannelMetrics {
  double energy = 0.0;        // sum y^2 (finite samples)
  double sum = 0.0;           // sum y
  double peak = 0.0;          // max |y|
  double dot = 0.0;           // sum x*y, x = source sample at the same frame
  double source_energy = 0.0; // sum x^2 over the same frames
  // NaN/Inf samples of y. Non-finite samples (of y, and of x in dot and
  // source_energy) enter the sums and the peak as 0.
  std::int64_t nonfinite = 0;
  std::int64_t frames = 0;

  void merge(const ChannelMetrics& o) noexcept {
    energy += o.energy;
    sum += o.sum;
    peak = peak > o.peak ? peak : o.peak;
    dot += o.dot;
    source_energy += o.source_energy;
    nonfinite += o.nonfinite;
    frames += o.frames;
  }
  [[nodiscard]] double rms() const noexcept {
    return frames > 0 ? std::sqrt(energy / static_cast<double>(frames)) : 0.0;
  }
  [[nodiscard]] double mean() const noexcept {
    return frames > 0 ? sum / static_cast<double>(frames) : 0.0;
  }
  [[nodiscard]] double correlation() const noexcept {
    const double d = std::sqrt(source_energy * energy);
    return (source_energy > 0.0 && energy > 0.0) ? dot / d : 0.0;
  }
};

} // namespace sigstream
