// The process-wide cache of pageable host blocks (core/host_cache.hpp) and
// its size classes (core/size_class.hpp): a freed block is handed out again
// for a request of its class, never for another; no more than the cap is
// parked; make_host_block's blocks go back to it and come out of it again.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <set>
#include <vector>

#include "core/host_cache.hpp"
#include "core/sample_block.hpp"
#include "core/size_class.hpp"

namespace sigstream {
namespace {

TEST(HostCache, SizeClassesHoldTheRequestAndWasteUnderAQuarter) {
  EXPECT_EQ(block_size_class(0), 64u * 1024);
  EXPECT_EQ(block_size_class(1), 64u * 1024);
  EXPECT_EQ(block_size_class(64u * 1024), 64u * 1024);
  EXPECT_EQ(block_size_class(64u * 1024 + 1), 80u * 1024); // 128 KiB in steps of 16 KiB
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<std::size_t> size(1, std::size_t{3} << 30);
  for (int i = 0; i < 20000; ++i) {
    const std::size_t b = size(rng);
    const std::size_t c = block_size_class(b);
    ASSERT_GE(c, b);
    ASSERT_EQ(c % (16u * 1024), 0u) << b; // (aligned_alloc wants a multiple of 64)
    if (b > 64u * 1024) {
      ASSERT_LT(static_cast<double>(c - b), 0.25 * static_cast<double>(b)) << b;
    }
    ASSERT_EQ(block_size_class(c), c) << b;     // a class is its own class
    ASSERT_LE(block_size_class(b - 1), c) << b; // monotone
  }
}

TEST(HostCache, AFreedBlockComesBackForItsClassOnly) {
  release_host_cache();
  ASSERT_EQ(host_cache_parked_bytes(), 0u);
  constexpr std::size_t kOdd = 1000003; // class 1,048,576 (a MiB in steps of 128 KiB)
  void* a = host_cache_alloc(kOdd);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  std::memset(a, 0x5a, kOdd); // every byte asked for is usable
  host_cache_free(a, kOdd);
  EXPECT_EQ(host_cache_parked_bytes(), host_cache_block_bytes(kOdd));
  // Another size of the same class: the same block, and nothing parked after.
  void* b = host_cache_alloc(kOdd + 40000);
  EXPECT_EQ(b, a);
  EXPECT_EQ(host_cache_parked_bytes(), 0u);
  // A size of another class is a new block while b is parked.
  host_cache_free(b, kOdd + 40000);
  void* c = host_cache_alloc(3 * kOdd);
  EXPECT_NE(c, a);
  EXPECT_EQ(host_cache_parked_bytes(), host_cache_block_bytes(kOdd));
  host_cache_free(c, 3 * kOdd);
  EXPECT_EQ(host_cache_parked_bytes(),
            host_cache_block_bytes(kOdd) + host_cache_block_bytes(3 * kOdd));
  // A block of 2 MiB or more sits on 2 MiB boundaries (for huge pages).
  void* huge = host_cache_alloc(3 * 1024 * 1024 + 7);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(huge) % (2 * 1024 * 1024), 0u);
  std::memset(huge, 0x33, 3 * 1024 * 1024 + 7);
  host_cache_free(huge, 3 * 1024 * 1024 + 7);
  release_host_cache();
  EXPECT_EQ(host_cache_parked_bytes(), 0u);
  host_cache_free(nullptr, 12345); // nothing to park
  EXPECT_EQ(host_cache_parked_bytes(), 0u);
}

TEST(HostCache, NoMoreThanTheCapIsParked) {
  release_host_cache();
  EXPECT_EQ(host_cache_block_bytes(std::size_t{1} << 62), 0u); // too large: no class
  EXPECT_THROW(static_cast<void>(host_cache_alloc(std::size_t{1} << 62)), std::bad_alloc);
  const std::size_t was = set_host_cache_limit(3 * 1024 * 1024 / 2); // 1.5 MiB
  EXPECT_EQ(was, kHostCacheBytes);
  struct Restore {
    std::size_t limit;
    ~Restore() { set_host_cache_limit(limit); }
  } restore{was};
  constexpr std::size_t kOdd = 1000003; // a class of 1 MiB
  void* a = host_cache_alloc(kOdd);
  void* b = host_cache_alloc(kOdd);
  ASSERT_NE(a, b);
  host_cache_free(a, kOdd);
  EXPECT_EQ(host_cache_parked_bytes(), host_cache_block_bytes(kOdd));
  host_cache_free(b, kOdd); // over the cap: given back
  EXPECT_EQ(host_cache_parked_bytes(), host_cache_block_bytes(kOdd));
  EXPECT_EQ(host_cache_alloc(kOdd), a); // the parked one
  host_cache_free(a, kOdd);
  release_host_cache();
}

TEST(HostCache, HostBlocksGoBackToItAndComeOutOfItAgain) {
  release_host_cache();
  const std::byte* first = nullptr;
  {
    // 777,777 stereo int16 frames: 3,111,108 bytes and the 64 past the end.
    HostBlock blk = make_host_block(SampleType::i16, 2, 777777);
    EXPECT_EQ(blk.capacity, 777777);
    EXPECT_EQ(blk.frames, 0);
    std::memset(blk.data.get(), 1, 777777u * 2 * 2 + 64);
    first = blk.data.get();
    EXPECT_EQ(host_cache_parked_bytes(), 0u);
  }
  EXPECT_EQ(host_cache_parked_bytes(), host_cache_block_bytes(777777u * 4 + 64));
  EXPECT_EQ(host_cache_block_bytes(777777u * 4 + 64), 4u * 1024 * 1024); // whole 2 MiB pages
  // The next file's block of another length in the same class: the same memory.
  HostBlock again = make_host_block(SampleType::i16, 2, 760001);
  EXPECT_EQ(again.data.get(), first);
  EXPECT_EQ(host_cache_parked_bytes(), 0u);
  EXPECT_THROW(static_cast<void>(make_host_block(SampleType::i16, 2, -1)), std::bad_alloc);
  EXPECT_THROW(static_cast<void>(make_host_block(SampleType::f32, 1 << 20, std::int64_t{1} << 40)),
               std::bad_alloc);
  // Blocks in use at once are distinct.
  std::set<const std::byte*> seen{again.data.get()};
  std::vector<HostBlock> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(make_host_block(SampleType::f32, 3, 99991));
    EXPECT_TRUE(seen.insert(held.back().data.get()).second);
  }
  held.clear();
  again = HostBlock{};
  EXPECT_GT(host_cache_parked_bytes(), 0u);
  release_host_cache();
}

} // namespace
} // namespace sigstream
