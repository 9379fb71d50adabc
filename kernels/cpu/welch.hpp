#pragma once
// Welch's power spectral density on the CPU: the building block of the
// metrics stage's spectrum (SPEC §8), equal to
//   scipy.signal.welch(x, fs, window, nperseg=nfft, noverlap=nfft - hop,
//                      detrend=False, scaling='density', return_onesided=True)
// computed in float64 (pocketfft's double transforms).
//
// Segments lie on the signal's global frame grid: segment j covers frames
// [j*hop, j*hop + nfft); a signal of N frames has the segments that fit,
// floor((N - nfft) / hop) + 1 of them (none when N < nfft), as SciPy takes
// them. A chunked run hands each call the frames it has and the range of
// segment end frames it owns (the chunk's own frames), so every segment is
// counted once whatever the chunking; the power sums are float64.
#include <cstdint>
#include <span>
#include <vector>

namespace sigstream::kernels::cpu {

class Welch {
public:
  // `window` has nfft finite values (nfft >= 1); 1 <= hop <= nfft. Throws
  // Error(invalid_argument) for bad arguments and in a build without
  // pocketfft (available() says which).
  Welch(std::span<const double> window, int hop);

  [[nodiscard]] static bool available() noexcept;
  [[nodiscard]] int nfft() const noexcept { return static_cast<int>(window_.size()); }
  [[nodiscard]] int hop() const noexcept { return hop_; }
  [[nodiscard]] int bins() const noexcept { return nfft() / 2 + 1; }

  // x holds frames [first, first + n) of one channel. Adds |DFT(window *
  // segment)|^2 of each segment that lies inside those frames and whose last
  // frame is in [own_lo, own_hi) to power[0 .. bins()), and returns how many
  // segments it added. Thread-safe (const; its scratch is per thread).
  std::int64_t add(const float* x, std::int64_t first, std::int64_t n, std::int64_t own_lo,
                   std::int64_t own_hi, std::span<double> power) const;

  // The one-sided density (units^2/Hz) of `segments` segments whose powers
  // sum to `power`, at `rate` Hz: power / segments / (rate * sum(w^2)), every
  // bin but DC (and Nyquist for even nfft) doubled. Zeros when segments == 0.
  [[nodiscard]] std::vector<double> density(std::span<const double> power, std::int64_t segments,
                                            double rate) const;
  // The bins' frequencies, k * rate / nfft (rounded as numpy.fft.rfftfreq does).
  [[nodiscard]] std::vector<double> frequencies(double rate) const;

private:
  std::vector<double> window_;
  double window_energy_ = 0.0; // sum(w^2)
  int hop_ = 1;
};

} // namespace sigstream::kernels::cpu
