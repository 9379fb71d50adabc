#include "stages/types.hpp"

#include <array>
#include <charconv>
#include <cmath>

// The names are those the YAML schema and the CLI spell (SPEC §1, §2), so
// to_string output can be pasted back into a config.

namespace sigstream {

std::string_view to_string(FirMode m) {
  switch (m) {
    case FirMode::causal:
      return "causal";
    case FirMode::same:
      return "same";
    case FirMode::full:
      return "full";
  }
  return "unknown";
}

std::string_view to_string(FirMethod m) {
  switch (m) {
    case FirMethod::automatic:
      return "auto";
    case FirMethod::direct:
      return "direct";
    case FirMethod::fft:
      return "fft";
  }
  return "unknown";
}

std::string_view to_string(FilterKind k) {
  switch (k) {
    case FilterKind::lowpass:
      return "lowpass";
    case FilterKind::highpass:
      return "highpass";
    case FilterKind::bandpass:
      return "bandpass";
    case FilterKind::bandstop:
      return "bandstop";
  }
  return "unknown";
}

std::string_view to_string(WindowKind k) {
  switch (k) {
    case WindowKind::hamming:
      return "hamming";
    case WindowKind::hann:
      return "hann";
    case WindowKind::blackman:
      return "blackman";
    case WindowKind::rectangular:
      return "rectangular";
    case WindowKind::kaiser:
      return "kaiser";
  }
  return "unknown";
}

std::string to_string(const WindowSpec& w) {
  std::string out(to_string(w.kind));
  if (w.kind != WindowKind::kaiser)
    return out;
  if (!std::isfinite(w.beta))
    return out + (std::isnan(w.beta) ? ":nan" : ":inf");
  // Shortest round-trip form: 8.6 prints as "8.6" yet parse_window reads back
  // exactly the same double.
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), w.beta);
  return out + ":" + std::string(buf.data(), res.ptr);
}

std::optional<double> gain_from_db(double db) noexcept {
  const double linear = std::pow(10.0, db / 20.0);
  if (!std::isfinite(db) || !std::isfinite(static_cast<float>(linear)))
    return std::nullopt;
  return linear;
}

} // namespace sigstream
