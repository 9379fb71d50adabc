#pragma once
// What fft_pocketfft_baseline.cpp and fft_pocketfft_avx2.cpp include before
// pocketfft, which each puts into an anonymous namespace of its own:
//  - every standard header pocketfft includes, so that its own #includes find
//    them done and only its code lands in the namespace;
//  - an aligned_alloc that rounds the size up to a multiple of the alignment,
//    as C11 requires: pocketfft asks for any size (glibc accepts that, the
//    address sanitizer does not); the files #define aligned_alloc to it
//    around pocketfft only.
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

namespace sigstream::kernels::cpu::fft {
inline void* pocketfft_aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
} // namespace sigstream::kernels::cpu::fft
