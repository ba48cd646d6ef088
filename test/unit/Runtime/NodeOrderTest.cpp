//===- NodeOrderTest.cpp - Node renumbering for the MoA pipeline ----------===//
//
// mgrt_order_locality (a permutation: the hubs' search first, the nodes
// without edges last; its errors), the rows it makes ready before the last
// chunk on graphs whose ids are shuffled (a grid, R-MAT), the driver's
// layouts (gp's parts kept, mop's blocks interleaved), the --reorder flag,
// and every full-graph input written in the renumbered order: undoing the
// order on the filled rows gives the data set's arrays back.
//
//===----------------------------------------------------------------------===//

#include "driver/NodeOrder.h"
#include "driver/FullGraph.h"
#include "driver/Options.h"
#include "driver/Topology.h"
#include "kernels/MoaPipeline.h"
#include "megagraph/RuntimeData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace mgrt;

namespace {

bool isPermutation(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A CSR over std::vectors (rows sorted), viewed as an mgrt_graph.
struct Csr {
  std::vector<int64_t> rowPtr, colIdx;
  mgrt_graph g{};
  Csr(int64_t n, std::vector<std::pair<int64_t, int64_t>> edges) {
    std::sort(edges.begin(), edges.end());
    rowPtr.assign(n + 1, 0);
    for (auto [u, v] : edges)
      ++rowPtr[u + 1], colIdx.push_back(v);
    for (int64_t u = 0; u < n; ++u)
      rowPtr[u + 1] += rowPtr[u];
    g.num_nodes = n;
    g.num_edges = static_cast<int64_t>(colIdx.size());
    g.row_ptr = rowPtr.data();
    g.col_idx = colIdx.data();
  }
};

/// A side x side grid, both directions of every edge, its ids shuffled.
Csr shuffledGrid(int64_t side, unsigned seed) {
  const int64_t n = side * side;
  std::vector<int64_t> id(n);
  std::iota(id.begin(), id.end(), 0);
  std::shuffle(id.begin(), id.end(), std::mt19937(seed));
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t r = 0; r < side; ++r)
    for (int64_t c = 0; c < side; ++c) {
      const int64_t u = id[r * side + c];
      if (c + 1 < side)
        edges.push_back({u, id[r * side + c + 1]}),
            edges.push_back({id[r * side + c + 1], u});
      if (r + 1 < side)
        edges.push_back({u, id[(r + 1) * side + c]}),
            edges.push_back({id[(r + 1) * side + c], u});
    }
  return Csr(n, std::move(edges));
}

/// The mean over the edges of how many chunks apart their endpoints are,
/// with the nodes laid out by `order` in `chunks` chunks.
double chunkSpread(const mgrt_graph &g, const std::vector<int64_t> &order,
                   int64_t chunks) {
  const int64_t n = g.num_nodes;
  std::vector<int64_t> pos(n);
  for (int64_t k = 0; k < n; ++k)
    pos[order[k]] = k;
  double sum = 0;
  for (int64_t u = 0; u < n; ++u)
    for (int64_t e = g.row_ptr[u]; e < g.row_ptr[u + 1]; ++e)
      sum += std::abs(moaChunkOf(pos[u], n, chunks) -
                      moaChunkOf(pos[g.col_idx[e]], n, chunks));
  return g.num_edges ? sum / static_cast<double>(g.num_edges) : 0;
}

std::vector<int64_t> identity(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> localityOf(const mgrt_graph &g) {
  std::vector<int64_t> order(g.num_nodes, -1);
  char err[256] = "";
  EXPECT_EQ(mgrt_order_locality(&g, order.data(), err, sizeof err), MGRT_OK)
      << err;
  return order;
}

TEST(LocalityOrder, HubsFirstNodesWithoutEdgesLast) {
  // 3 is the hub (0, 5, 6); 5 and 6 are linked; 2 has only a self loop;
  // 1 and 4 have no edge.
  Csr c(
      7,
      {{0, 3}, {3, 0}, {3, 5}, {5, 3}, {3, 6}, {6, 3}, {5, 6}, {6, 5}, {2, 2}});
  EXPECT_EQ(localityOf(c.g), (std::vector<int64_t>{3, 0, 5, 6, 1, 2, 4}));
  // Two components: the larger hub's first, then the other's.
  Csr two(6, {{0, 1}, {1, 0}, {4, 2}, {2, 4}, {4, 3}, {3, 4}, {4, 5}, {5, 4}});
  EXPECT_EQ(localityOf(two.g), (std::vector<int64_t>{4, 2, 3, 5, 0, 1}));
  Csr none(0, {});
  EXPECT_EQ(mgrt_order_locality(&none.g, nullptr, nullptr, 0), MGRT_OK);
}

TEST(LocalityOrder, Errors) {
  Csr c(3, {{0, 1}, {1, 0}});
  char err[256] = "";
  EXPECT_EQ(mgrt_order_locality(&c.g, nullptr, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_STREQ(err, "mgrt_order_locality: order is NULL");
  c.colIdx[1] = 7;
  std::vector<int64_t> order(3);
  EXPECT_EQ(mgrt_order_locality(&c.g, order.data(), err, sizeof err),
            MGRT_ERR_FORMAT);
  EXPECT_NE(std::string(err).find("mgrt_order_locality"), std::string::npos)
      << err;
}

TEST(LocalityOrder, ShrinksTheChunkSpreadOfAShuffledGrid) {
  const Csr c = shuffledGrid(32, 5);
  const int64_t n = c.g.num_nodes, K = 4;
  const std::vector<int64_t> ids = identity(n), order = localityOf(c.g);
  ASSERT_TRUE(isPermutation(order));
  const double before = chunkSpread(c.g, ids, K),
               after = chunkSpread(c.g, order, K);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(after, 0.1 * before) << before << " -> " << after;
  // Shuffled, a row is ready early only if its 5 nodes all miss the last
  // chunk (0.75^5, 24%); in BFS order all but the rows next to it are.
  const int64_t shuffled = rowsReadyBeforeLastChunk(c.g, ids, 1, K, false),
                bfs = rowsReadyBeforeLastChunk(c.g, order, 1, K, false);
  EXPECT_LT(shuffled, 3 * n / 10);
  EXPECT_GT(bfs, (K - 1) * n / K - n / 10) << shuffled << " -> " << bfs;
}

/// The synthetic R-MAT graph of `nodes` nodes (shuffled ids), quietly.
void loadRmat(int64_t nodes, GraphData &data, Options &opts) {
  opts.quiet = true;
  opts.data = "synthetic:rmat,nodes=" + std::to_string(nodes) +
              ",edges=" + std::to_string(4 * nodes) +
              ",classes=4,features=3,seed=2";
  std::string error;
  ASSERT_TRUE(loadGraphData(opts, data, error)) << error;
}

TEST(NodeOrder, OneProcessAndMopBlocksReadyEarlier) {
  GraphData data;
  Options opts;
  loadRmat(2048, data, opts);
  const mgrt_graph &g = data.graph;
  const int64_t n = g.num_nodes, K = 4;
  std::string error;
  for (int64_t blocks : {1, 2, 4}) {
    std::vector<int64_t> order = identity(n);
    const int64_t before = rowsReadyBeforeLastChunk(g, order, blocks, K, false);
    ASSERT_TRUE(
        localityNodeOrder(data, opts, blocks, false, K, true, order, error))
        << error;
    ASSERT_TRUE(isPermutation(order));
    const int64_t after = rowsReadyBeforeLastChunk(g, order, blocks, K, false);
    EXPECT_GT(after, before + n / 10)
        << blocks << " blocks: " << before << " -> " << after;
    EXPECT_LT(chunkSpread(g, order, K), chunkSpread(g, identity(n), K));
  }
}

TEST(NodeOrder, GpPartsKeepTheirNodes) {
  GraphData data;
  Options opts;
  loadRmat(1024, data, opts);
  const mgrt_graph &g = data.graph;
  const int64_t n = g.num_nodes, P = 2, K = 4;
  std::string error;
  std::vector<int64_t> parts;
  ASSERT_TRUE(partitionNodes(data, opts, P, false, parts, error)) << error;
  std::vector<int64_t> order = parts;
  ASSERT_TRUE(localityNodeOrder(data, opts, P, true, K, false, order, error))
      << error;
  ASSERT_TRUE(isPermutation(order));
  for (int64_t p = 0; p < P; ++p) {
    std::vector<int64_t> a(parts.begin() + p * n / P,
                           parts.begin() + (p + 1) * n / P),
        b(order.begin() + p * n / P, order.begin() + (p + 1) * n / P);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "part " << p;
  }
  EXPECT_GE(rowsReadyBeforeLastChunk(g, order, P, K, true),
            rowsReadyBeforeLastChunk(g, parts, P, K, true));
}

TEST(NodeOrder, ReorderFlag) {
  mgrt_plan moa{}, plain{};
  moa.moa = 1, moa.chunks = 4;
  Options opts;
  EXPECT_EQ(opts.reorder, "auto");
  EXPECT_TRUE(renumbersNodes(opts, &moa));
  EXPECT_FALSE(renumbersNodes(opts, &plain));
  EXPECT_FALSE(renumbersNodes(opts, nullptr));
  const char *none[] = {"m", "--reorder", "none"};
  std::string error;
  ASSERT_TRUE(parseOptions(3, const_cast<char **>(none), opts, error)) << error;
  EXPECT_FALSE(renumbersNodes(opts, &moa));
  const char *bad[] = {"m", "--reorder=bfs"};
  EXPECT_FALSE(parseOptions(2, const_cast<char **>(bad), opts, error));
  EXPECT_EQ(error, "--reorder needs none or auto, got 'bfs'");
}

/// The integer at element i of an i64 or i32 tensor.
int64_t intAt(const mgrt_tensor &t, int64_t i) {
  return t.dtype == MGRT_I64 ? static_cast<const int64_t *>(t.data)[i]
                             : static_cast<const int32_t *>(t.data)[i];
}

TEST(NodeOrder, EveryInputFollowsTheRows) {
  GraphData data;
  Options opts;
  loadRmat(512, data, opts);
  const mgrt_graph &g = data.graph;
  const int64_t N = g.num_nodes, E = g.num_edges, F = data.numFeatures();
  std::vector<int64_t> order = identity(N);
  std::string error;
  ASSERT_TRUE(localityNodeOrder(data, opts, 1, false, 4, false, order, error))
      << error;
  ASSERT_NE(order, identity(N));
  std::vector<uint8_t> isTrain, isEval;
  drawSplit(data, opts, isTrain, isEval);
  mgrt_tensor_info infos[6] = {};
  const struct {
    const char *name;
    mgrt_tensor_role role;
    int dtype, rank;
    int64_t d0, d1;
  } spec[6] = {{"x", MGRT_ROLE_NODE_FEATURES, MGRT_F32, 2, N, F},
               {"edge_index", MGRT_ROLE_EDGE_INDEX, MGRT_I64, 2, 2, E},
               {"labels", MGRT_ROLE_LABELS, MGRT_I64, 1, N, 0},
               {"label_mask", MGRT_ROLE_LABEL_MASK, MGRT_BOOL, 1, N, 0},
               {"eval_mask", MGRT_ROLE_EVAL_MASK, MGRT_F32, 1, N, 0},
               {"in_degree", MGRT_ROLE_IN_DEGREE, MGRT_I32, 1, N, 0}};
  std::vector<mgrt_tensor> inputs(6);
  for (int i = 0; i < 6; ++i) {
    infos[i].name = spec[i].name;
    infos[i].role = spec[i].role;
    infos[i].dtype = spec[i].dtype;
    infos[i].rank = spec[i].rank;
    infos[i].shape[0] = spec[i].d0;
    infos[i].shape[1] = spec[i].d1;
    infos[i].index = -1;
    ASSERT_EQ(mgrt_tensor_alloc(&inputs[i], spec[i].dtype, spec[i].rank,
                                infos[i].shape),
              MGRT_OK);
  }
  mgrt_model_info model{};
  model.model_name = "gcn";
  model.num_inputs = 6;
  model.inputs = infos;
  FullGraphBatches batches(data, order, isTrain, isEval, model, 0, 1,
                           std::make_shared<const FullGraphBatches *>(nullptr));
  BatchCounts counts;
  ASSERT_TRUE(batches.fill(0, inputs, counts, error)) << error;
  EXPECT_EQ(counts.counted, std::count(isTrain.begin(), isTrain.end(), 1));
  // Undo the order on every filled row: row k is node order[k].
  std::vector<float> x(N * F);
  std::vector<int64_t> labels(N), degree(N);
  std::vector<uint8_t> mask(N);
  std::vector<float> evalMask(N);
  for (int64_t k = 0; k < N; ++k) {
    const int64_t v = order[k];
    std::memcpy(&x[v * F], static_cast<const float *>(inputs[0].data) + k * F,
                F * sizeof(float));
    labels[v] = intAt(inputs[2], k);
    mask[v] = static_cast<const uint8_t *>(inputs[3].data)[k];
    evalMask[v] = static_cast<const float *>(inputs[4].data)[k];
    degree[v] = intAt(inputs[5], k);
  }
  EXPECT_EQ(std::memcmp(x.data(), data.features.data, N * F * sizeof(float)),
            0);
  const int64_t *lab = static_cast<const int64_t *>(data.labels.data);
  const int64_t *deg = static_cast<const int64_t *>(data.inDegree.data);
  for (int64_t v = 0; v < N; ++v) {
    ASSERT_EQ(labels[v], std::max<int64_t>(0, lab[v])) << v;
    ASSERT_EQ(mask[v], isTrain[v]) << v;
    ASSERT_EQ(evalMask[v], static_cast<float>(isEval[v])) << v;
    ASSERT_EQ(degree[v], deg[v]) << v;
  }
  // Both endpoints of every edge: mapped back, the data set's edges.
  std::vector<std::pair<int64_t, int64_t>> edges, want;
  for (int64_t e = 0; e < E; ++e)
    edges.push_back(
        {order[intAt(inputs[1], e)], order[intAt(inputs[1], E + e)]});
  for (int64_t u = 0; u < N; ++u)
    for (int64_t e = g.row_ptr[u]; e < g.row_ptr[u + 1]; ++e)
      want.push_back({u, g.col_idx[e]});
  std::sort(edges.begin(), edges.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(edges, want);
  for (mgrt_tensor &t : inputs)
    mgrt_tensor_free(&t);
}

} // namespace
