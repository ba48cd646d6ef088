//===- HaloPlan.cpp - The halo exchange of partition parallelism ----------===//
//
// See HaloPlan.h. The plan is computed from the whole CSR on every rank, so
// each rank knows both what it receives (the other blocks' columns its rows
// reference) and what it sends (its columns the other blocks' rows
// reference) without exchanging indices.
//
//===----------------------------------------------------------------------===//

#include "gp/HaloPlan.h"

#include "comm/CommGroup.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace mgrt::gp {

namespace {

constexpr size_t kMaxPlans = 8;

/// A 64-bit hash of the CSR (FNV-1a over the 64-bit words, then mixed).
uint64_t hashCsr(const int64_t *rp, int64_t rs, int64_t n1, const int64_t *ci,
                 int64_t cs, int64_t e) {
  uint64_t h = 1469598103934665603ULL;
  auto add = [&](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
  add(static_cast<uint64_t>(n1));
  add(static_cast<uint64_t>(e));
  for (int64_t i = 0; i < n1; ++i)
    add(static_cast<uint64_t>(rp[i * rs]));
  for (int64_t i = 0; i < e; ++i)
    add(static_cast<uint64_t>(ci[i * cs]));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

/// What MEGAGRAPH_GP_OVERLAP_STATS reports: every halo exchange and the
/// time spent waiting for them (the exchange's exposed time), and of the
/// aggregations that overlapped one: how many, how many of their
/// exchanges completed while the interior rows were computed, and their
/// interior rows and all their rows.
struct OverlapStats {
  std::atomic<int64_t> exchanges{0}, waitNs{0};
  std::atomic<int64_t> overlapped{0}, completed{0}, interior{0}, rows{0};
  int rank = 0;
};
OverlapStats gStats;

void printOverlapStats() {
  const int64_t rows = gStats.rows.load();
  std::fprintf(stderr,
               "megagraph gp: rank %d: %lld of %lld halo exchanges completed "
               "while the interior rows were computed (%lld exchanges in "
               "all, interior rows %.1f%% of the rows aggregated so), %.4f s "
               "waiting for the halo\n",
               gStats.rank, (long long)gStats.completed.load(),
               (long long)gStats.overlapped.load(),
               (long long)gStats.exchanges.load(),
               rows ? 100.0 * gStats.interior.load() / rows : 0.0,
               1e-9 * static_cast<double>(gStats.waitNs.load()));
}

bool overlapStatsOn() {
  static const bool on = [] {
    const char *env = std::getenv(kGpOverlapStatsEnv);
    if (!env || std::atoi(env) == 0)
      return false;
    if (mgrt_comm_group *w = mgrt_comm_world())
      gStats.rank = w->rank;
    std::atexit(printOverlapStats);
    return true;
  }();
  return on;
}

} // namespace

std::unique_ptr<HaloPlan> buildHaloPlan(const mgrt_comm_group *g,
                                        const int64_t *rp, int64_t rs,
                                        const int64_t *ci, int64_t cs,
                                        int64_t N, int64_t E,
                                        const char *kName) {
  auto plan = std::make_unique<HaloPlan>();
  HaloPlan &p = *plan;
  const int P = g->size, r = g->rank;
  p.group = g;
  p.N = N, p.E = E;
  p.rows = N / P;
  p.first = r * p.rows;
  const int64_t n = p.rows;
  auto colAt = [&](int64_t e) {
    const int64_t c = ci[e * cs];
    MGRT_CHECK(c >= 0 && c < N, kName,
               "col_idx[%lld] = %lld is out of range [0, %lld)", (long long)e,
               (long long)c, (long long)N);
    return c;
  };
  p.e0 = rp[p.first * rs];
  const int64_t e1 = rp[(p.first + n) * rs];
  // 1. The halo: columns outside the block, sorted (so grouped by owner).
  std::vector<int64_t> halo;
  for (int64_t e = p.e0; e < e1; ++e) {
    const int64_t c = colAt(e);
    if (c < p.first || c >= p.first + n)
      halo.push_back(c);
  }
  std::sort(halo.begin(), halo.end());
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
  p.halo = static_cast<int64_t>(halo.size());
  p.recvCounts.assign(P, 0);
  for (int64_t c : halo)
    ++p.recvCounts[c / n];
  // 2. The local CSR over [x ; halo].
  p.rowPtr.resize(n + 1);
  for (int64_t i = 0; i <= n; ++i)
    p.rowPtr[i] = rp[(p.first + i) * rs] - p.e0;
  p.col.resize(e1 - p.e0);
  for (int64_t e = p.e0; e < e1; ++e) {
    const int64_t c = ci[e * cs];
    p.col[e - p.e0] = c >= p.first && c < p.first + n
                          ? c - p.first
                          : n + (std::lower_bound(halo.begin(), halo.end(), c) -
                                 halo.begin());
  }
  // 3. What each other block's rows reference in this block, sorted.
  p.sendCounts.assign(P, 0);
  std::vector<int64_t> mine;
  for (int q = 0; q < P; ++q) {
    if (q == r)
      continue;
    mine.clear();
    for (int64_t e = rp[q * n * rs]; e < rp[(q + 1) * n * rs]; ++e) {
      const int64_t c = colAt(e);
      if (c >= p.first && c < p.first + n)
        mine.push_back(c - p.first);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    p.sendCounts[q] = static_cast<int64_t>(mine.size());
    p.sendRows.insert(p.sendRows.end(), mine.begin(), mine.end());
  }
  // 4. Interior rows (every column in the block) and boundary rows.
  for (int64_t i = 0; i < n; ++i) {
    bool local = true;
    for (int64_t e = p.rowPtr[i]; e < p.rowPtr[i + 1] && local; ++e)
      local = p.col[e] < n;
    (local ? p.interior : p.boundary).push_back(i);
  }
  return plan;
}

const HaloPlan &haloPlanOf(const mgrt_comm_group *g, mgrt_memref_i64_1 *rowPtr,
                           mgrt_memref_i64_1 *colIdx, int64_t N,
                           const char *kName) {
  static std::vector<std::unique_ptr<HaloPlan>> plans;
  const int64_t *rp = rowPtr->aligned + rowPtr->offset;
  const int64_t *ci = colIdx->aligned + colIdx->offset;
  const int64_t E = colIdx->sizes[0];
  const uint64_t h =
      hashCsr(rp, rowPtr->strides[0], N + 1, ci, colIdx->strides[0], E);
  for (auto &p : plans)
    if (p->hash == h && p->group == g && p->N == N && p->E == E)
      return *p;
  // Checks the row pointer once per plan (monotone, within the edges).
  int64_t prev = rp[0];
  MGRT_CHECK(prev >= 0, kName, "row_ptr[0] = %lld is negative",
             (long long)prev);
  for (int64_t i = 1; i <= N; ++i) {
    const int64_t next = rp[i * rowPtr->strides[0]];
    MGRT_CHECK(next >= prev && next <= E, kName,
               "row_ptr[%lld] = %lld is not a CSR row pointer of %lld edges",
               (long long)i, (long long)next, (long long)E);
    prev = next;
  }
  auto plan = buildHaloPlan(g, rp, rowPtr->strides[0], ci, colIdx->strides[0],
                            N, E, kName);
  plan->hash = h;
  if (plans.size() == kMaxPlans)
    plans.erase(plans.begin());
  plans.push_back(std::move(plan));
  return *plans.back();
}

namespace {

/// MEGAGRAPH_GP_OVERLAP: 0 off, 1 on, 2 check.
int overlapMode() {
  static const int mode = [] {
    const char *env = std::getenv(kGpOverlapEnv);
    if (!env || !*env)
      return 1;
    if (std::strcmp(env, "check") == 0)
      return 2;
    return std::atoi(env) != 0 ? 1 : 0;
  }();
  return mode;
}

} // namespace

bool haloOverlap() { return overlapMode() != 0; }

bool haloOverlapCheck() { return overlapMode() == 2; }

HaloExchange::HaloExchange(mgrt_comm_group *group, const HaloPlan &p,
                           const float *x, int64_t xStride, int64_t D,
                           float *halo, const char *kName)
    : halo(halo) {
  const int P = group->size;
  const int64_t sendFloats = static_cast<int64_t>(p.sendRows.size()) * D;
  send = static_cast<float *>(
      mgrt_alloc(sizeof(float) * (sendFloats ? sendFloats : 1)));
  MGRT_CHECK(send, kName, "out of memory (%lld floats)", (long long)sendFloats);
  for (size_t k = 0; k < p.sendRows.size(); ++k)
    std::memcpy(send + k * D, x + p.sendRows[k] * xStride, sizeof(float) * D);
  std::vector<int64_t> sendCounts(P), recvCounts(P);
  for (int q = 0; q < P; ++q)
    sendCounts[q] = p.sendCounts[q] * D, recvCounts[q] = p.recvCounts[q] * D;
  float *land = halo;
  if (haloOverlapCheck()) {
    haloFloats = p.halo * D;
    staging = static_cast<float *>(
        mgrt_alloc(sizeof(float) * (haloFloats ? haloFloats : 1)));
    MGRT_CHECK(staging, kName, "out of memory (%lld floats)",
               (long long)haloFloats);
    std::fill(halo, halo + haloFloats, std::nanf(""));
    land = staging;
  }
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  mgrt_comm_all_to_all_start(group, send, sendCounts.data(), land,
                             recvCounts.data(), 0, MGRT_F32, &request);
  mgrt_comm_set_error_mode(prev);
}

HaloExchange::~HaloExchange() {
  wait();
  mgrt_free(send);
  mgrt_free(staging);
}

bool HaloExchange::test() {
  if (!complete) {
    int done = 0;
    const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
    mgrt_comm_test(request, &done);
    mgrt_comm_set_error_mode(prev);
    complete = done != 0;
  }
  return complete;
}

void HaloExchange::wait() {
  if (!request)
    return;
  const bool stats = overlapStatsOn();
  const auto start = std::chrono::steady_clock::now();
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  mgrt_comm_wait(request);
  mgrt_comm_set_error_mode(prev);
  request = nullptr;
  if (stats) {
    gStats.exchanges.fetch_add(1, std::memory_order_relaxed);
    gStats.waitNs.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - start)
            .count(),
        std::memory_order_relaxed);
  }
  complete = true;
  if (staging)
    std::memcpy(halo, staging, sizeof(float) * haloFloats);
}

void computeRows(const std::vector<int64_t> &rows, int64_t perTask,
                 const std::function<void(const int64_t *, int64_t)> &rowsFn) {
  const int64_t count = static_cast<int64_t>(rows.size());
  parallelFor((count + perTask - 1) / perTask, [&](int64_t task, int) {
    const int64_t r0 = task * perTask;
    rowsFn(rows.data() + r0, std::min(perTask, count - r0));
  });
}

bool computeWhileExchanging(
    HaloExchange &exchange, const std::vector<int64_t> &rows, int64_t perTask,
    const std::function<void(const int64_t *, int64_t)> &rowsFn) {
  const std::thread::id caller = std::this_thread::get_id();
  bool completed = exchange.test();
  const int64_t count = static_cast<int64_t>(rows.size());
  parallelFor((count + perTask - 1) / perTask, [&](int64_t task, int) {
    const int64_t r0 = task * perTask;
    rowsFn(rows.data() + r0, std::min(perTask, count - r0));
    // Only the calling thread drives MPI (MPI_THREAD_FUNNELED).
    if (std::this_thread::get_id() == caller && !completed)
      completed = exchange.test();
  });
  exchange.wait();
  return completed;
}

void exchangeHalo(mgrt_comm_group *group, const HaloPlan &p, const float *x,
                  int64_t xStride, int64_t D, float *halo, const char *kName) {
  HaloExchange(group, p, x, xStride, D, halo, kName).wait();
}

void countOverlap(const HaloPlan &p, bool completed) {
  if (!overlapStatsOn())
    return;
  gStats.overlapped.fetch_add(1, std::memory_order_relaxed);
  gStats.completed.fetch_add(completed, std::memory_order_relaxed);
  gStats.interior.fetch_add(static_cast<int64_t>(p.interior.size()),
                            std::memory_order_relaxed);
  gStats.rows.fetch_add(p.rows, std::memory_order_relaxed);
}

void gatherWithHalo(mgrt_comm_group *group, const HaloPlan &p,
                    const mgrt_memref_f32_2 *x, float *dst, const char *kName) {
  const int64_t n = p.rows, D = x->sizes[1];
  const float *xs = x->aligned + x->offset;
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + i * D, xs + i * x->strides[0], sizeof(float) * D);
  exchangeHalo(group, p, xs, x->strides[0], D, dst + n * D, kName);
}

LocalCsr localCsr(const HaloPlan &p, const mgrt_memref_f32_1 *values) {
  const int64_t n = p.rows;
  const int64_t localEdges = static_cast<int64_t>(p.col.size());
  auto *rp = const_cast<int64_t *>(p.rowPtr.data());
  auto *ci = const_cast<int64_t *>(p.col.data());
  return LocalCsr{{rp, rp, 0, {n + 1}, {1}},
                  {ci, ci, 0, {localEdges}, {1}},
                  {values->allocated,
                   values->aligned,
                   values->offset + p.e0 * values->strides[0],
                   {localEdges},
                   {values->strides[0]}}};
}

HaloBuffer::HaloBuffer(int64_t n, const char *kName)
    : data(static_cast<float *>(mgrt_alloc(sizeof(float) * (n ? n : 1)))) {
  MGRT_CHECK(data, kName, "out of memory (%lld floats)", (long long)n);
}

HaloBuffer::~HaloBuffer() { mgrt_free(data); }

} // namespace mgrt::gp
