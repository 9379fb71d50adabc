// A process-wide cache of pageable host memory (host_cache.hpp).
#include "core/host_cache.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/size_class.hpp"

namespace sigstream {

namespace {

struct HostCache {
  std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> free; // by size class
  std::size_t parked = 0;                         // bytes in `free`
};

// Never destroyed: blocks may come back during static destruction (a block
// a static object holds); at exit the OS takes the memory back.
HostCache& cache() {
  static auto* c = new HostCache;
  return *c;
}

// A new block of a class. Blocks of 2 MiB and more are aligned to 2 MiB and
// asked to be backed by transparent huge pages (where the kernel's setting is
// `madvise`, only so): a chunk's block then costs two faults instead of a
// thousand, and the process's exit frees a few huge pages instead of every
// 4 KiB page of every worker's blocks (~70 ms after a batch of 64 workers on
// 64 cores).
void* fresh(std::size_t cls) noexcept {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (cls < kHuge)
    return std::aligned_alloc(64, cls); // (a class is a multiple of 16 KiB)
  const std::size_t bytes = (cls + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, bytes);
  if (p != nullptr)
    static_cast<void>(madvise(p, bytes, MADV_HUGEPAGE)); // a hint: refused, 4 KiB pages
  return p;
}

} // namespace

void* host_cache_alloc(std::size_t bytes) {
  const std::size_t cls = block_size_class(bytes);
  HostCache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    if (auto it = c.free.find(cls); it != c.free.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.parked -= cls;
      return p;
    }
  }
  void* p = fresh(cls);
  if (p == nullptr) {
    // Out of memory with blocks of other sizes parked: give those back and retry.
    release_host_cache();
    p = fresh(cls);
  }
  if (p == nullptr)
    throw std::bad_alloc();
  return p;
}

void host_cache_free(void* p, std::size_t bytes) noexcept {
  if (p == nullptr)
    return;
  const std::size_t cls = block_size_class(bytes);
  HostCache& c = cache();
  try {
    std::lock_guard lock(c.mutex);
    if (c.parked + cls <= kHostCacheBytes) {
      c.free[cls].push_back(p);
      c.parked += cls;
      return;
    }
  } catch (...) {
    // Out of memory for the free list: the block goes back below.
  }
  std::free(p);
}

void release_host_cache() noexcept {
  HostCache& c = cache();
  std::map<std::size_t, std::vector<void*>> free;
  {
    std::lock_guard lock(c.mutex);
    free.swap(c.free);
    c.parked = 0;
  }
  for (auto& [cls, blocks] : free)
    for (void* p : blocks)
      std::free(p);
}

std::size_t host_cache_parked_bytes() noexcept {
  HostCache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.parked;
}

} // namespace sigstream
