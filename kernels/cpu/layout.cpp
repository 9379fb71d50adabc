#include "kernels/cpu/layout.hpp"

#include <cstdint>

namespace sigstream::kernels::cpu {

// Built for AVX-512, AVX2 and baseline x86-64 (the same arithmetic every way).
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
void deinterleave(const HostBlock& in, std::int64_t first, std::int64_t n, float* const* out) {
  const int ch = in.channels;
  switch (in.type) {
    case SampleType::i16: {
      const std::int16_t* p = in.as<std::int16_t>() + first * ch;
      for (int c = 0; c < ch; ++c)
        for (std::int64_t i = 0; i < n; ++i) out[c][i] = static_cast<float>(p[i * ch + c]) * 0x1p-15f;
      break;
    }
    case SampleType::i32: {
      const std::int32_t* p = in.as<std::int32_t>() + first * ch;
      for (int c = 0; c < ch; ++c)
        for (std::int64_t i = 0; i < n; ++i) out[c][i] = static_cast<float>(p[i * ch + c]) * 0x1p-31f;
      break;
    }
    case SampleType::f32: {
      const float* p = in.as<float>() + first * ch;
      for (int c = 0; c < ch; ++c)
        for (std::int64_t i = 0; i < n; ++i) out[c][i] = p[i * ch + c];
      break;
    }
  }
}

[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
std::int64_t interleave(const float* const* in, std::int64_t n, int bits, HostBlock& out) {
  const int ch = out.channels;
  std::int64_t clipped = 0;
  out.frames = n;
  if (out.type == SampleType::f32) {
    float* p = out.as<float>();
    for (int c = 0; c < ch; ++c)
      for (std::int64_t i = 0; i < n; ++i) p[i * ch + c] = in[c][i];
    return 0;
  }
  // The container holds the value left-justified: shift by its width minus bits.
  const int shift = (out.type == SampleType::i16 ? 16 : 32) - bits;
  // Quantize a channel at a time into a small buffer (a branch-free loop that
  // vectorises), then scatter into the interleaved block.
  constexpr std::int64_t kStep = 1024;
  std::int32_t q[kStep];
  const Quantizer quantize(bits);
  for (int c = 0; c < ch; ++c) {
    for (std::int64_t i0 = 0; i0 < n; i0 += kStep) {
      const std::int64_t m = n - i0 < kStep ? n - i0 : kStep;
      const float* src = in[c] + i0;
      // Quantizer's rule written out with plain values (no flag through a
      // reference) so that the compiler vectorises it.
      int clips = 0;
      const double scale = quantize.scale, lo = quantize.lo, hi = quantize.hi;
      for (std::int64_t i = 0; i < m; ++i) {
        double v = static_cast<double>(src[i]) * scale;
        const int nan = v != v;
        v = nan ? 0.0 : v;
        v = v < lo - 1.0 ? lo - 1.0 : v;
        v = v > hi + 1.0 ? hi + 1.0 : v;
        double r = (v + 0x1.8p52) - 0x1.8p52;
        clips += nan | (r < lo) | (r > hi);
        r = r < lo ? lo : r;
        r = r > hi ? hi : r;
        // Shift as unsigned: left-shifting a negative value is not portable.
        q[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int32_t>(r)) << shift);
      }
      clipped += clips;
      if (out.type == SampleType::i16) {
        std::int16_t* p = out.as<std::int16_t>() + i0 * ch + c;
        for (std::int64_t i = 0; i < m; ++i) p[i * ch] = static_cast<std::int16_t>(q[i]);
      } else {
        std::int32_t* p = out.as<std::int32_t>() + i0 * ch + c;
        for (std::int64_t i = 0; i < m; ++i) p[i * ch] = q[i];
      }
    }
  }
  return clipped;
}

}  // namespace sigstream::kernels::cpu
