#include "kernels/cpu/iir.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <numbers>

namespace sigstream::kernels::cpu {

namespace {

// One sample through every section: the recursion is serial in time, so a
// channel's samples run one after another (channels are independent).
template <typename T>
void run(std::span<const Biquad> s, std::span<double> z, const T* x, T* y, std::int64_t n) {
  const std::size_t m = s.size();
  for (std::int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(x[i]);
    for (std::size_t k = 0; k < m; ++k) {
      const Biquad& q = s[k];
      double& z0 = z[2 * k];
      double& z1 = z[2 * k + 1];
      const double out = q.b0 * v + z0;
      z0 = q.b1 * v - q.a1 * out + z1;
      z1 = q.b2 * v - q.a2 * out;
      v = out;
    }
    y[i] = static_cast<T>(v);
  }
}

} // namespace

void sosfilt(std::span<const Biquad> sections, std::span<double> state, const float* x, float* y,
             std::int64_t n) {
  run(sections, state, x, y, n);
}

void sosfilt(std::span<const Biquad> sections, std::span<double> state, const double* x,
             double* y, std::int64_t n) {
  run(sections, state, x, y, n);
}

FilterResponse sos_response(std::span<const Biquad> sections, double rate, int points) {
  FilterResponse r;
  const auto n = static_cast<std::size_t>(points) + 1;
  r.freq_hz.resize(n);
  r.magnitude_db.resize(n);
  r.group_delay_ms.resize(n);
  using C = std::complex<double>;
  // Re(sum k p_k z^-k / sum p_k z^-k): a polynomial's delay, in samples.
  auto delay = [](double p0, double p1, double p2, C z1, C z2, C& value) {
    value = p0 + p1 * z1 + p2 * z2;
    const C weighted = p1 * z1 + 2.0 * p2 * z2;
    return std::abs(value) > 0.0 ? (weighted / value).real() : 0.0;
  };
  double peak_db = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) {
    const double w = std::numbers::pi * static_cast<double>(k) / static_cast<double>(points);
    const C z1 = std::polar(1.0, -w);
    const C z2 = std::polar(1.0, -2.0 * w);
    C h = 1.0;
    double gd = 0.0;
    for (const Biquad& s : sections) {
      C num, den;
      gd += delay(s.b0, s.b1, s.b2, z1, z2, num) - delay(1.0, s.a1, s.a2, z1, z2, den);
      h *= num / den;
    }
    r.freq_hz[k] = static_cast<double>(k) * rate / (2.0 * points);
    const double mag = std::abs(h);
    r.magnitude_db[k] = mag > 0.0 ? 20.0 * std::log10(mag) : -400.0;
    r.group_delay_ms[k] = gd / rate * 1000.0;
    peak_db = std::max(peak_db, r.magnitude_db[k]);
  }
  for (std::size_t k = 0; k < n; ++k)
    if (r.magnitude_db[k] < peak_db - 120.0)
      r.group_delay_ms[k] = std::numeric_limits<double>::quiet_NaN();
  return r;
}

} // namespace sigstream::kernels::cpu
