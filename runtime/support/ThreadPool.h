//===- ThreadPool.h - The kernels' process-wide thread pool -----*- C++ -*-===//
//
// Internal to the runtime. One pool of numThreads() threads (the calling
// thread counts as worker 0) runs every parallel loop of the kernels, so
// nothing oversubscribes the cores (OpenBLAS is kept single-threaded, see
// Blas.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_THREADPOOL_H
#define MEGAGRAPH_RUNTIME_SUPPORT_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace mgrt {

/// Threads the kernels use: chooseNumThreads (LocalRank.h) of the cores
/// this process may run on (its affinity mask): MEGAGRAPH_NUM_THREADS, else
/// those cores divided among the job's processes on this node. Read once.
int numThreads();

/// This rank's share of the cores (coresOfRank, LocalRank.h): more than
/// numThreads() only when MEGAGRAPH_NUM_THREADS leaves cores free. Read
/// once.
int rankCores();

/// Runs fn(task, worker) for every task in [0, n), tasks handed out
/// dynamically; worker is in [0, numThreads()) and no two concurrent calls
/// share one, so it can index per-thread scratch. Returns when all are done.
/// Nested calls (from inside fn) run inline on the caller's worker.
void parallelFor(int64_t n, const std::function<void(int64_t, int)> &fn);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_THREADPOOL_H
