#pragma once
// Conversions between interleaved file samples and planar float32 channels,
// with the exact PCM rules of SPEC §3 (read: v / 2^(bits-1); write: round to
// nearest even of y * 2^(bits-1), clip to [-2^(bits-1), 2^(bits-1) - 1]).
#include <cmath>
#include <cstdint>

#include "core/sample_block.hpp"

namespace sigstream::kernels::cpu {

// Reads frames [first, first + n) of `in` (interleaved, in.type) into out[c][0..n).
void deinterleave(const HostBlock& in, std::int64_t first, std::int64_t n, float* const* out);

// Writes planar channels into `out` (frames [0, n), out.type) quantizing to
// `bits` (8/16/24/32; 0 = float). Returns the number of samples clipped
// (including NaN, which is written as 0).
std::int64_t interleave(const float* const* in, std::int64_t n, int bits, HostBlock& out);

// PCM quantisation to `bits`: the quantized value in [-2^(bits-1), 2^(bits-1)-1]
// and whether it had to be limited (or was NaN, which becomes 0). Branch-free
// so that whole blocks vectorise: the value is first limited to just outside
// the range (so the rounding trick below is exact), then rounded to
// nearest-even by adding and subtracting 1.5 * 2^52 (exact for |v| < 2^51 in
// the default rounding mode; sigstream never builds with -ffast-math), then
// clamped.
struct Quantizer {
  explicit Quantizer(int bits) noexcept
      : scale(std::ldexp(1.0, bits - 1)), lo(-scale), hi(scale - 1.0) {}
  double scale, lo, hi;

  std::int32_t operator()(float y, bool& clipped) const noexcept {
    constexpr double kRound = 0x1.8p52;
    double v = static_cast<double>(y) * scale;
    const bool nan = v != v;
    v = nan ? 0.0 : v;
    v = v < lo - 1.0 ? lo - 1.0 : (v > hi + 1.0 ? hi + 1.0 : v);
    const double r = (v + kRound) - kRound;
    clipped = nan || r < lo || r > hi;
    return static_cast<std::int32_t>(r < lo ? lo : (r > hi ? hi : r));
  }
};

// One sample (see Quantizer).
inline std::int32_t quantize(float y, int bits, bool& clipped) noexcept {
  return Quantizer(bits)(y, clipped);
}

} // namespace sigstream::kernels::cpu
