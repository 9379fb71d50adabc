#include "kernels/cpu/response.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <string>

#include "core/error.hpp"

#include "kernels/cpu/pocketfft_local.hpp"

namespace sigstream::kernels::cpu {

FilterResponse filter_response(std::span<const double> taps, double rate, int points) {
  if (taps.empty() || points < 1 || !(rate > 0.0))
    throw Error(ErrorKind::invalid_argument, "filter response: " + std::to_string(taps.size()) +
                                                 " taps, " + std::to_string(points) +
                                                 " points, rate " + std::to_string(rate));
  FilterResponse r;
  const auto k = taps.size();
  const auto grid = static_cast<std::size_t>(2 * points);
  const std::size_t n = (k + grid - 1) / grid * grid; // a multiple of the grid, >= K
  const std::size_t step = n / grid;
  std::vector<std::complex<double>> h(n / 2 + 1), g(n / 2 + 1);
#if SIGSTREAM_HAVE_POCKETFFT
  std::vector<double> a(n, 0.0), b(n, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    a[i] = taps[i];
    b[i] = static_cast<double>(i) * taps[i];
  }
  const pocketfft::shape_t shape{n};
  const pocketfft::stride_t in{sizeof(double)}, out{sizeof(std::complex<double>)};
  pocketfft::r2c<double>(shape, in, out, std::size_t{0}, true, a.data(), h.data(), 1.0, 1);
  pocketfft::r2c<double>(shape, in, out, std::size_t{0}, true, b.data(), g.data(), 1.0, 1);
#else
  // Without pocketfft: the same values by direct sums (K x points).
  for (std::size_t j = 0; j <= static_cast<std::size_t>(points); ++j) {
    const std::size_t bin = j * step;
    std::complex<double> sh, sg;
    for (std::size_t i = 0; i < k; ++i) {
      const double w = -2.0 * std::numbers::pi * static_cast<double>(bin) * static_cast<double>(i) /
                       static_cast<double>(n);
      const std::complex<double> e(std::cos(w), std::sin(w));
      sh += taps[i] * e;
      sg += static_cast<double>(i) * taps[i] * e;
    }
    h[bin] = sh;
    g[bin] = sg;
  }
#endif
  double peak = 0.0;
  for (std::size_t j = 0; j <= static_cast<std::size_t>(points); ++j)
    peak = std::max(peak, std::abs(h[j * step]));
  for (std::size_t j = 0; j <= static_cast<std::size_t>(points); ++j) {
    const std::complex<double> hv = h[j * step];
    const double mag = std::abs(hv);
    r.freq_hz.push_back(static_cast<double>(j) * rate / static_cast<double>(grid));
    r.magnitude_db.push_back(mag > 0.0 ? 20.0 * std::log10(mag) : -400.0);
    // Where |H| is over 120 dB below its peak (at and near a stop band's
    // zeros) the phase, and so the delay, is undefined or lost to rounding
    // (G/H divides by |H|).
    r.group_delay_ms.push_back(mag > 1e-6 * peak ? (g[j * step] / hv).real() / rate * 1000.0
                                                 : std::numeric_limits<double>::quiet_NaN());
  }
  return r;
}

} // namespace sigstream::kernels::cpu
