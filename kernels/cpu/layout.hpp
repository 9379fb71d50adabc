#pragma once
// Conversions between interleaved file samples and planar float32 channels,
// with the exact PCM rules of SPEC §3 (read: v / 2^(bits-1); write: round to
// nearest even of y * 2^(bits-1), clip to [-2^(bits-1), 2^(bits-1) - 1]).
#include <cmath>
#include <cstdint>

#include "pipeline/sample_block.hpp"

namespace sigstream::kernels::cpu {

// Reads frames [first, first + n) of `in` (interleaved, in.type) into out[c][0..n).
void deinterleave(const HostBlock& in, std::int64_t first, std::int64_t n, float* const* out);

// Writes planar channels into `out` (frames [0, n), out.type) quantizing to
// `bits` (8/16/24/32; 0 = float). Returns the number of samples clipped
// (including NaN, which is written as 0).
std::int64_t interleave(const float* const* in, std::int64_t n, int bits, HostBlock& out);

// One sample, PCM: the quantized value in [-2^(bits-1), 2^(bits-1)-1]; sets
// `clipped` when the value had to be limited (or was NaN).
inline std::int32_t quantize(float y, int bits, bool& clipped) noexcept {
  const double scale = std::ldexp(1.0, bits - 1);
  const double lo = -scale;
  const double hi = scale - 1.0;
  if (std::isnan(y)) {
    clipped = true;
    return 0;
  }
  const double r = std::nearbyint(static_cast<double>(y) * scale);  // ties to even
  if (r < lo) {
    clipped = true;
    return static_cast<std::int32_t>(lo);
  }
  if (r > hi) {
    clipped = true;
    return static_cast<std::int32_t>(hi);
  }
  return static_cast<std::int32_t>(r);
}

}  // namespace sigstream::kernels::cpu
