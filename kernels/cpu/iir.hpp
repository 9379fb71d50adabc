#pragma once
// A cascade of second-order IIR sections, as scipy.signal.sosfilt: each
// section in transposed direct form II, its two state values in float64,
//   y = b0·x + z0,  z0' = b1·x − a1·y + z1,  z1' = b2·x − a2·y
// (a0 normalised to 1), the sections one after another for each sample.
// The arithmetic is float64 whatever the signal's type, in this order, with
// no fma (the build contracts nothing), so a signal filtered in pieces with
// the state carried between them gives the bits of one pass.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/response.hpp"

namespace sigstream::kernels::cpu {

struct Biquad {
  double b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0;
  bool operator==(const Biquad&) const = default;
};

// Filters x[0..n) into y[0..n) (x == y allowed), from and into `state`
// (2 per section: z0, z1, section by section).
void sosfilt(std::span<const Biquad> sections, std::span<double> state, const float* x, float* y,
             std::int64_t n);
void sosfilt(std::span<const Biquad> sections, std::span<double> state, const double* x, double* y,
             std::int64_t n);
// Every channel c: x[c] into y[c], state[c] as above; the same bits as
// sosfilt channel by channel (each channel's arithmetic is unchanged), but
// several channels' recursions run side by side, so their latencies overlap.
void sosfilt(std::span<const Biquad> sections, std::span<double* const> state,
             std::span<const float* const> x, std::span<float* const> y, std::int64_t n);
void sosfilt(std::span<const Biquad> sections, std::span<double* const> state,
             std::span<const double* const> x, std::span<double* const> y, std::int64_t n);

// scipy.signal.sosfilt_zi: the state (2 per section) that a unit step
// leaves once settled, each section's lfilter_zi scaled by the DC gain of
// the sections before it.
[[nodiscard]] std::vector<double> sosfilt_zi(std::span<const Biquad> sections);
// scipy.signal.sosfiltfilt's default padding: 3 x (2 sections + 1, less the
// sections whose b2 and a2 are both 0, counted as SciPy counts them) frames
// of odd extension at each end; the signal must be longer.
[[nodiscard]] std::int64_t sosfiltfilt_pad(std::span<const Biquad> sections);
// scipy.signal.sosfiltfilt(sections, x) with its defaults (padtype "odd"):
// the odd extension, a forward pass from sosfilt_zi x its first sample, a
// backward pass from sosfilt_zi x the forward pass's last, all in float64;
// x[0..n) into y (x == y allowed), n > sosfiltfilt_pad(sections).
void sosfiltfilt(std::span<const Biquad> sections, const float* x, float* y, std::int64_t n);
void sosfiltfilt(std::span<const Biquad> sections, const double* x, double* y, std::int64_t n);

// The cascade's response on FilterResponse's grid (`points` + 1 frequencies
// k * rate / (2 * points)): H = prod (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1
// + a2 z^-2) at z = e^{jw}; the group delay, the sum over sections of each
// polynomial's Re(sum k p_k z^-k / sum p_k z^-k), numerators less
// denominators (NaN where |H| is over 120 dB below its peak).
[[nodiscard]] FilterResponse sos_response(std::span<const Biquad> sections, double rate,
                                          int points = 512);

} // namespace sigstream::kernels::cpu
