//===- MemoryTest.cpp - Tracked allocation and the MLIR hooks -------------===//

#include "megagraph/Runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace {

bool aligned(const void *p, size_t a) {
  return reinterpret_cast<uintptr_t>(p) % a == 0;
}

TEST(Memory, CurrentAndPeakAreExact) {
  const size_t base = mgrt_current_bytes();
  mgrt_reset_peak();
  EXPECT_EQ(mgrt_peak_bytes(), base);
  void *a = mgrt_alloc(1000);
  void *b = mgrt_alloc(24);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(aligned(a, 64) && aligned(b, 64));
  std::memset(a, 1, 1000);
  EXPECT_EQ(mgrt_current_bytes(), base + 1024);
  EXPECT_EQ(mgrt_peak_bytes(), base + 1024);
  mgrt_free(a);
  EXPECT_EQ(mgrt_current_bytes(), base + 24);
  EXPECT_EQ(mgrt_peak_bytes(), base + 1024);
  void *c = mgrt_alloc(500);
  EXPECT_EQ(mgrt_peak_bytes(), base + 1024); // 524 < 1024
  mgrt_reset_peak();
  EXPECT_EQ(mgrt_peak_bytes(), base + 524);
  mgrt_free(b);
  mgrt_free(c);
  mgrt_free(nullptr);
  EXPECT_EQ(mgrt_current_bytes(), base);
}

TEST(Memory, ZeroBytesIsAValidBlock) {
  const size_t base = mgrt_current_bytes();
  void *p = mgrt_alloc(0), *q = mgrt_alloc(0);
  ASSERT_TRUE(p && q);
  EXPECT_NE(p, q);
  EXPECT_EQ(mgrt_current_bytes(), base);
  mgrt_free(p);
  mgrt_free(q);
}

TEST(Memory, MlirHooksAreTrackedAndAligned) {
  const size_t base = mgrt_current_bytes();
  void *p = _mlir_memref_to_llvm_alloc(100);
  ASSERT_TRUE(p);
  EXPECT_TRUE(aligned(p, 16));
  EXPECT_EQ(mgrt_current_bytes(), base + 100);
  for (size_t a : {8, 16, 64, 128, 4096}) {
    void *q = _mlir_memref_to_llvm_aligned_alloc(a, 3 * a + 1);
    ASSERT_TRUE(q);
    EXPECT_TRUE(aligned(q, a)) << "alignment " << a;
    std::memset(q, 0xab, 3 * a + 1);
    EXPECT_EQ(mgrt_current_bytes(), base + 100 + 3 * a + 1);
    _mlir_memref_to_llvm_free(q);
  }
  EXPECT_EQ(mgrt_current_bytes(), base + 100);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(mgrt_current_bytes(), base);
  // Blocks of one allocator may be released by the other's free.
  void *x = mgrt_alloc(10);
  _mlir_memref_to_llvm_free(x);
  void *y = _mlir_memref_to_llvm_aligned_alloc(256, 10);
  mgrt_free(y);
  EXPECT_EQ(mgrt_current_bytes(), base);
}

TEST(Memory, ThreadSafeCounting) {
  const size_t base = mgrt_current_bytes();
  mgrt_reset_peak();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 20000; ++i)
        mgrt_free(mgrt_alloc(static_cast<size_t>(i % 97) + 1));
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(mgrt_current_bytes(), base);
  EXPECT_LE(mgrt_peak_bytes(), base + 4 * 97);
}

TEST(Memory, LargeBlocksAreReusedNotReturned) {
  mgrt_release_cached();
  const size_t base = mgrt_current_bytes();
  const size_t big = size_t(3) << 20;
  void *a = mgrt_alloc(big);
  ASSERT_TRUE(a);
  std::memset(a, 7, big);
  mgrt_free(a);
  EXPECT_EQ(mgrt_current_bytes(), base);
  EXPECT_GE(mgrt_cached_bytes(), big); // kept mapped, not counted as in use
  void *b = mgrt_alloc(big);           // the same size takes it back
  EXPECT_EQ(b, a);
  EXPECT_EQ(mgrt_cached_bytes(), 0u);
  EXPECT_EQ(mgrt_current_bytes(), base + big);
  // Another alignment of the same size class also fits the block.
  mgrt_free(b);
  void *c = _mlir_memref_to_llvm_aligned_alloc(128, big);
  EXPECT_TRUE(aligned(c, 128));
  _mlir_memref_to_llvm_free(c);
  // Small blocks are not cached.
  mgrt_release_cached();
  mgrt_free(mgrt_alloc(1000));
  EXPECT_EQ(mgrt_cached_bytes(), 0u);
  EXPECT_EQ(mgrt_current_bytes(), base);
}

TEST(Memory, ACachedBlockServesSlightlySmallerRequests) {
  mgrt_release_cached();
  const size_t mib = size_t(1) << 20;
  void *a = mgrt_alloc(4 * mib);
  ASSERT_TRUE(a);
  mgrt_free(a);
  void *b = mgrt_alloc(3 * mib + mib / 2); // within a quarter: reused
  EXPECT_EQ(b, a);
  EXPECT_EQ(mgrt_cached_bytes(), 0u);
  mgrt_free(b);
  EXPECT_GE(mgrt_cached_bytes(), 4 * mib); // back at its full capacity
  // Half the size: a block of its own, and 4 + 2 MiB held would be over
  // the high-water mark (4 MiB), so the cached block is released first.
  void *c = mgrt_alloc(2 * mib);
  ASSERT_TRUE(c);
  EXPECT_EQ(mgrt_cached_bytes(), 0u);
  mgrt_free(c);
  EXPECT_GE(mgrt_cached_bytes(), 2 * mib);
  mgrt_release_cached();
}

TEST(Memory, CacheStaysUnderTheHighWaterMark) {
  mgrt_release_cached(); // the high-water mark restarts from what is live
  const size_t mib = size_t(1) << 20;
  // 4 + 4 MiB live at once: the high-water mark is about 8 MiB.
  void *a = mgrt_alloc(4 * mib), *b = mgrt_alloc(4 * mib);
  mgrt_free(a);
  mgrt_free(b);
  EXPECT_GE(mgrt_cached_bytes(), 8 * mib);
  // 6 MiB fits no cached block: both 4 MiB blocks would take the held
  // bytes to 14 MiB, over the mark, so they are released first.
  void *c = mgrt_alloc(6 * mib);
  ASSERT_TRUE(c);
  EXPECT_LE(mgrt_cached_bytes(), 4 * mib + 2 * 4096);
  mgrt_free(c);
  EXPECT_LE(mgrt_cached_bytes(), 8 * mib + 3 * 4096);
  mgrt_release_cached();
  EXPECT_EQ(mgrt_cached_bytes(), 0u);
}

TEST(Memory, ForeignFreeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the pool has threads
  int *p = static_cast<int *>(std::malloc(256));
  std::memset(p, 0, 256);
  EXPECT_DEATH(mgrt_free(p + 16), "not a block of the runtime allocator");
  std::free(p);
}

TEST(Memory, ParseBytes) {
  size_t b = 0;
  EXPECT_EQ(mgrt_parse_bytes("1073741824", &b), MGRT_OK);
  EXPECT_EQ(b, 1073741824u);
  EXPECT_EQ(mgrt_parse_bytes("2GiB", &b), MGRT_OK);
  EXPECT_EQ(b, 2ull << 30);
  EXPECT_EQ(mgrt_parse_bytes("512MiB", &b), MGRT_OK);
  EXPECT_EQ(b, 512ull << 20);
  EXPECT_EQ(mgrt_parse_bytes("1.5G", &b), MGRT_OK);
  EXPECT_EQ(b, 3ull << 29);
  EXPECT_EQ(mgrt_parse_bytes("3 kb", &b), MGRT_OK);
  EXPECT_EQ(b, 3000u);
  EXPECT_EQ(mgrt_parse_bytes("80GB", &b), MGRT_OK);
  EXPECT_EQ(b, 80000000000ull);
  for (const char *bad : {"", "GiB", "-1", "2 parsecs", "1e400"})
    EXPECT_EQ(mgrt_parse_bytes(bad, &b), MGRT_ERR_ARGUMENT) << bad;
}

TEST(Memory, CapAllowsUpToTheCap) {
  const size_t base = mgrt_current_bytes();
  mgrt_set_memory_cap(base + 4096);
  EXPECT_EQ(mgrt_memory_cap(), base + 4096);
  void *a = mgrt_alloc(4000);
  void *b = mgrt_alloc(96); // exactly at the cap
  ASSERT_TRUE(a && b);
  mgrt_free(a);
  void *c = _mlir_memref_to_llvm_aligned_alloc(128, 4000); // freed room
  ASSERT_TRUE(c);
  mgrt_free(b);
  mgrt_free(c);
  mgrt_set_memory_cap(0);
  EXPECT_EQ(mgrt_memory_cap(), 0u);
}

TEST(Memory, OverTheCapExitsWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const size_t base = mgrt_current_bytes();
  EXPECT_EXIT(
      {
        mgrt_set_memory_cap(base + 1000);
        void *a = mgrt_alloc(600);
        (void)a;
        (void)mgrt_alloc(401); // 1001 > 1000
      },
      ::testing::ExitedWithCode(MGRT_EXIT_OUT_OF_MEMORY),
      "megagraph: out of device memory: requested 401 bytes .*in use " +
          std::to_string(base + 600) + " bytes .*cap " +
          std::to_string(base + 1000) + " bytes");
  // The MLIR hooks (compiled code) stop the same way.
  EXPECT_EXIT(
      {
        mgrt_set_memory_cap(base + 100);
        (void)_mlir_memref_to_llvm_alloc(101);
      },
      ::testing::ExitedWithCode(MGRT_EXIT_OUT_OF_MEMORY),
      "out of device memory: requested 101 bytes");
  EXPECT_EQ(mgrt_memory_cap(), 0u); // the children's caps stay theirs
}

TEST(Runtime, Version) {
  EXPECT_STRNE(mgrt_version(), "");
  EXPECT_EQ(std::string(mgrt_version()).find('.') != std::string::npos, true);
}

} // namespace
