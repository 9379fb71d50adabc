// pocketfft engine for any CPU: 4 blocks per pass in 128-bit vectors (SSE2 on
// x86-64, NEON on ARM; GCC splits them where the CPU has no vectors).
#include "kernels/cpu/fft_engine.hpp"

#if SIGSTREAM_HAVE_POCKETFFT
#include "kernels/cpu/fft_pocketfft_prelude.hpp"
namespace {
#define aligned_alloc sigstream::kernels::cpu::fft::pocketfft_aligned_alloc
#include SIGSTREAM_POCKETFFT_HEADER
#undef aligned_alloc
#include "kernels/cpu/fft_pocketfft.inc"
constexpr int kBaselineLanes = 4;
} // namespace

namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_baseline(int nfft) {
  return std::make_unique<PocketEngine<kBaselineLanes>>(nfft);
}
} // namespace sigstream::kernels::cpu::fft
#else
namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_baseline(int) {
  return nullptr;
}
} // namespace sigstream::kernels::cpu::fft
#endif
