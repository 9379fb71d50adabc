#pragma once
// The values of the stage kinds' enums for the config reader's choices
// (config::EnumValues, pipeline/config/schema.hpp): the walker below stages/
// knows the shared enums only (core/formats.hpp). Include it where a kind's
// schema reads or lists one of these enums.
#include <array>

#include "pipeline/config/schema.hpp"
#include "stages/types.hpp"

namespace sigstream::config {

template <> struct EnumValues<FirMode> {
  static constexpr std::array values{FirMode::causal, FirMode::same, FirMode::full};
};
template <> struct EnumValues<FirMethod> {
  static constexpr std::array values{FirMethod::automatic, FirMethod::direct, FirMethod::fft};
};
template <> struct EnumValues<FilterKind> {
  static constexpr std::array values{FilterKind::lowpass, FilterKind::highpass,
                                     FilterKind::bandpass, FilterKind::bandstop};
};
template <> struct EnumValues<WindowKind> {
  static constexpr std::array values{WindowKind::hamming, WindowKind::hann, WindowKind::blackman,
                                     WindowKind::rectangular, WindowKind::kaiser};
};
} // namespace sigstream::config
