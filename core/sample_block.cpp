#include "core/sample_block.hpp"

#include <cstdint>
#include <new>

#include "core/host_cache.hpp"

namespace sigstream {

HostBlock make_host_block(SampleType type, int channels, std::int64_t frames) {
  HostBlock b;
  b.type = type;
  b.channels = channels;
  b.capacity = frames;
  b.frames = 0;
  // 64-byte alignment keeps vector loads on cache lines, and 64 bytes past
  // the end let them run over it; the memory comes from, and goes back to,
  // the process's block cache (host_cache.hpp).
  if (frames < 0 || channels < 0 ||
      (channels > 0 && static_cast<std::uint64_t>(frames) >
                           (std::uint64_t{1} << 56) / static_cast<std::uint64_t>(channels)))
    throw std::bad_alloc();
  const std::size_t bytes =
      static_cast<std::size_t>(frames) * static_cast<std::size_t>(channels) * sample_bytes(type) +
      64;
  void* p = host_cache_alloc(bytes);
  b.data = std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                      [bytes](std::byte* q) { host_cache_free(q, bytes); });
  return b;
}

} // namespace sigstream
