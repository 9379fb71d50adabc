#include "kernels/cpu/fir_fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <span>
#include <string>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"

#if SIGSTREAM_HAVE_FFTW
#include <fftw3.h>

#include <map>
#include <mutex>
#include <new>
#elif SIGSTREAM_HAVE_KISSFFT
#include <kissfft/kiss_fftr.h>
#endif

namespace sigstream::kernels::cpu {

namespace {

// Cost model, measured on the development machine (Xeon, AVX-512, one
// thread; bench/RESULTS-cpu-crossover.md): the direct kernel runs ~40 GFMA/s;
// a KissFFT forward + inverse real transform pair of N points plus the
// spectrum product costs ~0.75 ns * N * log2(N) for N = 2^9 .. 2^17; the
// float64 direct kernel (with the conversion of its input) ~0.05 ns per tap
// in its vector blocks and ~1.4 ns in its scalar tail (the last n mod 8).
constexpr double kDirectNsPerFma = 0.025;
#if SIGSTREAM_HAVE_FFTW
// FFTW (plans with FFTW_ESTIMATE, AVX2): a 32768-point real pair ~130 us here.
constexpr double kFftNsPerPointLog = 0.28;
#else
constexpr double kFftNsPerPointLog = 0.75;
#endif
constexpr double kDirect64NsPerFma = 0.05;
constexpr double kDirect64TailNsPerFma = 1.4;
constexpr std::int64_t kMaxFftSize = 1 << 17;  // beyond this the transform leaves the L2 cache
constexpr std::int64_t kMinFftSize = 512;       // below this the per-call overhead dominates

double pair_cost_ns(int nfft) {
  return kFftNsPerPointLog * nfft * std::log2(static_cast<double>(nfft));
}

// The float64 direct sum that short pieces fall back to.
double short_cost_ns(int taps, std::int64_t n) {
  const std::int64_t tail = n % 8;
  return static_cast<double>(taps) *
         (kDirect64NsPerFma * static_cast<double>(n - tail) + kDirect64TailNsPerFma * static_cast<double>(tail));
}

// The block sizes kept for K taps, largest first: N, then N/4, N/16, ...
// (the same radix-4 shape) while at least max(kMinFftSize, 2K).
std::vector<int> level_sizes(int taps, int largest) {
  std::vector<int> sizes{largest};
  const std::int64_t smallest = std::max<std::int64_t>(kMinFftSize, 2 * static_cast<std::int64_t>(taps));
  for (std::int64_t n = largest; n % 8 == 0 && n / 4 >= smallest; n /= 4) sizes.push_back(static_cast<int>(n / 4));
  return sizes;
}

// The cheapest size for n outputs among `sizes` (0 if none), and its cost.
std::pair<int, double> cheapest(std::span<const int> sizes, int taps, std::int64_t n) {
  int best = 0;
  double best_cost = 0.0;
  for (int nfft : sizes) {
    const std::int64_t per_block = nfft - taps + 1;
    const std::int64_t blocks = (n + per_block - 1) / per_block;
    const double cost = static_cast<double>(blocks) * pair_cost_ns(nfft);
    if (best == 0 || cost < best_cost) {
      best = nfft;
      best_cost = cost;
    }
  }
  return {best, best_cost};
}

}  // namespace

#if SIGSTREAM_HAVE_FFTW || SIGSTREAM_HAVE_KISSFFT
#define SIGSTREAM_HAVE_CPU_FFT 1
#endif

namespace {

#if SIGSTREAM_HAVE_FFTW

// FFTW: plans are made once per size for the whole process, under a lock
// (FFTW's planner is not thread-safe), and shared: executing a plan on other
// arrays is thread-safe when they have the alignment of the planning arrays,
// which fftwf_alloc_* buffers have. FFTW_ESTIMATE: planning takes
// microseconds, and FFTW_MEASURE (over a second at 32768 points) ran no
// faster in bench/RESULTS.md's measurement.
struct FftwPlans {
  fftwf_plan forward = nullptr, inverse = nullptr;
};

const FftwPlans& fftw_plans(int nfft) {
  static std::mutex mutex;
  static std::map<int, FftwPlans> cache;  // kept for the life of the process
  std::lock_guard lock(mutex);
  FftwPlans& p = cache[nfft];
  if (p.forward == nullptr) {
    float* t = fftwf_alloc_real(static_cast<std::size_t>(nfft));
    fftwf_complex* f = fftwf_alloc_complex(static_cast<std::size_t>(nfft / 2 + 1));
    if (t != nullptr && f != nullptr) {
      p.forward = fftwf_plan_dft_r2c_1d(nfft, t, f, FFTW_ESTIMATE);
      p.inverse = fftwf_plan_dft_c2r_1d(nfft, f, t, FFTW_ESTIMATE);
    }
    fftwf_free(t);
    fftwf_free(f);
    if (p.forward == nullptr || p.inverse == nullptr) {
      cache.erase(nfft);
      throw internal_error("fir_fft: FFTW could not plan " + std::to_string(nfft) + " points");
    }
  }
  return p;
}

struct FftwFree {
  void operator()(void* p) const noexcept { fftwf_free(p); }
};

// One thread's transforms of one size: a real block buffer and its spectrum.
class Engine {
 public:
  explicit Engine(int nfft)
      : nfft_(nfft),
        plans_(&fftw_plans(nfft)),
        time_(fftwf_alloc_real(static_cast<std::size_t>(nfft))),
        freq_(fftwf_alloc_complex(static_cast<std::size_t>(nfft / 2 + 1))) {
    if (!time_ || !freq_) throw std::bad_alloc();
  }
  [[nodiscard]] int size() const noexcept { return nfft_; }
  [[nodiscard]] float* time() noexcept { return time_.get(); }
  [[nodiscard]] float* spectrum() noexcept { return reinterpret_cast<float*>(freq_.get()); }
  // FFTW reads only its own (aligned) buffer: blocks are copied into time().
  static constexpr bool kReadsInPlace = false;
  void forward(const float* /*time() itself*/) { fftwf_execute_dft_r2c(plans_->forward, time_.get(), freq_.get()); }
  void inverse() { fftwf_execute_dft_c2r(plans_->inverse, freq_.get(), time_.get()); }

 private:
  int nfft_;
  const FftwPlans* plans_;
  std::unique_ptr<float, FftwFree> time_;
  std::unique_ptr<fftwf_complex, FftwFree> freq_;
};

#elif SIGSTREAM_HAVE_KISSFFT

struct KissFree {
  void operator()(void* p) const noexcept { std::free(p); }
};
using FftrCfg = std::unique_ptr<kiss_fftr_state, KissFree>;

FftrCfg make_cfg(int nfft, bool inverse) {
  FftrCfg cfg(kiss_fftr_alloc(nfft, inverse ? 1 : 0, nullptr, nullptr));
  if (!cfg) throw internal_error("fir_fft: kiss_fftr_alloc(" + std::to_string(nfft) + ") failed");
  return cfg;
}

// One thread's transforms of one size (KissFFT configurations keep a work
// buffer, so each thread needs its own): a real block buffer and its spectrum.
class Engine {
 public:
  explicit Engine(int nfft)
      : nfft_(nfft),
        forward_(make_cfg(nfft, false)),
        inverse_(make_cfg(nfft, true)),
        time_(static_cast<std::size_t>(nfft)),
        freq_(static_cast<std::size_t>(nfft / 2 + 1)) {}
  [[nodiscard]] int size() const noexcept { return nfft_; }
  [[nodiscard]] float* time() noexcept { return time_.data(); }
  [[nodiscard]] float* spectrum() noexcept { return reinterpret_cast<float*>(freq_.data()); }
  // KissFFT reads a full block where it lies in the input.
  static constexpr bool kReadsInPlace = true;
  void forward(const float* in) { kiss_fftr(forward_.get(), in, freq_.data()); }
  void inverse() { kiss_fftri(inverse_.get(), freq_.data(), time_.data()); }

 private:
  int nfft_;
  FftrCfg forward_, inverse_;
  std::vector<float> time_;
  std::vector<kiss_fft_cpx> freq_;
};

#endif

}  // namespace

#if SIGSTREAM_HAVE_CPU_FFT

struct FirFft::Scratch::Impl {
  std::vector<double> xd, yd;  // the float64 sum for short pieces
  std::deque<Engine> engines;  // a deque: references stay valid as sizes are added

  Engine& engine(int nfft) {
    for (Engine& e : engines)
      if (e.size() == nfft) return e;
    return engines.emplace_back(nfft);
  }
};

#else

struct FirFft::Scratch::Impl {
  std::vector<double> xd, yd;
};

#endif

FirFft::Scratch::Scratch() = default;
FirFft::Scratch::~Scratch() = default;
FirFft::Scratch::Scratch(Scratch&&) noexcept = default;
FirFft::Scratch& FirFft::Scratch::operator=(Scratch&&) noexcept = default;

FirFft::FirFft(const float* h, int taps) : FirFft(h, taps, Options{}) {}

FirFft::FirFft(const float* h, int taps, Options options) : short_direct_(options.short_direct) {
  if (taps < 1) throw Error(ErrorKind::invalid_argument, "fir_fft: taps must be >= 1, got " + std::to_string(taps));
  taps_.assign(h, h + taps);
  taps_f64_.assign(h, h + taps);
  const int largest = options.fft_size > 0 ? options.fft_size : default_fft_size(taps);
  if (largest % 2 != 0 || largest < taps + 1)
    throw Error(ErrorKind::invalid_argument, "fir_fft: fft_size " + std::to_string(largest) +
                                                 " must be even and > taps (" + std::to_string(taps) + ")");
#if SIGSTREAM_HAVE_CPU_FFT
  const std::vector<int> sizes = options.adaptive ? level_sizes(taps, largest) : std::vector<int>{largest};
  for (int nfft : sizes) {
    Engine e(nfft);
    std::fill(e.time(), e.time() + nfft, 0.0f);
    std::copy(taps_.begin(), taps_.end(), e.time());
    e.forward(e.time());
    const float* spec = e.spectrum();
    Level level;
    level.nfft = nfft;
    level.spectrum.resize(static_cast<std::size_t>(nfft + 2));
    const float scale = 1.0f / static_cast<float>(nfft);
    for (std::size_t j = 0; j < level.spectrum.size(); ++j) level.spectrum[j] = spec[j] * scale;
    levels_.push_back(std::move(level));
    sizes_.push_back(nfft);
  }
#else
  levels_.push_back(Level{largest, {}});
  sizes_.push_back(largest);
#endif
}

FirFft::~FirFft() = default;
FirFft::FirFft(FirFft&&) noexcept = default;
FirFft& FirFft::operator=(FirFft&&) noexcept = default;

int FirFft::fft_size() const noexcept { return levels_.empty() ? 0 : levels_.front().nfft; }

bool FirFft::available() noexcept {
#if SIGSTREAM_HAVE_CPU_FFT
  return true;
#else
  return false;
#endif
}

const char* FirFft::library() noexcept {
#if SIGSTREAM_HAVE_FFTW
  return "FFTW 3 (GPL)";
#elif SIGSTREAM_HAVE_KISSFFT
  return "KissFFT (BSD)";
#else
  return "none";
#endif
}

int FirFft::default_fft_size(int taps) noexcept {
  // Sizes N = 2 * 4^j: the real transform runs a complex one of N/2 = 4^j
  // points, all radix-4 butterflies, KissFFT's fastest shape (N = 4^j, with a
  // radix-2 pass, is 15-20% slower per output here). The smallest such N >= 6K
  // measured best: the K - 1 overlap costs under 1/6 of each block, and the
  // block stays in the L2 cache up to 2^17.
  const std::int64_t want = std::clamp<std::int64_t>(6 * static_cast<std::int64_t>(taps), kMinFftSize, kMaxFftSize);
  std::int64_t n = 2;
  while (n < want || n < 2 * static_cast<std::int64_t>(taps)) n *= 4;
  return static_cast<int>(n);
}

double FirFft::direct_cost_ns(int taps, std::int64_t n) noexcept {
  return kDirectNsPerFma * static_cast<double>(taps) * static_cast<double>(n);
}

double FirFft::fft_cost_ns(int taps, std::int64_t n) noexcept {
  return cheapest(level_sizes(taps, default_fft_size(taps)), taps, n).second;
}

const FirFft::Level* FirFft::level_for(std::int64_t n) const noexcept {
  const auto [nfft, cost] = cheapest(sizes_, taps(), n);
  if (!available() || (short_direct_ && short_cost_ns(taps(), n) <= cost)) return nullptr;
  for (const Level& l : levels_)
    if (l.nfft == nfft) return &l;
  return nullptr;
}

int FirFft::size_for(std::int64_t n) const noexcept {
  const Level* l = level_for(n);
  return l != nullptr ? l->nfft : 0;
}

void FirFft::apply(const float* x, std::int64_t n, float* y, Scratch& scratch) const {
  if (n <= 0) return;
  const int k = taps();
  const Level* level = level_for(n);
  if (!scratch.impl_) scratch.impl_ = std::make_unique<Scratch::Impl>();
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
#if SIGSTREAM_HAVE_CPU_FFT
  const int nfft = level->nfft;
  const std::int64_t per_block = nfft - k + 1;
  Engine& e = s.engine(nfft);
  float* buf = e.time();
  float* spec = e.spectrum();
  const float* h = level->spectrum.data();
  const std::size_t bins = static_cast<std::size_t>(nfft / 2 + 1);

  // Whole blocks of this size; a remainder shorter than a block is a call of
  // its own (it may be cheaper with a smaller block, or the direct sum).
  const std::int64_t whole = n / per_block * per_block;
  const std::int64_t end = whole > 0 ? whole : n;
  for (std::int64_t i0 = 0; i0 < end; i0 += per_block) {
    const std::int64_t m = std::min(per_block, end - i0);
    // The block's input is x[i0, i0 + m + K - 1); a full block is read in
    // place where the library allows it, the last one is zero-padded to N.
    const float* in = x + i0;
    if (m < per_block || !Engine::kReadsInPlace) {
      const std::size_t avail = static_cast<std::size_t>(m + k - 1);
      std::memcpy(buf, in, avail * sizeof(float));
      std::fill(buf + avail, buf + nfft, 0.0f);
      in = buf;
    }
    e.forward(in);
    for (std::size_t j = 0; j < bins; ++j) {
      const float xr = spec[2 * j], xi = spec[2 * j + 1];
      const float hr = h[2 * j], hi = h[2 * j + 1];
      spec[2 * j] = xr * hr - xi * hi;
      spec[2 * j + 1] = xr * hi + xi * hr;
    }
    e.inverse();
    // Circular wrap-around spoils the first K - 1 samples; the rest are the sums.
    std::memcpy(y + i0, buf + (k - 1), static_cast<std::size_t>(m) * sizeof(float));
  }
  if (end < n) apply(x + end, n - end, y + end, scratch);
#else
  (void)scratch;
#endif
}

}  // namespace sigstream::kernels::cpu
