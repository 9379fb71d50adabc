// The analog prototypes (prototypes.hpp), step by step as SciPy's.
#include "stages/iir/prototypes.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>

#include "core/error.hpp"

namespace sigstream::iir_design {

namespace {

constexpr double kPi = std::numbers::pi;

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

} // namespace

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

} // namespace sigstream::iir_design
