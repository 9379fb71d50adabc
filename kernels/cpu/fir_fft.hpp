#pragma once
// FFT overlap-save FIR on the CPU (pocketfft, or FFTW with -DSIGSTREAM_FFTW=ON;
// float), for long filters. The FFT itself: kernels/cpu/fft_engine.hpp.
//
// Same contract as fir_direct (kernels/cpu/fir.hpp):
//
//   y[i] = sum_{k=0}^{K-1} h[k] * x[i + K - 1 - k],   i = 0 .. n-1,
//
// with `x` holding n + K - 1 samples. The result is not bit-identical to the
// direct kernel (the sums are taken in another order, through the spectrum);
// it is within ~3e-7 relative L2 of the float64 result (measured up to
// K = 16383), where the float direct sum of a long filter can be off by ~1e-6.
//
// Strategy: blocks of N samples (N = fft_size(); by default the smallest power
// of two >= 6K) yield L = N - K + 1 outputs each: forward real FFT of
// x[b*L, b*L + N) (the last block copied and zero-padded),
// multiply by the taps' spectrum (computed once, with the 1/N of the inverse
// folded in), inverse real FFT, keep the last L samples. The engine transforms
// several blocks per call (one per SIMD lane with pocketfft), so blocks go in
// groups. The object also holds the spectra of the smaller sizes N/2, N/4, ...
// (down to 2K); each call picks the size that does the least work for its n,
// so short chunks do not pay for a full-size group, and the remainder after
// the whole groups picks again. When even the cheapest call costs more than
// the direct sum would (n * K small), the call computes the direct sum instead
// (unless Options::short_direct is off).
//
// Threads: `apply` is const and touches only the caller's Scratch (the
// engines keep work buffers), so one FirFft serves many threads at once, one
// Scratch per thread.
#include <cstdint>
#include <memory>
#include <vector>

namespace sigstream::kernels::cpu {

class FirFft {
public:
  // Per-thread working memory: an FFT engine per block size, buffers. Created empty; filled on
  // first use; reusable across FirFft objects (configurations are keyed by size). Move-only.
  class Scratch {
  public:
    Scratch();
    ~Scratch();
    Scratch(Scratch&&) noexcept;
    Scratch& operator=(Scratch&&) noexcept;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

  private:
    friend class FirFft;
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };

  struct Options {
    int fft_size = 0;         // largest block size N (even, > K); 0 = default_fft_size(K)
    bool short_direct = true; // compute pieces too short for a block to pay off directly (float64)
    bool adaptive = true;     // false: every call uses blocks of fft_size (no smaller sizes)
  };

  // Copies the taps and computes their spectra. Throws sigstream::Error
  // (invalid_argument) for taps < 1 or a bad fft_size.
  FirFft(const float* h, int taps);
  FirFft(const float* h, int taps, Options options);
  ~FirFft();
  FirFft(FirFft&&) noexcept;
  FirFft& operator=(FirFft&&) noexcept;
  FirFft(const FirFft&) = delete;
  FirFft& operator=(const FirFft&) = delete;

  // y[0..n) from x[0..n+K-1) as above; `scratch` belongs to the calling thread.
  void apply(const float* x, std::int64_t n, float* y, Scratch& scratch) const;

  [[nodiscard]] int taps() const noexcept { return static_cast<int>(taps_.size()); }
  [[nodiscard]] int fft_size() const noexcept; // the largest block size N
  [[nodiscard]] std::int64_t block_outputs() const noexcept { return fft_size() - taps() + 1; }
  // The block size an n-output call uses (0: it runs the direct sum).
  [[nodiscard]] int size_for(std::int64_t n) const noexcept;

  // The block size chosen for K taps when none is given (measured on the
  // development machine: bench/RESULTS-cpu-crossover.md).
  [[nodiscard]] static int default_fft_size(int taps) noexcept;
  // Estimated cost (ns) of n outputs with K taps, direct and FFT (the model
  // behind size_for and the CPU auto rule; constants measured as above).
  [[nodiscard]] static double direct_cost_ns(int taps, std::int64_t n) noexcept;
  [[nodiscard]] static double fft_cost_ns(int taps, std::int64_t n) noexcept;
  // False when built without an FFT library: apply() then computes the direct sum.
  [[nodiscard]] static bool available() noexcept;
  // The library behind it: "pocketfft (BSD), AVX2 x8", "FFTW 3 (GPL)" (-DSIGSTREAM_FFTW=ON) or
  // "none".
  [[nodiscard]] static const char* library() noexcept;

private:
  struct Level {
    int nfft = 0;
    std::vector<float> spectrum; // the taps' spectrum, scaled by 1/nfft, in the engine's order
  };
  [[nodiscard]] const Level* level_for(std::int64_t n) const noexcept;

  std::vector<float> taps_;
  std::vector<double> taps_f64_; // for the direct sum of short pieces
  std::vector<Level> levels_;    // largest first
  std::vector<int> sizes_;       // their nfft
  bool short_direct_ = true;
};

} // namespace sigstream::kernels::cpu
