//===- AsyncCollectives.cpp - Requests of the started collectives ---------===//
//
// The mgrt_comm_request of every started collective
// (mgrt_comm_*_start; CommGroup.h: progressedRequest). MPI moves a
// non-blocking collective forward only inside MPI calls, so a caller that
// computes between the start and the wait would leave it idle. Where
// MPI_Init_thread provided MPI_THREAD_MULTIPLE, a progress thread tests the
// open requests while any is open (every MEGAGRAPH_COMM_PROGRESS_US
// microseconds, default 50; it sleeps on a condition variable otherwise),
// so the transfer overlaps the caller's work. mgrt_comm_test and the wait
// also test the request themselves (a caller that asks is not computing),
// so neither depends on the thread's period.
// Started collectives run in the background only on a rank that owns at
// least kAsyncMinCores cores (support/LocalRank.h coresOfRank): the
// progress thread polls every 50 us while a request is open, and on a rank
// with one core, or a share of one, it takes that core from the kernels
// for nothing, since a shared-memory transfer needs a core to copy it
// anyway (4 ranks on 2 cores, the plan-alternatives model: dp=4 zero=3
// 12.9 ms a step in the background, 10.0 ms completed at the start; plain
// dp 9.1 and 8.6 ms). MEGAGRAPH_COMM_ASYNC=0 / 1 makes every started
// reduce-scatter, all-reduce and all-gather complete at its start / run in
// the background (A/B runs, and the tests of the background path);
// MEGAGRAPH_COMM_ASYNC_STATS=1 prints, per rank at the end, how many waits
// found their request already complete (it overlapped the caller's work
// entirely).
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"
#include "support/ThreadPool.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace mgrt::comm {
namespace {

struct ProgressedRequest;

/// The open requests and the thread that tests them.
struct Registry {
  std::mutex mu;
  std::condition_variable wake;
  std::set<ProgressedRequest *> open; // not yet complete
  std::thread thread;
  bool stop = false;
  int64_t waits = 0, completeAtWait = 0; // MEGAGRAPH_COMM_ASYNC_STATS

  void testAll(); // mu held
  void progressLoop(std::chrono::microseconds period) {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      if (open.empty()) {
        wake.wait(lock);
        continue;
      }
      testAll();
      // Released while it waits; a new request or the stop wakes it early.
      wake.wait_for(lock, period);
    }
  }
};

Registry &registry() {
  static Registry *r = new Registry; // outlives static destructors
  return *r;
}

bool threaded() { return mpiThreadLevel() >= MPI_THREAD_MULTIPLE; }

std::chrono::microseconds progressPeriod() {
  const char *v = std::getenv("MEGAGRAPH_COMM_PROGRESS_US");
  long us = v ? std::strtol(v, nullptr, 10) : 50;
  return std::chrono::microseconds(us > 0 ? us : 50);
}

struct ProgressedRequest final : mgrt_comm_request {
  MPI_Request request = MPI_REQUEST_NULL;
  void *recv = nullptr;
  int64_t count = 0;
  int dtype = 0, op = 0, groupSize = 1;
  std::vector<std::vector<int>> keep; // read by MPI until completion
  bool done = false;
  int rc = MGRT_OK;

  /// Tests the MPI request once (the registry's mu held).
  void poll() {
    if (done)
      return;
    int flag = 0;
    if (int e = checkMpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE),
                         "MPI_Test")) {
      rc = e;
      done = true;
    } else if (flag) {
      done = true;
    }
    if (done)
      registry().open.erase(this);
  }

  int test(int *isDone) override {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    poll();
    *isDone = done;
    return done ? rc : MGRT_OK;
  }

  int wait() override {
    Registry &r = registry();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      ++r.waits;
      r.completeAtWait += done;
    }
    // The waiting caller has nothing left to overlap: it drives the
    // request itself rather than wait for the progress thread's next
    // period (which, with more ranks than cores, also waits for a core).
    if (int e = pollUntilDone(
            [&](bool &isDone) {
              std::lock_guard<std::mutex> lock(r.mu);
              poll();
              isDone = done;
              return done ? rc : MGRT_OK;
            },
            "mgrt_comm_wait"))
      return e;
    if (op == MGRT_COMM_AVG)
      divideBy(recv, count, dtype, groupSize);
    return MGRT_OK;
  }

  ~ProgressedRequest() override {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.open.erase(this);
  }
};

void Registry::testAll() {
  // poll() erases completed requests from `open`.
  for (auto it = open.begin(); it != open.end();) {
    ProgressedRequest *p = *it++;
    p->poll();
  }
}

} // namespace

mgrt_comm_request *progressedRequest(MPI_Request request, void *recv,
                                     int64_t count, int dtype, int op,
                                     int groupSize,
                                     std::vector<std::vector<int>> keep) {
  auto *p = new ProgressedRequest;
  p->keep = std::move(keep);
  p->request = request;
  p->recv = recv;
  p->count = count;
  p->dtype = dtype;
  p->op = op;
  p->groupSize = groupSize;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (request == MPI_REQUEST_NULL) {
    p->done = true;
    return p;
  }
  r.open.insert(p);
  if (threaded()) {
    if (!r.thread.joinable()) {
      r.stop = false;
      const auto period = progressPeriod();
      r.thread = std::thread([&r, period] { r.progressLoop(period); });
    }
    r.wake.notify_one();
  }
  return p;
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

bool asyncCollectives() {
  static const bool on = [] {
    const char *v = std::getenv("MEGAGRAPH_COMM_ASYNC");
    if (v && *v)
      return std::strcmp(v, "0") != 0;
    return rankCores() >= kAsyncMinCores;
  }();
  return on;
}

} // namespace mgrt::comm
