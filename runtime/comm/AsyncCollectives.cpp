//===- AsyncCollectives.cpp - Collectives that run while the caller computes
//-===//
//
// The started collectives of mgrt_comm_reduce_scatter_start (CommGroup.h:
// addPending / waitPending). MPI moves a non-blocking collective forward
// only inside MPI calls, so a caller that computes between the start and
// the wait would leave it idle. Where MPI_Init_thread provided
// MPI_THREAD_MULTIPLE, a progress thread tests the pending requests while
// any is pending (every MEGAGRAPH_COMM_PROGRESS_US microseconds, default
// 50; it sleeps on a condition variable otherwise), so the transfer
// overlaps the caller's work. Without it, the caller's later MPI calls and
// the wait move it. MEGAGRAPH_COMM_ASYNC=0 makes every start wait at once
// (A/B runs); MEGAGRAPH_COMM_ASYNC_STATS=1 prints, per rank at the end,
// how many waits found their collective already complete (it overlapped
// the caller's work entirely).
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace mgrt::comm {
namespace {

struct Entry {
  PendingCollective pending;
  bool done = false;
  int rc = MGRT_OK;
};

struct Registry {
  std::mutex mu;
  std::condition_variable wake;
  std::map<int64_t, Entry> entries;
  int64_t next = 1;
  std::thread thread;
  bool stop = false;
  int64_t waits = 0, completeAtWait = 0; // MEGAGRAPH_COMM_ASYNC_STATS

  /// Tests every pending request once (mu held).
  void testAll() {
    for (auto &[handle, e] : entries) {
      if (e.done)
        continue;
      int flag = 0;
      if (int rc =
              checkMpi(MPI_Test(&e.pending.request, &flag, MPI_STATUS_IGNORE),
                       "MPI_Test")) {
        e.rc = rc;
        e.done = true;
      } else if (flag) {
        e.done = true;
      }
    }
  }

  bool anyOpen() const {
    for (const auto &kv : entries)
      if (!kv.second.done)
        return true;
    return false;
  }

  void progressLoop(std::chrono::microseconds period) {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      if (!anyOpen()) {
        wake.wait(lock);
        continue;
      }
      testAll();
      lock.unlock();
      std::this_thread::sleep_for(period);
      lock.lock();
    }
  }
};

Registry &registry() {
  static Registry *r = new Registry; // outlives static destructors
  return *r;
}

bool asyncEnabled() {
  static const bool on = [] {
    const char *v = std::getenv("MEGAGRAPH_COMM_ASYNC");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

std::chrono::microseconds progressPeriod() {
  const char *v = std::getenv("MEGAGRAPH_COMM_PROGRESS_US");
  long us = v ? std::strtol(v, nullptr, 10) : 50;
  return std::chrono::microseconds(us > 0 ? us : 50);
}

/// Finishes a completed entry: AVG divides the sum.
int finish(const Entry &e) {
  if (e.rc != MGRT_OK)
    return e.rc;
  const PendingCollective &p = e.pending;
  if (p.op == MGRT_COMM_AVG)
    divideBy(p.recv, p.count, p.dtype, p.groupSize);
  return MGRT_OK;
}

} // namespace

int64_t addPending(const PendingCollective &pending) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const int64_t handle = r.next++;
  Entry &e = r.entries[handle];
  e.pending = pending;
  e.done = pending.request == MPI_REQUEST_NULL;
  if (!e.done && mpiThreadLevel() >= MPI_THREAD_MULTIPLE) {
    if (!r.thread.joinable()) {
      r.stop = false;
      const auto period = progressPeriod();
      r.thread = std::thread([&r, period] { r.progressLoop(period); });
    }
    r.wake.notify_one();
  }
  return handle;
}

int waitPending(int64_t handle, const char *call) {
  Registry &r = registry();
  const bool threaded = mpiThreadLevel() >= MPI_THREAD_MULTIPLE;
  const double limit = timeoutSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (long spins = 0;; ++spins) {
    {
      std::lock_guard<std::mutex> lock(r.mu);
      auto it = r.entries.find(handle);
      if (it == r.entries.end())
        return fail(MGRT_ERR_ARGUMENT, call,
                    "request %lld was not started or was already waited for",
                    (long long)handle);
      if (spins == 0) {
        ++r.waits;
        r.completeAtWait += it->second.done;
      }
      if (!threaded && !it->second.done)
        r.testAll();
      if (it->second.done) {
        const Entry e = it->second;
        r.entries.erase(it);
        return finish(e);
      }
    }
    if (spins > 2000) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (limit > 0 && std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                               .count() > limit)
        return fail(MGRT_ERR_COMM, call,
                    "no progress for %.0f s: a peer failed, skipped this "
                    "call or is stuck (MEGAGRAPH_COMM_TIMEOUT sets the limit)",
                    limit);
    } else {
      std::this_thread::yield();
    }
  }
}

void stopProgress() {
  Registry &r = registry();
  const char *stats = std::getenv("MEGAGRAPH_COMM_ASYNC_STATS");
  if (stats && std::strcmp(stats, "1") == 0 && r.waits > 0) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "megagraph comm: rank %d: %lld of %lld started collectives "
                 "were complete at their wait (progress thread %s)\n",
                 rank, (long long)r.completeAtWait, (long long)r.waits,
                 r.thread.joinable() ? "on" : "off");
  }
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.stop = true;
  }
  r.wake.notify_all();
  if (r.thread.joinable())
    r.thread.join();
}

bool asyncCollectives() { return asyncEnabled(); }

} // namespace mgrt::comm
