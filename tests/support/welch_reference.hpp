#pragma once
// Welch's PSD from its definition, for the tests of kernels/cpu/welch and of
// the metrics stage's spectrum: a periodic window from its formula (as
// scipy.signal.get_window, fftbins=True), segments j*hop .. j*hop + nfft that
// fit, a direct DFT of each windowed segment in float64 (a table of
// e^{-2 pi i m / nfft}), |X_k|^2 averaged, / (fs * sum w^2), one-sided (DC and
// an even nfft's Nyquist once): scipy.signal.welch(scaling='density',
// detrend=False).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "stages/types.hpp"

namespace sigstream::test {

// hann or hamming, periodic.
inline std::vector<double> periodic_window(WindowKind kind, int n) {
  std::vector<double> w(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double c = std::cos(2.0 * std::numbers::pi * i / n);
    w[static_cast<std::size_t>(i)] = kind == WindowKind::hann ? 0.5 - 0.5 * c : 0.54 - 0.46 * c;
  }
  return w;
}

// The PSD of x (segments counted into *segments when given).
template <typename T>
std::vector<double> welch_reference(const std::vector<T>& x, const std::vector<double>& w, int hop,
                                    double fs, std::int64_t* segments = nullptr) {
  const int nfft = static_cast<int>(w.size());
  const int bins = nfft / 2 + 1;
  std::vector<double> cs(static_cast<std::size_t>(nfft)), sn(cs.size());
  for (int m = 0; m < nfft; ++m) {
    cs[static_cast<std::size_t>(m)] = std::cos(2.0 * std::numbers::pi * m / nfft);
    sn[static_cast<std::size_t>(m)] = -std::sin(2.0 * std::numbers::pi * m / nfft);
  }
  std::vector<double> p(static_cast<std::size_t>(bins), 0.0);
  std::int64_t count = 0;
  for (std::int64_t s = 0; s + nfft <= static_cast<std::int64_t>(x.size()); s += hop, ++count)
    for (int k = 0; k < bins; ++k) {
      double re = 0.0, im = 0.0;
      for (int i = 0; i < nfft; ++i) {
        const double v = w[static_cast<std::size_t>(i)] *
                         static_cast<double>(x[static_cast<std::size_t>(s + i)]);
        const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(k) * i) % nfft);
        re += v * cs[m];
        im += v * sn[m];
      }
      p[static_cast<std::size_t>(k)] += re * re + im * im;
    }
  if (segments != nullptr)
    *segments = count;
  double energy = 0.0;
  for (double v : w)
    energy += v * v;
  for (int k = 0; k < bins; ++k) {
    const bool single = k == 0 || (nfft % 2 == 0 && k == bins - 1);
    p[static_cast<std::size_t>(k)] *=
        count > 0 ? (single ? 1.0 : 2.0) / (static_cast<double>(count) * fs * energy) : 0.0;
  }
  return p;
}

// max |got - want| over max |want|: a spectrum's error relative to its largest bin.
// Infinity (a failure for any bound) where the sizes differ, a value is NaN
// or the reference is all zero: a broken result cannot pass as a small error.
inline double max_rel_to_peak(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size() || want.empty())
    return std::numeric_limits<double>::infinity();
  double peak = 0.0, err = 0.0;
  for (double v : want)
    peak = std::max(peak, std::fabs(v));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    if (std::isnan(d))
      return std::numeric_limits<double>::infinity();
    err = std::max(err, d);
  }
  return peak > 0.0 ? err / peak : std::numeric_limits<double>::infinity();
}

} // namespace sigstream::test
