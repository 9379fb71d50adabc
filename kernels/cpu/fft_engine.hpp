#pragma once
// The FFT behind the CPU's overlap-save FIR (kernels/cpu/fir_fft.hpp): one
// thread's transforms of one block size, several blocks per call.
//
// Two libraries can sit behind it, chosen when sigstream is built:
//  - pocketfft (BSD-3-Clause; the FFT of NumPy and SciPy; the header-only C++
//    version, from Debian's python3-pythran): the default. Its plans run on
//    any arithmetic type, so it transforms several blocks at once, one per
//    lane of a SIMD vector (8 with AVX2, chosen at run time; 4 with SSE2).
//    Every lane does the same operations in the same order, and a call takes
//    8 blocks on either engine, so a block's result depends neither on the
//    lanes beside it nor on the CPU.
//  - FFTW 3 (GPL-2.0-or-later; -DSIGSTREAM_FFTW=ON): one block per call.
#include <cstdint>
#include <memory>
#include <vector>

namespace sigstream::kernels::cpu::fft {

class BlockFft {
public:
  virtual ~BlockFft() = default;
  [[nodiscard]] virtual int size() const noexcept = 0;  // N, the real points of a block
  [[nodiscard]] virtual int group() const noexcept = 0; // blocks one convolve() call can take

  // The spectrum of `padded` (N reals: the taps, then zeros) times `scale`,
  // in the order convolve() expects.
  [[nodiscard]] virtual std::vector<float> spectrum(const float* padded, float scale) = 0;

  // For b < count (1 <= count <= group(); call_cost_ns says what it costs): the circular
  // convolution of the N samples at in[b] with the filter whose spectrum() is `spectrum`; its
  // samples [from, from + keep) go to out[b].
  virtual void convolve(const float* const* in, int count, const float* spectrum, int from,
                        int keep, float* const* out) = 0;
};

// The library built in, or nullptr from make() when there is none.
[[nodiscard]] std::unique_ptr<BlockFft> make(int nfft);
[[nodiscard]] bool available() noexcept;
// "pocketfft (BSD), AVX2 x8", "FFTW 3 (GPL)" or "none".
[[nodiscard]] const char* library() noexcept;
// The same on every CPU for one build (they shape the work, hence the bits):
// blocks per call, the largest block size worth using (the lanes' buffers
// stay in the L2 cache), and the measured cost of one block's forward +
// inverse transform and product in a full call, per N log2 N.
[[nodiscard]] int group() noexcept;
[[nodiscard]] int max_size() noexcept;
[[nodiscard]] double ns_per_point_log() noexcept;
// The cost of one convolve() call of `count` blocks of nfft points (count <=
// group()): a full call is count x ns_per_point_log() x N log2 N; shorter
// ones run narrower passes and cost less per call, more per block.
[[nodiscard]] double call_cost_ns(int nfft, int count) noexcept;

// The pocketfft engines (fft_pocketfft_*.cpp; nullptr in builds without
// pocketfft): the AVX2 one exists only on x86-64 (nullptr elsewhere) and make()
// takes it only where the CPU has AVX2 (cpu_has_avx2()). Tests compare them.
std::unique_ptr<BlockFft> make_pocketfft_avx2(int nfft);
std::unique_ptr<BlockFft> make_pocketfft_baseline(int nfft);
bool cpu_has_avx2() noexcept;

} // namespace sigstream::kernels::cpu::fft
