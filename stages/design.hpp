#pragma once
// Windowed-sinc FIR design, equal to scipy.signal.firwin(numtaps, cutoff,
// window=..., pass_zero=<by kind>, scale=True, fs=sample_rate) to within 1e-12.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu/response.hpp"
#include "stages/types.hpp"

namespace sigstream {

// The most taps a FIR filter may have (designed, inline or from a file): far
// beyond any audio use (and beyond what the FFT method plans for), but it
// turns an absurd request into a config error instead of a failed allocation.
inline constexpr int kMaxTaps = 1 << 24;

// The window of length n (symmetric, as scipy.signal.get_window(..., fftbins=False)).
std::vector<double> make_window(const WindowSpec& window, int n);

// Designs the taps. Throws Error(config) with a message that names the problem
// (cutoff <= 0 or >= Nyquist, band edges not increasing, taps < 1, even taps for
// highpass/bandstop, kaiser beta < 0 or non-finite).
std::vector<double> design_fir(const DesignSpec& spec, double sample_rate);

// Parses "hamming", "hann", "blackman", "rectangular" (alias "boxcar"),
// "kaiser:BETA" (also "kaiser" with beta given separately). Throws Error(config).
WindowSpec parse_window(std::string_view text);

// The response of float64 taps that run at `rate` Hz after up-sampling by
// `up` (1: none), divided by up (a resampler's unity pass band): fir's and
// resample's StageKind::response. None for no taps.
[[nodiscard]] std::optional<kernels::cpu::FilterResponse>
taps_response(std::span<const double> taps, std::int64_t up, double rate_in);

// Parses a filter kind name; throws Error(config).
FilterKind parse_filter_kind(std::string_view text);

} // namespace sigstream
