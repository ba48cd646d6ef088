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
// Large blocks are cached: a training step allocates and frees the same
// large buffers every step, and glibc returns each of them to the kernel
// (munmap) when freed, so every step faulted their pages in again (15% of a
// step on the training benchmark). A freed block of at least
// kCacheMinBytes stays mapped in a cache keyed by its size (rounded up to
// kCacheGranule) and a later request of that size, or up to a quarter
// smaller, takes it back. The cache
// never holds more than the high-water mark of the large blocks in use: an
// allocation that misses first releases cached blocks (the fewest bytes
// that make room) until live + cached + the new block fit under it, so the
// resident memory stays that of the step's peak. MEGAGRAPH_ALLOC_CACHE=0 in the
// environment turns the cache off. The tracked bytes (mgrt_current_bytes, the
// peak, the cap) count the requested sizes of the blocks in use only.
//
// mgrt_stage_global gives a pipelined program's mutable globals their
// per-rank storage (a copy of the static global's bytes, made on first
// use): model state that lives as long as the process, like the static
// globals of other programs, so it is not counted in the tracked bytes.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "megagraph/ByteCount.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

/// Sits immediately before every block handed out; `magic` catches frees of
/// foreign pointers (a compiler or caller bug) before they corrupt the heap.
struct BlockHeader {
  void *base;
  size_t bytes;    // requested
  size_t capacity; // malloc'ed; a multiple of kCacheGranule if cached
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

constexpr size_t kCacheMinBytes = size_t(256) << 10;
constexpr size_t kCacheGranule = 4096;
/// A cached block serves requests down to 1 / (1 + 1/kFitSlack) of its size.
constexpr size_t kFitSlack = 4;

/// The freed large blocks, by capacity, and the bytes of large blocks in
/// use and cached. Guarded by `mutex`; small blocks never come here.
struct BlockCache {
  std::mutex mutex;
  std::multimap<size_t, void *> blocks;
  size_t cached = 0, live = 0, highWater = 0;
  bool enabled = [] {
    const char *env = std::getenv("MEGAGRAPH_ALLOC_CACHE");
    return !(env && env[0] == '0');
  }();

  /// A block of at least `capacity` bytes and its actual capacity: the
  /// smallest cached one of at most kFitSlack times the request if there is
  /// one, else a new one after releasing what would take the held bytes
  /// over the high-water mark (each time the smallest cached block that
  /// covers the excess, else the largest, so that no more is released than
  /// needed).
  void *take(size_t capacity, size_t &actual) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.lower_bound(capacity);
    if (it != blocks.end() && it->first - capacity <= capacity / kFitSlack) {
      void *base = it->second;
      actual = it->first;
      blocks.erase(it);
      cached -= actual;
      live += actual;
      return base;
    }
    const size_t mark = std::max(highWater, live + capacity);
    while (!blocks.empty() && live + cached + capacity > mark) {
      auto victim = blocks.lower_bound(live + cached + capacity - mark);
      if (victim == blocks.end())
        victim = std::prev(blocks.end());
      cached -= victim->first;
      std::free(victim->second);
      blocks.erase(victim);
    }
    void *base = std::malloc(capacity);
    if (base) {
      actual = capacity;
      live += capacity;
      highWater = std::max(highWater, live);
    }
    return base;
  }

  void give(void *base, size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex);
    live -= capacity;
    cached += capacity;
    blocks.emplace(capacity, base);
  }

  size_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return cached;
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &b : blocks)
      std::free(b.second);
    blocks.clear();
    cached = 0;
    highWater = live;
  }
};

BlockCache &blockCache() {
  static BlockCache *cache = new BlockCache; // never destroyed: used at exit
  return *cache;
}

void *trackedAlloc(size_t alignment, size_t bytes) {
  if (alignment < alignof(BlockHeader))
    alignment = alignof(BlockHeader);
  if (alignment & (alignment - 1))
    return nullptr; // not a power of two
  size_t total = bytes + alignment + sizeof(BlockHeader);
  if (total < bytes)
    return nullptr; // overflow
  const bool cached = total >= kCacheMinBytes && blockCache().enabled;
  if (cached) {
    total = (total + kCacheGranule - 1) & ~(kCacheGranule - 1);
    if (total < bytes)
      return nullptr;
  }
  // A cached block may be a little larger: `total` becomes its capacity.
  void *base = cached ? blockCache().take(total, total) : std::malloc(total);
  if (!base)
    return nullptr;
  uintptr_t first = reinterpret_cast<uintptr_t>(base) + sizeof(BlockHeader);
  uintptr_t user = (first + alignment - 1) & ~(uintptr_t)(alignment - 1);
  BlockHeader *h = reinterpret_cast<BlockHeader *>(user) - 1;
  h->base = base;
  h->bytes = bytes;
  h->capacity = cached ? total : 0;
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
  if (h->capacity)
    blockCache().give(h->base, h->capacity);
  else
    std::free(h->base);
}

size_t mgrt_cached_bytes(void) { return blockCache().cachedBytes(); }

void mgrt_release_cached(void) { blockCache().release(); }

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

namespace {
/// mgrt_stage_global's copies, by the static global's address.
struct StageGlobals {
  std::mutex lock;
  std::map<const void *, void *> storage;
  size_t bytes = 0;
};

StageGlobals &stageGlobals() {
  static StageGlobals *g = new StageGlobals; // outlives static destructors
  return *g;
}
} // namespace

void *mgrt_stage_global(const void *host, int64_t bytes) {
  StageGlobals &g = stageGlobals();
  std::lock_guard<std::mutex> guard(g.lock);
  auto it = g.storage.find(host);
  if (it != g.storage.end())
    return it->second;
  const size_t n = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  void *p = std::aligned_alloc(64, (n + 63) / 64 * 64);
  if (!p) {
    std::fprintf(stderr,
                 "megagraph runtime: out of memory materialising a global "
                 "of %zu bytes\n",
                 n);
    std::abort();
  }
  std::memcpy(p, host, static_cast<size_t>(bytes));
  g.storage.emplace(host, p);
  g.bytes += static_cast<size_t>(bytes);
  return p;
}

void *mgrt_stage_global_find(const void *host) {
  StageGlobals &g = stageGlobals();
  std::lock_guard<std::mutex> guard(g.lock);
  auto it = g.storage.find(host);
  return it == g.storage.end() ? nullptr : it->second;
}

size_t mgrt_stage_global_bytes(void) {
  StageGlobals &g = stageGlobals();
  std::lock_guard<std::mutex> guard(g.lock);
  return g.bytes;
}
