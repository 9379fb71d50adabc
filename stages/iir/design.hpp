#pragma once
// IIR designs as scipy.signal.iirfilter(order, Wn, btype, ftype, rp, rs,
// fs=rate, output="sos"): the analog prototype's zeros, poles and gain
// (Butterworth, Chebyshev I and II, elliptic, Bessel normalised for phase),
// moved to the band (lp2lp / lp2hp /
// lp2bp / lp2bs at the pre-warped edges), to the z plane by the bilinear
// transform, then paired into sections as zpk2sos(pairing="nearest"): the
// same steps in the same order, so the sections equal SciPy's to ~1e-12.
#include <complex>
#include <optional>
#include <vector>

#include "kernels/cpu/iir.hpp"
#include "stages/types.hpp"

namespace sigstream {

enum class IirFamily { butter, cheby1, cheby2, ellip, bessel };

struct IirDesignSpec {
  FilterKind kind = FilterKind::lowpass;
  std::vector<double> cutoff_hz; // one edge, or [lo, hi] for bandpass / bandstop
  int order = 2;
  IirFamily ftype = IirFamily::butter;
  std::optional<double> rp; // cheby1, ellip: pass-band ripple, dB
  std::optional<double> rs; // cheby2, ellip: stop-band attenuation, dB
};

// The most an iir design's order may be (a band's sections are twice it).
inline constexpr int kMaxIirOrder = 24;

// The sections (rows b0 b1 b2 1 a1 a2 as Biquads). Throws Error(config) for
// an order out of range, edges outside (0, rate/2) or not increasing, a
// missing or non-positive rp / rs.
[[nodiscard]] std::vector<kernels::cpu::Biquad> design_iir(const IirDesignSpec& d, double rate);

} // namespace sigstream
