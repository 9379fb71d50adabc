#pragma once
// Process-wide caches of device memory (per device) and pinned host memory.
// A batch builds a backend for every file: with plain cudaMalloc/cudaHostAlloc
// and their frees (which wait for the whole device) that took ~25 ms of the
// ~35 ms a 30-second file needed on the H100 machine. Freed blocks are kept,
// by device and size class, and handed out again; nothing is returned to
// CUDA until an allocation fails (then everything parked is released and the
// allocation retried) or release_cached_memory() is called.
//
// Contract: free a block only once no queued work uses it any more (a plain
// cudaFree would have waited for the device; these do not). Callers
// synchronise their streams first (the CUDA backend does in its destructor).
#include <cstddef>

namespace sigstream::kernels::cuda {

// At least `bytes` bytes on `device` (which must be current). Throws Error(cuda).
void* device_alloc(int device, std::size_t bytes);
// Parks a block from device_alloc; `device` and `bytes` as it was asked for
// (they name its size class, so the cache keeps no table of blocks in use).
void device_free(int device, void* p, std::size_t bytes) noexcept;
// At least `bytes` bytes of page-locked host memory, pinned for every device.
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p, std::size_t bytes) noexcept;
// Returns every parked block to CUDA.
void release_cached_memory() noexcept;

} // namespace sigstream::kernels::cuda
