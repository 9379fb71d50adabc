#pragma once
// The size classes of the block caches (core/host_cache.hpp and the CUDA
// memory cache): sizes are rounded up to a multiple of an eighth of the
// power of two at or above them (at least 64 KiB), so that blocks of nearly
// the same size (files of different lengths) share a class; less than a
// quarter of the size asked for is wasted.
#include <cstddef>

namespace sigstream {

[[nodiscard]] constexpr std::size_t block_size_class(std::size_t bytes) noexcept {
  constexpr std::size_t kMin = 64 * 1024;
  if (bytes <= kMin)
    return kMin;
  std::size_t p = kMin;
  while (p < bytes)
    p <<= 1; // p: the power of two >= bytes
  const std::size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

} // namespace sigstream
