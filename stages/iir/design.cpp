// scipy.signal.iirfilter's steps (see design.hpp), written for this kind.
#include "stages/iir/design.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "stages/iir/prototypes.hpp"

namespace sigstream {

namespace {

using namespace iir_design;
using kernels::cpu::Biquad;

constexpr double kPi = std::numbers::pi;

int degree(const Zpk& s) {
  return static_cast<int>(s.p.size()) - static_cast<int>(s.z.size());
}

Zpk lp2lp(Zpk s, double wo) {
  const int d = degree(s);
  for (C& z : s.z)
    z *= wo;
  for (C& p : s.p)
    p *= wo;
  s.k *= std::pow(wo, d);
  return s;
}

Zpk lp2hp(Zpk s, double wo) {
  const int d = degree(s);
  const double k = s.k * (prod_neg(s.z) / prod_neg(s.p)).real();
  for (C& z : s.z)
    z = wo / z;
  for (C& p : s.p)
    p = wo / p;
  s.z.insert(s.z.end(), static_cast<std::size_t>(d), C(0.0));
  s.k = k;
  return s;
}

// Each root r of the prototype (scaled) gives r ± sqrt(r² − wo²): all the
// "+" roots first, then the "−" roots.
std::vector<C> split(const std::vector<C>& v, double wo) {
  std::vector<C> out;
  for (const C& r : v)
    out.push_back(r + std::sqrt(r * r - wo * wo));
  for (const C& r : v)
    out.push_back(r - std::sqrt(r * r - wo * wo));
  return out;
}

Zpk lp2bp(const Zpk& s, double wo, double bw) {
  const int d = degree(s);
  std::vector<C> z = s.z, p = s.p;
  for (C& x : z)
    x *= bw / 2.0;
  for (C& x : p)
    x *= bw / 2.0;
  Zpk o;
  o.z = split(z, wo);
  o.p = split(p, wo);
  o.z.insert(o.z.end(), static_cast<std::size_t>(d), C(0.0));
  o.k = s.k * std::pow(bw, d);
  return o;
}

Zpk lp2bs(const Zpk& s, double wo, double bw) {
  const int d = degree(s);
  std::vector<C> z, p;
  for (const C& x : s.z)
    z.push_back((bw / 2.0) / x);
  for (const C& x : s.p)
    p.push_back((bw / 2.0) / x);
  Zpk o;
  o.z = split(z, wo);
  o.p = split(p, wo);
  o.z.insert(o.z.end(), static_cast<std::size_t>(d), C(0.0, wo));
  o.z.insert(o.z.end(), static_cast<std::size_t>(d), C(0.0, -wo));
  o.k = s.k * (prod_neg(s.z) / prod_neg(s.p)).real();
  return o;
}

Zpk bilinear(const Zpk& s, double fs) {
  const int d = degree(s);
  const double fs2 = 2.0 * fs;
  Zpk o;
  C num = 1.0, den = 1.0;
  for (const C& z : s.z) {
    o.z.push_back((fs2 + z) / (fs2 - z));
    num *= fs2 - z;
  }
  for (const C& p : s.p) {
    o.p.push_back((fs2 + p) / (fs2 - p));
    den *= fs2 - p;
  }
  o.z.insert(o.z.end(), static_cast<std::size_t>(d), C(-1.0));
  o.k = s.k * (num / den).real();
  return o;
}

bool is_real(const C& x) {
  return x.imag() == 0.0;
}

// The complex roots (one of each conjugate pair, imag > 0, pairs averaged)
// then the real ones, as zpk2sos takes them from SciPy's _cplxreal: sorted
// by real part then |imag|, reals within 100 eps of their magnitude.
std::vector<C> cplxreal(std::vector<C> v) {
  if (v.empty())
    return v;
  const double tol = 100.0 * std::numeric_limits<double>::epsilon();
  std::stable_sort(v.begin(), v.end(), [](const C& a, const C& b) {
    if (a.real() != b.real())
      return a.real() < b.real();
    return std::abs(a.imag()) < std::abs(b.imag());
  });
  std::vector<C> reals, zp, zn;
  for (const C& x : v) {
    if (std::abs(x.imag()) <= tol * std::abs(x))
      reals.emplace_back(x.real(), 0.0);
    else if (x.imag() > 0)
      zp.push_back(x);
    else
      zn.push_back(x);
  }
  if (zp.size() != zn.size())
    throw internal_error("iir design: a complex root without its conjugate");
  // Runs of (nearly) the same real part: each sorted by |imag|.
  std::size_t start = 0;
  for (std::size_t i = 1; i <= zp.size(); ++i) {
    const bool same = i < zp.size() && zp[i].real() - zp[i - 1].real() <= tol * std::abs(zp[i - 1]);
    if (same)
      continue;
    auto by_imag = [](const C& a, const C& b) { return std::abs(a.imag()) < std::abs(b.imag()); };
    std::stable_sort(zp.begin() + static_cast<std::ptrdiff_t>(start),
                     zp.begin() + static_cast<std::ptrdiff_t>(i), by_imag);
    std::stable_sort(zn.begin() + static_cast<std::ptrdiff_t>(start),
                     zn.begin() + static_cast<std::ptrdiff_t>(i), by_imag);
    start = i;
  }
  std::vector<C> out;
  for (std::size_t i = 0; i < zp.size(); ++i)
    out.push_back((zp[i] + std::conj(zn[i])) / 2.0);
  out.insert(out.end(), reals.begin(), reals.end());
  return out;
}

// The first index of the root closest to the unit circle.
std::size_t idx_worst(const std::vector<C>& p) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (std::abs(1.0 - std::abs(p[i])) < std::abs(1.0 - std::abs(p[best])))
      best = i;
  return best;
}

enum class Which { real, complex, any };

// The index of the root of `from` nearest `to` of the kind asked for (a
// stable order of distances: ties keep the earlier root).
std::size_t nearest(const std::vector<C>& from, C to, Which which) {
  std::vector<std::size_t> order(from.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(from[a] - to) < std::abs(from[b] - to);
  });
  for (std::size_t i : order)
    if (which == Which::any || (which == Which::real) == is_real(from[i]))
      return i;
  throw internal_error("iir design: no root of the kind asked for to pair");
}

C take(std::vector<C>& v, std::size_t i) {
  const C x = v[i];
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  return x;
}

// poly(roots), real part, padded on the left to three.
void poly3(const std::vector<C>& roots, double out[3]) {
  std::vector<C> a{1.0};
  for (const C& r : roots) {
    std::vector<C> b(a.size() + 1, 0.0);
    for (std::size_t i = 0; i < a.size(); ++i) {
      b[i] += a[i];
      b[i + 1] += a[i] * -r;
    }
    a = std::move(b);
  }
  const std::size_t pad = 3 - a.size();
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = i < pad ? 0.0 : a[i - pad].real();
}

Biquad section(const std::vector<C>& z, const std::vector<C>& p) {
  double b[3], a[3];
  poly3(z, b);
  poly3(p, a);
  // a[0] is 1 for two poles; one pole gives a = [0, 1, -p]: SciPy's row
  // then has a0 = 0 in its sos and never happens for pairing "nearest".
  return {b[0], b[1], b[2], a[1], a[2]};
}

std::vector<Biquad> zpk2sos(std::vector<C> z, std::vector<C> p, double k) {
  if (z.empty() && p.empty())
    return {Biquad{k, 0.0, 0.0, 0.0, 0.0}};
  if (z.size() > p.size())
    p.insert(p.end(), z.size() - p.size(), C(0.0));
  if (p.size() > z.size())
    z.insert(z.end(), p.size() - z.size(), C(0.0));
  const std::size_t n_sections = (std::max(p.size(), z.size()) + 1) / 2;
  if (p.size() % 2 == 1) {
    p.push_back(0.0);
    z.push_back(0.0);
  }
  z = cplxreal(z);
  p = cplxreal(p);
  std::vector<Biquad> sos(n_sections);
  for (std::size_t si = n_sections; si-- > 0;) {
    const C p1 = take(p, idx_worst(p));
    const auto real_count = [](const std::vector<C>& v) {
      return std::count_if(v.begin(), v.end(), is_real);
    };
    if (is_real(p1) && real_count(p) == 0) {
      const C z1 = take(z, nearest(z, p1, Which::real));
      sos[si] = section({z1, 0.0}, {p1, 0.0});
    } else if (p.size() + 1 == z.size() && !is_real(p1) && real_count(p) == 1 &&
               real_count(z) == 1) {
      const C z1 = take(z, nearest(z, p1, Which::complex));
      sos[si] = section({z1, std::conj(z1)}, {p1, std::conj(p1)});
    } else {
      C p2;
      if (is_real(p1)) {
        std::vector<std::size_t> reals;
        std::vector<C> real_roots;
        for (std::size_t i = 0; i < p.size(); ++i)
          if (is_real(p[i])) {
            reals.push_back(i);
            real_roots.push_back(p[i]);
          }
        p2 = take(p, reals[idx_worst(real_roots)]);
      } else {
        p2 = std::conj(p1);
      }
      if (!z.empty()) {
        const C z1 = take(z, nearest(z, p1, Which::any));
        if (!is_real(z1)) {
          sos[si] = section({z1, std::conj(z1)}, {p1, p2});
        } else if (!z.empty()) {
          const C z2 = take(z, nearest(z, p1, Which::real));
          sos[si] = section({z1, z2}, {p1, p2});
        } else {
          sos[si] = section({z1}, {p1, p2});
        }
      } else {
        sos[si] = section({}, {p1, p2});
      }
    }
  }
  sos[0].b0 *= k;
  sos[0].b1 *= k;
  sos[0].b2 *= k;
  return sos;
}

std::string fmt_hz(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

} // namespace

std::vector<Biquad> design_iir(const IirDesignSpec& d, double rate) {
  if (d.order < 1 || d.order > kMaxIirOrder)
    throw config_error("order " + std::to_string(d.order) + " is outside 1.." +
                       std::to_string(kMaxIirOrder));
  const bool band = d.kind == FilterKind::bandpass || d.kind == FilterKind::bandstop;
  if (d.cutoff_hz.size() != (band ? 2u : 1u))
    throw config_error(std::string("a ") + std::string(to_string(d.kind)) + " needs " +
                       (band ? "two band edges [lo, hi]" : "one cutoff"));
  for (double f : d.cutoff_hz)
    if (!(f > 0.0 && f < rate / 2.0))
      throw config_error("cutoff " + fmt_hz(f) + " Hz is not inside (0, " + fmt_hz(rate / 2.0) +
                         ") Hz, below the Nyquist frequency of its " + fmt_hz(rate) + " Hz input");
  if (band && !(d.cutoff_hz[0] < d.cutoff_hz[1]))
    throw config_error("band edges are not increasing (expected [lo, hi] with lo < hi)");
  Zpk s;
  switch (d.ftype) {
    case IirFamily::butter:
      s = buttap(d.order);
      break;
    case IirFamily::cheby1:
      if (!d.rp || !(*d.rp > 0.0))
        throw config_error("cheby1 needs rp, the pass-band ripple in dB (> 0)");
      s = cheb1ap(d.order, *d.rp);
      break;
    case IirFamily::cheby2:
      if (!d.rs || !(*d.rs > 0.0))
        throw config_error("cheby2 needs rs, the stop-band attenuation in dB (> 0)");
      s = cheb2ap(d.order, *d.rs);
      break;
    case IirFamily::ellip:
      if (!d.rp || !(*d.rp > 0.0) || !d.rs || !(*d.rs > 0.0))
        throw config_error("ellip needs rp and rs, the pass-band ripple and stop-band "
                           "attenuation in dB (> 0)");
      if (!(*d.rp < *d.rs))
        throw config_error("ellip: rp (" + fmt_hz(*d.rp) + " dB) must be below rs (" +
                           fmt_hz(*d.rs) +
                           " dB): the pass band's ripple under the stop band's "
                           "attenuation");
      s = ellipap(d.order, *d.rp, *d.rs);
      break;
    case IirFamily::bessel:
      s = besselap(d.order);
      break;
  }
  // Edges normalised to Nyquist, pre-warped for the bilinear transform at fs = 2.
  const double fs = 2.0;
  std::vector<double> warped;
  for (double f : d.cutoff_hz)
    warped.push_back(2.0 * fs * std::tan(kPi * (2.0 * f / rate) / fs));
  switch (d.kind) {
    case FilterKind::lowpass:
      s = lp2lp(s, warped[0]);
      break;
    case FilterKind::highpass:
      s = lp2hp(s, warped[0]);
      break;
    case FilterKind::bandpass:
      s = lp2bp(s, std::sqrt(warped[0] * warped[1]), warped[1] - warped[0]);
      break;
    case FilterKind::bandstop:
      s = lp2bs(s, std::sqrt(warped[0] * warped[1]), warped[1] - warped[0]);
      break;
  }
  s = bilinear(s, fs);
  return zpk2sos(std::move(s.z), std::move(s.p), s.k);
}

} // namespace sigstream
