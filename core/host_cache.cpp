// A process-wide cache of pageable host memory (host_cache.hpp).
#include "core/host_cache.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/size_class.hpp"

// Under AddressSanitizer a parked block is poisoned, and a block handed out is
// addressable only up to the bytes asked for: a use after its release, or a
// read past its end into the rest of its class, is still reported.
#if defined(__SANITIZE_ADDRESS__)
#define SIGSTREAM_HOST_CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIGSTREAM_HOST_CACHE_ASAN 1
#endif
#endif
#ifdef SIGSTREAM_HOST_CACHE_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace sigstream {

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

struct HostCache {
  std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> free; // by class
  std::size_t parked = 0;                         // bytes in `free` (their classes')
  std::size_t limit = kHostCacheBytes;
};

// Never destroyed: blocks may come back during static destruction (a block
// a static object holds); at exit the OS takes the memory back.
HostCache& cache() {
  static auto* c = new HostCache;
  return *c;
}

// The class of a block of `bytes`: the size class, in whole 2 MiB pages from
// 2 MiB on (the bytes a block of the class takes). 0: too large to have one.
std::size_t class_of(std::size_t bytes) noexcept {
  if (bytes > (std::size_t{1} << 60))
    return 0;
  const std::size_t cls = block_size_class(bytes);
  return cls < kHuge ? cls : (cls + kHuge - 1) / kHuge * kHuge;
}

// Marks `bytes` from `p` unusable (poisoned) or usable again; nothing without ASan.
void mark(void* p, std::size_t bytes, bool poisoned) noexcept {
#ifdef SIGSTREAM_HOST_CACHE_ASAN
  if (poisoned)
    ASAN_POISON_MEMORY_REGION(p, bytes);
  else
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
  static_cast<void>(p);
  static_cast<void>(bytes);
  static_cast<void>(poisoned);
#endif
}

// A new block of a class. Blocks of 2 MiB and more are mappings of their own,
// aligned to 2 MiB and asked to be backed by transparent huge pages (which the
// kernel's settings `always` and `madvise` allow): a chunk's block then costs
// two faults instead of a thousand, and the process's exit frees a few huge
// pages instead of every 4 KiB page of every worker's blocks (~70 ms after a
// batch of 64 workers on 64 cores). Mapped apart from malloc's heap, the hint
// never reaches memory malloc hands out later.
void* fresh(std::size_t cls) noexcept {
  if (cls < kHuge)
    return std::aligned_alloc(64, cls); // (a class is a multiple of 16 KiB)
  void* m = mmap(nullptr, cls + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return nullptr;
  // The 2 MiB-aligned span of the mapping; the rest is given back.
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = (at + kHuge - 1) / kHuge * kHuge;
  if (aligned > at)
    munmap(m, aligned - at);
  if (const std::uintptr_t end = at + cls + kHuge; end > aligned + cls)
    munmap(reinterpret_cast<void*>(aligned + cls), end - (aligned + cls));
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  static_cast<void>(madvise(p, cls, MADV_HUGEPAGE)); // a hint: refused, 4 KiB pages
#endif
  return p;
}

void give_back(void* p, std::size_t cls) noexcept {
  mark(p, cls, false);
  if (cls < kHuge)
    std::free(p);
  else
    munmap(p, cls);
}

} // namespace

void* host_cache_alloc(std::size_t bytes) {
  const std::size_t cls = class_of(bytes);
  if (cls == 0)
    throw std::bad_alloc();
  HostCache& c = cache();
  void* p = nullptr;
  {
    std::lock_guard lock(c.mutex);
    if (auto it = c.free.find(cls); it != c.free.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      c.parked -= cls;
    }
  }
  if (p == nullptr) {
    p = fresh(cls);
    if (p == nullptr) {
      // Out of memory with blocks of other sizes parked: give those back and retry.
      release_host_cache();
      p = fresh(cls);
    }
    if (p == nullptr)
      throw std::bad_alloc();
    mark(p, cls, true);
  }
  mark(p, bytes, false);
  return p;
}

void host_cache_free(void* p, std::size_t bytes) noexcept {
  if (p == nullptr)
    return;
  const std::size_t cls = class_of(bytes);
  HostCache& c = cache();
  try {
    std::lock_guard lock(c.mutex);
    if (c.parked + cls <= c.limit) {
      c.free[cls].push_back(p);
      c.parked += cls;
      mark(p, cls, true);
      return;
    }
  } catch (...) {
    // Out of memory for the free list: the block goes back below.
  }
  give_back(p, cls);
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
      give_back(p, cls);
}

std::size_t host_cache_parked_bytes() noexcept {
  HostCache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.parked;
}

std::size_t host_cache_block_bytes(std::size_t bytes) noexcept {
  return class_of(bytes);
}

std::size_t set_host_cache_limit(std::size_t bytes) noexcept {
  HostCache& c = cache();
  std::lock_guard lock(c.mutex);
  const std::size_t was = c.limit;
  c.limit = bytes;
  return was;
}

} // namespace sigstream
