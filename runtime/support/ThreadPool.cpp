//===- ThreadPool.cpp - The kernels' process-wide thread pool -------------===//
//
// A fixed set of workers sleeping on a condition variable; each parallelFor
// publishes one job (a task counter) and the caller works on it too. Calls
// from different user threads are serialized.
//
//===----------------------------------------------------------------------===//

#include "support/ThreadPool.h"

#include "support/LocalRank.h"

#include "megagraph/Runtime.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#ifdef __linux__
#include <sched.h>
#endif
#include <thread>
#include <vector>

namespace mgrt {
namespace {

thread_local bool insidePool = false;
thread_local int poolWorkerId = 0;

class Pool {
public:
  explicit Pool(int threads) {
    for (int w = 1; w < threads; ++w)
      workers.emplace_back([this, w] { workerLoop(w); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

  void run(int64_t n, const std::function<void(int64_t, int)> &fn) {
    if (n <= 0)
      return;
    if (insidePool || workers.empty() || n == 1) {
      for (int64_t i = 0; i < n; ++i)
        fn(i, poolWorkerId);
      return;
    }
    std::lock_guard<std::mutex> submit(submitMutex);
    {
      std::lock_guard<std::mutex> lock(mutex);
      job = &fn;
      jobSize = n;
      next.store(0, std::memory_order_relaxed);
      busy = static_cast<int>(workers.size());
      ++generation;
    }
    wake.notify_all();
    insidePool = true;
    work(0);
    insidePool = false;
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return busy == 0; });
    job = nullptr;
  }

private:
  void work(int worker) {
    const std::function<void(int64_t, int)> &fn = *job;
    for (int64_t i;
         (i = next.fetch_add(1, std::memory_order_relaxed)) < jobSize;)
      fn(i, worker);
  }

  void workerLoop(int worker) {
    insidePool = true;
    poolWorkerId = worker;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      lock.unlock();
      work(worker);
      lock.lock();
      if (--busy == 0)
        done.notify_one();
    }
  }

  std::vector<std::thread> workers;
  std::mutex submitMutex; // one job at a time
  std::mutex mutex;       // guards everything below but `next`
  std::condition_variable wake, done;
  const std::function<void(int64_t, int)> *job = nullptr;
  int64_t jobSize = 0;
  std::atomic<int64_t> next{0};
  int busy = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

} // namespace

namespace {

/// The cores this process may run on (its affinity mask).
int affinityCores() {
  int cores = 0;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    cores = CPU_COUNT(&set);
#endif
  if (cores <= 0)
    cores = static_cast<int>(std::thread::hardware_concurrency());
  return cores;
}

const char *environment(const char *name) { return std::getenv(name); }

} // namespace

int numThreads() {
  static const int threads = chooseNumThreads(affinityCores(), environment);
  return threads;
}

int rankCores() {
  static const int cores = coresOfRank(affinityCores(), environment);
  return cores;
}

void parallelFor(int64_t n, const std::function<void(int64_t, int)> &fn) {
  static Pool pool(numThreads());
  pool.run(n, fn);
}

} // namespace mgrt

/// Ranges per thread: enough for the dynamic hand-out to even out threads
/// that another process slows down, few enough to keep the dispatch cheap.
constexpr int64_t kRangesPerThread = 4;

extern "C" void mgrt_parallel_for(mgrt_loop_body body, void *ctx, int64_t n,
                                  int64_t grain) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  // At most n / grain ranges, so that each (but the last) has grain or more.
  const int64_t ranges = std::min(
      n / grain, static_cast<int64_t>(mgrt::numThreads()) * kRangesPerThread);
  if (ranges <= 1) {
    body(ctx, 0, n);
    return;
  }
  const int64_t per = (n + ranges - 1) / ranges;
  mgrt::parallelFor((n + per - 1) / per, [&](int64_t r, int) {
    body(ctx, r * per, std::min(n, (r + 1) * per));
  });
}
