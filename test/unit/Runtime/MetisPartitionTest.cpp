//===- MetisPartitionTest.cpp - mgrt_partition_metis, edge cut ------------===//
//
// METIS sequences: a permutation, exact sizes (the last one the
// remainder), deterministic per seed, an edge cut far below a random
// partition's (and no worse than the greedy stand-in's) on a stochastic
// block model, and the degenerate cases and errors.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

bool isPermutation(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A generated SBM graph, freed at scope exit.
struct Sbm {
  mgrt_graph g{};
  mgrt_tensor labels{};
  int rc;
  char err[256] = "";
  explicit Sbm(const char *spec) {
    rc = mgrt_sbm_generate(spec, &g, nullptr, &labels, err, sizeof err);
  }
  ~Sbm() {
    mgrt_graph_free(&g);
    mgrt_tensor_free(&labels);
  }
};

int64_t cutOf(const mgrt_graph &g, const std::vector<int64_t> &order,
              int64_t len) {
  int64_t cut = -1;
  char err[256] = "";
  EXPECT_EQ(
      mgrt_partition_edge_cut(&g, order.data(), len, &cut, err, sizeof err),
      MGRT_OK)
      << err;
  return cut;
}

TEST(MetisPartition, ExactSizesAndLowCut) {
  // 4000 nodes in 8 interleaved blocks, sequences of 512: 7 full ones and
  // a last one of 416.
  Sbm s("synthetic:sbm,nodes=4000,classes=8,degree=20,seed=6");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  const int64_t n = 4000, len = 512;
  std::vector<int64_t> order(n, -1);
  char err[256] = "";
  ASSERT_EQ(mgrt_partition_metis(&s.g, len, 1, order.data(), err, sizeof err),
            MGRT_OK)
      << err;
  ASSERT_TRUE(isPermutation(order));
  // Sequence p = order[p * len, ...) is sorted by id (the documented order
  // inside a part), so a sequence boundary is where ids restart.
  for (int64_t p = 0; p * len < n; ++p) {
    auto b = order.begin() + p * len,
         e = order.begin() + std::min(n, (p + 1) * len);
    EXPECT_TRUE(std::is_sorted(b, e)) << "sequence " << p;
  }

  std::vector<int64_t> random(n);
  std::iota(random.begin(), random.end(), 0);
  std::shuffle(random.begin(), random.end(), std::mt19937(7));
  std::vector<int64_t> greedy(n);
  ASSERT_EQ(mgrt_partition_sequences(&s.g, len, greedy.data(), err, sizeof err),
            MGRT_OK);
  const int64_t metisCut = cutOf(s.g, order, len),
                randomCut = cutOf(s.g, random, len),
                greedyCut = cutOf(s.g, greedy, len);
  std::printf("edges %lld, cut: metis %lld, greedy %lld, random %lld\n",
              (long long)s.g.num_edges, (long long)metisCut,
              (long long)greedyCut, (long long)randomCut);
  // A random partition cuts about 7/8 of the edges, the blocks 20%.
  EXPECT_GT(randomCut, s.g.num_edges * 8 / 10);
  EXPECT_LT(metisCut, randomCut / 3);
  EXPECT_LE(metisCut, greedyCut);

  // Most nodes of a sequence come from one block.
  const int64_t *lab = static_cast<const int64_t *>(s.labels.data);
  int64_t majority = 0;
  for (int64_t p = 0; p * len < n; ++p) {
    std::vector<int64_t> count(8, 0);
    for (int64_t i = p * len; i < std::min(n, (p + 1) * len); ++i)
      ++count[lab[order[i]]];
    majority += *std::max_element(count.begin(), count.end());
  }
  EXPECT_GT(majority, n * 9 / 10);

  // Deterministic for a seed.
  std::vector<int64_t> again(n);
  ASSERT_EQ(mgrt_partition_metis(&s.g, len, 1, again.data(), err, sizeof err),
            MGRT_OK);
  EXPECT_EQ(order, again);
}

TEST(MetisPartition, DegenerateCasesAndErrors) {
  // Two triangles, a self loop, an isolated node, a one-way edge.
  const int64_t n = 8;
  std::vector<std::pair<int64_t, int64_t>> edges = {
      {0, 1}, {1, 0}, {1, 2}, {2, 1}, {0, 2}, {2, 0}, {4, 5},
      {5, 4}, {5, 6}, {6, 5}, {4, 6}, {6, 4}, {7, 3}, {3, 3}};
  std::sort(edges.begin(), edges.end());
  std::vector<int64_t> rowPtr(n + 1, 0), colIdx;
  for (auto [u, v] : edges)
    ++rowPtr[u + 1], colIdx.push_back(v);
  for (int64_t i = 0; i < n; ++i)
    rowPtr[i + 1] += rowPtr[i];
  mgrt_graph g{n, (int64_t)edges.size(), rowPtr.data(), colIdx.data()};
  char err[256] = "";
  for (int64_t len : {1, 2, 3, 4, 5, 8, 100}) {
    std::vector<int64_t> order(n, -1);
    ASSERT_EQ(mgrt_partition_metis(&g, len, 3, order.data(), err, sizeof err),
              MGRT_OK)
        << "seq_len " << len << ": " << err;
    EXPECT_TRUE(isPermutation(order)) << "seq_len " << len;
    if (len == 4) {
      // Two sequences of 4 cannot cut fewer than the one-way edge.
      EXPECT_LE(cutOf(g, order, 4), 2) << "seq_len 4";
    }
  }
  // No edges: the identity.
  std::vector<int64_t> flatRow(n + 1, 0), order(n);
  mgrt_graph none{n, 0, flatRow.data(), nullptr};
  ASSERT_EQ(mgrt_partition_metis(&none, 3, 1, order.data(), err, sizeof err),
            MGRT_OK)
      << err;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(order[i], i);
  mgrt_graph empty{0, 0, flatRow.data(), nullptr};
  EXPECT_EQ(mgrt_partition_metis(&empty, 4, 1, nullptr, err, sizeof err),
            MGRT_OK);

  EXPECT_EQ(mgrt_partition_metis(&g, 0, 1, order.data(), err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::strstr(err, "seq_len = 0"), nullptr) << err;
  colIdx[3] = 8;
  EXPECT_EQ(mgrt_partition_metis(&g, 4, 1, order.data(), err, sizeof err),
            MGRT_ERR_FORMAT);
  EXPECT_NE(std::strstr(err, "out of range"), nullptr) << err;
  colIdx[3] = 2;

  // Edge cut: order must be a permutation.
  std::vector<int64_t> bad = {0, 1, 2, 3, 4, 5, 6, 6};
  int64_t cut;
  EXPECT_EQ(mgrt_partition_edge_cut(&g, bad.data(), 4, &cut, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::strstr(err, "order[7] = 6"), nullptr) << err;
  std::vector<int64_t> ident = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_EQ(mgrt_partition_edge_cut(&g, ident.data(), 4, &cut, err, sizeof err),
            MGRT_OK);
  EXPECT_EQ(cut, 1); // {0..3} | {4..7}: only 7 -> 3 crosses
}

} // namespace

TEST(MetisPartition, GivenPartSizes) {
  // Uneven parts (the cp blocks of a sequence cp does not divide): 3 parts
  // of 11, 11 and 10 nodes of a 32-node SBM with 3 blocks, each part's
  // nodes in increasing id, fewer edges cut than a random split.
  Sbm s("synthetic:sbm,nodes=32,classes=3,degree=6,seed=2");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  const int64_t n = 32;
  const int64_t sizes[3] = {11, 11, 10};
  std::vector<int64_t> order(n, -1);
  char err[256] = "";
  ASSERT_EQ(mgrt_partition_metis_sizes(&s.g, 3, sizes, 1, order.data(), err,
                                       sizeof err),
            MGRT_OK)
      << err;
  ASSERT_TRUE(isPermutation(order));
  std::vector<int64_t> part(n);
  for (int64_t p = 0, first = 0; p < 3; first += sizes[p++]) {
    EXPECT_TRUE(
        std::is_sorted(order.begin() + first, order.begin() + first + sizes[p]))
        << "part " << p;
    for (int64_t i = first; i < first + sizes[p]; ++i)
      part[order[i]] = p;
  }
  int64_t cut = 0;
  for (int64_t u = 0; u < n; ++u)
    for (int64_t e = s.g.row_ptr[u]; e < s.g.row_ptr[u + 1]; ++e)
      cut += part[u] != part[s.g.col_idx[e]];
  EXPECT_LT(cut, s.g.num_edges * 2 / 3) << "a random split cuts about 2/3";
  // The sizes must add up to the nodes, and none may be negative.
  const int64_t wrong[3] = {11, 11, 11}, negative[3] = {22, 11, -1};
  EXPECT_EQ(mgrt_partition_metis_sizes(&s.g, 3, wrong, 1, order.data(), err,
                                       sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::string(err).find("3 part sizes summing to 33 for 32 nodes"),
            std::string::npos)
      << err;
  EXPECT_EQ(mgrt_partition_metis_sizes(&s.g, 3, negative, 1, order.data(), err,
                                       sizeof err),
            MGRT_ERR_ARGUMENT);
}
