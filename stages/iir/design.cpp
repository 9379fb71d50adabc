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

namespace sigstream {

namespace {

using C = std::complex<double>;
using kernels::cpu::Biquad;

struct Zpk {
  std::vector<C> z, p;
  double k = 1.0;
};

constexpr double kPi = std::numbers::pi;

C prod_neg(const std::vector<C>& v) {
  C r = 1.0;
  for (const C& x : v)
    r *= -x;
  return r;
}

// Analog prototypes, cutoff 1 rad/s.
Zpk buttap(int n) {
  Zpk s;
  for (int m = -n + 1; m < n; m += 2)
    s.p.push_back(-std::exp(C(0.0, kPi * m / (2.0 * n))));
  return s;
}

Zpk cheb1ap(int n, double rp) {
  Zpk s;
  const double eps = std::sqrt(std::pow(10.0, 0.1 * rp) - 1.0);
  const double mu = 1.0 / n * std::asinh(1.0 / eps);
  for (int m = -n + 1; m < n; m += 2)
    s.p.push_back(-std::sinh(C(mu, kPi * m / (2.0 * n))));
  s.k = prod_neg(s.p).real();
  if (n % 2 == 0)
    s.k /= std::sqrt(1.0 + eps * eps);
  return s;
}

Zpk cheb2ap(int n, double rs) {
  Zpk s;
  const double de = 1.0 / std::sqrt(std::pow(10.0, 0.1 * rs) - 1.0);
  const double mu = std::asinh(1.0 / de) / n;
  std::vector<int> ms;
  if (n % 2 != 0) {
    for (int m = -n + 1; m < 0; m += 2)
      ms.push_back(m);
    for (int m = 2; m < n; m += 2)
      ms.push_back(m);
  } else {
    for (int m = -n + 1; m < n; m += 2)
      ms.push_back(m);
  }
  for (int m : ms)
    s.z.push_back(-std::conj(C(0.0, 1.0) / std::sin(m * kPi / (2.0 * n))));
  for (int m = -n + 1; m < n; m += 2) {
    const C b = -std::exp(C(0.0, kPi * m / (2.0 * n)));
    const C warped(std::sinh(mu) * b.real(), std::cosh(mu) * b.imag());
    s.p.push_back(1.0 / warped);
  }
  s.k = (prod_neg(s.p) / prod_neg(s.z)).real();
  return s;
}

// Complete elliptic integral of the first kind by the arithmetic-geometric
// mean: K(m) = pi / (2 AGM(1, sqrt(1 - m))); ellipkm1(p) = K(1 - p).
double agm(double a, double b) {
  for (int i = 0; i < 64 && std::abs(a - b) > 1e-17 * a; ++i) {
    const double an = (a + b) / 2.0;
    b = std::sqrt(a * b);
    a = an;
  }
  return (a + b) / 2.0;
}
double ellipk(double m) {
  return kPi / (2.0 * agm(1.0, std::sqrt(1.0 - m)));
}
double ellipkm1(double p) {
  return kPi / (2.0 * agm(1.0, std::sqrt(p)));
}

// Jacobi's sn, cn, dn of u for parameter m (Abramowitz & Stegun 16.4, the
// descending AGM; 16.13 and 16.15 near m = 0 and m = 1).
struct Jacobi {
  double sn, cn, dn;
};
Jacobi ellipj(double u, double m) {
  if (!(m >= 0.0 && m <= 1.0))
    throw internal_error("iir design: elliptic parameter m outside [0, 1]");
  if (m < 1e-9) {
    const double t = std::sin(u), b = std::cos(u);
    const double ai = 0.25 * m * (u - t * b);
    return {t - ai * b, b + ai * t, 1.0 - 0.5 * m * t * t};
  }
  if (m >= 0.9999999999) {
    double ai = 0.25 * (1.0 - m);
    const double b = std::cosh(u), t = std::tanh(u), phi = 1.0 / b;
    const double twon = b * std::sinh(u);
    const double sn = t + ai * (twon - u) / (b * b);
    ai *= t * phi;
    return {sn, phi - ai * (twon - u), phi + ai * (twon + u)};
  }
  double a[10], c[10];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - m);
  c[0] = std::sqrt(m);
  double twon = 1.0;
  int i = 0;
  while (std::abs(c[i] / a[i]) > std::numeric_limits<double>::epsilon() && i < 8) {
    const double ai = a[i];
    ++i;
    c[i] = (ai - b) / 2.0;
    const double t = std::sqrt(ai * b);
    a[i] = (ai + b) / 2.0;
    b = t;
    twon *= 2.0;
  }
  double phi = twon * a[i] * u;
  double prev = phi;
  for (; i > 0; --i) {
    const double t = c[i] * std::sin(phi) / a[i];
    prev = phi;
    phi = (std::asin(t) + phi) / 2.0;
  }
  const double sn = std::sin(phi), cn = std::cos(phi);
  return {sn, cn, cn / std::cos(phi - prev)};
}

// The degree equation: the m of a filter of order n whose selectivity
// parameter is m1, by the nome (q = q1^(1/n), seven terms of its series).
double ellipdeg(int n, double m1) {
  const double q1 = std::exp(-kPi * ellipkm1(m1) / ellipk(m1));
  const double q = std::pow(q1, 1.0 / n);
  double num = 0.0, den = 0.0;
  for (int k = 0; k <= 7; ++k)
    num += std::pow(q, k * (k + 1));
  for (int k = 1; k <= 8; ++k)
    den += std::pow(q, k * k);
  den = 1.0 + 2.0 * den;
  return 16.0 * q * std::pow(num / den, 4);
}

// The inverse of sn for complex w by Landen's transformation; sc's inverse
// at real w is then the imaginary part of that at i w.
C arc_jac_sn(C w, double m) {
  auto complement = [](C kx) { return std::sqrt((1.0 - kx) * (1.0 + kx)); };
  const double k = std::sqrt(m);
  std::vector<double> ks{k};
  while (ks.back() != 0.0) {
    const double kp = std::sqrt((1.0 - ks.back()) * (1.0 + ks.back()));
    ks.push_back((1.0 - kp) / (1.0 + kp));
    if (ks.size() > 12)
      throw internal_error("iir design: Landen transformation not converging");
  }
  double kk = kPi / 2.0;
  for (std::size_t i = 1; i < ks.size(); ++i)
    kk *= 1.0 + ks[i];
  C wn = w;
  for (std::size_t i = 0; i + 1 < ks.size(); ++i)
    wn = 2.0 * wn / ((1.0 + ks[i + 1]) * (1.0 + complement(ks[i] * wn)));
  return kk * (2.0 / kPi) * std::asin(wn);
}

Zpk ellipap(int n, double rp, double rs) {
  Zpk s;
  const double eps_sq = std::expm1(0.1 * rp * std::log(10.0));
  if (n == 1) {
    const double p = -std::sqrt(1.0 / eps_sq);
    s.p = {C(p)};
    s.k = -p;
    return s;
  }
  const double eps = std::sqrt(eps_sq);
  const double ck1_sq = eps_sq / std::expm1(0.1 * rs * std::log(10.0));
  if (!(ck1_sq > 0.0 && ck1_sq < 1.0))
    throw config_error("ellip: no filter meets rp and rs as given (rp must be below rs)");
  const double k_m1 = ellipk(ck1_sq);
  const double m = ellipdeg(n, ck1_sq);
  const double capk = ellipk(m);
  constexpr double kEpsilon = 2e-16;
  std::vector<double> sn, cn, dn;
  for (int j = 1 - n % 2; j < n; j += 2) {
    const Jacobi e = ellipj(j * capk / n, m);
    sn.push_back(e.sn);
    cn.push_back(e.cn);
    dn.push_back(e.dn);
  }
  std::vector<C> z;
  for (double v : sn)
    if (std::abs(v) > kEpsilon)
      z.push_back(C(0.0, 1.0 / (std::sqrt(m) * v)));
  const std::size_t nz = z.size();
  for (std::size_t i = 0; i < nz; ++i)
    z.push_back(std::conj(z[i]));
  const double r = arc_jac_sn(C(0.0, 1.0 / eps), ck1_sq).imag();
  const double v0 = capk * r / (n * k_m1);
  const Jacobi e = ellipj(v0, 1.0 - m);
  std::vector<C> p;
  for (std::size_t i = 0; i < sn.size(); ++i)
    p.push_back(-(cn[i] * dn[i] * e.sn * e.cn + C(0.0, sn[i] * e.dn)) /
                (1.0 - std::pow(dn[i] * e.sn, 2.0)));
  const std::size_t np = p.size();
  if (n % 2 != 0) {
    double norm = 0.0;
    for (const C& x : p)
      norm += std::norm(x);
    for (std::size_t i = 0; i < np; ++i)
      if (std::abs(p[i].imag()) > kEpsilon * std::sqrt(norm))
        p.push_back(std::conj(p[i]));
  } else {
    for (std::size_t i = 0; i < np; ++i)
      p.push_back(std::conj(p[i]));
  }
  s.z = std::move(z);
  s.p = std::move(p);
  s.k = (prod_neg(s.p) / prod_neg(s.z)).real();
  if (n % 2 == 0)
    s.k /= std::sqrt(1.0 + eps_sq);
  return s;
}

// Bessel, normalised for phase (scipy.signal.besselap(n, norm="phase")):
// the roots of the reverse Bessel polynomial sum a_k s^k, a_k = (2n-k)! /
// (2^(n-k) k! (n-k)!), by Aberth-Ehrlich iterations polished with Newton's
// in long double, then scaled by a_0^(-1/n) (the asymptotes of a
// Butterworth filter); gain 1.
Zpk besselap(int n) {
  Zpk s;
  std::vector<long double> a(static_cast<std::size_t>(n) + 1);
  auto lfact = [](int v) { return std::lgamma(static_cast<long double>(v) + 1.0L); };
  for (int k = 0; k <= n; ++k)
    a[static_cast<std::size_t>(k)] =
        std::exp(lfact(2 * n - k) - lfact(k) - lfact(n - k) - (n - k) * std::log(2.0L));
  using LC = std::complex<long double>;
  auto eval = [&](LC x, LC& d) {
    LC v = a[static_cast<std::size_t>(n)], dv = 0.0L;
    for (int k = n - 1; k >= 0; --k) {
      dv = dv * x + v;
      v = v * x + a[static_cast<std::size_t>(k)];
    }
    d = dv;
    return v;
  };
  // Starting points on a circle of the roots' mean radius, off the real axis.
  const long double radius = std::pow(a[0] / a[static_cast<std::size_t>(n)], 1.0L / n);
  std::vector<LC> x;
  for (int k = 0; k < n; ++k)
    x.push_back(std::polar(radius, static_cast<long double>(kPi) * (2.0L * k + 1.5L) / n));
  for (int it = 0; it < 500; ++it) {
    long double moved = 0.0L;
    for (int i = 0; i < n; ++i) {
      LC d;
      const LC v = eval(x[static_cast<std::size_t>(i)], d);
      if (std::abs(v) == 0.0L)
        continue;
      const LC ratio = v / d;
      LC sum = 0.0L;
      for (int j = 0; j < n; ++j)
        if (j != i)
          sum += 1.0L / (x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(j)]);
      const LC step = ratio / (1.0L - ratio * sum);
      x[static_cast<std::size_t>(i)] -= step;
      moved = std::max(moved, std::abs(step) / std::abs(x[static_cast<std::size_t>(i)]));
    }
    if (moved < 1e-19L)
      break;
  }
  // Newton on the polynomial by its three-term recurrence, theta_k =
  // (2k - 1) theta_{k-1} + s^2 theta_{k-2}, and its derivative, in quad
  // precision: at order 24 the roots are so ill-conditioned that long
  // double leaves them ~1e-8 off (SciPy's, checked against 60-digit roots,
  // are within 1e-15); 113 bits bring them to double's last bit.
  struct Q {
    __float128 re, im;
    Q operator+(Q o) const { return {re + o.re, im + o.im}; }
    Q operator-(Q o) const { return {re - o.re, im - o.im}; }
    Q operator*(Q o) const { return {re * o.re - im * o.im, re * o.im + im * o.re}; }
    Q operator/(Q o) const {
      const __float128 d = o.re * o.re + o.im * o.im;
      return {(re * o.re + im * o.im) / d, (im * o.re - re * o.im) / d};
    }
    [[nodiscard]] Q scaled(__float128 k) const { return {re * k, im * k}; }
  };
  for (LC& root : x) {
    Q r{root.real(), root.imag()};
    for (int it = 0; it < 12; ++it) {
      Q t0{1, 0}, t1 = r + Q{1, 0}, d0{0, 0}, d1{1, 0};
      for (int k = 2; k <= n; ++k) {
        const Q s2 = r * r;
        const Q t2 = t1.scaled(2 * k - 1) + s2 * t0;
        const Q d2 = d1.scaled(2 * k - 1) + (r * t0).scaled(2) + s2 * d0;
        t0 = t1;
        t1 = t2;
        d0 = d1;
        d1 = d2;
      }
      if (n == 1)
        break; // theta_1 = s + 1: the root is exact already
      if (d1.re == 0 && d1.im == 0)
        break;
      const Q step = t1 / d1;
      r = r - step;
      const auto mag = [](Q q) { return static_cast<long double>(q.re * q.re + q.im * q.im); };
      if (mag(step) <= 1e-60L * mag(r))
        break;
    }
    root = LC(static_cast<long double>(r.re), static_cast<long double>(r.im));
  }
  const long double scale = std::pow(10.0L, -std::log10(a[0]) / n);
  for (const LC& r : x)
    s.p.push_back(C(static_cast<double>(r.real() * scale), static_cast<double>(r.imag() * scale)));
  s.k = 1.0;
  return s;
}

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
