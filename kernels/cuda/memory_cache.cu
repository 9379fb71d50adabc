// Process-wide caches of device and pinned host memory (memory_cache.hpp).
#include "kernels/cuda/memory_cache.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "core/size_class.hpp"
#include "kernels/cuda/check.hpp"

namespace sigstream::kernels::cuda {

namespace {

struct Cache {
  // Free blocks per (device, or kPinned for pinned host memory; size class).
  std::mutex mutex;
  std::map<std::pair<int, std::size_t>, std::vector<void*>> free;
};

// Never destroyed: blocks may be returned during static destruction, when the
// CUDA runtime may already be gone; at exit the OS takes the memory back.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

constexpr int kPinned = -1;

void* take(int key_device, std::size_t bytes) {
  const std::size_t cls = block_size_class(bytes);
  Cache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    auto it = c.free.find({key_device, cls});
    if (it != c.free.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  auto allocate = [&](void** p) {
    return key_device == kPinned ? cudaHostAlloc(p, cls, cudaHostAllocPortable)
                                 : cudaMalloc(p, cls);
  };
  void* p = nullptr;
  cudaError_t st = allocate(&p);
  if (st == cudaErrorMemoryAllocation) {
    // Out of memory with blocks parked in the cache: give those back and retry.
    static_cast<void>(cudaGetLastError());
    release_cached_memory();
    st = allocate(&p);
  }
  SIGSTREAM_CUDA_TRY(st);
  return p;
}

void give_back(int key_device, void* p, std::size_t bytes) noexcept {
  if (p == nullptr)
    return;
  Cache& c = cache();
  try {
    std::lock_guard lock(c.mutex);
    c.free[{key_device, block_size_class(bytes)}].push_back(p);
  } catch (...) {
    // Out of host memory for the free list: the block stays allocated.
  }
}

} // namespace

void* device_alloc(int device, std::size_t bytes) {
  return take(device, bytes);
}

void device_free(int device, void* p, std::size_t bytes) noexcept {
  give_back(device, p, bytes);
}

void* pinned_alloc(std::size_t bytes) {
  return take(kPinned, bytes);
}

void pinned_free(void* p, std::size_t bytes) noexcept {
  give_back(kPinned, p, bytes);
}

void release_cached_memory() noexcept {
  Cache& c = cache();
  std::map<std::pair<int, std::size_t>, std::vector<void*>> free;
  {
    std::lock_guard lock(c.mutex);
    free.swap(c.free);
  }
  int current = 0;
  const bool have_current = cudaGetDevice(&current) == cudaSuccess;
  for (auto& [key, blocks] : free) {
    for (void* p : blocks) {
      if (key.first == kPinned) {
        static_cast<void>(cudaFreeHost(p));
      } else {
        static_cast<void>(cudaSetDevice(key.first));
        static_cast<void>(cudaFree(p));
      }
    }
  }
  if (have_current)
    static_cast<void>(cudaSetDevice(current));
  static_cast<void>(cudaGetLastError());
}

} // namespace sigstream::kernels::cuda
