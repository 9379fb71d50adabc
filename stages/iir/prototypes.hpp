#pragma once
// The analog low-pass prototypes of scipy.signal's IIR designs (cutoff 1
// rad/s, zeros, poles and gain), as buttap, cheb1ap, cheb2ap, ellipap and
// besselap(norm="phase") compute them; the iir kind's design.cpp moves them
// to the band and the z plane. Kept apart from it for the elliptic and Bessel
// machinery (Jacobi functions, the degree equation, quad-precision roots).
#include <complex>
#include <vector>

namespace sigstream::iir_design {

using C = std::complex<double>;

struct Zpk {
  std::vector<C> z, p;
  double k = 1.0;
};

// The product of -x over v.
[[nodiscard]] C prod_neg(const std::vector<C>& v);

[[nodiscard]] Zpk buttap(int n);
[[nodiscard]] Zpk cheb1ap(int n, double rp);
[[nodiscard]] Zpk cheb2ap(int n, double rs);
// Error(config) when no filter meets rp and rs (rp must be below rs).
[[nodiscard]] Zpk ellipap(int n, double rp, double rs);
[[nodiscard]] Zpk besselap(int n);

} // namespace sigstream::iir_design
