#pragma once
// A process-wide cache of pageable host memory for sample blocks
// (make_host_block). A file's pipeline reads into, and writes from, blocks of
// a chunk each (4 MiB at the default chunk): fresh ones cost a page fault and
// the kernel's zeroing per 4 KiB page, and their frees give the pages back
// (munmap or a trim, with a TLB shootdown on every core that runs one of the
// process's threads). A batch of 64 files at once on 64 cores spent a third
// of its CPU time so. Freed blocks are parked by size class
// (core/size_class.hpp; from 2 MiB on, whole 2 MiB pages) and handed out
// again, up to kHostCacheBytes parked; beyond that a freed block goes back
// (to the C library, or unmapped). Blocks of 2 MiB and more are mappings of
// their own, backed by transparent huge pages where the kernel allows it.
// Parked memory goes back only at the process's end or through
// release_host_cache().
#include <cstddef>

namespace sigstream {

// The most bytes parked at once.
inline constexpr std::size_t kHostCacheBytes = std::size_t{1} << 30;

// At least `bytes` bytes, 64-byte aligned (contents unspecified). Throws
// std::bad_alloc.
[[nodiscard]] void* host_cache_alloc(std::size_t bytes);
// Parks a block from host_cache_alloc; `bytes` as it was asked for.
void host_cache_free(void* p, std::size_t bytes) noexcept;
// Returns every parked block (to the C library, or unmapped).
void release_host_cache() noexcept;
// Bytes parked now (for tests).
[[nodiscard]] std::size_t host_cache_parked_bytes() noexcept;
// The bytes a block asked for with `bytes` takes (its class; 0: too large).
[[nodiscard]] std::size_t host_cache_block_bytes(std::size_t bytes) noexcept;
// Sets the most bytes parked at once (kHostCacheBytes unless set); returns
// the limit before. Parked blocks over a lower limit stay until taken.
std::size_t set_host_cache_limit(std::size_t bytes) noexcept;

} // namespace sigstream
