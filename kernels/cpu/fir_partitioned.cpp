#include "kernels/cpu/fir_partitioned.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

#include "kernels/cpu/pocketfft_local.hpp"

namespace sigstream::kernels::cpu {

#if SIGSTREAM_HAVE_POCKETFFT
struct PartitionedFir::Plan {
  explicit Plan(std::size_t n) : fft(n) {}
  pocketfft::detail::pocketfft_r<float> fft;
  // FFTPACK half-complex (r0, r1, i1, ..., r(N/2)) <-> split re/im of N/2+1 bins.
  static void to_split(const float* hc, int p, float* re, float* im) {
    re[0] = hc[0];
    im[0] = 0.0f;
    for (int k = 1; k < p; ++k) {
      re[k] = hc[2 * k - 1];
      im[k] = hc[2 * k];
    }
    re[p] = hc[2 * p - 1];
    im[p] = 0.0f;
  }
  static void from_split(const float* re, const float* im, int p, float* hc) {
    hc[0] = re[0];
    for (int k = 1; k < p; ++k) {
      hc[2 * k - 1] = re[k];
      hc[2 * k] = im[k];
    }
    hc[2 * p - 1] = re[p];
  }
};
bool PartitionedFir::available() noexcept {
  return true;
}
#else
struct PartitionedFir::Plan {};
bool PartitionedFir::available() noexcept {
  return false;
}
#endif

PartitionedFir::PartitionedFir(const float* h, int taps, int block) : block_(block) {
  if (taps < 1 || block < 1)
    throw Error(ErrorKind::invalid_argument, "partitioned FIR: taps " + std::to_string(taps) +
                                                 ", block " + std::to_string(block) +
                                                 " (expected both >= 1)");
#if SIGSTREAM_HAVE_POCKETFFT
  const int p = block_;
  partitions_ = (taps + p - 1) / p;
  stride_ = (p + 1 + 7) / 8 * 8;
  plan_ = std::make_unique<Plan>(static_cast<std::size_t>(2 * p));
  h_re_.assign(static_cast<std::size_t>(partitions_) * stride_, 0.0f);
  h_im_.assign(h_re_.size(), 0.0f);
  std::vector<float> buf(static_cast<std::size_t>(2 * p));
  const float scale = 1.0f / static_cast<float>(2 * p);
  for (int j = 0; j < partitions_; ++j) {
    std::fill(buf.begin(), buf.end(), 0.0f);
    for (int k = 0; k < p && j * p + k < taps; ++k)
      buf[static_cast<std::size_t>(k)] = h[j * p + k] * scale;
    plan_->fft.exec(buf.data(), 1.0f, true);
    Plan::to_split(buf.data(), p, h_re_.data() + static_cast<std::size_t>(j) * stride_,
                   h_im_.data() + static_cast<std::size_t>(j) * stride_);
  }
#else
  static_cast<void>(h);
  throw Error(ErrorKind::invalid_argument,
              "partitioned FIR: this build has no CPU FFT (pocketfft)");
#endif
}

PartitionedFir::~PartitionedFir() = default;
PartitionedFir::PartitionedFir(PartitionedFir&&) noexcept = default;
PartitionedFir& PartitionedFir::operator=(PartitionedFir&&) noexcept = default;

PartitionedFir::State PartitionedFir::make_state() const {
  State s;
  const auto bins = static_cast<std::size_t>(partitions_) * stride_;
  s.input.assign(static_cast<std::size_t>(2 * block_), 0.0f);
  s.fdl_re.assign(bins, 0.0f);
  s.fdl_im.assign(bins, 0.0f);
  s.acc_re.assign(static_cast<std::size_t>(stride_), 0.0f);
  s.acc_im.assign(static_cast<std::size_t>(stride_), 0.0f);
  s.work.assign(static_cast<std::size_t>(2 * block_), 0.0f);
  s.head = 0;
  return s;
}

void PartitionedFir::process(State& s, const float* x, float* y) const {
#if SIGSTREAM_HAVE_POCKETFFT
  const int p = block_;
  const auto P = static_cast<std::size_t>(p);
  const auto S = static_cast<std::size_t>(stride_);
  // The last 2P samples: the previous block, then this one.
  std::copy(s.input.begin() + static_cast<std::ptrdiff_t>(P), s.input.end(), s.input.begin());
  std::copy(x, x + p, s.input.begin() + static_cast<std::ptrdiff_t>(P));
  std::copy(s.input.begin(), s.input.end(), s.work.begin());
  plan_->fft.exec(s.work.data(), 1.0f, true);
  s.head = s.head == 0 ? partitions_ - 1 : s.head - 1;
  Plan::to_split(s.work.data(), p, s.fdl_re.data() + s.head * S, s.fdl_im.data() + s.head * S);
  float* __restrict ar = s.acc_re.data();
  float* __restrict ai = s.acc_im.data();
  std::fill(ar, ar + S, 0.0f);
  std::fill(ai, ai + S, 0.0f);
  // Partition j meets the spectrum of j blocks ago: ring slot head + j.
  for (int j = 0; j < partitions_; ++j) {
    const int slot = (s.head + j) % partitions_;
    const float* __restrict xr = s.fdl_re.data() + static_cast<std::size_t>(slot) * S;
    const float* __restrict xi = s.fdl_im.data() + static_cast<std::size_t>(slot) * S;
    const float* __restrict hr = h_re_.data() + static_cast<std::size_t>(j) * S;
    const float* __restrict hi = h_im_.data() + static_cast<std::size_t>(j) * S;
    for (std::size_t k = 0; k < S; ++k) {
      ar[k] += xr[k] * hr[k] - xi[k] * hi[k];
      ai[k] += xr[k] * hi[k] + xi[k] * hr[k];
    }
  }
  Plan::from_split(ar, ai, p, s.work.data());
  plan_->fft.exec(s.work.data(), 1.0f, false);
  std::copy(s.work.begin() + static_cast<std::ptrdiff_t>(P), s.work.end(), y);
#else
  static_cast<void>(s);
  static_cast<void>(x);
  static_cast<void>(y);
#endif
}

double PartitionedFir::block_cost_ns() const noexcept {
  // The multiply-accumulate dominates: 8 flops a bin and partition, about
  // 16 flops a ns in AVX2 vectors; two FFTs of 2P points at ~1 ns per point log.
  const double fft = 2.0 * 2 * block_ * std::log2(2.0 * block_) * 1.0;
  return static_cast<double>(partitions_) * stride_ * 8.0 / 16.0 + fft;
}

} // namespace sigstream::kernels::cpu
