#pragma once
// pocketfft (the header-only C++ FFT of NumPy and SciPy, from Debian's
// python3-pythran) for the including translation unit alone: its code goes
// into this file's anonymous namespace, so each .cpp that includes it has a
// private copy and no two copies clash at link time. Include it once, from a
// .cpp, where SIGSTREAM_HAVE_POCKETFFT is set (CMakeLists.txt); without it,
// nothing is declared. See fft_pocketfft_prelude.hpp for the aligned_alloc
// shim around it. (The block engines, fft_pocketfft_*.cpp, include pocketfft
// their own way: with their engine code in the same namespace, and the AVX2
// one under a target pragma.)
#if SIGSTREAM_HAVE_POCKETFFT
#include "kernels/cpu/fft_pocketfft_prelude.hpp"
namespace { // NOLINT(google-build-namespaces): one private copy per translation unit, on purpose
#define aligned_alloc sigstream::kernels::cpu::fft::pocketfft_aligned_alloc
#include SIGSTREAM_POCKETFFT_HEADER
#undef aligned_alloc
} // namespace
#endif
