//===- Memory.cpp - Tracked aligned allocation ----------------------------===//
//
// Every runtime and MLIR-emitted allocation goes through here so the driver
// can report the peak memory of a run. `free` gets no size, so each block is
// preceded by a header holding the malloc'ed pointer and the requested size.
//
// A per-rank cap (mgrt_set_memory_cap, the driver's --device-memory or
// MEGAGRAPH_DEVICE_MEMORY in the environment) turns an allocation that would
// take the tracked bytes over the cap into a clear message and exit code 3,
// as a device allocator reports out of memory, instead of a crash on NULL.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "megagraph/ByteCount.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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
std::atomic<size_t> capBytes{0}; // 0: no cap

/// Reads MEGAGRAPH_DEVICE_MEMORY once, when the runtime is loaded; a bad
/// value is reported and ignored (the driver validates its own flag).
size_t capFromEnvironment() {
  const char *env = std::getenv("MEGAGRAPH_DEVICE_MEMORY");
  if (!env || !*env)
    return 0;
  size_t bytes = 0;
  if (mgrt_parse_bytes(env, &bytes) != MGRT_OK) {
    std::fprintf(stderr,
                 "megagraph: ignoring MEGAGRAPH_DEVICE_MEMORY='%s' (expected "
                 "bytes such as 1073741824, 512MiB or 2GiB)\n",
                 env);
    return 0;
  }
  return bytes;
}
[[maybe_unused]] const bool capInitialized = [] {
  if (size_t c = capFromEnvironment())
    capBytes.store(c, std::memory_order_relaxed);
  return true;
}();

std::string humanBytes(size_t b) {
  char buf[64];
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", v, units[u]);
  return buf;
}

[[noreturn]] void outOfDeviceMemory(size_t requested, size_t inUse,
                                    size_t cap) {
  std::fflush(stdout);
  std::fprintf(stderr,
               "megagraph: out of device memory: requested %zu bytes (%s), "
               "in use %zu bytes (%s), cap %zu bytes (%s) "
               "(--device-memory / MEGAGRAPH_DEVICE_MEMORY)\n",
               requested, humanBytes(requested).c_str(), inUse,
               humanBytes(inUse).c_str(), cap, humanBytes(cap).c_str());
  std::fflush(stderr);
  // _Exit: other kernel threads may still run; no destructors or atexit.
  std::_Exit(MGRT_EXIT_OUT_OF_MEMORY);
}

void track(size_t bytes) {
  size_t now = currentBytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t cap = capBytes.load(std::memory_order_relaxed);
  if (cap && now > cap)
    outOfDeviceMemory(bytes, now - bytes, cap);
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

void mgrt_set_memory_cap(size_t bytes) {
  capBytes.store(bytes, std::memory_order_relaxed);
}

size_t mgrt_memory_cap(void) {
  return capBytes.load(std::memory_order_relaxed);
}

int mgrt_parse_bytes(const char *text, size_t *bytes) {
  double b;
  if (!text || !bytes || !mgrt_byte_count_parse(text, &b) ||
      b >= 18446744073709551615.0)
    return MGRT_ERR_ARGUMENT;
  *bytes = (size_t)(b + 0.5);
  return MGRT_OK;
}

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return trackedAlloc(kDefaultAlignment, size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return trackedAlloc(alignment, size);
}

void _mlir_memref_to_llvm_free(void *ptr) { mgrt_free(ptr); }

} // extern "C"
