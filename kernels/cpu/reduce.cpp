#include "kernels/cpu/reduce.hpp"

#include <cmath>

namespace sigstream::kernels::cpu {

ChannelMetrics channel_metrics(const float* y, const float* x, std::int64_t n) {
  ChannelMetrics m;
  m.frames = n;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = y[i];
    const double s = x != nullptr ? static_cast<double>(x[i]) : 0.0;
    m.source_energy += s * s;
    if (!std::isfinite(v)) {
      ++m.nonfinite;
      continue;
    }
    m.energy += v * v;
    m.sum += v;
    m.dot += s * v;
    const double a = std::fabs(v);
    if (a > m.peak) m.peak = a;
  }
  return m;
}

}  // namespace sigstream::kernels::cpu
