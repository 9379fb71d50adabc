#include "kernels/cpu/layout.hpp"

#include <cstdint>

namespace sigstream::kernels::cpu {

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
  for (int c = 0; c < ch; ++c) {
    for (std::int64_t i = 0; i < n; ++i) {
      bool clip = false;
      const std::int32_t q = quantize(in[c][i], bits, clip);
      clipped += clip ? 1 : 0;
      // Shift as unsigned: left-shifting a negative value is not portable C++17.
      const auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(q) << shift);
      if (out.type == SampleType::i16)
        out.as<std::int16_t>()[i * ch + c] = static_cast<std::int16_t>(v);
      else
        out.as<std::int32_t>()[i * ch + c] = v;
    }
  }
  return clipped;
}

}  // namespace sigstream::kernels::cpu
