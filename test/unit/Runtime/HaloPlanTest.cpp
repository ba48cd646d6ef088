//===- HaloPlanTest.cpp - gp's halo plan: interior and boundary rows ------===//
//
// The halo plan of partition parallelism (gp/HaloPlan.h) on every rank of a
// split, without MPI (a group that only knows its rank and size): the
// interior rows are exactly the rows whose columns all lie in the rank's
// block, the boundary rows the others, both ascending and together every
// local row once; and aggregating the interior rows, then the boundary rows
// (as the overlapped mgrt_halo_spmm_f32 does, the boundary rows after the
// halo is filled) gives the one-shot SpMM over [x ; halo] bit for bit.
// Cases: a hand-made graph (a row with no edges, a row reading only the
// halo, a row reading one halo column among local ones) and random graphs
// over P = 2, 3, 4.
//
//===----------------------------------------------------------------------===//

#include "gp/HaloPlan.h"
#include "comm/CommGroup.h"
#include "kernels/Csr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace mgrt;
using namespace mgrt::gp;

namespace {

/// A group that is rank `r` of `p` and moves nothing.
struct FakeGroup final : mgrt_comm_group {
  FakeGroup(int r, int p) { rank = r, size = p; }
  int allReduce(const void *, void *, int64_t, int, int) override { return 0; }
  int allGather(const void *, void *, const int64_t *, const int64_t *, bool,
                int) override {
    return 0;
  }
  int reduceScatter(const void *, void *, const int64_t *, const int64_t *,
                    bool, int, int) override {
    return 0;
  }
  int allToAll(const void *, const int64_t *, const int64_t *, void *,
               const int64_t *, const int64_t *, int) override {
    return 0;
  }
  int broadcast(void *, int64_t, int, int) override { return 0; }
  int sendRecv(const void *, int64_t, int, void *, int64_t, int, int,
               int) override {
    return 0;
  }
  int barrier() override { return 0; }
  int localCopy(void *, const void *, int64_t, int) override { return 0; }
};

struct Graph {
  int64_t N = 0;
  std::vector<int64_t> rowPtr{0}, col;
  std::vector<float> values;
};

Graph randomGraph(int64_t N, int64_t maxDegree, unsigned seed) {
  std::mt19937 rng(seed);
  Graph g;
  g.N = N;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t d = rng() % (maxDegree + 1);
    for (int64_t k = 0; k < d; ++k) {
      // Mostly near the row (local to its block), sometimes anywhere.
      const int64_t j =
          rng() % 4 ? std::clamp<int64_t>(
                          i + static_cast<int64_t>(rng() % 5) - 2, 0, N - 1)
                    : static_cast<int64_t>(rng() % N);
      g.col.push_back(j);
      g.values.push_back(static_cast<float>(rng() % 1000) / 997.f - 0.5f);
    }
    g.rowPtr.push_back(static_cast<int64_t>(g.col.size()));
  }
  return g;
}

std::unique_ptr<HaloPlan> planOf(const Graph &g, int r, int P) {
  FakeGroup group(r, P);
  return buildHaloPlan(&group, g.rowPtr.data(), 1, g.col.data(), 1, g.N,
                       static_cast<int64_t>(g.col.size()), "HaloPlanTest");
}

/// The split is the definition: interior rows read only the block.
void expectSplit(const Graph &g, int r, int P) {
  SCOPED_TRACE(testing::Message() << "rank " << r << " of " << P);
  const auto plan = planOf(g, r, P);
  const HaloPlan &p = *plan;
  const int64_t n = g.N / P, first = r * n;
  std::vector<int64_t> wantInterior, wantBoundary;
  for (int64_t i = 0; i < n; ++i) {
    bool local = true;
    for (int64_t e = g.rowPtr[first + i]; e < g.rowPtr[first + i + 1]; ++e)
      local = local && g.col[e] >= first && g.col[e] < first + n;
    (local ? wantInterior : wantBoundary).push_back(i);
  }
  EXPECT_EQ(p.interior, wantInterior);
  EXPECT_EQ(p.boundary, wantBoundary);
  // And in the local numbering: interior rows read no column >= n.
  for (int64_t i : p.interior)
    for (int64_t e = p.rowPtr[i]; e < p.rowPtr[i + 1]; ++e)
      EXPECT_LT(p.col[e], n) << "interior row " << i;
  for (int64_t i : p.boundary) {
    bool halo = false;
    for (int64_t e = p.rowPtr[i]; e < p.rowPtr[i + 1]; ++e)
      halo = halo || p.col[e] >= n;
    EXPECT_TRUE(halo) << "boundary row " << i;
  }
  EXPECT_EQ(static_cast<int64_t>(p.interior.size() + p.boundary.size()), n);
}

TEST(HaloPlan, InteriorAndBoundaryRowsOfAHandMadeGraph) {
  // 8 nodes over 2 ranks (rows 0-3 and 4-7).
  Graph g;
  g.N = 8;
  const std::vector<std::vector<int64_t>> rows = {
      {0, 1},    // interior
      {},        // no edges: interior
      {1, 5},    // one halo column among local ones: boundary
      {6, 7},    // only the halo: boundary
      {4, 5, 6}, // interior on rank 1
      {3},       // boundary on rank 1
      {},        // interior
      {7, 0, 6}, // boundary
  };
  for (const auto &row : rows) {
    for (int64_t j : row) {
      g.col.push_back(j);
      g.values.push_back(1.f);
    }
    g.rowPtr.push_back(static_cast<int64_t>(g.col.size()));
  }
  const auto p0 = planOf(g, 0, 2), p1 = planOf(g, 1, 2);
  EXPECT_EQ(p0->interior, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p0->boundary, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p1->interior, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(p1->boundary, (std::vector<int64_t>{1, 3}));
  // One process: every row is interior.
  const auto one = planOf(g, 0, 1);
  EXPECT_EQ(one->interior.size(), 8u);
  EXPECT_TRUE(one->boundary.empty());
}

TEST(HaloPlan, InteriorAndBoundaryRowsOfRandomGraphs) {
  for (int P : {2, 3, 4}) {
    const Graph g = randomGraph(12 * 25, 7, 17 + P);
    for (int r = 0; r < P; ++r)
      expectSplit(g, r, P);
  }
}

TEST(HaloPlan, InteriorThenBoundaryRowsAreTheSpmmBitForBit) {
  const int64_t D = 13;
  for (int P : {2, 4}) {
    const Graph g = randomGraph(8 * 40, 9, 5 + P);
    std::mt19937 rng(P);
    std::vector<float> x(g.N * D);
    for (float &v : x)
      v = static_cast<float>(rng() % 2000) / 1999.f - 0.5f;
    for (int r = 0; r < P; ++r) {
      SCOPED_TRACE(testing::Message() << "rank " << r << " of " << P);
      const auto plan = planOf(g, r, P);
      const HaloPlan &p = *plan;
      const int64_t n = p.rows;
      // [x ; halo] as the exchange fills it: the block, then the halo rows
      // in ascending id (the order the plan numbers them).
      std::vector<int64_t> haloIds;
      for (int64_t e = p.rowPtr[0]; e < p.rowPtr[n]; ++e)
        if (p.col[e] >= n)
          haloIds.push_back(g.col[p.e0 + e]);
      std::sort(haloIds.begin(), haloIds.end());
      haloIds.erase(std::unique(haloIds.begin(), haloIds.end()), haloIds.end());
      ASSERT_EQ(static_cast<int64_t>(haloIds.size()), p.halo);
      std::vector<float> xh((n + p.halo) * D);
      std::memcpy(xh.data(), x.data() + p.first * D, sizeof(float) * n * D);
      for (int64_t h = 0; h < p.halo; ++h)
        std::memcpy(xh.data() + (n + h) * D, x.data() + haloIds[h] * D,
                    sizeof(float) * D);
      mgrt_memref_f32_1 vals{const_cast<float *>(g.values.data()),
                             const_cast<float *>(g.values.data()),
                             0,
                             {static_cast<int64_t>(g.values.size())},
                             {1}};
      LocalCsr local = localCsr(p, &vals);
      const CsrView graph =
          csrView("HaloPlanTest", &local.rowPtr, &local.colIdx, n, n + p.halo);
      const float *v = local.values.aligned + local.values.offset;
      std::vector<float> whole(n * D), split(n * D, NAN);
      spmmRowRange(graph, v, 1, xh.data(), D, whole.data(), D, D, 0, n);
      // The interior rows before the halo is there (NaN halo rows: any
      // interior row reading one would show it), then the boundary rows.
      std::vector<float> early = xh;
      std::fill(early.begin() + n * D, early.end(), NAN);
      computeRows(p.interior, 3, [&](const int64_t *rows, int64_t count) {
        spmmRowsOf(graph, v, 1, early.data(), D, split.data(), D, D, rows,
                   count);
      });
      computeRows(p.boundary, 3, [&](const int64_t *rows, int64_t count) {
        spmmRowsOf(graph, v, 1, xh.data(), D, split.data(), D, D, rows, count);
      });
      EXPECT_EQ(std::memcmp(whole.data(), split.data(), sizeof(float) * n * D),
                0);
    }
  }
}

} // namespace
