// pocketfft engine for x86-64 CPUs with AVX2: 8 blocks per call in 256-bit
// vectors. Only this file's own code (pocketfft and the engine, in an
// anonymous namespace) is compiled for AVX2, through the target pragma, so
// nothing it shares with the rest of the program (the standard library's
// templates) can carry AVX2 instructions onto CPUs without them; fft_engine.cpp
// calls it only after checking the CPU.
#include "kernels/cpu/fft_engine.hpp"

// GCC only: clang ignores the target pragma (it would build SSE code and call
// it AVX2), so a clang build uses the baseline engine.
#if SIGSTREAM_HAVE_POCKETFFT && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include "kernels/cpu/fft_pocketfft_prelude.hpp"
#pragma GCC push_options
#pragma GCC target("avx2")
namespace {
#define aligned_alloc sigstream::kernels::cpu::fft::pocketfft_aligned_alloc
#include SIGSTREAM_POCKETFFT_HEADER
#undef aligned_alloc
#include "kernels/cpu/fft_pocketfft.inc"
} // namespace
#pragma GCC pop_options

namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_avx2(int nfft) {
  return std::make_unique<PocketEngine<8>>(nfft);
}
} // namespace sigstream::kernels::cpu::fft
#else
namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_avx2(int) {
  return nullptr;
}
} // namespace sigstream::kernels::cpu::fft
#endif
