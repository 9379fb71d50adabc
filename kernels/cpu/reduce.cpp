#include "kernels/cpu/reduce.hpp"

#include <cstdint>
#include <cstring>

// The helpers below are inlined into each clone; the note that returning a
// 32-byte vector without AVX changes the ABI concerns calls that never happen.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace sigstream::kernels::cpu {

namespace {

// Eight interleaved partial sums (lane j takes samples i with i % 8 == j),
// kept as two 4-wide vectors of doubles per quantity: the lanes never mix
// until the end, where they are combined in a fixed order, so the result is
// the same on every run and with every instruction set (SSE2, AVX2, AVX-512
// clones below), and the same as a scalar loop over the lanes would give.
// Written with GCC/Clang vector types: the auto-vectoriser turned the lane
// loop into scalar code with the accumulators in memory.
using V4f = float __attribute__((vector_size(16)));
using V4u = std::uint32_t __attribute__((vector_size(16)));
using V4i = std::int32_t __attribute__((vector_size(16)));
using V4d = double __attribute__((vector_size(32)));

struct Acc {
  V4d energy{}, sum{}, dot{}, src{}, peak{};
  V4d bad{}; // counts, as doubles (exact below 2^53)
};

// Non-finite samples count in `nonfinite` (of y) and enter the sums as 0, so
// one bad sample does not turn every statistic into NaN; a non-finite source
// sample enters dot and the source energy as 0. Finiteness is a bit test (an
// exponent of all ones is NaN or Inf) and the zeroing a mask: no branches.
inline V4d finite_or_zero(V4f v, V4i& ok) {
  V4u b;
  std::memcpy(&b, &v, sizeof b);
  ok = (b & 0x7f800000u) != 0x7f800000u; // -1 where finite, 0 where not
  const V4u kept = b & reinterpret_cast<V4u&>(ok);
  V4f f;
  std::memcpy(&f, &kept, sizeof f);
  return __builtin_convertvector(f, V4d);
}

// One step of four samples. Masked: the rule above. Unmasked: the same
// arithmetic without the finiteness tests, exact wherever every sample is
// finite (the mask is then the identity); the caller checks that the sums
// stayed finite, which they do exactly when every sample was (a float's
// square is below 2^256, far inside a double), and reruns masked otherwise.
template <bool Masked> [[gnu::always_inline]] inline void step(Acc& a, V4f yf, V4f xf) {
  V4d f, s;
  V4i y_ok{}, x_ok{};
  if constexpr (Masked) {
    f = finite_or_zero(yf, y_ok);
    s = finite_or_zero(xf, x_ok);
  } else {
    f = __builtin_convertvector(yf, V4d);
    s = __builtin_convertvector(xf, V4d);
  }
  a.energy += f * f;
  a.sum += f;
  a.dot += s * f;
  a.src += s * s;
  const V4d mag = f < 0.0 ? -f : f;
  a.peak = mag > a.peak ? mag : a.peak;
  if constexpr (Masked)
    a.bad += __builtin_convertvector(y_ok + 1, V4d); // 0 where finite, 1 where not
}

inline V4f load4(const float* p) {
  V4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <bool Masked>
[[gnu::always_inline]] inline void accumulate(Acc& lo, Acc& hi, const float* y, const float* x,
                                              std::int64_t n) {
  const V4f zero{};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    step<Masked>(lo, load4(y + i), x != nullptr ? load4(x + i) : zero);
    step<Masked>(hi, load4(y + i + 4), x != nullptr ? load4(x + i + 4) : zero);
  }
  // The tail (n % 8 samples) goes to lanes 0, 1, ... as a scalar loop would.
  if (i < n) {
    float yt[8] = {}, xt[8] = {};
    const auto m = static_cast<std::size_t>(n - i);
    std::memcpy(yt, y + i, m * sizeof(float));
    if (x != nullptr)
      std::memcpy(xt, x + i, m * sizeof(float));
    // Padding lanes see 0 for y and x: they add 0 to every sum and to peak,
    // and count as finite.
    step<Masked>(lo, load4(yt), load4(xt));
    step<Masked>(hi, load4(yt + 4), load4(xt + 4));
  }
}

[[gnu::always_inline]] inline bool sums_finite(const Acc& a) {
  const V4d t = a.energy + a.sum + a.dot + a.src; // NaN or Inf if any one is
  for (int k = 0; k < 4; ++k)
    if (!(t[k] - t[k] == 0.0))
      return false;
  return true;
}

// The clones are file-private, behind the public function: a function
// declared before without target_clones (as in the header) gets no clones
// from clang 14, only the first one's code (AVX-512) and no resolver, which
// stops a clang build (the sanitized one) with SIGILL on a CPU without
// AVX-512.
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] ChannelMetrics
channel_metrics_clones(const float* y, const float* x, std::int64_t n) {
  Acc lo, hi; // lanes 0-3 and 4-7
  accumulate<false>(lo, hi, y, x, n);
  if (!sums_finite(lo) || !sums_finite(hi)) {
    lo = hi = Acc{};
    accumulate<true>(lo, hi, y, x, n);
  }

  ChannelMetrics m;
  m.frames = n;
  double bad = 0.0;
  for (int j = 0; j < 8; ++j) {
    const Acc& a = j < 4 ? lo : hi;
    const int k = j % 4;
    m.energy += a.energy[k];
    m.sum += a.sum[k];
    m.dot += a.dot[k];
    m.source_energy += a.src[k];
    m.peak = a.peak[k] > m.peak ? a.peak[k] : m.peak;
    bad += a.bad[k];
  }
  m.nonfinite = static_cast<std::int64_t>(bad);
  return m;
}

} // namespace

ChannelMetrics channel_metrics(const float* y, const float* x, std::int64_t n) {
  return channel_metrics_clones(y, x, n);
}

} // namespace sigstream::kernels::cpu
