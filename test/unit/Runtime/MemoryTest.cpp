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

TEST(Memory, ForeignFreeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the pool has threads
  int *p = static_cast<int *>(std::malloc(256));
  std::memset(p, 0, 256);
  EXPECT_DEATH(mgrt_free(p + 16), "not a block of the runtime allocator");
  std::free(p);
}

TEST(Runtime, Version) {
  EXPECT_STRNE(mgrt_version(), "");
  EXPECT_EQ(std::string(mgrt_version()).find('.') != std::string::npos, true);
}

} // namespace
