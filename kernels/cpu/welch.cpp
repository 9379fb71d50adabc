#include "kernels/cpu/welch.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include "core/error.hpp"
#include "core/welch_segments.hpp"
#include "kernels/cpu/pocketfft_local.hpp"

namespace sigstream::kernels::cpu {

namespace {

Error bad(const std::string& m) {
  return {ErrorKind::invalid_argument, "welch: " + m};
}

} // namespace

bool Welch::available() noexcept {
  return SIGSTREAM_HAVE_POCKETFFT != 0;
}

Welch::Welch(std::span<const double> window, int hop)
    : window_(window.begin(), window.end()), hop_(hop) {
  const auto n = static_cast<std::int64_t>(window_.size());
  if (n < 1)
    throw bad("the window is empty (nfft must be >= 1)");
  if (hop < 1 || hop > n)
    throw bad("hop " + std::to_string(hop) + " must be in 1.." + std::to_string(n) +
              " (nfft minus the overlap)");
  for (const double w : window_) {
    if (!std::isfinite(w))
      throw bad("the window has a NaN or Inf value");
    window_energy_ += w * w;
  }
  if (!(window_energy_ > 0.0))
    throw bad("the window is all zeros");
  if (!available())
    throw bad("this build has no pocketfft (python3-pythran's header), which the spectrum needs");
}

std::int64_t Welch::add(const float* x, std::int64_t first, std::int64_t n, std::int64_t own_lo,
                        std::int64_t own_hi, std::span<double> power) const {
  const std::int64_t nfft = static_cast<std::int64_t>(window_.size());
  if (power.size() < static_cast<std::size_t>(bins()))
    throw bad("power holds fewer than bins() values");
  const WelchSegments segs = welch_segments(first, n, own_lo, own_hi, nfft, hop_);
  if (segs.count == 0)
    return 0;
#if SIGSTREAM_HAVE_POCKETFFT
  // Groups of segments through pocketfft's batched real transform, which
  // runs several transforms at once in SIMD lanes (one at a time, the
  // spectrum cost a third of a 255-tap FIR pass here); the group stays in
  // the core's cache. Each bin's sum still adds the segments in order.
  constexpr std::int64_t kGroup = 16;
  const auto len = static_cast<std::size_t>(nfft);
  const std::size_t nb = static_cast<std::size_t>(bins());
  // Per-thread scratch: add() runs per chunk (and per live block).
  thread_local std::vector<double> rows;
  thread_local std::vector<std::complex<double>> spec;
  rows.resize(static_cast<std::size_t>(kGroup) * len);
  spec.resize(static_cast<std::size_t>(kGroup) * nb);
  const std::int64_t end = segs.first + segs.count;
  for (std::int64_t g0 = segs.first; g0 < end; g0 += kGroup) {
    const std::int64_t g = std::min(kGroup, end - g0);
    for (std::int64_t s = 0; s < g; ++s) {
      const float* seg = x + ((g0 + s) * hop_ - first);
      double* row = rows.data() + static_cast<std::size_t>(s) * len;
      for (std::size_t i = 0; i < len; ++i)
        row[i] = window_[i] * static_cast<double>(seg[i]);
    }
    pocketfft::r2c<double>({static_cast<std::size_t>(g), len},
                           {static_cast<std::ptrdiff_t>(len * sizeof(double)), sizeof(double)},
                           {static_cast<std::ptrdiff_t>(nb * sizeof(std::complex<double>)),
                            sizeof(std::complex<double>)},
                           std::size_t{1}, true, rows.data(), spec.data(), 1.0, 1);
    for (std::int64_t s = 0; s < g; ++s) {
      const std::complex<double>* v = spec.data() + static_cast<std::size_t>(s) * nb;
      for (std::size_t k = 0; k < nb; ++k)
        power[k] += v[k].real() * v[k].real() + v[k].imag() * v[k].imag();
    }
  }
#else
  static_cast<void>(x);
#endif
  return segs.count;
}

std::vector<double> Welch::density(std::span<const double> power, std::int64_t segments,
                                   double rate) const {
  const int b = bins();
  std::vector<double> d(static_cast<std::size_t>(b), 0.0);
  if (segments <= 0)
    return d;
  const double scale = 1.0 / (static_cast<double>(segments) * rate * window_energy_);
  const bool even = nfft() % 2 == 0;
  for (int k = 0; k < b; ++k) {
    const bool single =
        k == 0 || (even && k == b - 1); // DC and Nyquist appear once in the full spectrum
    d[static_cast<std::size_t>(k)] =
        power[static_cast<std::size_t>(k)] * scale * (single ? 1.0 : 2.0);
  }
  return d;
}

std::vector<double> Welch::frequencies(double rate) const {
  // As numpy.fft.rfftfreq(nfft, 1 / rate) rounds: k * (1 / (nfft * (1 / rate))).
  const double step = 1.0 / (static_cast<double>(nfft()) * (1.0 / rate));
  std::vector<double> f(static_cast<std::size_t>(bins()));
  for (std::size_t k = 0; k < f.size(); ++k)
    f[k] = static_cast<double>(k) * step;
  return f;
}

} // namespace sigstream::kernels::cpu
