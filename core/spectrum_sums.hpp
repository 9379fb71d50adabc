#pragma once
// A metrics block's Welch power sums over some frames (SPEC §8): per
// channel, the float64 sum of |DFT(window * segment)|^2 over the segments
// those frames own (kernels/cpu/welch.hpp: a segment belongs to the chunk
// that holds its last frame), and how many segments. Chunks merge in order.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sigstream {

struct SpectrumSums {
  std::vector<double> power; // [channel * bins + bin]; empty: no spectrum (or none yet)
  std::int64_t segments = 0;

  void merge(const SpectrumSums& o) {
    if (o.power.empty())
      return;
    if (power.empty())
      power.assign(o.power.size(), 0.0);
    for (std::size_t i = 0; i < power.size(); ++i)
      power[i] += o.power[i];
    segments += o.segments;
  }
};

} // namespace sigstream
