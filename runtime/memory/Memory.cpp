//===- Memory.cpp - Tracked aligned allocation ----------------------------===//
//
// Every runtime and MLIR-emitted allocation goes through here so the driver
// can report the peak memory of a run. `free` gets no size, so each block is
// preceded by a header holding the malloc'ed pointer and the requested size.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

/// Sits immediately before every block handed out; `magic` catches frees of
/// foreign pointers (a compiler or caller bug) before they corrupt the heap.
struct BlockHeader {
  void *base;
  size_t bytes;
  uint64_t magic;
};
constexpr uint64_t kMagic = 0x4d475254424c4b31ull; // "MGRTBLK1"
constexpr size_t kDefaultAlignment = 64;

std::atomic<size_t> currentBytes{0};
std::atomic<size_t> peakBytes{0};

void track(size_t bytes) {
  size_t now = currentBytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t peak = peakBytes.load(std::memory_order_relaxed);
  while (now > peak &&
         !peakBytes.compare_exchange_weak(peak, now, std::memory_order_relaxed))
    ;
}

void *trackedAlloc(size_t alignment, size_t bytes) {
  if (alignment < alignof(BlockHeader))
    alignment = alignof(BlockHeader);
  if (alignment & (alignment - 1))
    return nullptr; // not a power of two
  size_t total = bytes + alignment + sizeof(BlockHeader);
  if (total < bytes)
    return nullptr; // overflow
  void *base = std::malloc(total);
  if (!base)
    return nullptr;
  uintptr_t first = reinterpret_cast<uintptr_t>(base) + sizeof(BlockHeader);
  uintptr_t user = (first + alignment - 1) & ~(uintptr_t)(alignment - 1);
  BlockHeader *h = reinterpret_cast<BlockHeader *>(user) - 1;
  h->base = base;
  h->bytes = bytes;
  h->magic = kMagic;
  track(bytes);
  return reinterpret_cast<void *>(user);
}

} // namespace

extern "C" {

void *mgrt_alloc(size_t bytes) {
  return trackedAlloc(kDefaultAlignment, bytes);
}

void mgrt_free(void *p) {
  if (!p)
    return;
  BlockHeader *h = static_cast<BlockHeader *>(p) - 1;
  if (h->magic != kMagic) {
    std::fprintf(stderr,
                 "megagraph runtime: mgrt_free(%p): not a block of "
                 "the runtime allocator (double free?)\n",
                 p);
    std::abort();
  }
  h->magic = 0;
  currentBytes.fetch_sub(h->bytes, std::memory_order_relaxed);
  std::free(h->base);
}

size_t mgrt_current_bytes(void) {
  return currentBytes.load(std::memory_order_relaxed);
}

size_t mgrt_peak_bytes(void) {
  return peakBytes.load(std::memory_order_relaxed);
}

void mgrt_reset_peak(void) {
  peakBytes.store(currentBytes.load(std::memory_order_relaxed),
                  std::memory_order_relaxed);
}

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return trackedAlloc(kDefaultAlignment, size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return trackedAlloc(alignment, size);
}

void _mlir_memref_to_llvm_free(void *ptr) { mgrt_free(ptr); }

} // extern "C"
