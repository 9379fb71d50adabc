#include "kernels/cpu/reduce.hpp"

#include <cmath>

namespace sigstream::kernels::cpu {

namespace {

// Eight interleaved partial sums: the loop over a block has no dependency
// between lanes, so it vectorises without reassociating anything (the
// partials are combined in a fixed order at the end, so the result is the
// same on every run and with every instruction set).
constexpr int kLanes = 8;

struct Lanes {
  double energy[kLanes] = {}, sum[kLanes] = {}, dot[kLanes] = {}, src[kLanes] = {}, peak[kLanes] = {};
  double bad[kLanes] = {};  // counts, as doubles so every lane is one vector type (exact below 2^53)
};

// Non-finite samples count in `nonfinite` (of y) and enter the sums as 0, so
// one bad sample does not turn every statistic into NaN; a non-finite source
// sample enters dot and the source energy as 0.
inline void step(Lanes& l, int j, float yf, float xf) {
  const double v = yf;
  const double xs = xf;
  const bool finite = (v - v) == 0.0;  // false for NaN and +-Inf
  const double f = finite ? v : 0.0;
  const double s = (xs - xs) == 0.0 ? xs : 0.0;
  l.energy[j] += f * f;
  l.sum[j] += f;
  l.dot[j] += s * f;
  l.src[j] += s * s;
  const double a = std::fabs(f);
  l.peak[j] = a > l.peak[j] ? a : l.peak[j];
  l.bad[j] += finite ? 0.0 : 1.0;
}

}  // namespace

// Built for AVX2 and baseline x86-64 (same bits either way).
[[gnu::target_clones("arch=x86-64-v3", "default")]]
ChannelMetrics channel_metrics(const float* y, const float* x, std::int64_t n) {
  static const float kZeros[kLanes] = {};
  Lanes l;
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const float* xb = x != nullptr ? x + i : kZeros;
    for (int j = 0; j < kLanes; ++j) step(l, j, y[i + j], xb[j]);
  }
  for (int j = 0; i < n; ++i, ++j) step(l, j, y[i], x != nullptr ? x[i] : 0.0f);

  ChannelMetrics m;
  m.frames = n;
  double bad = 0.0;
  for (int j = 0; j < kLanes; ++j) {
    m.energy += l.energy[j];
    m.sum += l.sum[j];
    m.dot += l.dot[j];
    m.source_energy += l.src[j];
    m.peak = l.peak[j] > m.peak ? l.peak[j] : m.peak;
    bad += l.bad[j];
  }
  m.nonfinite = static_cast<std::int64_t>(bad);
  return m;
}

}  // namespace sigstream::kernels::cpu
