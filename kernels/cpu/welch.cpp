#include "kernels/cpu/welch.hpp"

#include "core/welch_segments.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

#include "kernels/cpu/pocketfft_local.hpp"

namespace sigstream::kernels::cpu {

namespace {

Error bad(const std::string& m) { return {ErrorKind::invalid_argument, "welch: " + m}; }

// Floor division for a possibly negative numerator (positive d).
std::int64_t floor_div(std::int64_t a, std::int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }

}  // namespace

#if SIGSTREAM_HAVE_POCKETFFT
struct Welch::Plan {
  explicit Plan(std::size_t n) : fft(n) {}
  pocketfft::detail::pocketfft_r<double> fft;
};
bool Welch::available() noexcept { return true; }
#else
struct Welch::Plan {};
bool Welch::available() noexcept { return false; }
#endif

Welch::~Welch() = default;
Welch::Welch(Welch&&) noexcept = default;
Welch& Welch::operator=(Welch&&) noexcept = default;

Welch::Welch(std::span<const double> window, int hop) : window_(window.begin(), window.end()), hop_(hop) {
  const auto n = static_cast<std::int64_t>(window_.size());
  if (n < 1) throw bad("the window is empty (nfft must be >= 1)");
  if (hop < 1 || hop > n)
    throw bad("hop " + std::to_string(hop) + " must be in 1.." + std::to_string(n) + " (nfft minus the overlap)");
  for (const double w : window_) {
    if (!std::isfinite(w)) throw bad("the window has a NaN or Inf value");
    window_energy_ += w * w;
  }
  if (!(window_energy_ > 0.0)) throw bad("the window is all zeros");
#if SIGSTREAM_HAVE_POCKETFFT
  plan_ = std::make_unique<Plan>(window_.size());
#else
  throw bad("this build has no pocketfft (python3-pythran's header), which the spectrum needs");
#endif
}

std::int64_t Welch::add(const float* x, std::int64_t first, std::int64_t n, std::int64_t own_lo,
                        std::int64_t own_hi, std::span<double> power) const {
  const std::int64_t nfft = static_cast<std::int64_t>(window_.size());
  if (power.size() < static_cast<std::size_t>(bins())) throw bad("power holds fewer than bins() values");
  const WelchSegments segs = welch_segments(first, n, own_lo, own_hi, nfft, hop_);
  if (segs.count == 0) return 0;
  const std::int64_t j0 = segs.first;
  const std::int64_t j1 = segs.first + segs.count - 1;
#if SIGSTREAM_HAVE_POCKETFFT
  std::vector<double> buf(static_cast<std::size_t>(nfft));
  const std::size_t half = static_cast<std::size_t>(nfft) / 2;
  for (std::int64_t j = j0; j <= j1; ++j) {
    const float* seg = x + (j * hop_ - first);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = window_[i] * static_cast<double>(seg[i]);
    plan_->fft.exec(buf.data(), 1.0, true);  // FFTPACK order: r0, r1, i1, r2, i2, ... (r(n/2) last if even)
    power[0] += buf[0] * buf[0];
    for (std::size_t k = 1; 2 * k < buf.size(); ++k) {
      const double re = buf[2 * k - 1], im = buf[2 * k];
      power[k] += re * re + im * im;
    }
    if (buf.size() % 2 == 0) power[half] += buf.back() * buf.back();
  }
#else
  static_cast<void>(x);
#endif
  return j1 - j0 + 1;
}

std::vector<double> Welch::density(std::span<const double> power, std::int64_t segments, double rate) const {
  const int b = bins();
  std::vector<double> d(static_cast<std::size_t>(b), 0.0);
  if (segments <= 0) return d;
  const double scale = 1.0 / (static_cast<double>(segments) * rate * window_energy_);
  const bool even = nfft() % 2 == 0;
  for (int k = 0; k < b; ++k) {
    const bool single = k == 0 || (even && k == b - 1);  // DC and Nyquist appear once in the full spectrum
    d[static_cast<std::size_t>(k)] = power[static_cast<std::size_t>(k)] * scale * (single ? 1.0 : 2.0);
  }
  return d;
}

std::vector<double> Welch::frequencies(double rate) const {
  // As numpy.fft.rfftfreq(nfft, 1 / rate) rounds: k * (1 / (nfft * (1 / rate))).
  const double step = 1.0 / (static_cast<double>(nfft()) * (1.0 / rate));
  std::vector<double> f(static_cast<std::size_t>(bins()));
  for (std::size_t k = 0; k < f.size(); ++k) f[k] = static_cast<double>(k) * step;
  return f;
}

}  // namespace sigstream::kernels::cpu
