#include "stages/design.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "core/text_match.hpp"

// Every expression below mirrors the operation order of scipy 1.10
// (signal/_fir_filter_design.py firwin, signal/windows/_windows.py) and numpy
// (linspace, sinc, pairwise add.reduce), so the taps agree with SciPy to a few
// units in the last place rather than merely to the 1e-12 the spec promises:
// bit for bit where NumPy's sin/cos are the C library's (NumPy's AVX-512 ones
// differ by an ulp). Kaiser's I0 is the one deliberate departure: ours is
// accurate to about half an ulp, SciPy's cephes fit to a few.

namespace sigstream {
namespace {

constexpr double kPi = std::numbers::pi;
// I0(beta) overflows a double just above 700 (SciPy then returns NaN); beta 50
// already puts the sidelobes some 500 dB down.
constexpr double kMaxKaiserBeta = 700.0;

// Shortest text that reads back as the same double, so messages show "8.6",
// not "8.5999999999999996" or the ambiguous "%g" rounding.
std::string num(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), res.ptr};
}

// I0 by its power series sum ((x/2)^k / k!)^2. Every term is positive, so there
// is no cancellation; summing in long double keeps the accumulated rounding of
// the dominant terms well below one double ulp (cephes' Chebyshev fit, which
// SciPy uses, is good to a few ulps). The loop ends once terms fall below the
// sum's precision, a few dozen terms past k = x/2 for any x <= kMaxKaiserBeta.
long double bessel_i0(double x) {
  const long double q = static_cast<long double>(x) * static_cast<long double>(x) / 4.0L;
  long double term = 1.0L;
  long double sum = 1.0L;
  for (int k = 1; term > sum * 1e-21L; ++k) {
    term *= q / (static_cast<long double>(k) * static_cast<long double>(k));
    sum += term;
  }
  return sum;
}

// numpy.sinc: sin(pi x) / (pi x), with x == 0 replaced by 1e-20 (giving 1).
double np_sinc(double x) {
  const double y = kPi * (x == 0.0 ? 1.0e-20 : x);
  return std::sin(y) / y;
}

// numpy's pairwise summation (DOUBLE_pairwise_sum), which np.sum uses for a
// contiguous float64 array.
double pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      res += a[i];
    return res;
  }
  if (n <= 128) {
    std::array<double, 8> r{};
    for (std::size_t j = 0; j < 8; ++j)
      r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (std::size_t j = 0; j < 8; ++j)
        r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

// scipy.signal.windows.general_cosine(M, a, sym=True), with its
// fac = np.linspace(-pi, pi, M) reproduced step for step.
std::vector<double> general_cosine(int m, std::span<const double> a) {
  const auto n = static_cast<std::size_t>(m);
  std::vector<double> fac(n);
  const double step = (kPi - (-kPi)) / static_cast<double>(m - 1);
  for (std::size_t i = 0; i < n; ++i)
    fac[i] = static_cast<double>(i) * step + (-kPi);
  fac[n - 1] = kPi;
  std::vector<double> w(n, 0.0);
  for (std::size_t k = 0; k < a.size(); ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      w[i] += a[k] * std::cos(static_cast<double>(k) * fac[i]);
    }
  }
  return w;
}

std::vector<double> kaiser(int m, double beta) {
  const auto n = static_cast<std::size_t>(m);
  const double alpha = static_cast<double>(m - 1) / 2.0;
  const long double denom = bessel_i0(beta);
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = (static_cast<double>(i) - alpha) / alpha;
    w[i] = static_cast<double>(bessel_i0(beta * std::sqrt(1.0 - r * r)) / denom);
  }
  return w;
}

void check_beta(const WindowSpec& window) {
  if (window.kind == WindowKind::kaiser &&
      !(std::isfinite(window.beta) && window.beta >= 0.0 && window.beta <= kMaxKaiserBeta)) {
    throw config_error("kaiser window beta must be a number from 0 to " + num(kMaxKaiserBeta) +
                       " (got " + num(window.beta) + ")");
  }
}

} // namespace

std::vector<double> make_window(const WindowSpec& window, int n) {
  if (n < 0) {
    throw Error(ErrorKind::invalid_argument,
                "window length must be >= 0 (got " + std::to_string(n) + ")");
  }
  check_beta(window);
  // scipy's _len_guards: M <= 1 is all ones whatever the window.
  if (n <= 1)
    return std::vector<double>(static_cast<std::size_t>(n), 1.0);
  switch (window.kind) {
    case WindowKind::hamming: {
      const std::array<double, 2> a{0.54, 1.0 - 0.54};
      return general_cosine(n, a);
    }
    case WindowKind::hann: {
      const std::array<double, 2> a{0.5, 1.0 - 0.5};
      return general_cosine(n, a);
    }
    case WindowKind::blackman: {
      const std::array<double, 3> a{0.42, 0.50, 0.08};
      return general_cosine(n, a);
    }
    case WindowKind::rectangular:
      return std::vector<double>(static_cast<std::size_t>(n), 1.0);
    case WindowKind::kaiser:
      return kaiser(n, window.beta);
  }
  throw internal_error("make_window: unknown window kind");
}

std::vector<double> design_fir(const DesignSpec& spec, double sample_rate) {
  const std::string kind{to_string(spec.kind)};
  if (!(std::isfinite(sample_rate) && sample_rate > 0.0)) {
    throw config_error("sample rate must be a finite number > 0 Hz (got " + num(sample_rate) + ")");
  }
  if (spec.taps < 1) {
    throw config_error(kind + " filter taps must be >= 1 (got " + std::to_string(spec.taps) + ")");
  }
  if (spec.taps > kMaxTaps) {
    throw config_error(kind + " filter taps must be <= " + std::to_string(kMaxTaps) + " (got " +
                       std::to_string(spec.taps) + ")");
  }
  const bool band = spec.kind == FilterKind::bandpass || spec.kind == FilterKind::bandstop;
  const std::size_t want = band ? 2 : 1;
  if (spec.cutoff_hz.size() != want) {
    throw config_error(
        kind + " filters need " +
        (band ? std::string("2 cutoff frequencies [lo, hi]") : std::string("1 cutoff frequency")) +
        ", got " + std::to_string(spec.cutoff_hz.size()));
  }
  check_beta(spec.window);

  const double nyq = 0.5 * sample_rate;
  std::vector<double> cutoff; // normalised to Nyquist, as scipy does
  for (const double c : spec.cutoff_hz) {
    if (!std::isfinite(c)) {
      throw config_error(kind + " cutoff " + num(c) + " Hz is not a finite number");
    }
    const double norm = c / nyq;
    // Testing the normalised value too keeps us exactly where scipy draws the line.
    if (c <= 0.0 || c >= nyq || norm <= 0.0 || norm >= 1.0) {
      throw config_error("cutoff " + num(c) + " Hz must be > 0 and < Nyquist (" + num(nyq) +
                         " Hz) for sample rate " + num(sample_rate) + " Hz");
    }
    cutoff.push_back(norm);
  }
  if (band && !(cutoff[0] < cutoff[1])) {
    throw config_error(kind + " band edges must be strictly increasing (got " +
                       num(spec.cutoff_hz[0]) + " Hz, " + num(spec.cutoff_hz[1]) + " Hz)");
  }

  const bool pass_zero = spec.kind == FilterKind::lowpass || spec.kind == FilterKind::bandstop;
  const bool pass_nyquist = ((cutoff.size() & 1U) != 0) != pass_zero;
  if (pass_nyquist && spec.taps % 2 == 0) {
    throw config_error(kind + " filters need an odd number of taps (got " +
                       std::to_string(spec.taps) + "); try " + std::to_string(spec.taps + 1) +
                       " (an even-length linear-phase filter has zero gain at Nyquist)");
  }

  std::vector<double> edges;
  if (pass_zero)
    edges.push_back(0.0);
  edges.insert(edges.end(), cutoff.begin(), cutoff.end());
  if (pass_nyquist)
    edges.push_back(1.0);

  const auto n = static_cast<std::size_t>(spec.taps);
  const double alpha = 0.5 * static_cast<double>(spec.taps - 1);
  std::vector<double> m(n);
  for (std::size_t i = 0; i < n; ++i)
    m[i] = static_cast<double>(i) - alpha;

  std::vector<double> h(n, 0.0);
  for (std::size_t b = 0; b + 1 < edges.size(); b += 2) {
    const double left = edges[b];
    const double right = edges[b + 1];
    for (std::size_t i = 0; i < n; ++i)
      h[i] += right * np_sinc(right * m[i]);
    for (std::size_t i = 0; i < n; ++i)
      h[i] -= left * np_sinc(left * m[i]);
  }

  const std::vector<double> win = make_window(spec.window, spec.taps);
  for (std::size_t i = 0; i < n; ++i)
    h[i] *= win[i];

  // Unit gain at the centre of the first passband (DC or Nyquist when the
  // band touches them).
  const double left = edges[0];
  const double right = edges[1];
  double scale_frequency = 0.0;
  double scale_hz = 0.0;
  if (left == 0.0) {
    scale_frequency = 0.0;
  } else if (right == 1.0) {
    scale_frequency = 1.0;
    scale_hz = nyq;
  } else {
    scale_frequency = 0.5 * (left + right);
    scale_hz = 0.5 * (spec.cutoff_hz[0] + spec.cutoff_hz[1]);
  }
  std::vector<double> hc(n);
  for (std::size_t i = 0; i < n; ++i)
    hc[i] = h[i] * std::cos(kPi * m[i] * scale_frequency);
  const double s = pairwise_sum(hc.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    h[i] /= s;
  // SciPy returns NaN taps here (e.g. a 2-tap hann window is all zeros); the
  // pipeline must never run non-finite taps, so say why instead.
  if (!std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v); })) {
    throw config_error(kind + " design with " + std::to_string(spec.taps) + " taps and a " +
                       to_string(spec.window) + " window has no gain at " + num(scale_hz) +
                       " Hz (the centre of its first passband), so it cannot be scaled to unit "
                       "gain; use more taps or another window");
  }
  return h;
}

WindowSpec parse_window(std::string_view text) {
  const auto fail = [&](const std::string& why) {
    return config_error("window '" + std::string(text) + "'" + why +
                        "; expected one of hamming, hann, blackman, rectangular (or boxcar), "
                        "kaiser:BETA (e.g. kaiser:8.6)");
  };
  if (text == "hamming")
    return {WindowKind::hamming, 0.0};
  if (text == "hann" || text == "hanning")
    return {WindowKind::hann, 0.0};
  if (text == "blackman")
    return {WindowKind::blackman, 0.0};
  if (text == "rectangular" || text == "boxcar")
    return {WindowKind::rectangular, 0.0};
  // Bare "kaiser" leaves beta = 0 for the caller to fill in from a separate
  // setting (YAML `beta:`); used as is, that is a rectangular window.
  if (text == "kaiser")
    return {WindowKind::kaiser, 0.0};
  constexpr std::string_view kPrefix = "kaiser:";
  if (text.starts_with(kPrefix)) {
    const std::string_view arg = text.substr(kPrefix.size());
    double beta = 0.0;
    const auto res = std::from_chars(arg.data(), arg.data() + arg.size(), beta);
    if (arg.empty() || res.ec != std::errc() || res.ptr != arg.data() + arg.size()) {
      throw fail(": kaiser beta '" + std::string(arg) + "' is not a number");
    }
    if (!(std::isfinite(beta) && beta >= 0.0 && beta <= kMaxKaiserBeta)) {
      throw fail(": kaiser beta must be a number from 0 to " + num(kMaxKaiserBeta) + " (got " +
                 num(beta) + ")");
    }
    return {WindowKind::kaiser, beta};
  }
  constexpr std::string_view kNames[] = {"hamming",     "hann",   "hanning", "blackman",
                                         "rectangular", "boxcar", "kaiser"};
  const auto best = closest(text, kNames);
  throw fail(" is not a known window" +
             (best ? " (did you mean '" + std::string(*best) + "'?)" : std::string()));
}

FilterKind parse_filter_kind(std::string_view text) {
  if (text == "lowpass")
    return FilterKind::lowpass;
  if (text == "highpass")
    return FilterKind::highpass;
  if (text == "bandpass")
    return FilterKind::bandpass;
  if (text == "bandstop")
    return FilterKind::bandstop;
  throw config_error("filter kind '" + std::string(text) +
                     "' is not known; expected one of lowpass, highpass, bandpass, bandstop");
}

std::optional<kernels::cpu::FilterResponse> taps_response(std::span<const double> taps,
                                                          std::int64_t up, double rate_in) {
  if (taps.empty())
    return std::nullopt;
  std::vector<double> h(taps.begin(), taps.end());
  for (double& v : h)
    v /= static_cast<double>(up);
  return kernels::cpu::filter_response(h, rate_in * static_cast<double>(up));
}

} // namespace sigstream
