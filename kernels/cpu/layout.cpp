#include "kernels/cpu/layout.hpp"

#include <cstdint>
#include <type_traits>

namespace sigstream::kernels::cpu {

namespace {

// out[c][i] = p[i * ch + c] * scale, with `ch` a constant where it is 1 or
// 2 (Ch > 0) so that the stride-2 loads vectorise as shuffles: with a
// variable stride GCC loaded each sample on its own (5-8% of a 255-tap
// stereo run). The same arithmetic every way.
template <int Ch, typename T>
[[gnu::always_inline]] inline void deinterleave_planes(const T* p, int ch, std::int64_t n,
                                                       float scale, float* const* out) {
  if constexpr (Ch == 1) {
    for (std::int64_t i = 0; i < n; ++i)
      out[0][i] = static_cast<float>(p[i]) * scale;
  } else if constexpr (Ch == 2) {
    float* a = out[0];
    float* b = out[1];
    for (std::int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(p[2 * i]) * scale;
      b[i] = static_cast<float>(p[2 * i + 1]) * scale;
    }
  } else {
    for (int c = 0; c < ch; ++c)
      for (std::int64_t i = 0; i < n; ++i)
        out[c][i] = static_cast<float>(p[i * ch + c]) * scale;
  }
}

template <typename T>
[[gnu::always_inline]] inline void deinterleave_any(const T* p, int ch, std::int64_t n, float scale,
                                                    float* const* out) {
  if (ch == 1)
    deinterleave_planes<1>(p, ch, n, scale, out);
  else if (ch == 2)
    deinterleave_planes<2>(p, ch, n, scale, out);
  else
    deinterleave_planes<0>(p, ch, n, scale, out);
}

// Built for AVX-512, AVX2 and baseline x86-64 (the same arithmetic every way).
// The clones are file-private, behind the public function: a function
// declared before without target_clones (as in the header) gets no clones
// from clang 14, only the first one's code (AVX-512) and no resolver, which
// stops a clang build (the sanitized one) with SIGILL on a CPU without
// AVX-512.
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void
deinterleave_clones(const HostBlock& in, std::int64_t first, std::int64_t n, float* const* out) {
  const int ch = in.channels;
  switch (in.type) {
    case SampleType::i16:
      deinterleave_any(in.as<std::int16_t>() + first * ch, ch, n, 0x1p-15f, out);
      break;
    case SampleType::i32:
      deinterleave_any(in.as<std::int32_t>() + first * ch, ch, n, 0x1p-31f, out);
      break;
    case SampleType::f32:
      deinterleave_any(in.as<float>() + first * ch, ch, n, 1.0f, out);
      break;
  }
}

[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] std::int64_t
interleave_clones(const float* const* in, std::int64_t n, int bits, HostBlock& out) {
  const int ch = out.channels;
  std::int64_t clipped = 0;
  out.frames = n;
  if (out.type == SampleType::f32) {
    float* p = out.as<float>();
    for (int c = 0; c < ch; ++c)
      for (std::int64_t i = 0; i < n; ++i)
        p[i * ch + c] = in[c][i];
    return 0;
  }
  // The container holds the value left-justified: shift by its width minus bits.
  const int shift = (out.type == SampleType::i16 ? 16 : 32) - bits;
  // Quantize a block of each channel into a small buffer (a branch-free loop
  // that vectorises), then interleave the blocks: one pass over the output,
  // with the mono and stereo cases written so that the stores vectorise too.
  constexpr std::int64_t kStep = 1024;
  constexpr int kMaxBlockChannels = 8;
  const Quantizer quantize(bits);
  // Quantizer's rule written out with plain values (no flag through a
  // reference) so that the compiler vectorises it, in T = double, or, up to
  // 16 bits, in float: the same integers at twice the vector width, since
  // y * 2^(bits-1) is exact in both types (an overflow to Inf clamps as the
  // huge double does), and below 2^22 adding and taking away 1.5 * 2^23
  // rounds half to even as the double's 1.5 * 2^52 does.
  auto quantize_block = [&]<typename T>(const float* src, std::int64_t m, std::int32_t* q,
                                        T round) {
    const auto scale = static_cast<T>(quantize.scale), lo = static_cast<T>(quantize.lo),
               hi = static_cast<T>(quantize.hi);
    int clips = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      T v = static_cast<T>(src[i]) * scale;
      const int nan = v != v;
      v = nan ? T(0) : v;
      v = v < lo - T(1) ? lo - T(1) : v;
      v = v > hi + T(1) ? hi + T(1) : v;
      T r = (v + round) - round;
      clips += nan | (r < lo) | (r > hi);
      r = r < lo ? lo : r;
      r = r > hi ? hi : r;
      // Shift as unsigned: left-shifting a negative value is not portable.
      q[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int32_t>(r))
                                       << shift);
    }
    return clips;
  };
  const bool narrow = bits <= 16;
  std::int32_t q[kMaxBlockChannels][kStep];
  // Rows of `group` channels from q into p (frame stride ch); mono and stereo
  // written out so that the stores vectorise.
  auto scatter = [&](auto* p, int group, std::int64_t m) {
    using T = std::remove_pointer_t<decltype(p)>;
    if (ch == 1) {
      for (std::int64_t i = 0; i < m; ++i)
        p[i] = static_cast<T>(q[0][i]);
    } else if (ch == 2) {
      for (std::int64_t i = 0; i < m; ++i) {
        p[2 * i] = static_cast<T>(q[0][i]);
        p[2 * i + 1] = static_cast<T>(q[1][i]);
      }
    } else {
      for (std::int64_t i = 0; i < m; ++i)
        for (int c = 0; c < group; ++c)
          p[i * ch + c] = static_cast<T>(q[c][i]);
    }
  };
  // Channels in groups of up to kMaxBlockChannels (the output row stride stays ch).
  for (int c0 = 0; c0 < ch; c0 += kMaxBlockChannels) {
    const int group = ch - c0 < kMaxBlockChannels ? ch - c0 : kMaxBlockChannels;
    for (std::int64_t i0 = 0; i0 < n; i0 += kStep) {
      const std::int64_t m = n - i0 < kStep ? n - i0 : kStep;
      for (int c = 0; c < group; ++c)
        clipped += narrow ? quantize_block(in[c0 + c] + i0, m, q[c], 0x1.8p23f)
                          : quantize_block(in[c0 + c] + i0, m, q[c], 0x1.8p52);
      if (out.type == SampleType::i16)
        scatter(out.as<std::int16_t>() + i0 * ch + c0, group, m);
      else
        scatter(out.as<std::int32_t>() + i0 * ch + c0, group, m);
    }
  }
  return clipped;
}

} // namespace

void deinterleave(const HostBlock& in, std::int64_t first, std::int64_t n, float* const* out) {
  deinterleave_clones(in, first, n, out);
}

std::int64_t interleave(const float* const* in, std::int64_t n, int bits, HostBlock& out) {
  return interleave_clones(in, n, bits, out);
}

} // namespace sigstream::kernels::cpu
