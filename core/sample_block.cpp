#include "core/sample_block.hpp"

#include <cstdlib>
#include <new>

namespace sigstream {

HostBlock make_host_block(SampleType type, int channels, std::int64_t frames) {
  HostBlock b;
  b.type = type;
  b.channels = channels;
  b.capacity = frames;
  b.frames = 0;
  const std::size_t bytes =
      static_cast<std::size_t>(frames) * static_cast<std::size_t>(channels) * sample_bytes(type);
  // 64-byte alignment keeps vector loads on cache lines.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (p == nullptr)
    throw std::bad_alloc();
  b.data =
      std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  return b;
}

} // namespace sigstream
