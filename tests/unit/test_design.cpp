// Windowed-sinc design (stages/design.hpp) and the enum names (stages/types.hpp).
// References are computed here from the textbook definitions, independently of
// the SciPy-mirroring code under test; tests/scipy/test_design_parity.py
// compares against SciPy itself. Just over 600 lines, one file on purpose: every
// window and kind of the design against the same textbook references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "stages/design.hpp"
#include "stages/registry.hpp"
#include "stages/types.hpp"

namespace sigstream {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

DesignSpec make_spec(FilterKind kind, std::vector<double> cutoff_hz, int taps,
                     WindowSpec window = {}) {
  DesignSpec s;
  s.kind = kind;
  s.cutoff_hz = std::move(cutoff_hz);
  s.taps = taps;
  s.window = window;
  return s;
}

// |H(f)| = |sum_k h[k] e^{-j pi f k}| with f normalised to Nyquist (0 = DC, 1 = Nyquist).
double gain_at(const std::vector<double>& h, double f) {
  std::complex<double> acc{0.0, 0.0};
  for (std::size_t k = 0; k < h.size(); ++k) {
    acc += h[k] * std::polar(1.0, -kPi * f * static_cast<double>(k));
  }
  return std::abs(acc);
}

// I0(x) = (1/pi) int_0^pi exp(x cos t) dt. The trapezoid rule on this smooth
// periodic integrand converges exponentially: 256 points reach full double
// precision for x <= 50, independently of the power series the code uses
// (libstdc++'s std::cyl_bessel_i is only good to about 1e-15).
double reference_i0(double x) {
  constexpr int kPoints = 256;
  double sum = 0.0;
  for (int j = 0; j < kPoints; ++j)
    sum += std::exp(x * std::cos(2.0 * kPi * j / kPoints));
  return sum / kPoints;
}

// The textbook windows: w[k] = sum_j (-1)^j a_j cos(2 pi j k / (N-1)), and
// Kaiser's I0(beta sqrt(1 - r^2)) / I0(beta).
std::vector<double> reference_window(const WindowSpec& w, int n) {
  std::vector<double> out(static_cast<std::size_t>(n), 1.0);
  if (n == 1)
    return out;
  for (int k = 0; k < n; ++k) {
    const double x = 2.0 * kPi * k / (n - 1);
    double v = 1.0;
    switch (w.kind) {
      case WindowKind::hamming:
        v = 0.54 - 0.46 * std::cos(x);
        break;
      case WindowKind::hann:
        v = 0.5 - 0.5 * std::cos(x);
        break;
      case WindowKind::blackman:
        v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x);
        break;
      case WindowKind::rectangular:
        v = 1.0;
        break;
      case WindowKind::kaiser: {
        const double r = 2.0 * k / (n - 1) - 1.0;
        v = reference_i0(w.beta * std::sqrt(1.0 - r * r)) / reference_i0(w.beta);
        break;
      }
    }
    out[static_cast<std::size_t>(k)] = v;
  }
  return out;
}

// The ideal band-pass impulse responses (sin(pi f2 m) - sin(pi f1 m)) / (pi m),
// summed over the passbands, windowed and scaled to unit gain in the middle of
// the first passband (DC or Nyquist when it touches them).
std::vector<double> reference_design(const DesignSpec& s, double rate) {
  const double nyq = rate / 2.0;
  std::vector<std::pair<double, double>> bands;
  const double a = s.cutoff_hz[0] / nyq;
  const double b = s.cutoff_hz.size() > 1 ? s.cutoff_hz[1] / nyq : 0.0;
  switch (s.kind) {
    case FilterKind::lowpass:
      bands = {{0.0, a}};
      break;
    case FilterKind::highpass:
      bands = {{a, 1.0}};
      break;
    case FilterKind::bandpass:
      bands = {{a, b}};
      break;
    case FilterKind::bandstop:
      bands = {{0.0, a}, {b, 1.0}};
      break;
  }
  const int n = s.taps;
  const double centre = (n - 1) / 2.0;
  const std::vector<double> w = reference_window(s.window, n);
  std::vector<double> h(static_cast<std::size_t>(n), 0.0);
  for (int k = 0; k < n; ++k) {
    const double m = k - centre;
    double v = 0.0;
    for (const auto& [f1, f2] : bands) {
      v += m == 0.0 ? f2 - f1 : (std::sin(kPi * f2 * m) - std::sin(kPi * f1 * m)) / (kPi * m);
    }
    h[static_cast<std::size_t>(k)] = v * w[static_cast<std::size_t>(k)];
  }
  const auto [f1, f2] = bands[0];
  const double f0 = f1 == 0.0 ? 0.0 : f2 == 1.0 ? 1.0 : (f1 + f2) / 2.0;
  const double g = gain_at(h, f0);
  for (double& v : h)
    v /= g;
  return h;
}

double max_abs_diff(const std::vector<double>& x, const std::vector<double>& y) {
  EXPECT_EQ(x.size(), y.size());
  double d = 0.0;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    d = std::max(d, std::abs(x[i] - y[i]));
  }
  return d;
}

// Runs f, which must throw a config Error, and returns its message.
std::string config_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no sigstream::Error was thrown";
  return {};
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

const WindowSpec kAllWindows[] = {
    {WindowKind::hamming, 0.0},     {WindowKind::hann, 0.0},   {WindowKind::blackman, 0.0},
    {WindowKind::rectangular, 0.0}, {WindowKind::kaiser, 8.6}, {WindowKind::kaiser, 0.5},
};

// ---------------------------------------------------------------------------
// Hand-computed tiny designs

TEST(DesignFir, OneTapIsIdentityForEveryKind) {
  for (const WindowSpec& w : kAllWindows) {
    EXPECT_EQ(design_fir(make_spec(FilterKind::lowpass, {1000}, 1, w), 8000),
              std::vector<double>{1.0});
    EXPECT_EQ(design_fir(make_spec(FilterKind::highpass, {1000}, 1, w), 8000),
              std::vector<double>{1.0});
    EXPECT_EQ(design_fir(make_spec(FilterKind::bandpass, {1000, 2000}, 1, w), 8000),
              std::vector<double>{1.0});
    EXPECT_EQ(design_fir(make_spec(FilterKind::bandstop, {1000, 2000}, 1, w), 8000),
              std::vector<double>{1.0});
  }
}

TEST(DesignFir, ThreeTapRectangularLowpassByHand) {
  // fc = 2000 / 4000 = 0.5: raw taps fc*sinc(fc*m) for m = -1, 0, 1 are
  // [1/pi, 1/2, 1/pi], scaled to sum to 1.
  const auto h =
      design_fir(make_spec(FilterKind::lowpass, {2000}, 3, {WindowKind::rectangular}), 8000);
  const double sum = 2.0 / kPi + 0.5;
  const std::vector<double> want{(1.0 / kPi) / sum, 0.5 / sum, (1.0 / kPi) / sum};
  EXPECT_LE(max_abs_diff(h, want), 1e-15);
}

TEST(DesignFir, ThreeTapHammingLowpassByHand) {
  // hamming(3) = [0.08, 1, 0.08]; fc = 1000 / 4000 = 0.25, side tap
  // fc*sinc(fc) = sin(pi/4)/pi.
  const auto h = design_fir(make_spec(FilterKind::lowpass, {1000}, 3, {WindowKind::hamming}), 8000);
  const double side = 0.08 * std::sin(kPi / 4.0) / kPi;
  const double sum = 2.0 * side + 0.25;
  const std::vector<double> want{side / sum, 0.25 / sum, side / sum};
  EXPECT_LE(max_abs_diff(h, want), 1e-15);
}

TEST(DesignFir, ThreeTapRectangularHighpassByHand) {
  // Bands [fc, 1]: raw taps sinc(m) - fc*sinc(fc*m) = [-s, 1 - fc, -s] with
  // s = sin(pi fc)/pi; unit gain at Nyquist where the taps alternate in sign.
  const double fc = 0.3; // 1200 Hz at 8000 Hz
  const auto h =
      design_fir(make_spec(FilterKind::highpass, {1200}, 3, {WindowKind::rectangular}), 8000);
  const double s = std::sin(kPi * fc) / kPi;
  const double g = (1.0 - fc) + 2.0 * s;
  const std::vector<double> want{-s / g, (1.0 - fc) / g, -s / g};
  EXPECT_LE(max_abs_diff(h, want), 1e-15);
}

TEST(DesignFir, TwoTapLowpassIsAveraging) {
  // Any symmetric 2-tap filter scaled to unit DC gain is [0.5, 0.5].
  for (const WindowSpec& w : {WindowSpec{WindowKind::rectangular}, WindowSpec{WindowKind::hamming},
                              WindowSpec{WindowKind::kaiser, 8.6}}) {
    const auto h = design_fir(make_spec(FilterKind::lowpass, {500}, 2, w), 8000);
    EXPECT_LE(max_abs_diff(h, {0.5, 0.5}), 1e-15) << to_string(w);
  }
}

TEST(DesignFir, ZeroWeightWindowIsAnErrorNotNan) {
  // hann(2) = [0, 0]: there is nothing to scale (SciPy returns NaN taps).
  const std::string msg = config_message(
      [] { design_fir(make_spec(FilterKind::lowpass, {1000}, 2, {WindowKind::hann}), 8000); });
  expect_contains(msg, "2 taps");
  expect_contains(msg, "hann");
}

// ---------------------------------------------------------------------------
// Against the textbook definition, and frequency-response properties

TEST(DesignFir, MatchesTextbookDefinition) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<int> taps_dist(8, 600);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double rates[] = {8000, 16000, 44100, 48000, 96000};
  const FilterKind kinds[] = {FilterKind::lowpass, FilterKind::highpass, FilterKind::bandpass,
                              FilterKind::bandstop};
  for (int trial = 0; trial < 300; ++trial) {
    const FilterKind kind = kinds[trial % 4];
    const WindowSpec w = kAllWindows[(trial / 4) % std::size(kAllWindows)];
    const double rate = rates[static_cast<std::size_t>(trial) % std::size(rates)];
    const double nyq = rate / 2;
    int taps = taps_dist(rng);
    if (kind == FilterKind::highpass || kind == FilterKind::bandstop)
      taps |= 1;
    std::vector<double> cut;
    if (kind == FilterKind::lowpass || kind == FilterKind::highpass) {
      cut = {nyq * (0.05 + 0.9 * unit(rng))};
    } else {
      const double lo = 0.05 + 0.4 * unit(rng);
      cut = {nyq * lo, nyq * (lo + 0.1 + (0.9 - lo - 0.1) * unit(rng))};
    }
    const DesignSpec spec = make_spec(kind, cut, taps, w);
    const auto h = design_fir(spec, rate);
    ASSERT_EQ(h.size(), static_cast<std::size_t>(taps));
    EXPECT_LE(max_abs_diff(h, reference_design(spec, rate)), 1e-12)
        << to_string(kind) << " " << to_string(w) << " taps " << taps << " rate " << rate;
  }
}

TEST(DesignFir, SymmetryAndUnitGainProperties) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> taps_dist(15, 1025);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const WindowSpec w = kAllWindows[static_cast<std::size_t>(trial) % std::size(kAllWindows)];
    const double rate = trial % 2 ? 44100.0 : 48000.0;
    const double nyq = rate / 2;
    const int any_taps = taps_dist(rng); // odd or even
    const int odd_taps = any_taps | 1;
    const double fc = 0.1 + 0.8 * unit(rng);
    const double lo = 0.1 + 0.3 * unit(rng);
    const double hi = lo + 0.2 + 0.3 * unit(rng);

    const auto check_symmetric = [](const std::vector<double>& h) {
      for (std::size_t i = 0; i < h.size(); ++i) {
        EXPECT_NEAR(h[i], h[h.size() - 1 - i], 1e-15);
      }
    };
    const auto lp = design_fir(make_spec(FilterKind::lowpass, {fc * nyq}, any_taps, w), rate);
    check_symmetric(lp);
    double dc = 0.0;
    for (const double v : lp)
      dc += v;
    EXPECT_NEAR(dc, 1.0, 1e-12) << "lowpass taps " << any_taps << " " << to_string(w);

    const auto hp = design_fir(make_spec(FilterKind::highpass, {fc * nyq}, odd_taps, w), rate);
    check_symmetric(hp);
    EXPECT_NEAR(gain_at(hp, 1.0), 1.0, 1e-12) << "highpass taps " << odd_taps;

    const auto bp =
        design_fir(make_spec(FilterKind::bandpass, {lo * nyq, hi * nyq}, any_taps, w), rate);
    check_symmetric(bp);
    EXPECT_NEAR(gain_at(bp, (lo + hi) / 2), 1.0, 1e-12) << "bandpass taps " << any_taps;

    const auto bs =
        design_fir(make_spec(FilterKind::bandstop, {lo * nyq, hi * nyq}, odd_taps, w), rate);
    check_symmetric(bs);
    EXPECT_NEAR(gain_at(bs, 0.0), 1.0, 1e-12) << "bandstop taps " << odd_taps;
  }
}

TEST(DesignFir, EvenLengthLowpassHasZeroGainAtNyquist) {
  const auto h = design_fir(make_spec(FilterKind::lowpass, {3000}, 64), 16000);
  EXPECT_NEAR(gain_at(h, 1.0), 0.0, 1e-14);
}

TEST(DesignFir, HammingLowpassRejectsTheStopband) {
  // 255-tap hamming: transition about 3.3 * rate / taps wide, sidelobes below
  // -53 dB.
  const double rate = 48000;
  const auto h = design_fir(make_spec(FilterKind::lowpass, {4000}, 255), rate);
  for (double f_hz = 5000; f_hz < rate / 2; f_hz += 137) {
    EXPECT_LT(20 * std::log10(gain_at(h, f_hz / (rate / 2))), -50.0) << f_hz << " Hz";
  }
  for (double f_hz = 0; f_hz < 3000; f_hz += 101) {
    EXPECT_NEAR(gain_at(h, f_hz / (rate / 2)), 1.0, 0.01) << f_hz << " Hz";
  }
}

TEST(DesignFir, KaiserBetaZeroIsRectangular) {
  const auto spec_r = make_spec(FilterKind::bandpass, {300, 3400}, 101, {WindowKind::rectangular});
  const auto spec_k = make_spec(FilterKind::bandpass, {300, 3400}, 101, {WindowKind::kaiser, 0.0});
  EXPECT_EQ(design_fir(spec_r, 8000), design_fir(spec_k, 8000));
}

// ---------------------------------------------------------------------------
// Windows

TEST(DesignWindow, LengthsZeroAndOne) {
  for (const WindowSpec& w : kAllWindows) {
    EXPECT_TRUE(make_window(w, 0).empty());
    EXPECT_EQ(make_window(w, 1), std::vector<double>{1.0});
  }
}

TEST(DesignWindow, MatchTextbookAndAreSymmetric) {
  for (const WindowSpec& w :
       {WindowSpec{WindowKind::hamming}, WindowSpec{WindowKind::hann},
        WindowSpec{WindowKind::blackman}, WindowSpec{WindowKind::rectangular},
        WindowSpec{WindowKind::kaiser, 0.5}, WindowSpec{WindowKind::kaiser, 8.6},
        WindowSpec{WindowKind::kaiser, 14.0}, WindowSpec{WindowKind::kaiser, 40.0}}) {
    for (const int n : {2, 3, 4, 5, 16, 17, 255, 256, 1000}) {
      const auto win = make_window(w, n);
      ASSERT_EQ(win.size(), static_cast<std::size_t>(n));
      EXPECT_LE(max_abs_diff(win, reference_window(w, n)), 1e-14) << to_string(w) << " " << n;
      for (int i = 0; i < n; ++i) {
        EXPECT_NEAR(win[static_cast<std::size_t>(i)], win[static_cast<std::size_t>(n - 1 - i)],
                    1e-15);
      }
      if (n % 2 == 1) {
        EXPECT_NEAR(win[static_cast<std::size_t>(n / 2)], 1.0, 1e-15) << to_string(w);
      }
    }
  }
}

TEST(DesignWindow, KnownEndpoints) {
  const int n = 51;
  const auto hamming = make_window({WindowKind::hamming}, n);
  EXPECT_NEAR(hamming.front(), 0.08, 1e-15);
  EXPECT_NEAR(hamming.back(), 0.08, 1e-15);
  const auto hann = make_window({WindowKind::hann}, n);
  EXPECT_NEAR(hann.front(), 0.0, 1e-16);
  EXPECT_NEAR(hann.back(), 0.0, 1e-16);
  const auto blackman = make_window({WindowKind::blackman}, n);
  EXPECT_NEAR(blackman.front(), 0.0, 1e-16); // 0.42 - 0.5 + 0.08
  const auto rect = make_window({WindowKind::rectangular}, n);
  EXPECT_EQ(rect, std::vector<double>(n, 1.0));
  for (const double beta : {0.5, 5.0, 8.6, 20.0}) {
    const auto k = make_window({WindowKind::kaiser, beta}, n);
    const double i0 = reference_i0(beta);
    // Relative: the reference's exp(beta cos t) carries ~beta ulps of error.
    EXPECT_NEAR(k.front() * i0, 1.0, 4e-15) << beta;
    EXPECT_NEAR(k.back() * i0, 1.0, 4e-15) << beta;
    EXPECT_EQ(k[n / 2], 1.0);
  }
  EXPECT_EQ(make_window({WindowKind::hann}, 3)[1], 1.0);
}

TEST(DesignWindow, KaiserBetaValidated) {
  for (const double beta : {-1.0, kNan, kInf, 701.0}) {
    const std::string msg = config_message([&] { make_window({WindowKind::kaiser, beta}, 9); });
    expect_contains(msg, "beta");
  }
  EXPECT_NO_THROW(make_window({WindowKind::kaiser, 700.0}, 9));
  // beta is ignored for the other windows.
  EXPECT_NO_THROW(make_window({WindowKind::hamming, -1.0}, 9));
}

// ---------------------------------------------------------------------------
// Validation

TEST(DesignValidation, TapsAtLeastOne) {
  for (const int taps : {0, -3}) {
    const std::string msg =
        config_message([&] { design_fir(make_spec(FilterKind::lowpass, {1000}, taps), 8000); });
    expect_contains(msg, "taps");
    expect_contains(msg, "(got " + std::to_string(taps) + ")");
  }
}

TEST(DesignValidation, AbsurdTapCountRefused) {
  const std::string msg =
      config_message([] { design_fir(make_spec(FilterKind::lowpass, {1000}, 2000000000), 8000); });
  expect_contains(msg, "2000000000");
}

TEST(DesignValidation, EvenTapsForHighpassAndBandstop) {
  const std::string hp =
      config_message([] { design_fir(make_spec(FilterKind::highpass, {1000}, 254), 16000); });
  expect_contains(hp, "highpass filters need an odd number of taps (got 254); try 255");
  const std::string bs = config_message([] {
    design_fir(make_spec(FilterKind::bandstop, {1000, 2000}, 10), 16000);
  });
  expect_contains(bs, "bandstop");
  expect_contains(bs, "(got 10)");
  expect_contains(bs, "try 11");
  EXPECT_NO_THROW(design_fir(make_spec(FilterKind::lowpass, {1000}, 254), 16000));
  EXPECT_NO_THROW(design_fir(make_spec(FilterKind::bandpass, {1000, 2000}, 254), 16000));
}

TEST(DesignValidation, CutoffCountByKind) {
  const std::string lp = config_message([] {
    design_fir(make_spec(FilterKind::lowpass, {1000, 2000}, 31), 8000);
  });
  expect_contains(lp, "lowpass");
  expect_contains(lp, "got 2");
  const std::string bp =
      config_message([] { design_fir(make_spec(FilterKind::bandpass, {1000}, 31), 8000); });
  expect_contains(bp, "bandpass");
  expect_contains(bp, "got 1");
  const std::string none =
      config_message([] { design_fir(make_spec(FilterKind::highpass, {}, 31), 8000); });
  expect_contains(none, "got 0");
  const std::string three = config_message([] {
    design_fir(make_spec(FilterKind::bandstop, {1, 2, 3}, 31), 8000);
  });
  expect_contains(three, "got 3");
}

TEST(DesignValidation, CutoffOutsideZeroToNyquist) {
  EXPECT_EQ(config_message([] { design_fir(make_spec(FilterKind::lowpass, {9000}, 31), 16000); }),
            "cutoff 9000 Hz must be > 0 and < Nyquist (8000 Hz) for sample rate 16000 Hz");
  for (const double bad : {0.0, -5.0, 8000.0, 22050.5}) {
    const std::string msg =
        config_message([&] { design_fir(make_spec(FilterKind::highpass, {bad}, 31), 16000); });
    expect_contains(
        msg, "cutoff " +
                 (bad == 22050.5 ? std::string("22050.5") : std::to_string(static_cast<int>(bad))) +
                 " Hz");
    expect_contains(msg, "Nyquist (8000 Hz)");
  }
  const std::string band = config_message([] {
    design_fir(make_spec(FilterKind::bandpass, {300, 4410}, 31), 8820);
  });
  expect_contains(band, "cutoff 4410 Hz");
  expect_contains(band, "Nyquist (4410 Hz)");
  // Just inside is fine.
  EXPECT_NO_THROW(design_fir(make_spec(FilterKind::lowpass, {7999.999}, 31), 16000));
}

TEST(DesignValidation, BandEdgesStrictlyIncreasing) {
  for (const auto& cut : {std::vector<double>{3000, 1000}, std::vector<double>{1000, 1000}}) {
    for (const FilterKind kind : {FilterKind::bandpass, FilterKind::bandstop}) {
      const std::string msg = config_message([&] { design_fir(make_spec(kind, cut, 31), 16000); });
      expect_contains(msg, "increasing");
      expect_contains(msg, std::to_string(static_cast<int>(cut[0])) + " Hz");
    }
  }
}

TEST(DesignValidation, NonFiniteCutoff) {
  const std::string nan_msg =
      config_message([] { design_fir(make_spec(FilterKind::lowpass, {kNan}, 31), 16000); });
  expect_contains(nan_msg, "nan");
  const std::string inf_msg = config_message([] {
    design_fir(make_spec(FilterKind::bandpass, {100, kInf}, 31), 16000);
  });
  expect_contains(inf_msg, "inf");
}

TEST(DesignValidation, KaiserBeta) {
  for (const double beta : {-0.5, kNan, kInf}) {
    const std::string msg = config_message([&] {
      design_fir(make_spec(FilterKind::lowpass, {1000}, 31, {WindowKind::kaiser, beta}), 8000);
    });
    expect_contains(msg, "beta");
  }
  const std::string msg = config_message([] {
    design_fir(make_spec(FilterKind::lowpass, {1000}, 31, {WindowKind::kaiser, -0.5}), 8000);
  });
  expect_contains(msg, "-0.5");
}

TEST(DesignValidation, SampleRate) {
  for (const double rate : {0.0, -8000.0, kNan, kInf}) {
    const std::string msg =
        config_message([&] { design_fir(make_spec(FilterKind::lowpass, {1000}, 31), rate); });
    expect_contains(msg, "sample rate");
  }
  const std::string msg =
      config_message([] { design_fir(make_spec(FilterKind::lowpass, {1000}, 31), -8000); });
  expect_contains(msg, "-8000");
}

// ---------------------------------------------------------------------------
// Parsing and names

TEST(DesignParse, Windows) {
  EXPECT_EQ(parse_window("hamming").kind, WindowKind::hamming);
  EXPECT_EQ(parse_window("hann").kind, WindowKind::hann);
  EXPECT_EQ(parse_window("hanning").kind, WindowKind::hann);
  EXPECT_EQ(parse_window("blackman").kind, WindowKind::blackman);
  EXPECT_EQ(parse_window("rectangular").kind, WindowKind::rectangular);
  EXPECT_EQ(parse_window("boxcar").kind, WindowKind::rectangular);
  const WindowSpec k = parse_window("kaiser:8.6");
  EXPECT_EQ(k.kind, WindowKind::kaiser);
  EXPECT_EQ(k.beta, 8.6);
  EXPECT_EQ(parse_window("kaiser:0").beta, 0.0);
  EXPECT_EQ(parse_window("kaiser:1e1").beta, 10.0);
  // Bare "kaiser" leaves beta for the caller to fill in.
  const WindowSpec bare = parse_window("kaiser");
  EXPECT_EQ(bare.kind, WindowKind::kaiser);
  EXPECT_EQ(bare.beta, 0.0);
}

TEST(DesignParse, BadWindows) {
  for (const char* bad :
       {"", "gauss", "Hamming", "hamming:2", "kaiser:", "kaiser:abc", "kaiser:8.6x", "kaiser: 8.6",
        "kaiser:-1", "kaiser:nan", "kaiser:inf", "kaiser:1000"}) {
    const std::string msg = config_message([&] { parse_window(bad); });
    expect_contains(msg, "'" + std::string(bad) + "'");
    expect_contains(msg, "hamming, hann, blackman, rectangular");
    expect_contains(msg, "kaiser:BETA");
  }
  expect_contains(config_message([] { parse_window("kaiser:-1"); }), "(got -1)");
}

TEST(DesignParse, FilterKinds) {
  EXPECT_EQ(parse_filter_kind("lowpass"), FilterKind::lowpass);
  EXPECT_EQ(parse_filter_kind("highpass"), FilterKind::highpass);
  EXPECT_EQ(parse_filter_kind("bandpass"), FilterKind::bandpass);
  EXPECT_EQ(parse_filter_kind("bandstop"), FilterKind::bandstop);
  const std::string msg = config_message([] { parse_filter_kind("notch"); });
  expect_contains(msg, "'notch'");
  expect_contains(msg, "lowpass, highpass, bandpass, bandstop");
}

TEST(DesignTypes, EnumNamesAsTheYamlSpellsThem) {
  EXPECT_EQ(to_string(FirMode::causal), "causal");
  EXPECT_EQ(to_string(FirMode::same), "same");
  EXPECT_EQ(to_string(FirMode::full), "full");
  EXPECT_EQ(to_string(FirMethod::automatic), "auto");
  EXPECT_EQ(to_string(FirMethod::direct), "direct");
  EXPECT_EQ(to_string(FirMethod::fft), "fft");
  for (const FilterKind k :
       {FilterKind::lowpass, FilterKind::highpass, FilterKind::bandpass, FilterKind::bandstop}) {
    EXPECT_EQ(parse_filter_kind(to_string(k)), k);
  }
  EXPECT_EQ(to_string(WindowKind::hamming), "hamming");
  EXPECT_EQ(to_string(WindowKind::hann), "hann");
  EXPECT_EQ(to_string(WindowKind::blackman), "blackman");
  EXPECT_EQ(to_string(WindowKind::rectangular), "rectangular");
  EXPECT_EQ(to_string(WindowKind::kaiser), "kaiser");
  // A kind is its name: the registry finds each by what to_string prints.
  std::vector<std::string> kind_names;
  for (const StageKind& k : stage_kinds()) {
    kind_names.emplace_back(to_string(k.type));
    EXPECT_EQ(find_stage_kind(to_string(k.type)), &k);
  }
  for (const char* known : {"fir", "gain", "metrics", "resample", "mix", "iir"})
    EXPECT_NE(std::find(kind_names.begin(), kind_names.end(), known), kind_names.end()) << known;
  EXPECT_EQ(find_stage_kind("lowpass"), nullptr);
  EXPECT_EQ(to_string(StageType{}), "unknown");
  EXPECT_THROW((void)stage_kind(StageType{"lowpass"}), Error);
  EXPECT_EQ(to_string(SampleFormat::same), "same");
  EXPECT_EQ(to_string(SampleFormat::pcm16), "pcm16");
  EXPECT_EQ(to_string(SampleFormat::pcm24), "pcm24");
  EXPECT_EQ(to_string(SampleFormat::pcm32), "pcm32");
  EXPECT_EQ(to_string(SampleFormat::float32), "float");
  EXPECT_EQ(to_string(SampleFormat::float64), "double");
  EXPECT_EQ(to_string(BackendKind::automatic), "auto");
  EXPECT_EQ(to_string(BackendKind::cpu), "cpu");
  EXPECT_EQ(to_string(BackendKind::cuda), "cuda");
}

TEST(DesignTypes, WindowSpecRoundTrips) {
  EXPECT_EQ(to_string(WindowSpec{WindowKind::hamming, 0.0}), "hamming");
  EXPECT_EQ(to_string(WindowSpec{WindowKind::rectangular, 3.0}), "rectangular");
  EXPECT_EQ(to_string(WindowSpec{WindowKind::kaiser, 8.6}), "kaiser:8.6");
  EXPECT_EQ(to_string(WindowSpec{WindowKind::kaiser, 0.0}), "kaiser:0");
  EXPECT_EQ(to_string(WindowSpec{WindowKind::kaiser, 14.0}), "kaiser:14");
  for (const WindowSpec& w : kAllWindows) {
    const WindowSpec back = parse_window(to_string(w));
    EXPECT_EQ(back.kind, w.kind);
    if (w.kind == WindowKind::kaiser) {
      EXPECT_EQ(back.beta, w.beta);
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> beta(0.0, 50.0);
  for (int i = 0; i < 1000; ++i) {
    const WindowSpec w{WindowKind::kaiser, beta(rng)};
    EXPECT_EQ(parse_window(to_string(w)).beta, w.beta) << to_string(w);
  }
}

} // namespace
} // namespace sigstream
