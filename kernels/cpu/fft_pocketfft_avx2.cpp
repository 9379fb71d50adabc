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
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#define POCKETFFT_NO_MULTITHREADING
#pragma GCC push_options
#pragma GCC target("avx2")
namespace {
#include SIGSTREAM_POCKETFFT_HEADER
#include "kernels/cpu/fft_pocketfft.inc"
}  // namespace
#pragma GCC pop_options

namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_avx2(int nfft) { return std::make_unique<PocketEngine<8>>(nfft); }
}  // namespace sigstream::kernels::cpu::fft
#else
namespace sigstream::kernels::cpu::fft {
std::unique_ptr<BlockFft> make_pocketfft_avx2(int) { return nullptr; }
}  // namespace sigstream::kernels::cpu::fft
#endif
