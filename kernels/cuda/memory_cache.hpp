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

// At least `bytes` bytes on the current device. Throws Error(cuda).
void* device_alloc(std::size_t bytes);
void device_free(void* p) noexcept;
// At least `bytes` bytes of page-locked host memory, pinned for every device.
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p) noexcept;
// Returns every parked block to CUDA.
void release_cached_memory() noexcept;

} // namespace sigstream::kernels::cuda
