#include "kernels/cpu/fir_fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"

#include "kernels/cpu/fft_engine.hpp"

namespace sigstream::kernels::cpu {

namespace {

// Cost model, measured on the development machine (one thread;
// bench/RESULTS-cpu-crossover.md): the direct kernel as fir_direct_ns_per_fma()
// says; the float64 direct kernel (with the conversion of its input) ~0.05 ns
// per tap in its vector blocks and ~1.4 ns in its scalar tail (the last n
// mod 8); the FFT engine's calls as fft::call_cost_ns prices them.
constexpr double kDirect64NsPerFma = 0.05;
constexpr double kDirect64TailNsPerFma = 1.4;
constexpr std::int64_t kMinFftSize = 512; // below this the per-call overhead dominates

// The float64 direct sum that short pieces fall back to.
double short_cost_ns(int taps, std::int64_t n) {
  const std::int64_t tail = n % 8;
  return static_cast<double>(taps) * (kDirect64NsPerFma * static_cast<double>(n - tail) +
                                      kDirect64TailNsPerFma * static_cast<double>(tail));
}

// The block sizes kept for K taps, largest first: N, N/2, N/4, ... while at
// least max(kMinFftSize, 2K).
std::vector<int> level_sizes(int taps, int largest) {
  std::vector<int> sizes{largest};
  const std::int64_t smallest =
      std::max<std::int64_t>(kMinFftSize, 2 * static_cast<std::int64_t>(taps));
  for (std::int64_t n = largest; n % 4 == 0 && n / 2 >= smallest; n /= 2)
    sizes.push_back(static_cast<int>(n / 2));
  return sizes;
}

// The cheapest size for n outputs among `sizes` (0 if none), and its cost.
std::pair<int, double> cheapest(std::span<const int> sizes, int taps, std::int64_t n) {
  int best = 0;
  double best_cost = 0.0;
  for (int nfft : sizes) {
    const std::int64_t per_block = nfft - taps + 1;
    // Full calls of group() blocks, and one call for the rest.
    const std::int64_t group = fft::group();
    const std::int64_t blocks = (n + per_block - 1) / per_block;
    const double cost =
        static_cast<double>(blocks / group) * fft::call_cost_ns(nfft, static_cast<int>(group)) +
        (blocks % group > 0 ? fft::call_cost_ns(nfft, static_cast<int>(blocks % group)) : 0.0);
    if (best == 0 || cost < best_cost) {
      best = nfft;
      best_cost = cost;
    }
  }
  return {best, best_cost};
}

} // namespace

struct FirFft::Scratch::Impl {
  std::vector<double> xd, yd;   // the float64 sum for short pieces
  std::vector<float> pad, last; // a zero-padded last block, its outputs
  std::vector<const float*> in; // one engine call's blocks
  std::vector<float*> out;
  std::vector<std::unique_ptr<fft::BlockFft>> engines; // one per block size used

  fft::BlockFft& engine(int nfft) {
    for (const auto& e : engines)
      if (e->size() == nfft)
        return *e;
    auto e = fft::make(nfft);
    if (!e)
      throw internal_error("fir_fft: no FFT library in this build");
    return *engines.emplace_back(std::move(e));
  }
};

FirFft::Scratch::Scratch() = default;
FirFft::Scratch::~Scratch() = default;
FirFft::Scratch::Scratch(Scratch&&) noexcept = default;
FirFft::Scratch& FirFft::Scratch::operator=(Scratch&&) noexcept = default;

FirFft::FirFft(const float* h, int taps) : FirFft(h, taps, Options{}) {}

FirFft::FirFft(const float* h, int taps, Options options) : short_direct_(options.short_direct) {
  if (taps < 1)
    throw Error(ErrorKind::invalid_argument,
                "fir_fft: taps must be >= 1, got " + std::to_string(taps));
  taps_.assign(h, h + taps);
  taps_f64_.assign(h, h + taps);
  const int largest = options.fft_size > 0 ? options.fft_size : default_fft_size(taps);
  if (largest % 2 != 0 || largest < taps + 1)
    throw Error(ErrorKind::invalid_argument, "fir_fft: fft_size " + std::to_string(largest) +
                                                 " must be even and > taps (" +
                                                 std::to_string(taps) + ")");
  if (fft::available()) {
    const std::vector<int> sizes =
        options.adaptive ? level_sizes(taps, largest) : std::vector<int>{largest};
    std::vector<float> padded;
    for (int nfft : sizes) {
      padded.assign(static_cast<std::size_t>(nfft), 0.0f);
      std::copy(taps_.begin(), taps_.end(), padded.begin());
      // The inverse transform's 1/N goes into the taps' spectrum.
      levels_.push_back(
          Level{nfft, fft::make(nfft)->spectrum(padded.data(), 1.0f / static_cast<float>(nfft))});
      sizes_.push_back(nfft);
    }
  } else {
    levels_.push_back(Level{largest, {}});
    sizes_.push_back(largest);
  }
}

FirFft::~FirFft() = default;
FirFft::FirFft(FirFft&&) noexcept = default;
FirFft& FirFft::operator=(FirFft&&) noexcept = default;

int FirFft::fft_size() const noexcept {
  return levels_.empty() ? 0 : levels_.front().nfft;
}

bool FirFft::available() noexcept {
  return fft::available();
}

const char* FirFft::library() noexcept {
  return fft::library();
}

int FirFft::default_fft_size(int taps) noexcept {
  // The smallest power of two >= 6K measured best: the K - 1 overlap costs
  // under 1/6 of each block; capped where the engine's buffers leave the L2
  // cache, but always > 2K.
  const std::int64_t want =
      std::clamp<std::int64_t>(6 * static_cast<std::int64_t>(taps), kMinFftSize, fft::max_size());
  std::int64_t n = kMinFftSize;
  while (n < want || n < 2 * static_cast<std::int64_t>(taps))
    n *= 2;
  return static_cast<int>(n);
}

double FirFft::direct_cost_ns(int taps, std::int64_t n) noexcept {
  return fir_direct_ns_per_fma() * static_cast<double>(taps) * static_cast<double>(n);
}

double FirFft::fft_cost_ns(int taps, std::int64_t n) noexcept {
  return cheapest(level_sizes(taps, default_fft_size(taps)), taps, n).second;
}

const FirFft::Level* FirFft::level_for(std::int64_t n) const noexcept {
  const auto [nfft, cost] = cheapest(sizes_, taps(), n);
  if (!available() || (short_direct_ && short_cost_ns(taps(), n) <= cost))
    return nullptr;
  for (const Level& l : levels_)
    if (l.nfft == nfft)
      return &l;
  return nullptr;
}

int FirFft::size_for(std::int64_t n) const noexcept {
  const Level* l = level_for(n);
  return l != nullptr ? l->nfft : 0;
}

void FirFft::apply(const float* x, std::int64_t n, float* y, Scratch& scratch) const {
  if (n <= 0)
    return;
  const int k = taps();
  const Level* level = level_for(n);
  if (!scratch.impl_)
    scratch.impl_ = std::make_unique<Scratch::Impl>();
  Scratch::Impl& s = *scratch.impl_;
  if (level == nullptr) {
    // The direct sum in float64: more accurate than the FFT, so chunking
    // (which decides the short pieces) never costs accuracy. In float, a long
    // filter's sum can be off by more than the FFT (~1e-6 at K = 4095).
    s.xd.assign(x, x + n + k - 1);
    s.yd.resize(static_cast<std::size_t>(n));
    fir_direct_f64(s.xd.data(), n, taps_f64_.data(), k, s.yd.data());
    std::copy(s.yd.begin(), s.yd.end(), y);
    return;
  }
  const int nfft = level->nfft;
  const std::int64_t per_block = nfft - k + 1;
  fft::BlockFft& e = s.engine(nfft);
  const int group = e.group();
  const float* h = level->spectrum.data();
  // Block b reads x[b L, b L + N) and gives y[b L, b L + L) (L = N - K + 1):
  // circular wrap-around spoils the first K - 1 samples of its result, the
  // rest are the sums.
  std::vector<const float*>& in = s.in;
  std::vector<float*>& out = s.out;
  in.resize(static_cast<std::size_t>(group));
  out.resize(static_cast<std::size_t>(group));
  const std::int64_t whole = n / per_block;
  const std::int64_t groups = whole / group;
  for (std::int64_t g = 0; g < groups; ++g) {
    for (int j = 0; j < group; ++j) {
      const std::int64_t i0 = (g * group + j) * per_block;
      in[j] = x + i0;
      out[j] = y + i0;
    }
    e.convolve(in.data(), group, h, k - 1, static_cast<int>(per_block), out.data());
  }
  const std::int64_t done = groups * group * per_block;
  if (groups > 0) {
    // The rest is a call of its own: it may be cheaper with smaller blocks,
    // or the direct sum.
    if (done < n)
      apply(x + done, n - done, y + done, scratch);
    return;
  }
  // Fewer blocks than a call takes: one call, the last block zero-padded to
  // N and its outputs kept aside.
  const std::int64_t blocks = (n + per_block - 1) / per_block;
  const std::int64_t m = n - (blocks - 1) * per_block; // outputs of the last block
  s.pad.assign(static_cast<std::size_t>(nfft), 0.0f);
  s.last.resize(static_cast<std::size_t>(per_block));
  for (std::int64_t b = 0; b < blocks; ++b) {
    in[b] = x + b * per_block;
    out[b] = y + b * per_block;
  }
  std::copy(x + (blocks - 1) * per_block, x + n + k - 1, s.pad.begin());
  in[blocks - 1] = s.pad.data();
  out[blocks - 1] = s.last.data();
  e.convolve(in.data(), static_cast<int>(blocks), h, k - 1, static_cast<int>(per_block),
             out.data());
  std::copy(s.last.begin(), s.last.begin() + m, y + (blocks - 1) * per_block);
}

} // namespace sigstream::kernels::cpu
