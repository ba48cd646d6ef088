//===- CommTest.cpp - MPI backend of the communication runtime -----------===//
//
// Every collective of megagraph/Comm.h on host buffers, run under
// `mpirun -np 2` and `-np 4` (and alone): f32/f64/i32/i64, uneven counts
// (including ranks contributing nothing), in place, sub-groups of every
// dp x pp x cp grid that fits the job, the calls of compiled code
// (_mlir_ciface_mgrt_comm_*), the bytes each call counts as sent, the
// started all-to-all (test, wait), the started reduce-scatter, all-reduce
// and all-gather, and argument errors in return mode. Every test calls the
// same collectives in the same order on every rank.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Comm.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

mgrt_comm_group *world() { return mgrt_comm_world(); }
int me() { return mgrt_comm_rank(world()); }
int np() { return mgrt_comm_size(world()); }

/// A value that depends on the rank and the index (exact in every dtype).
int64_t value(int rank, int64_t i) { return rank * 100 + (i % 13) - 6; }

template <typename T> int dtypeOf();
template <> int dtypeOf<float>() { return MGRT_F32; }
template <> int dtypeOf<double>() { return MGRT_F64; }
template <> int dtypeOf<int32_t>() { return MGRT_I32; }
template <> int dtypeOf<int64_t>() { return MGRT_I64; }

template <typename T> class AllReduceTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(AllReduceTest, Types);

TYPED_TEST(AllReduceTest, EveryOpAndCount) {
  using T = TypeParam;
  for (int64_t count : {0, 1, 7, 1000}) {
    for (int op : {MGRT_COMM_SUM, MGRT_COMM_AVG, MGRT_COMM_MAX, MGRT_COMM_MIN})
      for (bool inPlace : {false, true}) {
        std::vector<T> send(count), recv(count, T(-999));
        for (int64_t i = 0; i < count; ++i)
          send[i] = static_cast<T>(value(me(), i));
        T *out = inPlace ? send.data() : recv.data();
        ASSERT_EQ(mgrt_comm_all_reduce(world(), send.data(), out, count,
                                       dtypeOf<T>(), op),
                  MGRT_OK);
        for (int64_t i = 0; i < count; ++i) {
          int64_t sum = 0, mx = INT64_MIN, mn = INT64_MAX;
          for (int r = 0; r < np(); ++r) {
            sum += value(r, i);
            mx = std::max(mx, value(r, i));
            mn = std::min(mn, value(r, i));
          }
          T want =
              op == MGRT_COMM_SUM ? static_cast<T>(sum)
              : op == MGRT_COMM_AVG
                  ? static_cast<T>(static_cast<T>(sum) / static_cast<T>(np()))
              : op == MGRT_COMM_MAX ? static_cast<T>(mx)
                                    : static_cast<T>(mn);
          ASSERT_EQ(out[i], want) << "count " << count << " op " << op
                                  << " in place " << inPlace << " i " << i;
        }
      }
  }
}

TEST(Comm, WorldGroup) {
  ASSERT_NE(world(), nullptr);
  EXPECT_EQ(mgrt_comm_backend_of(world()), MGRT_COMM_MPI);
  EXPECT_GE(me(), 0);
  EXPECT_LT(me(), np());
  for (int r = 0; r < np(); ++r)
    EXPECT_EQ(mgrt_comm_world_rank_of(world(), r), r);
  EXPECT_EQ(mgrt_comm_world_rank_of(world(), np()), -1);
  EXPECT_EQ(mgrt_comm_barrier(world()), MGRT_OK);
}

/// Counts of the uneven tests: rank r holds r + 1 elements, rank 1 none.
int64_t unevenCount(int r) { return r == 1 ? 0 : r + 1; }

TEST(Comm, AllGatherUniformAndUneven) {
  for (bool uniform : {true, false}) {
    std::vector<int64_t> counts(np());
    for (int r = 0; r < np(); ++r)
      counts[r] = uniform ? 5 : unevenCount(r);
    const int64_t total = std::accumulate(counts.begin(), counts.end(), 0L);
    std::vector<float> send(counts[me()]), recv(total, -1.f);
    for (int64_t i = 0; i < counts[me()]; ++i)
      send[i] = static_cast<float>(value(me(), i));
    ASSERT_EQ(mgrt_comm_all_gather(world(), send.data(), counts[me()],
                                   recv.data(),
                                   uniform ? nullptr : counts.data(), MGRT_F32),
              MGRT_OK);
    int64_t k = 0;
    for (int r = 0; r < np(); ++r)
      for (int64_t i = 0; i < counts[r]; ++i, ++k)
        ASSERT_EQ(recv[k], static_cast<float>(value(r, i)))
            << "uniform " << uniform << " rank " << r << " i " << i;
  }
}

TEST(Comm, ReduceScatterUniformAndUneven) {
  for (bool uniform : {true, false})
    for (int op : {MGRT_COMM_SUM, MGRT_COMM_AVG}) {
      std::vector<int64_t> counts(np());
      for (int r = 0; r < np(); ++r)
        counts[r] = uniform ? 6 : unevenCount(r);
      const int64_t total = std::accumulate(counts.begin(), counts.end(), 0L);
      std::vector<double> send(total), recv(counts[me()], -1);
      for (int64_t i = 0; i < total; ++i)
        send[i] = static_cast<double>(value(me(), i));
      ASSERT_EQ(mgrt_comm_reduce_scatter(
                    world(), send.data(), recv.data(), uniform ? 6 : 0,
                    uniform ? nullptr : counts.data(), MGRT_F64, op),
                MGRT_OK);
      int64_t offset = 0;
      for (int r = 0; r < me(); ++r)
        offset += counts[r];
      for (int64_t i = 0; i < counts[me()]; ++i) {
        double sum = 0;
        for (int r = 0; r < np(); ++r)
          sum += static_cast<double>(value(r, offset + i));
        ASSERT_DOUBLE_EQ(recv[i], op == MGRT_COMM_AVG ? sum / np() : sum)
            << "uniform " << uniform << " i " << i;
      }
    }
}

/// Started reduce-scatters: several in flight at once, a blocking
/// collective on the same group between their starts and waits, waits in
/// another order than the starts; each result the blocking one's (AVG
/// divided at the wait), the bytes counted once at the start.
TEST(Comm, StartedReduceScattersCompleteAtTheirWait) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  constexpr int kInFlight = 3;
  constexpr int64_t kCount = 1000; // per rank: past MPI's eager limit
  std::vector<std::vector<float>> send(kInFlight), recv(kInFlight);
  mgrt_comm_request *requests[kInFlight] = {};
  const uint64_t before = mgrt_comm_bytes_sent();
  for (int k = 0; k < kInFlight; ++k) {
    send[k].resize(kCount * np());
    recv[k].assign(kCount, -1.f);
    for (int64_t i = 0; i < kCount * np(); ++i)
      send[k][i] = static_cast<float>(value(me(), i) + k);
    ASSERT_EQ(mgrt_comm_reduce_scatter_start(
                  world(), send[k].data(), recv[k].data(), kCount, MGRT_F32,
                  k == 1 ? MGRT_COMM_AVG : MGRT_COMM_SUM, &requests[k]),
              MGRT_OK);
    ASSERT_NE(requests[k], nullptr);
  }
  EXPECT_EQ(mgrt_comm_bytes_sent() - before,
            static_cast<uint64_t>(kInFlight * kCount * (np() - 1) * 4));
  float one = static_cast<float>(me()), all = 0;
  ASSERT_EQ(
      mgrt_comm_all_reduce(world(), &one, &all, 1, MGRT_F32, MGRT_COMM_SUM),
      MGRT_OK);
  EXPECT_EQ(all, static_cast<float>(np() * (np() - 1) / 2));
  int done = -1;
  ASSERT_EQ(mgrt_comm_test(requests[2], &done), MGRT_OK);
  EXPECT_TRUE(done == 0 || done == 1);
  for (int k : {2, 0, 1}) {
    ASSERT_EQ(mgrt_comm_wait(requests[k]), MGRT_OK);
    for (int64_t i = 0; i < kCount; ++i) {
      double sum = 0;
      for (int r = 0; r < np(); ++r)
        sum += static_cast<double>(value(r, me() * kCount + i) + k);
      ASSERT_FLOAT_EQ(recv[k][i], static_cast<float>(k == 1 ? sum / np() : sum))
          << "request " << k << " i " << i;
    }
  }
  mgrt_comm_request *request = nullptr;
  EXPECT_EQ(mgrt_comm_reduce_scatter_start(world(), send[0].data(),
                                           send[0].data(), kCount, MGRT_F32,
                                           MGRT_COMM_SUM, &request),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(request, nullptr);
  EXPECT_EQ(mgrt_comm_reduce_scatter_start(world(), send[0].data(),
                                           recv[0].data(), kCount, MGRT_F32, 99,
                                           &request),
            MGRT_ERR_ARGUMENT);
  mgrt_comm_set_error_mode(prev);
}

/// A started all-reduce in place beside a started reduce-scatter, AVG
/// divided at the wait; bytes as the blocking call counts them.
TEST(Comm, StartedAllReduceInPlace) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  constexpr int64_t kCount = 3000;
  std::vector<float> buf(kCount), send(kCount * np()), recv(kCount);
  for (int64_t i = 0; i < kCount; ++i)
    buf[i] = static_cast<float>(value(me(), i));
  for (int64_t i = 0; i < kCount * np(); ++i)
    send[i] = static_cast<float>(value(me(), i));
  const uint64_t before = mgrt_comm_bytes_sent();
  mgrt_comm_request *ar = nullptr, *rs = nullptr;
  ASSERT_EQ(mgrt_comm_all_reduce_start(world(), buf.data(), buf.data(), kCount,
                                       MGRT_F32, MGRT_COMM_AVG, &ar),
            MGRT_OK);
  ASSERT_EQ(mgrt_comm_reduce_scatter_start(world(), send.data(), recv.data(),
                                           kCount, MGRT_F32, MGRT_COMM_SUM,
                                           &rs),
            MGRT_OK);
  const int n = np();
  EXPECT_EQ(mgrt_comm_bytes_sent() - before,
            static_cast<uint64_t>(2.0 * (n - 1) * kCount / n * 4) +
                static_cast<uint64_t>(kCount * (n - 1) * 4));
  ASSERT_EQ(mgrt_comm_wait(rs), MGRT_OK);
  ASSERT_EQ(mgrt_comm_wait(ar), MGRT_OK);
  for (int64_t i = 0; i < kCount; ++i) {
    double sum = 0, part = 0;
    for (int r = 0; r < n; ++r) {
      sum += static_cast<double>(value(r, i));
      part += static_cast<double>(value(r, me() * kCount + i));
    }
    ASSERT_FLOAT_EQ(buf[i], static_cast<float>(sum / n)) << "i " << i;
    ASSERT_FLOAT_EQ(recv[i], static_cast<float>(part)) << "i " << i;
  }
  mgrt_comm_request *bad = nullptr;
  EXPECT_EQ(mgrt_comm_all_reduce_start(world(), buf.data(), buf.data(), -1,
                                       MGRT_F32, MGRT_COMM_SUM, &bad),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  mgrt_comm_set_error_mode(prev);
}

/// Started all-gathers: two in flight beside a started reduce-scatter,
/// waited for in another order than the starts; each result equals the
/// blocking all-gather's of the same pieces, bytes as the blocking call
/// counts them (at the start).
TEST(Comm, StartedAllGathersEqualTheBlockingOne) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  constexpr int kInFlight = 2;
  constexpr int64_t kCount = 1500; // per rank: past MPI's eager limit
  const int n = np();
  std::vector<std::vector<float>> piece(kInFlight), started(kInFlight),
      blocking(kInFlight);
  mgrt_comm_request *requests[kInFlight] = {};
  std::vector<float> rsSend(kCount * n), rsRecv(kCount);
  for (int64_t i = 0; i < kCount * n; ++i)
    rsSend[i] = static_cast<float>(value(me(), i));
  const uint64_t before = mgrt_comm_bytes_sent();
  mgrt_comm_request *rs = nullptr;
  ASSERT_EQ(mgrt_comm_reduce_scatter_start(world(), rsSend.data(),
                                           rsRecv.data(), kCount, MGRT_F32,
                                           MGRT_COMM_SUM, &rs),
            MGRT_OK);
  for (int k = 0; k < kInFlight; ++k) {
    piece[k].resize(kCount);
    started[k].assign(kCount * n, -1.f);
    blocking[k].assign(kCount * n, -2.f);
    for (int64_t i = 0; i < kCount; ++i)
      piece[k][i] = static_cast<float>(value(me(), i) + 7 * k);
    ASSERT_EQ(mgrt_comm_all_gather_start(world(), piece[k].data(), kCount,
                                         started[k].data(), MGRT_F32,
                                         &requests[k]),
              MGRT_OK);
    ASSERT_NE(requests[k], nullptr);
  }
  EXPECT_EQ(mgrt_comm_bytes_sent() - before,
            static_cast<uint64_t>((kInFlight + 1) * kCount * (n - 1) * 4));
  for (int k : {1, 0})
    ASSERT_EQ(mgrt_comm_wait(requests[k]), MGRT_OK);
  ASSERT_EQ(mgrt_comm_wait(rs), MGRT_OK);
  for (int k = 0; k < kInFlight; ++k) {
    ASSERT_EQ(mgrt_comm_all_gather(world(), piece[k].data(), kCount,
                                   blocking[k].data(), nullptr, MGRT_F32),
              MGRT_OK);
    EXPECT_EQ(started[k], blocking[k]) << "request " << k;
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(started[k][r * kCount + 5],
                static_cast<float>(value(r, 5) + 7 * k))
          << "request " << k << " rank " << r;
  }
  for (int64_t i = 0; i < kCount; ++i) {
    double sum = 0;
    for (int r = 0; r < n; ++r)
      sum += static_cast<double>(value(r, me() * kCount + i));
    ASSERT_FLOAT_EQ(rsRecv[i], static_cast<float>(sum)) << "i " << i;
  }
  mgrt_comm_request *bad = nullptr;
  EXPECT_EQ(mgrt_comm_all_gather_start(world(), piece[0].data(), kCount,
                                       piece[0].data(), MGRT_F32, &bad),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(mgrt_comm_all_gather_start(world(), piece[0].data(), kCount,
                                       started[0].data(), MGRT_F32, nullptr),
            MGRT_ERR_ARGUMENT);
  mgrt_comm_set_error_mode(prev);
}

/// Elements rank i sends to rank j in the uneven all-to-all.
int64_t a2aCount(int i, int j) { return (i + 2 * j) % 3; }

TEST(Comm, AllToAllUniformAndUneven) {
  for (bool uniform : {true, false}) {
    std::vector<int64_t> sc(np()), rc(np());
    for (int r = 0; r < np(); ++r) {
      sc[r] = uniform ? 3 : a2aCount(me(), r);
      rc[r] = uniform ? 3 : a2aCount(r, me());
    }
    std::vector<int64_t> send,
        recv(std::accumulate(rc.begin(), rc.end(), 0L), -1);
    // Element k sent to rank j encodes (sender, receiver, k).
    for (int j = 0; j < np(); ++j)
      for (int64_t k = 0; k < sc[j]; ++k)
        send.push_back(me() * 10000 + j * 100 + k);
    ASSERT_EQ(mgrt_comm_all_to_all(world(), send.data(),
                                   uniform ? nullptr : sc.data(), recv.data(),
                                   uniform ? nullptr : rc.data(), 3, MGRT_I64),
              MGRT_OK);
    int64_t pos = 0;
    for (int i = 0; i < np(); ++i)
      for (int64_t k = 0; k < rc[i]; ++k, ++pos)
        ASSERT_EQ(recv[pos], i * 10000 + me() * 100 + k)
            << "uniform " << uniform << " from " << i;
  }
}

TEST(Comm, AllToAllStartedThenWaited) {
  // The uneven all-to-all, non-blocking: the same elements, the same bytes
  // counted as the blocking call, test() drives it to completion.
  std::vector<int64_t> sc(np()), rc(np());
  for (int r = 0; r < np(); ++r)
    sc[r] = a2aCount(me(), r), rc[r] = a2aCount(r, me());
  std::vector<int64_t> send,
      recv(std::accumulate(rc.begin(), rc.end(), 0L), -1);
  for (int j = 0; j < np(); ++j)
    for (int64_t k = 0; k < sc[j]; ++k)
      send.push_back(me() * 10000 + j * 100 + k);
  const uint64_t before = mgrt_comm_bytes_sent();
  mgrt_comm_request *req = nullptr;
  ASSERT_EQ(mgrt_comm_all_to_all_start(world(), send.data(), sc.data(),
                                       recv.data(), rc.data(), 0, MGRT_I64,
                                       &req),
            MGRT_OK);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(mgrt_comm_bytes_sent() - before,
            static_cast<uint64_t>(std::accumulate(sc.begin(), sc.end(), 0L) -
                                  sc[me()]) *
                8);
  int done = 0;
  for (int spins = 0; !done && spins < 1000000; ++spins)
    ASSERT_EQ(mgrt_comm_test(req, &done), MGRT_OK);
  EXPECT_EQ(done, 1);
  ASSERT_EQ(mgrt_comm_wait(req), MGRT_OK);
  int64_t pos = 0;
  for (int i = 0; i < np(); ++i)
    for (int64_t k = 0; k < rc[i]; ++k, ++pos)
      ASSERT_EQ(recv[pos], i * 10000 + me() * 100 + k) << "from " << i;
  // Waited for without a test.
  std::fill(recv.begin(), recv.end(), -1);
  ASSERT_EQ(mgrt_comm_all_to_all_start(world(), send.data(), sc.data(),
                                       recv.data(), rc.data(), 0, MGRT_I64,
                                       &req),
            MGRT_OK);
  ASSERT_EQ(mgrt_comm_wait(req), MGRT_OK);
  pos = 0;
  for (int i = 0; i < np(); ++i)
    for (int64_t k = 0; k < rc[i]; ++k, ++pos)
      ASSERT_EQ(recv[pos], i * 10000 + me() * 100 + k) << "from " << i;
}

TEST(Comm, BroadcastFromEveryRoot) {
  for (int root = 0; root < np(); ++root) {
    std::vector<int32_t> buf(17, -1);
    if (me() == root)
      for (int i = 0; i < 17; ++i)
        buf[i] = static_cast<int32_t>(value(root, i));
    ASSERT_EQ(mgrt_comm_broadcast(world(), buf.data(), 17, MGRT_I32, root),
              MGRT_OK);
    for (int i = 0; i < 17; ++i)
      ASSERT_EQ(buf[i], value(root, i)) << "root " << root;
  }
}

/// Bytes sent by `call` (mgrt_comm_bytes_sent before and after).
template <typename F> uint64_t sentBy(F call) {
  const uint64_t before = mgrt_comm_bytes_sent();
  call();
  return mgrt_comm_bytes_sent() - before;
}

TEST(Comm, BytesSentAreTheRingVolumes) {
  const int n = np(), r = me();
  std::vector<float> a(12, 1.f), b(12 * n, 0.f);
  // all_reduce: 2 (n-1)/n of the buffer.
  EXPECT_EQ(sentBy([&] {
              mgrt_comm_all_reduce(world(), a.data(), b.data(), 12, MGRT_F32,
                                   MGRT_COMM_SUM);
            }),
            static_cast<uint64_t>(2.0 * (n - 1) * 12 / n * 4));
  // all_gather: every piece but the successor's (uneven counts).
  std::vector<int64_t> counts(n);
  for (int q = 0; q < n; ++q)
    counts[q] = q + 1;
  const int64_t total = std::accumulate(counts.begin(), counts.end(), 0L);
  std::vector<double> piece(counts[r], 1.0), all(total);
  EXPECT_EQ(sentBy([&] {
              mgrt_comm_all_gather(world(), piece.data(), counts[r], all.data(),
                                   counts.data(), MGRT_F64);
            }),
            static_cast<uint64_t>(total - counts[(r + 1) % n]) * 8);
  // reduce_scatter: every piece but its own.
  EXPECT_EQ(sentBy([&] {
              mgrt_comm_reduce_scatter(world(), all.data(), piece.data(), 0,
                                       counts.data(), MGRT_F64, MGRT_COMM_SUM);
            }),
            static_cast<uint64_t>(total - counts[r]) * 8);
  // broadcast: every rank but the root's predecessor forwards the buffer.
  EXPECT_EQ(
      sentBy([&] { mgrt_comm_broadcast(world(), a.data(), 12, MGRT_F32, 0); }),
      r == n - 1 ? 0u : 48u);
  // sendrecv around the ring: exactly the payload (nothing alone).
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  EXPECT_EQ(sentBy([&] {
              if (n > 1)
                mgrt_comm_sendrecv(world(), a.data(), 5, next, b.data(), 5,
                                   prev, MGRT_F32, 7);
            }),
            n > 1 ? 20u : 0u);
}

TEST(Comm, SendRecvRing) {
  if (np() < 2)
    GTEST_SKIP() << "point to point needs 2 ranks (run under mpirun -np 2)";
  // Even ranks send first, odd ranks receive first: blocking send/recv.
  const int next = (me() + 1) % np(), prev = (me() + np() - 1) % np();
  std::vector<float> out(9), in(9, -1.f);
  for (int i = 0; i < 9; ++i)
    out[i] = static_cast<float>(value(me(), i));
  if (me() % 2 == 0) {
    ASSERT_EQ(mgrt_comm_send(world(), out.data(), 9, MGRT_F32, next, 7),
              MGRT_OK);
    ASSERT_EQ(mgrt_comm_recv(world(), in.data(), 9, MGRT_F32, prev, 7),
              MGRT_OK);
  } else {
    ASSERT_EQ(mgrt_comm_recv(world(), in.data(), 9, MGRT_F32, prev, 7),
              MGRT_OK);
    ASSERT_EQ(mgrt_comm_send(world(), out.data(), 9, MGRT_F32, next, 7),
              MGRT_OK);
  }
  for (int i = 0; i < 9; ++i)
    ASSERT_EQ(in[i], static_cast<float>(value(prev, i)));
  // The same shift in one call; uneven sizes (rank r sends r + 1).
  std::vector<float> in2(prev + 1, -1.f);
  ASSERT_EQ(mgrt_comm_sendrecv(world(), out.data(), me() + 1, next, in2.data(),
                               prev + 1, prev, MGRT_F32, 3),
            MGRT_OK);
  for (int i = 0; i <= prev; ++i)
    ASSERT_EQ(in2[i], static_cast<float>(value(prev, i)));
}

/// Every (dp, pp, cp) with dp * pp * cp = np.
std::vector<std::vector<int64_t>> grids() {
  std::vector<std::vector<int64_t>> out;
  for (int64_t a = 1; a <= np(); ++a)
    for (int64_t b = 1; a * b <= np(); ++b)
      if (np() % (a * b) == 0)
        out.push_back({a, b, np() / (a * b)});
  return out;
}

TEST(Comm, GridSubGroups) {
  for (const std::vector<int64_t> &shape : grids()) {
    int64_t coords[3];
    ASSERT_EQ(mgrt_comm_grid_coords(3, shape.data(), me(), coords), MGRT_OK);
    EXPECT_EQ((coords[0] * shape[1] + coords[1]) * shape[2] + coords[2], me());
    for (uint32_t mask = 0; mask < 8; ++mask) {
      mgrt_comm_group *g = nullptr;
      ASSERT_EQ(mgrt_comm_grid_group(3, shape.data(), mask, &g), MGRT_OK);
      // Expected members: world ranks sharing the unselected coordinates,
      // ordered row-major over the selected axes.
      std::vector<int> members;
      for (int r = 0; r < np(); ++r) {
        int64_t c[3];
        mgrt_comm_grid_coords(3, shape.data(), r, c);
        bool same = true;
        for (int a = 0; a < 3; ++a)
          if (!(mask & (1u << a)) && c[a] != coords[a])
            same = false;
        if (same)
          members.push_back(r);
      }
      const std::string what =
          "grid " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) +
          "x" + std::to_string(shape[2]) + " mask " + std::to_string(mask);
      ASSERT_EQ(mgrt_comm_size(g), static_cast<int>(members.size())) << what;
      for (size_t k = 0; k < members.size(); ++k)
        EXPECT_EQ(mgrt_comm_world_rank_of(g, static_cast<int>(k)), members[k])
            << what;
      EXPECT_EQ(mgrt_comm_world_rank_of(g, mgrt_comm_rank(g)), me()) << what;
      // A collective stays inside the group.
      int64_t v = me(), sum = -1;
      ASSERT_EQ(mgrt_comm_all_reduce(g, &v, &sum, 1, MGRT_I64, MGRT_COMM_SUM),
                MGRT_OK);
      EXPECT_EQ(sum, std::accumulate(members.begin(), members.end(), 0L))
          << what;
      // Uneven all-gather inside the group.
      const int gr = mgrt_comm_rank(g), gn = mgrt_comm_size(g);
      std::vector<int64_t> counts(gn), send(gr + 1, me());
      for (int k = 0; k < gn; ++k)
        counts[k] = k + 1;
      std::vector<int64_t> recv(gn * (gn + 1) / 2, -1);
      ASSERT_EQ(mgrt_comm_all_gather(g, send.data(), gr + 1, recv.data(),
                                     counts.data(), MGRT_I64),
                MGRT_OK);
      int64_t pos = 0;
      for (int k = 0; k < gn; ++k)
        for (int j = 0; j <= k; ++j)
          EXPECT_EQ(recv[pos++], members[k]) << what;
      EXPECT_EQ(mgrt_comm_barrier(g), MGRT_OK);
      mgrt_comm_group_free(g);
    }
  }
}

/// A rank-1 memref descriptor over `v`.
mgrt_memref_f32_1 memref(std::vector<float> &v) {
  mgrt_memref_f32_1 m;
  m.allocated = m.aligned = v.data();
  m.offset = 0;
  m.sizes[0] = static_cast<int64_t>(v.size());
  m.strides[0] = 1;
  return m;
}

TEST(Comm, CompiledCodeCalls) {
  const int64_t n = np();
  // Grid 1 x n x 1 x 1, group over axis 1 (bit 1).
  const int64_t g0 = 1, g1 = n, g2 = 1, g3 = 1, axes = 2;
  std::vector<float> a(4);
  for (int i = 0; i < 4; ++i)
    a[i] = static_cast<float>(value(me(), i));
  mgrt_memref_f32_1 ma = memref(a);
  _mlir_ciface_mgrt_comm_all_reduce_f32(&ma, g0, g1, g2, g3, axes,
                                        MGRT_COMM_AVG);
  for (int i = 0; i < 4; ++i) {
    float sum = 0;
    for (int r = 0; r < n; ++r)
      sum += static_cast<float>(value(r, i));
    EXPECT_FLOAT_EQ(a[i], sum / n);
  }
  std::vector<float> piece(3), whole(3 * n);
  for (int i = 0; i < 3; ++i)
    piece[i] = static_cast<float>(value(me(), i));
  mgrt_memref_f32_1 mp = memref(piece), mw = memref(whole);
  _mlir_ciface_mgrt_comm_all_gather_f32(&mw, &mp, g0, g1, g2, g3, axes);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(whole[r * 3 + i], static_cast<float>(value(r, i)));
  // The started all_gather and its wait: the blocking call's result.
  std::vector<float> started(3 * n, -1.f);
  mgrt_memref_f32_1 mst = memref(started);
  const int64_t request = _mlir_ciface_mgrt_comm_all_gather_start_f32(
      &mst, &mp, g0, g1, g2, g3, axes);
  _mlir_ciface_mgrt_comm_wait_f32(&mst, &mp, request);
  EXPECT_EQ(started, whole);
  // reduce_scatter of `whole` (identical everywhere): n x piece of rank r.
  std::vector<float> part(3);
  mgrt_memref_f32_1 mpart = memref(part);
  _mlir_ciface_mgrt_comm_reduce_scatter_f32(&mpart, &mw, g0, g1, g2, g3, axes,
                                            MGRT_COMM_SUM);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(part[i], static_cast<float>(n * value(me(), i)));
  // all_slice: this rank's piece of `whole`, no communication.
  std::vector<float> mine(3);
  mgrt_memref_f32_1 mmine = memref(mine);
  _mlir_ciface_mgrt_comm_all_slice_f32(&mmine, &mw, g0, g1, g2, g3, axes);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(mine[i], static_cast<float>(value(me(), i)));
  // all_to_all: element j goes to rank j.
  std::vector<float> s(n), r(n);
  for (int j = 0; j < n; ++j)
    s[j] = static_cast<float>(me() * 10 + j);
  mgrt_memref_f32_1 ms = memref(s), mr = memref(r);
  _mlir_ciface_mgrt_comm_all_to_all_f32(&mr, &ms, g0, g1, g2, g3, axes);
  for (int j = 0; j < n; ++j)
    EXPECT_EQ(r[j], static_cast<float>(j * 10 + me()));
  // broadcast from the last rank.
  std::vector<float> b(2, static_cast<float>(me()));
  mgrt_memref_f32_1 mb = memref(b);
  _mlir_ciface_mgrt_comm_broadcast_f32(&mb, g0, g1, g2, g3, axes, n - 1);
  EXPECT_EQ(b[0], static_cast<float>(n - 1));
  // shift by one, rotating: rank r gets rank r - 1's data.
  std::vector<float> x(2, static_cast<float>(me())), y(2, -1.f);
  mgrt_memref_f32_1 mx = memref(x), my = memref(y);
  _mlir_ciface_mgrt_comm_shift_f32(&my, &mx, g0, g1, g2, g3, axes, 1, 1);
  EXPECT_EQ(y[1], static_cast<float>((me() + n - 1) % n));
  // shift without rotation: rank 0 has no source and keeps its input.
  _mlir_ciface_mgrt_comm_shift_f32(&my, &mx, g0, g1, g2, g3, axes, 1, 0);
  EXPECT_EQ(y[0], static_cast<float>(me() == 0 ? 0 : me() - 1));
  // send / recv: rank 0 -> last rank.
  if (n > 1) {
    std::vector<float> t(5, static_cast<float>(me() + 0.5));
    mgrt_memref_f32_1 mt = memref(t);
    if (me() == 0)
      _mlir_ciface_mgrt_comm_send_f32(&mt, g0, g1, g2, g3, axes, n - 1);
    if (me() == n - 1) {
      _mlir_ciface_mgrt_comm_recv_f32(&mt, g0, g1, g2, g3, axes, 0);
      EXPECT_EQ(t[4], 0.5f);
    }
  }
}

TEST(Comm, ArgumentErrorsReturnInReturnMode) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  float x[4] = {0};
  auto contains = [](const char *needle) {
    return std::string(mgrt_comm_last_error()).find(needle) !=
           std::string::npos;
  };
  EXPECT_EQ(mgrt_comm_all_reduce(nullptr, x, x, 4, MGRT_F32, MGRT_COMM_SUM),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("group is NULL")) << mgrt_comm_last_error();
  EXPECT_EQ(mgrt_comm_all_reduce(world(), x, x, 4, 99, MGRT_COMM_SUM),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("unsupported dtype 99")) << mgrt_comm_last_error();
  EXPECT_EQ(mgrt_comm_all_reduce(world(), x, x, -1, MGRT_F32, MGRT_COMM_SUM),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_comm_all_reduce(world(), x, x, 4, MGRT_F32, 42),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("unknown reduction 42"));
  EXPECT_EQ(mgrt_comm_broadcast(world(), x, 4, MGRT_F32, np()),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("root")) << mgrt_comm_last_error();
  EXPECT_EQ(mgrt_comm_send(world(), x, 4, MGRT_F32, np() + 3, 0),
            MGRT_ERR_ARGUMENT);
  std::vector<int64_t> counts(np(), 2);
  EXPECT_EQ(mgrt_comm_all_gather(world(), x, 1, x + 1, counts.data(), MGRT_F32),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("send_count 1 differs")) << mgrt_comm_last_error();
  mgrt_comm_request *req = reinterpret_cast<mgrt_comm_request *>(x);
  EXPECT_EQ(mgrt_comm_all_to_all_start(world(), x, nullptr, x, nullptr, 1,
                                       MGRT_F32, &req),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("send and recv must differ")) << mgrt_comm_last_error();
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(mgrt_comm_all_to_all_start(world(), x, nullptr, x + 2, nullptr, 1,
                                       MGRT_F32, nullptr),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("request is NULL")) << mgrt_comm_last_error();
  int done = 0;
  EXPECT_EQ(mgrt_comm_test(nullptr, &done), MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_comm_wait(nullptr), MGRT_ERR_ARGUMENT);
  int64_t bad[3] = {static_cast<int64_t>(np()) + 1, 1, 1};
  mgrt_comm_group *g = nullptr;
  EXPECT_EQ(mgrt_comm_grid_group(3, bad, 1, &g), MGRT_ERR_ARGUMENT);
  EXPECT_EQ(g, nullptr);
  EXPECT_TRUE(contains("launch with mpirun -np")) << mgrt_comm_last_error();
  int64_t ok[1] = {np()};
  EXPECT_EQ(mgrt_comm_grid_group(1, ok, 2, &g), MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains("beyond the grid")) << mgrt_comm_last_error();
  mgrt_comm_set_error_mode(prev);
}

} // namespace

int main(int argc, char **argv) {
  if (mgrt_comm_init(&argc, &argv) != MGRT_OK)
    return 1;
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  // The job fails if any rank failed.
  int all = rc;
  mgrt_comm_all_reduce(world(), &rc, &all, 1, MGRT_I32, MGRT_COMM_MAX);
  mgrt_comm_finalize();
  return all;
}
