#include "kernels/cpu/loudness.hpp"

// Over 600 lines (~830) and one file on purpose: the meter's three paths
// (frames in signal order through add(), pieces measured anywhere through
// measure(), and their hand-over add_measured()) run the same vector kernels
// (k_group, k_run, the tile and interpolator scans), which are target_clones
// functions private to this file; splitting it would export them.
// The note that a 32-byte vector without AVX changes the ABI concerns no
// call here (the vectors stay inside each clone).
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>

namespace sigstream::kernels::cpu {

namespace {

constexpr int kInterpolatorTaps = 49;

double to_loudness(double energy) {
  return 10.0 * std::log10(energy) - 0.691;
}

// The energy of a block at -70 LUFS, the absolute gate.
double absolute_gate() {
  static const double g = std::pow(10.0, (-70.0 + 0.691) / 10.0);
  return g;
}

// BS.1770-4's channel weights by libebur128's default channel map.
double channel_weight(int c, int channels) {
  if (channels == 4)
    return c < 2 ? 1.0 : 1.41; // L R Ls Rs
  if (channels == 5)
    return c < 3 ? 1.0 : 1.41; // L R C Ls Rs
  if (c < 3)
    return 1.0;                         // L R C
  return c == 4 || c == 5 ? 1.41 : 0.0; // the LFE (3) and channels beyond 6: left out
}

// (No helper takes or returns a 32-byte vector: clang refuses such calls
// from the default clone, compiled without AVX.)
using V8f = float __attribute__((vector_size(32)));

// max |x[i]| of each tile of x: out[k] over x[k * tile, min(n, (k + 1) * tile)),
// eight lanes at a time (the compiler keeps a float max reduction scalar:
// NaN and signed zeros forbid it to reorder).
[[gnu::target_clones("arch=x86-64-v3", "default")]] void
tile_abs_max(const float* x, std::int64_t n, std::int64_t tile, float* out) {
  for (std::int64_t i0 = 0; i0 < n; i0 += tile) {
    const std::int64_t m = std::min(tile, n - i0);
    const float* t = x + i0;
    V8f mx{};
    std::int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      V8f a;
      std::memcpy(&a, t + i, sizeof a);
      a = a < 0.0f ? -a : a;
      mx = a > mx ? a : mx;
    }
    float r = 0.0f;
    for (int k = 0; k < 8; ++k)
      r = std::max(r, mx[k]);
    for (; i < m; ++i)
      r = std::max(r, std::abs(t[i]));
    *out++ = r;
  }
}

// max |x[i]| for i < n.
float abs_max(const float* x, std::int64_t n) {
  float r = 0.0f;
  if (n > 0)
    tile_abs_max(x, n, n, &r);
  return r;
}

using V4d = double __attribute__((vector_size(32)));
using V4f = float __attribute__((vector_size(16)));

// max |y[i]| over one phase's outputs y[i] = sum_t coeff[t] * x[i - delay[t]],
// i < n (x holds the delays' history before x[0]), each sum in float64 in
// tap order and rounded to float32 once, as libebur128's interpolator does:
// four outputs at a time, the taps in registers.
[[gnu::target_clones("arch=x86-64-v3", "default")]] float
phase_abs_max(const double* coeff, const int* delay, int taps, const float* x, std::int64_t n) {
  V4f m{};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    V4d acc{};
    for (int t = 0; t < taps; ++t) {
      // (Element by element: GCC 12 makes two half conversions of a
      // __builtin_convertvector from four floats.)
      const float* v = x + i - delay[t];
      acc += coeff[t] * V4d{v[0], v[1], v[2], v[3]};
    }
    const V4f y = __builtin_convertvector(acc, V4f);
    const V4f a = y < 0.0f ? -y : y;
    m = a > m ? a : m;
  }
  float r = 0.0f;
  for (int k = 0; k < 4; ++k)
    r = std::max(r, m[k]);
  for (; i < n; ++i) {
    double acc = 0.0;
    for (int t = 0; t < taps; ++t)
      acc += coeff[t] * static_cast<double>(x[i - delay[t]]);
    r = std::max(r, std::abs(static_cast<float>(acc)));
  }
  return r;
}

} // namespace

namespace {

// *seen = max(*seen, v) (none: nothing).
void raise_to(std::atomic<float>* seen, float v) {
  if (seen == nullptr)
    return;
  float now = seen->load(std::memory_order_relaxed);
  while (v > now && !seen->compare_exchange_weak(now, v, std::memory_order_relaxed)) {
  }
}

// Where any lane of a group (kLanes segments of kSegment frames from frame
// `at`) crosses into a step of `step` frames, or reaches frame `also` (-1:
// none): the cut points within a segment, 0 and kSegment among them, sorted.
void lane_cuts(std::int64_t at, std::int64_t step, std::int64_t also,
               std::vector<std::int64_t>& cut) {
  constexpr std::int64_t L = Bs1770Meter::kSegment;
  cut.assign(1, 0);
  for (int j = 0; j < Bs1770Meter::kLanes; ++j) {
    const std::int64_t start = at + j * L;
    for (std::int64_t i = (step - start % step) % step; i < L; i += step)
      if (i > 0)
        cut.push_back(i);
    if (also > start && also < start + L)
      cut.push_back(also - start);
  }
  cut.push_back(L);
  std::sort(cut.begin(), cut.end());
  cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
}

// run(pair, count) for the channels of non-zero weight, two at a time (the
// K-weighting runs two recursions side by side), the last one alone if odd.
template <class Run> void weighted_pairs(const std::vector<double>& weight, Run&& run) {
  std::size_t pair[2];
  int held = 0;
  for (std::size_t c = 0; c < weight.size(); ++c) {
    if (weight[c] == 0.0)
      continue;
    pair[held++] = c;
    if (held == 2) {
      run(pair, 2);
      held = 0;
    }
  }
  if (held == 1)
    run(pair, 1);
}

// See settle_frames().
std::int64_t settle_of(const double* a, const double* b_in, std::int64_t rate, int history) {
  // The state a full-scale DC input leaves is about the largest this section
  // holds (its poles are at low frequencies): from there, with no input,
  // the frames until the output the state still makes is under 1e-13,
  // in the arithmetic of the recursion itself.
  double v[5] = {};
  const std::int64_t cap = std::max<std::int64_t>(10 * rate, 1 << 16);
  for (std::int64_t i = 0; i < rate; ++i) {
    v[0] = 1.0 - a[1] * v[1] - a[2] * v[2] - a[3] * v[3] - a[4] * v[4];
    std::copy_backward(v, v + 4, v + 5);
  }
  double bmax = 0.0;
  for (int i = 0; i < 5; ++i)
    bmax = std::max(bmax, std::abs(b_in[i]));
  std::int64_t n = 0;
  for (; n < cap; ++n) {
    double m = 0.0;
    for (int i = 1; i < 5; ++i)
      m = std::max(m, std::abs(v[i]));
    if (4.0 * m * bmax < 1e-13)
      break;
    v[0] = -a[1] * v[1] - a[2] * v[2] - a[3] * v[3] - a[4] * v[4];
    std::copy_backward(v, v + 4, v + 5);
  }
  return std::max<std::int64_t>(n, history);
}

} // namespace

Bs1770Meter::Bs1770Meter(int channels, long rate)
    : channels_(channels), step_(std::max<std::int64_t>(1, (rate + 5) / 10)),
      v_(static_cast<std::size_t>(channels), std::array<double, 5>{}),
      acc_(static_cast<std::size_t>(channels), 0.0), pending_(static_cast<std::size_t>(channels)),
      last_(static_cast<std::size_t>(channels)),
      sample_peak_(static_cast<std::size_t>(channels), 0.0),
      true_peak_(static_cast<std::size_t>(channels), 0.0) {
  for (int c = 0; c < channels; ++c)
    weight_.push_back(channel_weight(c, channels));
  // K-weighting: the pre-filter (a high shelf, +4 dB above ~1.7 kHz) and the
  // RLB high-pass (~38 Hz) by the bilinear transform at this rate, as
  // BS.1770's analog parameters give them, multiplied into one section.
  const double pi = std::numbers::pi;
  const auto r = static_cast<double>(rate);
  double k = std::tan(pi * 1681.974450955533 / r);
  double q = 0.7071752369554196;
  const double vh = std::pow(10.0, 3.999843853973347 / 20.0);
  const double vb = std::pow(vh, 0.4996667741545416);
  double d = 1.0 + k / q + k * k;
  const double shelf_b[3] = {(vh + vb * k / q + k * k) / d, 2.0 * (k * k - vh) / d,
                             (vh - vb * k / q + k * k) / d};
  const double shelf_a[3] = {1.0, 2.0 * (k * k - 1.0) / d, (1.0 - k / q + k * k) / d};
  k = std::tan(pi * 38.13547087602444 / r);
  q = 0.5003270373238773;
  d = 1.0 + k / q + k * k;
  const double hp_b[3] = {1.0, -2.0, 1.0};
  const double hp_a[3] = {1.0, 2.0 * (k * k - 1.0) / d, (1.0 - k / q + k * k) / d};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      b_[i + j] += shelf_b[i] * hp_b[j];
      a_[i + j] += shelf_a[i] * hp_a[j];
    }
  sections_ = {Biquad{shelf_b[0], shelf_b[1], shelf_b[2], shelf_a[1], shelf_a[2]},
               Biquad{hp_b[0], hp_b[1], hp_b[2], hp_a[1], hp_a[2]}};
  // The section's state (v1..v4) after a segment of zeros from each unit
  // state, the columns of m_: what carries a segment's start state to its
  // end. In long double: its entries grow with the rate, and so does what a
  // rounding of theirs costs (as a rounding of the state carried: see
  // k_group). Above 192 kHz the states so outgrow the output that a state
  // carried across a segment loses digits (1e-7 LU at 768 kHz, 1e-3 at
  // 2.8 MHz, where libebur128's own recursion agrees within 1e-9 and 3e-7):
  // there the recursion runs one frame after another.
  lanes_ = rate <= 192000;
  for (int col = 0; col < 4; ++col) {
    long double v[5] = {};
    v[col + 1] = 1.0L;
    for (std::int64_t i = 0; i < kSegment; ++i) {
      const long double v0 = -(a_[2] * v[2] + a_[3] * v[3] + a_[4] * v[4]) - a_[1] * v[1];
      for (int r = 4; r > 0; --r)
        v[r] = r > 1 ? v[r - 1] : v0;
    }
    for (int r = 0; r < 4; ++r)
      m_[r * 4 + col] = v[r + 1];
  }
  // True peak: a 49-tap Hann-windowed sinc for 4x (2x from 96 kHz; none from
  // 192 kHz), split into its phases; a phase that is a pure delay (the
  // centre tap alone) gives the input samples, which the sample peak covers.
  factor_ = rate < 96000 ? 4 : rate < 192000 ? 2 : 1;
  if (factor_ > 1) {
    std::vector<Phase> phases(static_cast<std::size_t>(factor_));
    for (int j = 0; j < kInterpolatorTaps; ++j) {
      const double m = j - (kInterpolatorTaps - 1) / 2.0;
      const double arg = m * pi / factor_;
      double c = std::abs(m) > 1e-6 ? std::sin(arg) / arg : 1.0;
      c *= 0.5 * (1.0 - std::cos(2.0 * pi * j / (kInterpolatorTaps - 1)));
      if (std::abs(c) <= 1e-6)
        continue; // the sinc's zeros and the window's ends
      Phase& p = phases[static_cast<std::size_t>(j % factor_)];
      p.coeff.push_back(c);
      p.delay.push_back(j / factor_);
      history_ = std::max(history_, j / factor_);
    }
    for (Phase& p : phases)
      if (!(p.coeff.size() == 1 && p.coeff[0] == 1.0))
        phases_.push_back(std::move(p));
    // The most a phase's output can be per unit of input, with room for
    // float32 rounding of its sum.
    for (const Phase& p : phases_) {
      double g = 0.0;
      for (const double c : p.coeff)
        g += std::abs(c);
      phase_gain_ = std::max(phase_gain_, g * (1.0 + 1e-5));
    }
    for (auto& l : last_)
      l.assign(static_cast<std::size_t>(history_), 0.0f);
  }
  settle_ = settle_of(a_, b_, rate, history_);
}

void Bs1770Meter::add(std::span<const float* const> planes, std::int64_t n) {
  if (n <= 0)
    return;
  settled_.reset();
  for (int c = 0; c < channels_; ++c)
    peaks(c, planes[static_cast<std::size_t>(c)], n);
  done_ += n;
  if (!lanes_) {
    filter_steps(planes, 0, n);
    return;
  }
  // The K-weighting by groups of the signal's grid: a group begun in an
  // earlier call completed from the frames kept, whole groups straight from
  // the planes, the rest kept for the next call.
  std::int64_t at = 0;
  const auto keep = [&](std::int64_t k) {
    for (std::size_t c = 0; c < weight_.size(); ++c)
      if (weight_[c] != 0.0)
        pending_[c].insert(pending_[c].end(), planes[c] + at, planes[c] + at + k);
    at += k;
  };
  const std::int64_t waiting = done_ - n - filtered_;
  if (waiting > 0) {
    keep(std::min(kGroup - waiting, n));
    if (waiting + at < kGroup)
      return;
    std::vector<const float*> kept(weight_.size(), nullptr);
    for (std::size_t c = 0; c < weight_.size(); ++c)
      kept[c] = pending_[c].data();
    filter_group(kept, 0);
    for (std::vector<float>& p : pending_)
      p.clear();
  }
  for (; n - at >= kGroup; at += kGroup)
    filter_group(planes, at);
  keep(n - at);
}

// One channel's K-weighting over n frames, its energy summed on. The
// recursion's chain is one multiply and one subtraction per sample (the
// older states' terms are summed aside), and two channels run side by side.
namespace {

struct KState {
  double v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0, e = 0.0;
};

[[gnu::always_inline]] inline void k_step(KState& s, double x, const double* a, const double* b) {
  const double older = a[2] * s.v2 + a[3] * s.v3 + a[4] * s.v4;
  // One fused multiply-add on the chain: an instruction in the x86-64-v3
  // clone (a libm call in the default one, for CPUs without FMA, before 2013).
  const double v0 = std::fma(-a[1], s.v1, x - older);
  const double y = b[0] * v0 + b[1] * s.v1 + b[2] * s.v2 + b[3] * s.v3 + b[4] * s.v4;
  s.e += y * y;
  s.v4 = s.v3;
  s.v3 = s.v2;
  s.v2 = s.v1;
  s.v1 = v0;
}

// One or two channels' K-weighting over n frames.
// (States and coefficients are copied into locals: through the pointers the
// compiler would store every state to memory at every sample.)
[[gnu::target_clones("arch=x86-64-v3", "default")]] void k_run(KState* states, const float* x0,
                                                               const float* x1, std::int64_t n,
                                                               const double* a_in,
                                                               const double* b_in) {
  const double a[5] = {a_in[0], a_in[1], a_in[2], a_in[3], a_in[4]};
  const double b[5] = {b_in[0], b_in[1], b_in[2], b_in[3], b_in[4]};
  KState s0 = states[0];
  if (x1 != nullptr) {
    KState s1 = states[1];
    for (std::int64_t i = 0; i < n; ++i) {
      k_step(s0, static_cast<double>(x0[i]), a, b);
      k_step(s1, static_cast<double>(x1[i]), a, b);
    }
    states[1] = s1;
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      k_step(s0, static_cast<double>(x0[i]), a, b);
  }
  states[0] = s0;
}

// One channel's K-weighting over a group: x[j * kSegment + i] is lane j's
// frame i. From zero states the lanes' end states (z); the true start states
// from the group's (state) one lane after another, s[j + 1] = m s[j] + z[j]
// (in long double: m's large entries cancel on a smooth state); then the
// lanes from their true states, each cut interval's energy of each lane to
// energy[k * kLanes + j]; state becomes the group's end state. Two vectors
// of four lanes each, so that two recursions interleave. The values differ
// from one frame after another by roundings (1e-11 LU at 192 kHz).
// (Plain multiplies and adds: the compilers make no vector fused
// multiply-add of GNU vectors alike, and the default clone has none.)
[[gnu::target_clones("arch=x86-64-v3", "default")]] void
k_group(const float* x, double* scratch, double* state, const long double* m, const double* a_in,
        const double* b_in, const std::int64_t* cut, int intervals, double* energy) {
  constexpr std::int64_t L = Bs1770Meter::kSegment;
  constexpr int kLanes = Bs1770Meter::kLanes;
  static_assert(kLanes == 8);
  // The lanes interleaved in float64: scratch[i * kLanes + j] = lane j's
  // frame i, four frames of four lanes at a time.
  static_assert(L % 4 == 0);
  for (std::int64_t i = 0; i < L; i += 4)
    for (int h = 0; h < kLanes; h += 4) {
      // (Element by element: GCC 12 makes two half conversions of a
      // __builtin_convertvector from four floats.)
      const float* f0 = x + h * L + i;
      const float* f1 = f0 + L;
      const float* f2 = f1 + L;
      const float* f3 = f2 + L;
      const V4d r0 = {f0[0], f0[1], f0[2], f0[3]};
      const V4d r1 = {f1[0], f1[1], f1[2], f1[3]};
      const V4d r2 = {f2[0], f2[1], f2[2], f2[3]};
      const V4d r3 = {f3[0], f3[1], f3[2], f3[3]};
      const V4d t0 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6);
      const V4d t1 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
      const V4d t2 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6);
      const V4d t3 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
      const V4d c0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
      const V4d c1 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
      const V4d c2 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
      const V4d c3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
      double* o = scratch + i * kLanes + h;
      std::memcpy(o, &c0, sizeof c0);
      std::memcpy(o + kLanes, &c1, sizeof c1);
      std::memcpy(o + 2 * kLanes, &c2, sizeof c2);
      std::memcpy(o + 3 * kLanes, &c3, sizeof c3);
    }
  const double a1 = a_in[1], a2 = a_in[2], a3 = a_in[3], a4 = a_in[4];
  const double b0 = b_in[0], b1 = b_in[1], b2 = b_in[2], b3 = b_in[3], b4 = b_in[4];
  const auto input = [&](std::int64_t i, V4d& lo, V4d& hi) {
    std::memcpy(&lo, scratch + i * kLanes, sizeof lo);
    std::memcpy(&hi, scratch + i * kLanes + 4, sizeof hi);
  };
  // Lanes 0-3 in p, 4-7 in q; p1 = v1 ... p4 = v4.
  V4d p1{}, p2{}, p3{}, p4{}, q1{}, q2{}, q3{}, q4{};
  for (std::int64_t i = 0; i < L; ++i) {
    V4d xl, xh;
    input(i, xl, xh);
    const V4d pv = xl - (a2 * p2 + a3 * p3 + a4 * p4) - a1 * p1;
    const V4d qv = xh - (a2 * q2 + a3 * q3 + a4 * q4) - a1 * q1;
    p4 = p3, p3 = p2, p2 = p1, p1 = pv;
    q4 = q3, q3 = q2, q2 = q1, q1 = qv;
  }
  double s[kLanes][4];
  long double t[4];
  for (int r = 0; r < 4; ++r)
    s[0][r] = state[r], t[r] = state[r];
  for (int j = 0; j + 1 < kLanes; ++j) {
    const V4d& z1 = j < 4 ? p1 : q1;
    const V4d& z2 = j < 4 ? p2 : q2;
    const V4d& z3 = j < 4 ? p3 : q3;
    const V4d& z4 = j < 4 ? p4 : q4;
    const double z[4] = {z1[j % 4], z2[j % 4], z3[j % 4], z4[j % 4]};
    long double u[4];
    for (int r = 0; r < 4; ++r) {
      const long double* row = m + r * 4;
      u[r] = z[r] + (row[0] * t[0] + row[1] * t[1] + row[2] * t[2] + row[3] * t[3]);
    }
    for (int r = 0; r < 4; ++r) {
      t[r] = u[r];
      const auto v = static_cast<double>(u[r]);
      s[j + 1][r] = std::abs(v) < 1e-200 ? 0.0 : v; // no subnormal states (see flush)
    }
  }
  for (int j = 0; j < 4; ++j) {
    p1[j] = s[j][0], p2[j] = s[j][1], p3[j] = s[j][2], p4[j] = s[j][3];
    q1[j] = s[j + 4][0], q2[j] = s[j + 4][1], q3[j] = s[j + 4][2], q4[j] = s[j + 4][3];
  }
  for (int k = 0; k < intervals; ++k) {
    V4d pe{}, qe{};
    for (std::int64_t i = cut[k]; i < cut[k + 1]; ++i) {
      V4d xl, xh;
      input(i, xl, xh);
      const V4d pv = xl - (a2 * p2 + a3 * p3 + a4 * p4) - a1 * p1;
      const V4d qv = xh - (a2 * q2 + a3 * q3 + a4 * q4) - a1 * q1;
      const V4d py = b0 * pv + b1 * p1 + b2 * p2 + b3 * p3 + b4 * p4;
      const V4d qy = b0 * qv + b1 * q1 + b2 * q2 + b3 * q3 + b4 * q4;
      pe += py * py;
      qe += qy * qy;
      p4 = p3, p3 = p2, p2 = p1, p1 = pv;
      q4 = q3, q3 = q2, q2 = q1, q1 = qv;
    }
    for (int j = 0; j < 4; ++j) {
      energy[k * kLanes + j] = pe[j];
      energy[k * kLanes + 4 + j] = qe[j];
    }
  }
  const double end[4] = {q1[3], q2[3], q3[3], q4[3]};
  for (int r = 0; r < 4; ++r)
    state[r] = std::abs(end[r]) < 1e-200 ? 0.0 : end[r];
}

// A state decaying in silence would reach subnormal numbers, which cost
// some hundred times a normal operation: it is flushed to zero first.
inline void flush(KState& s) {
  for (double* v : {&s.v1, &s.v2, &s.v3, &s.v4})
    if (std::abs(*v) < 1e-200)
      *v = 0.0;
}

} // namespace

void Bs1770Meter::filter(std::span<const float* const> planes, std::int64_t at, std::int64_t n) {
  weighted_pairs(weight_, [&](const std::size_t* pair, int count) {
    KState s[2];
    for (int j = 0; j < count; ++j) {
      const std::array<double, 5>& v = v_[pair[j]];
      s[j] = {v[1], v[2], v[3], v[4], acc_[pair[j]]};
    }
    k_run(s, planes[pair[0]] + at, count == 2 ? planes[pair[1]] + at : nullptr, n, a_, b_);
    for (int j = 0; j < count; ++j) {
      flush(s[j]);
      v_[pair[j]] = {0.0, s[j].v1, s[j].v2, s[j].v3, s[j].v4};
      acc_[pair[j]] = s[j].e;
    }
  });
}

// One group of the grid, its frames at planes[c] + at: each weighted
// channel's lanes, then the energies summed on in signal order, a step done
// where one ends.
void Bs1770Meter::filter_group(std::span<const float* const> planes, std::int64_t at) {
  // Where any lane crosses into a step: each lane's energy is cut there.
  lane_cuts(filtered_, step_, -1, cut_);
  const auto intervals = static_cast<int>(cut_.size() - 1);
  const auto per_channel = static_cast<std::size_t>(intervals * kLanes);
  part_.resize(weight_.size() * per_channel);
  scratch_.resize(static_cast<std::size_t>(kGroup));
  for (std::size_t c = 0; c < weight_.size(); ++c) {
    if (weight_[c] == 0.0)
      continue;
    k_group(planes[c] + at, scratch_.data(), v_[c].data() + 1, m_, a_, b_, cut_.data(), intervals,
            part_.data() + c * per_channel);
  }
  for (int j = 0; j < kLanes; ++j)
    for (int k = 0; k < intervals; ++k) {
      for (std::size_t c = 0; c < weight_.size(); ++c)
        if (weight_[c] != 0.0)
          acc_[c] += part_[c * per_channel + static_cast<std::size_t>(k * kLanes + j)];
      if ((filtered_ + j * kSegment + cut_[static_cast<std::size_t>(k) + 1]) % step_ == 0)
        step_done();
    }
  filtered_ += kGroup;
}

// Frames [filtered_, filtered_ + n), at planes[c] + at, one by one.
void Bs1770Meter::filter_steps(std::span<const float* const> planes, std::int64_t at,
                               std::int64_t n) {
  for (const std::int64_t end = at + n; at < end;) {
    // Up to the next 100 ms boundary of the signal's frame grid.
    const std::int64_t k = std::min(step_ - filtered_ % step_, end - at);
    filter(planes, at, k);
    filtered_ += k;
    at += k;
    if (filtered_ % step_ == 0)
      step_done();
  }
}

// The frames waiting for their group (the signal's last), one by one.
void Bs1770Meter::filter_pending() {
  std::vector<const float*> kept(weight_.size(), nullptr);
  for (std::size_t c = 0; c < weight_.size(); ++c)
    kept[c] = pending_[c].data();
  filter_steps(kept, 0, done_ - filtered_);
  for (std::vector<float>& p : pending_)
    p.clear();
}

const Bs1770Meter& Bs1770Meter::settled() const {
  if (filtered_ == done_)
    return *this;
  if (!settled_) {
    auto copy = std::make_shared<Bs1770Meter>(*this);
    copy->settled_.reset();
    copy->filter_pending();
    settled_ = std::move(copy);
  }
  return *settled_;
}

void Bs1770Meter::peaks(int c, const float* x, std::int64_t n) {
  const auto ci = static_cast<std::size_t>(c);
  // Each tile's peak, in one pass over the inputs: the sample peak, and what
  // bounds the interpolator's outputs on the tile.
  constexpr std::int64_t kTile = 64;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  tile_peak_.resize(static_cast<std::size_t>(tiles));
  tile_abs_max(x, n, kTile, tile_peak_.data());
  float peak = 0.0f;
  for (const float p : tile_peak_)
    peak = std::max(peak, p);
  sample_peak_[ci] = std::max(sample_peak_[ci], static_cast<double>(peak));
  if (phases_.empty())
    return;
  // A tile's outputs are at most the peak of its inputs and the history_
  // before them times the largest sum of a phase's |coefficients|: where
  // that cannot pass the peak found so far (any channel's: only the largest
  // is reported) the tile is not interpolated. The result is the same; the
  // work shrinks to the loud tiles.
  double best = 0.0;
  for (std::size_t k = 0; k < sample_peak_.size(); ++k)
    best = std::max({best, sample_peak_[k], true_peak_[k]});
  const auto h = static_cast<std::size_t>(history_);
  static_assert(kTile >= kInterpolatorTaps / 2); // the history_ before a tile is in the one before
  std::vector<float>& last = last_[ci];
  float before = abs_max(last.data(), history_); // the peak of the inputs before the tile
  float tp = 0.0f;
  for (std::int64_t k = 0; k < tiles; ++k) {
    const std::int64_t i0 = k * kTile;
    const std::int64_t m = std::min(kTile, n - i0);
    const float tile = tile_peak_[static_cast<std::size_t>(k)];
    const double reach = static_cast<double>(std::max(before, tile)) * phase_gain_;
    before = tile;
    if (reach <= std::max(best, static_cast<double>(tp)))
      continue;
    // The inputs with the history before them: in[-history_ .. m).
    const float* in = x + i0;
    if (i0 < history_) { // (the first tile) the last inputs of the call before
      window_.resize(h + static_cast<std::size_t>(m));
      std::copy(last.begin(), last.end(), window_.begin());
      std::copy(x, x + m, window_.begin() + static_cast<std::ptrdiff_t>(h));
      in = window_.data() + h;
    }
    for (const Phase& p : phases_)
      tp = std::max(tp, phase_abs_max(p.coeff.data(), p.delay.data(),
                                      static_cast<int>(p.coeff.size()), in, m));
  }
  true_peak_[ci] = std::max(true_peak_[ci], static_cast<double>(tp));
  // The last history_ inputs.
  if (n >= history_) {
    std::copy(x + n - history_, x + n, last.begin());
  } else {
    std::copy(last.begin() + static_cast<std::ptrdiff_t>(n), last.end(), last.begin());
    std::copy(x, x + n, last.end() - static_cast<std::ptrdiff_t>(n));
  }
}

void Bs1770Meter::step_done() {
  double e = 0.0;
  for (std::size_t c = 0; c < acc_.size(); ++c) {
    e += weight_[c] * acc_[c];
    acc_[c] = 0.0;
  }
  steps_[static_cast<std::size_t>(steps_done_ % kRing)] = e;
  ++steps_done_;
  const auto k = steps_done_;
  // The last `count` steps' energy, oldest first, per frame.
  const auto sum_last = [&](std::int64_t count) {
    double s = 0.0;
    for (std::int64_t i = k - count; i < k; ++i)
      s += steps_[static_cast<std::size_t>(i % kRing)];
    return s / static_cast<double>(count * step_);
  };
  if (k >= 4) {
    const double m = sum_last(4);
    if (m >= absolute_gate())
      blocks_.push_back(m);
    if (m > 0.0)
      max_m_ = std::max(max_m_.value_or(to_loudness(m)), to_loudness(m));
  }
  if (k >= 30) {
    const double s = sum_last(30);
    if (s > 0.0)
      max_s_ = std::max(max_s_.value_or(to_loudness(s)), to_loudness(s));
    // EBU Tech 3342: a short-term block every second from 3 s on.
    if ((k - 30) % 10 == 0 && s >= absolute_gate())
      short_blocks_.push_back(s);
  }
}

std::optional<double> Bs1770Meter::integrated() const {
  const std::vector<double>& blocks = settled().blocks_;
  if (blocks.empty())
    return std::nullopt;
  double sum = 0.0;
  for (const double b : blocks)
    sum += b;
  const double relative = sum / static_cast<double>(blocks.size()) * std::pow(10.0, -10.0 / 10.0);
  double gated = 0.0;
  std::size_t n = 0;
  for (const double b : blocks)
    if (b >= relative) {
      gated += b;
      ++n;
    }
  if (n == 0)
    return std::nullopt;
  return to_loudness(gated / static_cast<double>(n));
}

double Bs1770Meter::range() const {
  std::vector<double> v = settled().short_blocks_;
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  double power = 0.0;
  for (const double b : v)
    power += b;
  const double gate = power / static_cast<double>(v.size()) * std::pow(10.0, -20.0 / 10.0);
  const auto first = std::lower_bound(v.begin(), v.end(), gate);
  const auto n = static_cast<std::size_t>(v.end() - first);
  if (n == 0)
    return 0.0;
  const double high = first[static_cast<std::ptrdiff_t>(static_cast<double>(n - 1) * 0.95 + 0.5)];
  const double low = first[static_cast<std::ptrdiff_t>(static_cast<double>(n - 1) * 0.1 + 0.5)];
  return to_loudness(high) - to_loudness(low);
}

void Bs1770Meter::measure(std::span<const float* const> planes, std::int64_t first, std::int64_t n,
                          std::vector<double>& energy, std::vector<double>& sample_peak,
                          std::vector<double>& true_peak, std::atomic<float>* peak_seen) const {
  const std::int64_t steps = steps_touched(first, n);
  const auto ch = static_cast<std::size_t>(channels_);
  energy.assign(ch * static_cast<std::size_t>(steps), 0.0);
  sample_peak.assign(ch, 0.0);
  true_peak.assign(ch, 0.0);
  if (n <= 0)
    return;
  // From rest settle_ frames early (the signal's start if that is nearer:
  // the zeros before it leave the filter at rest), frames before `first`
  // counted in no step.
  const std::int64_t from = std::max<std::int64_t>(first - settle_, 0);
  const std::int64_t end = first + n;
  const auto slot = [&](std::size_t c, std::int64_t at) -> double& {
    return energy[c * static_cast<std::size_t>(steps) +
                  static_cast<std::size_t>(at / step_ - first / step_)];
  };
  const auto frame = [&](std::size_t c, std::int64_t at) { return planes[c] + (at - first); };
  // Whole groups in lanes (k_group, as filter_group runs it), cut where a
  // lane crosses a step or `first`; the same groups for every channel.
  std::int64_t at = from;
  std::vector<std::array<double, 4>> state(ch, std::array<double, 4>{});
  std::vector<double> scratch, part;
  std::vector<std::int64_t> cut;
  for (; lanes_ && end - at >= kGroup; at += kGroup) {
    lane_cuts(at, step_, first, cut);
    const auto intervals = static_cast<int>(cut.size() - 1);
    scratch.resize(static_cast<std::size_t>(kGroup));
    part.resize(static_cast<std::size_t>(intervals * kLanes));
    for (std::size_t c = 0; c < ch; ++c) {
      if (weight_[c] == 0.0)
        continue;
      k_group(frame(c, at), scratch.data(), state[c].data(), m_, a_, b_, cut.data(), intervals,
              part.data());
      for (int j = 0; j < kLanes; ++j)
        for (int k = 0; k < intervals; ++k)
          if (const std::int64_t g = at + j * kSegment + cut[static_cast<std::size_t>(k)];
              g >= first)
            slot(c, g) += part[static_cast<std::size_t>(k * kLanes + j)];
    }
  }
  // The rest one frame after another, two channels side by side, a step
  // (or the frames before `first`) at a time.
  weighted_pairs(weight_, [&](const std::size_t* pair, int count) {
    KState st[2];
    for (int k = 0; k < count; ++k) {
      const std::array<double, 4>& v = state[pair[k]];
      st[k] = {v[0], v[1], v[2], v[3], 0.0};
    }
    for (std::int64_t i = at; i < end;) {
      const std::int64_t next = std::min(i < first ? first : end, (i / step_ + 1) * step_);
      st[0].e = st[1].e = 0.0;
      k_run(st, frame(pair[0], i), count == 2 ? frame(pair[1], i) : nullptr, next - i, a_, b_);
      for (int k = 0; k < count; ++k) {
        flush(st[k]);
        if (i >= first)
          slot(pair[k], i) += st[k].e;
      }
      i = next;
    }
  });
  // The peaks. The interpolator skips the tiles whose inputs cannot pass the
  // largest peak seen so far, this call's or (peak_seen) any call's of the
  // signal: only the largest of all is read, and it is found either way.
  const auto seen = [&] {
    return peak_seen != nullptr ? static_cast<double>(peak_seen->load(std::memory_order_relaxed))
                                : 0.0;
  };
  // Each tile's input peak in one pass: the sample peak, and (with the
  // tile before, which holds its history) what bounds a tile's outputs.
  constexpr std::int64_t kTile = 64;
  static_assert(kTile >= kInterpolatorTaps / 2); // a tile's history lies in the tile before
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  std::vector<std::vector<float>> tile_peak(ch,
                                            std::vector<float>(static_cast<std::size_t>(tiles)));
  for (std::size_t c = 0; c < ch; ++c) {
    tile_abs_max(planes[c], n, kTile, tile_peak[c].data());
    sample_peak[c] = *std::max_element(tile_peak[c].begin(), tile_peak[c].end());
  }
  const double sp = *std::max_element(sample_peak.begin(), sample_peak.end());
  raise_to(peak_seen, static_cast<float>(sp));
  if (phases_.empty())
    return;
  for (std::size_t c = 0; c < ch; ++c) {
    const float* x = planes[c];
    const std::vector<float>& tp_in = tile_peak[c];
    float tp = 0.0f;
    for (std::int64_t k = 0; k < tiles; ++k) {
      const std::int64_t i0 = k * kTile;
      const std::int64_t m = std::min(kTile, n - i0);
      const float before =
          k > 0 ? tp_in[static_cast<std::size_t>(k - 1)] : abs_max(x - history_, history_);
      const double reach =
          static_cast<double>(std::max(before, tp_in[static_cast<std::size_t>(k)])) * phase_gain_;
      if (reach <= std::max({sp, static_cast<double>(tp), seen()}))
        continue;
      for (const Phase& p : phases_)
        tp = std::max(tp, phase_abs_max(p.coeff.data(), p.delay.data(),
                                        static_cast<int>(p.coeff.size()), x + i0, m));
    }
    true_peak[c] = tp;
    raise_to(peak_seen, tp);
  }
}

void Bs1770Meter::add_measured(std::int64_t n, std::span<const double> energy,
                               std::span<const double> sample_peak,
                               std::span<const double> true_peak) {
  const std::int64_t steps = steps_touched(done_, n);
  const auto ch = static_cast<std::size_t>(channels_);
  if (n < 0 || energy.size() != ch * static_cast<std::size_t>(steps) || sample_peak.size() != ch ||
      true_peak.size() != ch)
    throw std::invalid_argument("Bs1770Meter::add_measured: sizes do not match");
  settled_.reset();
  // Frames still waiting for their group (a CPU's chunk before, on the
  // hybrid backend) are filtered first: the energies go on in signal order.
  if (filtered_ < done_)
    filter_pending();
  for (std::size_t c = 0; c < ch; ++c) {
    sample_peak_[c] = std::max(sample_peak_[c], sample_peak[c]);
    true_peak_[c] = std::max(true_peak_[c], true_peak[c]);
  }
  std::int64_t at = 0;
  for (std::int64_t k = 0; k < steps; ++k) {
    for (std::size_t c = 0; c < ch; ++c)
      if (weight_[c] != 0.0)
        acc_[c] += energy[c * static_cast<std::size_t>(steps) + static_cast<std::size_t>(k)];
    const std::int64_t m = std::min(step_ - done_ % step_, n - at);
    done_ += m;
    filtered_ += m;
    at += m;
    if (done_ % step_ == 0)
      step_done();
  }
}

double Bs1770Meter::true_peak() const noexcept {
  double p = 0.0;
  for (std::size_t c = 0; c < sample_peak_.size(); ++c)
    p = std::max({p, sample_peak_[c], true_peak_[c]});
  return p;
}

} // namespace sigstream::kernels::cpu
