#include "kernels/cpu/reduce.hpp"

#include <cmath>

namespace sigstream::kernels::cpu {

namespace {
// Eight interleaved partial sums: the loop body has no dependency between
// lanes, so it vectorises without reassociating anything (the partials are
// combined in a fixed order at the end, so results are deterministic).
constexpr int kLanes = 8;
}  // namespace

ChannelMetrics channel_metrics(const float* y, const float* x, std::int64_t n) {
  double energy[kLanes] = {}, sum[kLanes] = {}, dot[kLanes] = {}, src[kLanes] = {}, peak[kLanes] = {};
  std::int64_t bad[kLanes] = {};
  auto step = [&](int j, std::int64_t i) {
    const double v = y[i];
    const double xs = x != nullptr ? static_cast<double>(x[i]) : 0.0;
    // Non-finite samples count in `nonfinite` (of y) and enter the sums as 0,
    // so one bad sample does not turn every statistic into NaN.
    const double s = (xs - xs) == 0.0 ? xs : 0.0;
    const bool finite = (v - v) == 0.0;  // false for NaN and +-Inf
    const double f = finite ? v : 0.0;
    energy[j] += f * f;
    sum[j] += f;
    dot[j] += s * f;
    src[j] += s * s;
    const double a = std::fabs(f);
    peak[j] = a > peak[j] ? a : peak[j];
    bad[j] += finite ? 0 : 1;
  };
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) step(j, i + j);
  for (int j = 0; i < n; ++i, ++j) step(j, i);

  ChannelMetrics m;
  m.frames = n;
  for (int j = 0; j < kLanes; ++j) {
    m.energy += energy[j];
    m.sum += sum[j];
    m.dot += dot[j];
    m.source_energy += src[j];
    m.peak = peak[j] > m.peak ? peak[j] : m.peak;
    m.nonfinite += bad[j];
  }
  return m;
}

}  // namespace sigstream::kernels::cpu
