#include "kernels/cpu/iir.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace sigstream::kernels::cpu {

namespace {

// G channels side by side through S sections (both known when compiled, so
// the state stays in registers and the G recursions interleave); per
// channel the operations are those of the one-channel loop, in its order.
template <typename T, int G, int S>
void run_fixed(const Biquad* s, double* const* z, const T* const* x, T* const* y, std::int64_t n) {
  double st[G][2 * S];
  for (int g = 0; g < G; ++g)
    for (int k = 0; k < 2 * S; ++k)
      st[g][k] = z[g][k];
  Biquad q[S];
  for (int k = 0; k < S; ++k)
    q[k] = s[k];
  for (std::int64_t i = 0; i < n; ++i) {
    double v[G];
    for (int g = 0; g < G; ++g)
      v[g] = static_cast<double>(x[g][i]);
    for (int k = 0; k < S; ++k)
      for (int g = 0; g < G; ++g) {
        const double out = q[k].b0 * v[g] + st[g][2 * k];
        st[g][2 * k] = q[k].b1 * v[g] - q[k].a1 * out + st[g][2 * k + 1];
        st[g][2 * k + 1] = q[k].b2 * v[g] - q[k].a2 * out;
        v[g] = out;
      }
    for (int g = 0; g < G; ++g)
      y[g][i] = static_cast<T>(v[g]);
  }
  for (int g = 0; g < G; ++g)
    for (int k = 0; k < 2 * S; ++k)
      z[g][k] = st[g][k];
}

// Any number of sections, one channel.
template <typename T>
void run_any(std::span<const Biquad> s, double* z, const T* x, T* y, std::int64_t n) {
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

template <typename T, int G>
void run_group(std::span<const Biquad> s, double* const* z, const T* const* x, T* const* y,
               std::int64_t n) {
  switch (s.size()) {
    case 1:
      return run_fixed<T, G, 1>(s.data(), z, x, y, n);
    case 2:
      return run_fixed<T, G, 2>(s.data(), z, x, y, n);
    case 3:
      return run_fixed<T, G, 3>(s.data(), z, x, y, n);
    case 4:
      return run_fixed<T, G, 4>(s.data(), z, x, y, n);
    default:
      for (int g = 0; g < G; ++g)
        run_any(s, z[g], x[g], y[g], n);
  }
}

// Channels in groups of 4, then 2, then 1.
template <typename T>
void run(std::span<const Biquad> s, std::span<double* const> z, std::span<const T* const> x,
         std::span<T* const> y, std::int64_t n) {
  std::size_t c = 0;
  for (; c + 4 <= y.size(); c += 4)
    run_group<T, 4>(s, z.data() + c, x.data() + c, y.data() + c, n);
  for (; c + 2 <= y.size(); c += 2)
    run_group<T, 2>(s, z.data() + c, x.data() + c, y.data() + c, n);
  for (; c < y.size(); ++c)
    run_group<T, 1>(s, z.data() + c, x.data() + c, y.data() + c, n);
}

template <typename T>
void run_one(std::span<const Biquad> s, std::span<double> z, const T* x, T* y, std::int64_t n) {
  double* zp = z.data();
  run<T>(s, std::span<double* const>(&zp, 1), std::span<const T* const>(&x, 1),
         std::span<T* const>(&y, 1), n);
}

} // namespace

void sosfilt(std::span<const Biquad> sections, std::span<double> state, const float* x, float* y,
             std::int64_t n) {
  run_one(sections, state, x, y, n);
}

void sosfilt(std::span<const Biquad> sections, std::span<double> state, const double* x, double* y,
             std::int64_t n) {
  run_one(sections, state, x, y, n);
}

void sosfilt(std::span<const Biquad> sections, std::span<double* const> state,
             std::span<const float* const> x, std::span<float* const> y, std::int64_t n) {
  run(sections, state, x, y, n);
}

void sosfilt(std::span<const Biquad> sections, std::span<double* const> state,
             std::span<const double* const> x, std::span<double* const> y, std::int64_t n) {
  run(sections, state, x, y, n);
}

std::vector<double> sosfilt_zi(std::span<const Biquad> sections) {
  std::vector<double> zi;
  zi.reserve(2 * sections.size());
  double scale = 1.0;
  for (const Biquad& q : sections) {
    // lfilter_zi: (I - A^T) z = b[1:] - a[1:] b0 for the companion matrix
    // A of (1, a1, a2), a 2 x 2 system solved in closed form.
    const double u0 = q.b1 - q.a1 * q.b0;
    const double u1 = q.b2 - q.a2 * q.b0;
    const double z0 = (u0 + u1) / (1.0 + q.a1 + q.a2);
    zi.push_back(scale * z0);
    zi.push_back(scale * (u1 - q.a2 * z0));
    scale *= (q.b0 + q.b1 + q.b2) / (1.0 + q.a1 + q.a2);
  }
  return zi;
}

std::int64_t sosfiltfilt_pad(std::span<const Biquad> sections) {
  std::int64_t zero_b2 = 0, zero_a2 = 0;
  for (const Biquad& q : sections) {
    zero_b2 += q.b2 == 0.0 ? 1 : 0;
    zero_a2 += q.a2 == 0.0 ? 1 : 0;
  }
  const std::int64_t ntaps =
      2 * static_cast<std::int64_t>(sections.size()) + 1 - std::min(zero_b2, zero_a2);
  return 3 * ntaps;
}

namespace {

// The padding as SciPy's odd_ext makes it, in the signal's own type
// (2 x[0] - x[k] rounds to float32 for a float32 signal, as in NumPy).
template <typename T> void filtfilt(std::span<const Biquad> s, const T* x, T* y, std::int64_t n) {
  const std::int64_t e = sosfiltfilt_pad(s);
  if (n <= e)
    throw std::invalid_argument("sosfiltfilt: " + std::to_string(n) +
                                " frames, not more than the padding of " + std::to_string(e));
  const std::int64_t m = n + 2 * e;
  std::vector<double> ext(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < e; ++i) {
    ext[static_cast<std::size_t>(i)] = static_cast<double>(static_cast<T>(T(2) * x[0] - x[e - i]));
    ext[static_cast<std::size_t>(e + n + i)] =
        static_cast<double>(static_cast<T>(T(2) * x[n - 1] - x[n - 2 - i]));
  }
  for (std::int64_t j = 0; j < n; ++j)
    ext[static_cast<std::size_t>(e + j)] = static_cast<double>(x[j]);
  const std::vector<double> zi = sosfilt_zi(s);
  std::vector<double> z(zi.size());
  for (std::size_t k = 0; k < z.size(); ++k)
    z[k] = zi[k] * ext.front();
  run_one(s, std::span<double>(z), ext.data(), ext.data(), m);
  for (std::size_t k = 0; k < z.size(); ++k)
    z[k] = zi[k] * ext.back();
  std::reverse(ext.begin(), ext.end());
  run_one(s, std::span<double>(z), ext.data(), ext.data(), m);
  for (std::int64_t j = 0; j < n; ++j)
    y[j] = static_cast<T>(ext[static_cast<std::size_t>(m - 1 - (e + j))]);
}

} // namespace

void sosfiltfilt(std::span<const Biquad> sections, const float* x, float* y, std::int64_t n) {
  filtfilt(sections, x, y, n);
}

void sosfiltfilt(std::span<const Biquad> sections, const double* x, double* y, std::int64_t n) {
  filtfilt(sections, x, y, n);
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
