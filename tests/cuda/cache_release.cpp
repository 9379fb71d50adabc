// The CUDA test programs give the process-wide memory caches
// (kernels/cuda/memory_cache.hpp) back at the end, so that a leak check
// (compute-sanitizer --leak-check full) reports only memory nothing owns:
// parked blocks are held on purpose until then.
#include <gtest/gtest.h>

#include "kernels/cuda/memory_cache.hpp"

namespace {

class ReleaseCachedMemory final : public ::testing::Environment {
public:
  void TearDown() override { sigstream::kernels::cuda::release_cached_memory(); }
};

[[maybe_unused]] ::testing::Environment* const kRelease =
    ::testing::AddGlobalTestEnvironment(new ReleaseCachedMemory);

} // namespace
