#include "kernels/cpu/fft_engine.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "core/error.hpp"

#if SIGSTREAM_HAVE_FFTW
#include <fftw3.h>
#endif

namespace sigstream::kernels::cpu::fft {

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
  static std::map<int, FftwPlans> cache; // kept for the life of the process
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

// One block per call; the spectrum is N/2 + 1 complex values (re, im).
class FftwEngine final : public BlockFft {
public:
  explicit FftwEngine(int nfft)
      : nfft_(nfft), plans_(&fftw_plans(nfft)),
        time_(fftwf_alloc_real(static_cast<std::size_t>(nfft))),
        freq_(fftwf_alloc_complex(static_cast<std::size_t>(nfft / 2 + 1))) {
    if (!time_ || !freq_)
      throw std::bad_alloc();
  }
  [[nodiscard]] int size() const noexcept override { return nfft_; }
  [[nodiscard]] int group() const noexcept override { return 1; }

  [[nodiscard]] std::vector<float> spectrum(const float* padded, float scale) override {
    std::copy(padded, padded + nfft_, time_.get());
    fftwf_execute_dft_r2c(plans_->forward, time_.get(), freq_.get());
    const float* f = reinterpret_cast<const float*>(freq_.get());
    std::vector<float> s(static_cast<std::size_t>(nfft_ + 2));
    for (std::size_t j = 0; j < s.size(); ++j)
      s[j] = f[j] * scale;
    return s;
  }

  void convolve(const float* const* in, int count, const float* h, int from, int keep,
                float* const* out) override {
    // FFTW reads only its own (aligned) buffer: each block is copied in.
    float* t = time_.get();
    float* f = reinterpret_cast<float*>(freq_.get());
    const std::size_t bins = static_cast<std::size_t>(nfft_ / 2 + 1);
    for (int b = 0; b < count; ++b) {
      std::copy(in[b], in[b] + nfft_, t);
      fftwf_execute_dft_r2c(plans_->forward, t, freq_.get());
      for (std::size_t j = 0; j < bins; ++j) {
        const float xr = f[2 * j], xi = f[2 * j + 1];
        const float hr = h[2 * j], hi = h[2 * j + 1];
        f[2 * j] = xr * hr - xi * hi;
        f[2 * j + 1] = xr * hi + xi * hr;
      }
      fftwf_execute_dft_c2r(plans_->inverse, freq_.get(), t);
      std::copy(t + from, t + from + keep, out[b]);
    }
  }

private:
  int nfft_;
  const FftwPlans* plans_;
  std::unique_ptr<float, FftwFree> time_;
  std::unique_ptr<fftwf_complex, FftwFree> freq_;
};

#endif

// What a pass of 8, 4 and 1 lanes costs, in blocks of a full 8-lane pass.
[[maybe_unused]] constexpr double kPass8 = 8.0;
[[maybe_unused]] constexpr double kPass4 = 5.0;
[[maybe_unused]] constexpr double kPass1 = 2.4;

// The AVX2 engine where this CPU has AVX2 and this build has the engine.
[[maybe_unused]] bool use_avx2() noexcept {
  static const bool yes = [] {
    try {
      return cpu_has_avx2() && make_pocketfft_avx2(512) != nullptr;
    } catch (...) {
      return false;
    }
  }();
  return yes;
}

} // namespace

bool cpu_has_avx2() noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

std::unique_ptr<BlockFft> make(int nfft) {
#if SIGSTREAM_HAVE_FFTW
  return std::make_unique<FftwEngine>(nfft);
#elif SIGSTREAM_HAVE_POCKETFFT
  return use_avx2() ? make_pocketfft_avx2(nfft) : make_pocketfft_baseline(nfft);
#else
  (void)nfft;
  return nullptr;
#endif
}

bool available() noexcept {
#if SIGSTREAM_HAVE_FFTW || SIGSTREAM_HAVE_POCKETFFT
  return true;
#else
  return false;
#endif
}

const char* library() noexcept {
#if SIGSTREAM_HAVE_FFTW
  return "FFTW 3 (GPL)";
#elif SIGSTREAM_HAVE_POCKETFFT
  return use_avx2() ? "pocketfft (BSD), AVX2 x8" : "pocketfft (BSD), x4";
#else
  return "none";
#endif
}

int group() noexcept {
#if SIGSTREAM_HAVE_POCKETFFT && !SIGSTREAM_HAVE_FFTW
  return 8; // both engines (fft_pocketfft.inc's kGroup)
#else
  return 1;
#endif
}

// Measured on the development machine (bench/RESULTS-cpu-crossover.md).
int max_size() noexcept {
#if SIGSTREAM_HAVE_POCKETFFT && !SIGSTREAM_HAVE_FFTW
  return 1 << 16; // 8 lanes x 2^16 floats = 2 MB of buffers: beyond, they leave the L2 cache
#else
  return 1 << 17;
#endif
}

double ns_per_point_log() noexcept {
#if SIGSTREAM_HAVE_FFTW
  return 0.28; // FFTW_ESTIMATE plans, AVX2: a 32768-point pair ~130 us (development machine,
               // 2026-11-23)
#elif SIGSTREAM_HAVE_POCKETFFT
  // AVX2 x8: 0.22-0.27 for N = 1024 .. 65536 (EPYC, 2026-11-23). The x4
  // engine runs ~1.23x slower; the same constant serves it so that both
  // plan the same calls.
  return 0.25;
#else
  return 1.0;
#endif
}

double call_cost_ns(int nfft, int count) noexcept {
  const double block = ns_per_point_log() * nfft * std::log2(static_cast<double>(nfft));
#if SIGSTREAM_HAVE_POCKETFFT && !SIGSTREAM_HAVE_FFTW
  // PocketEngine::convolve's passes (8 lanes while more than 4 blocks are
  // left, then 4, then 1), each priced in blocks of a full 8-lane pass as
  // bench_cpu_fir BM_FftEngine measured them (bench/RESULTS-cpu-crossover.md).
  double units = 0.0;
  for (int left = count; left > 0;) {
    if (left > 4) {
      units += kPass8;
      left -= 8;
    } else if (left > 1) {
      units += kPass4;
      left -= 4;
    } else {
      units += kPass1;
      left -= 1;
    }
  }
  return units * block;
#else
  return count * block;
#endif
}

} // namespace sigstream::kernels::cpu::fft
