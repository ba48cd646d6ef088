//===- GraphDataTest.cpp - The graph data layer (RuntimeData.h) -----------===//
//
// mgrt_sbm_generate and mgrt_rmat_generate (determinism, CSR validity,
// symmetry, no self loops, edge densities within statistical bounds of p_in /
// p_out, label / feature correlation, spec errors, a 1M-node graph),
// mgrt_graph_degrees, mgrt_spd_block against Floyd-Warshall on small random
// graphs (full matrix and row blocks, truncation, unreachable pairs, directed
// edges, bad arguments) and mgrt_partition_sequences (a permutation; sequences
// follow the blocks of an SBM).
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

/// Owns what mgrt_sbm_generate returns.
struct Sbm {
  mgrt_graph graph{};
  mgrt_tensor features{}, labels{};
  int rc = -1;
  char err[512] = "";

  explicit Sbm(const std::string &spec) {
    rc = mgrt_sbm_generate(spec.c_str(), &graph, &features, &labels, err,
                           sizeof err);
  }
  /// Nothing generated yet (a derived generator fills it).
  explicit Sbm(std::nullptr_t) {}
  ~Sbm() {
    mgrt_graph_free(&graph);
    mgrt_tensor_free(&features);
    mgrt_tensor_free(&labels);
  }
  const int64_t *label() const {
    return static_cast<const int64_t *>(labels.data);
  }
  const float *feature() const {
    return static_cast<const float *>(features.data);
  }
};

/// A graph whose arrays are vectors (the queries accept any CSR).
struct VecGraph {
  std::vector<int64_t> rowPtr, colIdx;
  mgrt_graph g{};

  VecGraph(int64_t n, const std::vector<std::pair<int64_t, int64_t>> &edges) {
    rowPtr.assign(n + 1, 0);
    for (auto [u, v] : edges)
      ++rowPtr[u + 1];
    for (int64_t i = 0; i < n; ++i)
      rowPtr[i + 1] += rowPtr[i];
    colIdx.resize(edges.size());
    std::vector<int64_t> at(rowPtr.begin(), rowPtr.end() - 1);
    for (auto [u, v] : edges)
      colIdx[at[u]++] = v;
    g = {n, static_cast<int64_t>(edges.size()), rowPtr.data(), colIdx.data()};
  }
};

/// Directed random graph: each ordered pair (u != v) with probability p,
/// plus a few self loops and duplicate edges; symmetric when `undirected`.
VecGraph randomGraph(int64_t n, double p, bool undirected, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u01(0, 1);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t u = 0; u < n; ++u)
    for (int64_t v = undirected ? u + 1 : 0; v < n; ++v) {
      if (u == v || u01(gen) >= p)
        continue;
      edges.push_back({u, v});
      if (undirected)
        edges.push_back({v, u});
    }
  if (n > 2) {
    edges.push_back({1, 1});            // self loop
    for (int rep = 0; rep < 2; ++rep) { // duplicates
      edges.push_back({0, 2});
      if (undirected)
        edges.push_back({2, 0});
    }
  }
  std::shuffle(edges.begin(), edges.end(), gen);
  return VecGraph(n, edges);
}

/// All-pairs distances by Floyd-Warshall over the subgraph induced by
/// `nodes` (positions), truncated at maxd.
std::vector<int64_t> floydWarshall(const mgrt_graph &g,
                                   const std::vector<int64_t> &nodes,
                                   int64_t maxd) {
  const int64_t S = static_cast<int64_t>(nodes.size());
  const int64_t inf = 1LL << 40;
  std::vector<int64_t> d(S * S, inf);
  for (int64_t p = 0; p < S; ++p) {
    d[p * S + p] = 0;
    for (int64_t k = g.row_ptr[nodes[p]]; k < g.row_ptr[nodes[p] + 1]; ++k) {
      auto it = std::find(nodes.begin(), nodes.end(), g.col_idx[k]);
      if (it != nodes.end() && it - nodes.begin() != p)
        d[p * S + (it - nodes.begin())] = 1;
    }
  }
  for (int64_t m = 0; m < S; ++m)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j)
        d[i * S + j] = std::min(d[i * S + j], d[i * S + m] + d[m * S + j]);
  for (int64_t &x : d)
    x = std::min(x, maxd);
  return d;
}

std::vector<int64_t> spd(const mgrt_graph &g, const std::vector<int64_t> &nodes,
                         int64_t begin, int64_t end, int64_t maxd) {
  const int64_t S = static_cast<int64_t>(nodes.size());
  std::vector<int64_t> out((end - begin) * S, -7);
  char err[256] = "";
  int rc = mgrt_spd_block(&g, nodes.data(), S, begin, end, maxd, out.data(),
                          err, sizeof err);
  EXPECT_EQ(rc, MGRT_OK) << err;
  return out;
}

bool contains(const char *text, const char *part) {
  return std::strstr(text, part) != nullptr;
}

//===-- SBM ---------------------------------------------------------------===//

TEST(SbmTest, DeterministicForASeed) {
  const std::string spec =
      "synthetic:sbm,nodes=3000,classes=5,features=7,p_in=0.02,p_out=0.003,"
      "seed=42";
  Sbm a(spec), b(spec), c(spec + "3");
  ASSERT_EQ(a.rc, MGRT_OK) << a.err;
  ASSERT_EQ(b.rc, MGRT_OK) << b.err;
  ASSERT_EQ(c.rc, MGRT_OK) << c.err;
  ASSERT_EQ(a.graph.num_edges, b.graph.num_edges);
  EXPECT_TRUE(
      std::equal(a.graph.row_ptr, a.graph.row_ptr + 3001, b.graph.row_ptr));
  EXPECT_TRUE(std::equal(a.graph.col_idx, a.graph.col_idx + a.graph.num_edges,
                         b.graph.col_idx));
  EXPECT_EQ(0, std::memcmp(a.features.data, b.features.data,
                           sizeof(float) * 3000 * 7));
  EXPECT_EQ(0,
            std::memcmp(a.labels.data, b.labels.data, sizeof(int64_t) * 3000));
  // Another seed, another graph and other features.
  EXPECT_FALSE(a.graph.num_edges == c.graph.num_edges &&
               std::equal(a.graph.col_idx, a.graph.col_idx + a.graph.num_edges,
                          c.graph.col_idx));
  EXPECT_NE(0, std::memcmp(a.features.data, c.features.data,
                           sizeof(float) * 3000 * 7));
}

TEST(SbmTest, ValidSymmetricSimpleGraph) {
  Sbm s("synthetic:sbm,nodes=2000,classes=3,p_in=0.05,p_out=0.01,seed=7");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  const mgrt_graph &g = s.graph;
  char err[256] = "";
  ASSERT_EQ(mgrt_graph_check(&g, err, sizeof err), MGRT_OK) << err;
  EXPECT_EQ(g.num_nodes, 2000);
  EXPECT_EQ(g.num_edges % 2, 0);
  for (int64_t i = 0; i < g.num_nodes; ++i) {
    const int64_t *b = g.col_idx + g.row_ptr[i],
                  *e = g.col_idx + g.row_ptr[i + 1];
    EXPECT_TRUE(std::is_sorted(b, e)) << "row " << i;
    EXPECT_EQ(std::adjacent_find(b, e), e) << "duplicate edge in row " << i;
    for (const int64_t *p = b; p < e; ++p) {
      ASSERT_NE(*p, i) << "self loop";
      const int64_t *rb = g.col_idx + g.row_ptr[*p],
                    *re = g.col_idx + g.row_ptr[*p + 1];
      ASSERT_TRUE(std::binary_search(rb, re, i))
          << "edge " << i << "->" << *p << " without its reverse";
    }
  }
  EXPECT_EQ(s.labels.dtype, MGRT_I64);
  ASSERT_EQ(s.labels.rank, 1);
  EXPECT_EQ(s.labels.shape[0], 2000);
  for (int64_t i = 0; i < 2000; ++i)
    EXPECT_EQ(s.label()[i], i % 3);
  EXPECT_EQ(s.features.dtype, MGRT_F32);
  ASSERT_EQ(s.features.rank, 2);
  EXPECT_EQ(s.features.shape[0], 2000);
  EXPECT_EQ(s.features.shape[1], 16); // default
}

TEST(SbmTest, EdgeDensitiesMatchPInAndPOut) {
  // Uneven blocks (4001 = 6 * 666 + 5) exercise both block sizes.
  const int64_t n = 4001, C = 6;
  const double pIn = 0.03, pOut = 0.004;
  Sbm s("sbm,nodes=4001,classes=6,features=0,p_in=0.03,p_out=0.004,seed=3");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  double intraEdges = 0, interEdges = 0; // unordered pairs
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = s.graph.row_ptr[i]; k < s.graph.row_ptr[i + 1]; ++k) {
      const int64_t j = s.graph.col_idx[k];
      if (i < j)
        ((i % C == j % C) ? intraEdges : interEdges) += 1;
    }
  double intraPairs = 0;
  for (int64_t c = 0; c < C; ++c) {
    const double sz = static_cast<double>(n / C + (c < n % C ? 1 : 0));
    intraPairs += sz * (sz - 1) / 2;
  }
  const double interPairs = n * (n - 1.0) / 2 - intraPairs;
  // Binomial counts: within 5 standard deviations.
  auto within = [](double count, double pairs, double p) {
    const double mean = pairs * p, sd = std::sqrt(pairs * p * (1 - p));
    EXPECT_NEAR(count, mean, 5 * sd) << "pairs " << pairs << " p " << p;
  };
  within(intraEdges, intraPairs, pIn);
  within(interEdges, interPairs, pOut);
}

TEST(SbmTest, DefaultProbabilitiesGiveTheDegree) {
  Sbm s("synthetic:sbm,nodes=20000,seed=5"); // classes 8, degree 20
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  const double mean = static_cast<double>(s.graph.num_edges) / 20000;
  EXPECT_NEAR(mean, 20, 0.5);
  int64_t intra = 0;
  for (int64_t i = 0; i < 20000; ++i)
    for (int64_t k = s.graph.row_ptr[i]; k < s.graph.row_ptr[i + 1]; ++k)
      intra += (s.graph.col_idx[k] % 8 == i % 8);
  EXPECT_NEAR(static_cast<double>(intra) / s.graph.num_edges, 0.8, 0.02);

  Sbm one("synthetic:sbm,nodes=5000,classes=1,degree=10,features=2");
  ASSERT_EQ(one.rc, MGRT_OK) << one.err;
  EXPECT_NEAR(static_cast<double>(one.graph.num_edges) / 5000, 10, 0.5);
}

TEST(SbmTest, FeaturesCorrelateWithLabels) {
  for (const char *spec :
       {"synthetic:sbm,nodes=6000,classes=4,features=10,signal=1,seed=9",
        // fewer features than classes: binary-coded +-signal class means
        "synthetic:sbm,nodes=6000,classes=12,features=6,signal=1.5,seed=9"}) {
    SCOPED_TRACE(spec);
    Sbm s(spec);
    ASSERT_EQ(s.rc, MGRT_OK) << s.err;
    const int64_t n = s.features.shape[0], F = s.features.shape[1];
    int64_t C = 0;
    for (int64_t i = 0; i < n; ++i)
      C = std::max(C, s.label()[i] + 1);
    std::vector<double> mean(C * F, 0), count(C, 0);
    double all = 0, all2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      count[s.label()[i]] += 1;
      for (int64_t f = 0; f < F; ++f)
        mean[s.label()[i] * F + f] += s.feature()[i * F + f];
    }
    for (int64_t c = 0; c < C; ++c)
      for (int64_t f = 0; f < F; ++f)
        mean[c * F + f] /= count[c];
    // Residual noise around the class mean: unit variance.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t f = 0; f < F; ++f) {
        const double r = s.feature()[i * F + f] - mean[s.label()[i] * F + f];
        all += r;
        all2 += r * r;
      }
    EXPECT_NEAR(all2 / (n * F), 1.0, 0.05);
    // Class means are well separated (distance ~ signal * sqrt(2 or more)),
    // far beyond their standard error (~ 1 / sqrt(n / C) per feature).
    double minDist = 1e30;
    for (int64_t a = 0; a < C; ++a)
      for (int64_t b = a + 1; b < C; ++b) {
        double d2 = 0;
        for (int64_t f = 0; f < F; ++f)
          d2 += std::pow(mean[a * F + f] - mean[b * F + f], 2);
        minDist = std::min(minDist, std::sqrt(d2));
      }
    EXPECT_GT(minDist, 1.0);
    // Nearest class mean classifies better than chance by far.
    int64_t correct = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t best = -1;
      double bestD = 1e30;
      for (int64_t c = 0; c < C; ++c) {
        double d2 = 0;
        for (int64_t f = 0; f < F; ++f)
          d2 += std::pow(s.feature()[i * F + f] - mean[c * F + f], 2);
        if (d2 < bestD)
          bestD = d2, best = c;
      }
      correct += best == s.label()[i];
    }
    EXPECT_GT(static_cast<double>(correct) / n, 2.0 / C);
  }
  // signal=0: class means collapse to noise level.
  Sbm s("synthetic:sbm,nodes=8000,classes=2,features=4,signal=0");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  for (int64_t f = 0; f < 4; ++f) {
    double m[2] = {0, 0};
    for (int64_t i = 0; i < 8000; ++i)
      m[i % 2] += s.feature()[i * 4 + f] / 4000.0;
    EXPECT_NEAR(m[0] - m[1], 0, 0.15);
  }
}

TEST(SbmTest, SpecErrorsNameTheKeyOrValue) {
  struct Case {
    const char *spec, *expect;
  } cases[] = {
      {"synthetic:sbm", "missing required key 'nodes'"},
      {"synthetic:sbm,classes=4", "missing required key 'nodes'"},
      {"synthetic:rmat,nodes=10", "unknown generator 'rmat'"},
      {"synthetic:sbm,nodes=10,colors=3", "unknown key 'colors'"},
      {"synthetic:sbm,nodes=abc", "bad value 'abc' for key 'nodes'"},
      {"synthetic:sbm,nodes=0", "bad value '0' for key 'nodes'"},
      {"synthetic:sbm,nodes=10,p_in=1.5", "bad value '1.5' for key 'p_in'"},
      {"synthetic:sbm,nodes=10,p_out=-0.1", "bad value '-0.1' for key 'p_out'"},
      {"synthetic:sbm,nodes=10,p_out=nan", "bad value 'nan' for key 'p_out'"},
      {"synthetic:sbm,nodes=10,seed=-1", "bad value '-1' for key 'seed'"},
      {"synthetic:sbm,nodes=10,features=2x",
       "bad value '2x' for key 'features'"},
      {"synthetic:sbm,nodes=10,classes=11", "key 'classes'"},
      {"synthetic:sbm,nodes=10,nodes=20", "key 'nodes' given twice"},
      {"synthetic:sbm,nodes=10,,seed=1", "malformed item ''"},
      {"synthetic:sbm,nodes=10,seed", "malformed item 'seed'"},
      {"synthetic:sbm,nodes=100000000,p_in=1,p_out=1", "edges expected"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    mgrt_graph g;
    mgrt_tensor x, y;
    std::memset(&g, 0x5a, sizeof g); // outputs are zeroed on failure
    char err[512] = "";
    EXPECT_NE(mgrt_sbm_generate(c.spec, &g, &x, &y, err, sizeof err), MGRT_OK);
    EXPECT_TRUE(contains(err, c.expect)) << err;
    EXPECT_EQ(g.row_ptr, nullptr);
    EXPECT_EQ(x.data, nullptr);
    EXPECT_EQ(y.data, nullptr);
  }
  char err[64] = "";
  EXPECT_EQ(
      mgrt_sbm_generate(nullptr, nullptr, nullptr, nullptr, err, sizeof err),
      MGRT_ERR_ARGUMENT);
  // No error buffer is fine.
  mgrt_graph g;
  EXPECT_EQ(mgrt_sbm_generate("sbm", &g, nullptr, nullptr, nullptr, 0),
            MGRT_ERR_ARGUMENT);
}

TEST(SbmTest, EdgeCasesAndTrackedMemory) {
  const size_t before = mgrt_current_bytes();
  {
    Sbm single("synthetic:sbm,nodes=1"); // classes default to min(8, N)
    ASSERT_EQ(single.rc, MGRT_OK) << single.err;
    EXPECT_EQ(single.graph.num_edges, 0);
    EXPECT_EQ(single.label()[0], 0);
    Sbm full("synthetic:sbm,nodes=50,classes=5,p_in=1,p_out=1,features=0");
    ASSERT_EQ(full.rc, MGRT_OK) << full.err;
    EXPECT_EQ(full.graph.num_edges, 50 * 49); // complete graph
    Sbm none("synthetic:sbm,nodes=50,classes=50,p_in=1,p_out=0");
    ASSERT_EQ(none.rc, MGRT_OK) << none.err; // blocks of one node
    EXPECT_EQ(none.graph.num_edges, 0);
    Sbm blocks("synthetic:sbm,nodes=40,classes=4,p_in=1,p_out=0");
    ASSERT_EQ(blocks.rc, MGRT_OK) << blocks.err; // 4 cliques of 10
    EXPECT_EQ(blocks.graph.num_edges, 4 * 10 * 9);
    EXPECT_GT(mgrt_current_bytes(), before);
  }
  EXPECT_EQ(mgrt_current_bytes(), before);
}

TEST(SbmTest, OneMillionNodes) {
  Sbm s("synthetic:sbm,nodes=1000000,classes=16,features=8,seed=11");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  EXPECT_EQ(s.graph.num_nodes, 1000000);
  // Expected 2e7 directed edges (degree 20); sd of the count ~ 6e3.
  EXPECT_NEAR(static_cast<double>(s.graph.num_edges), 2e7, 1e5);
  EXPECT_EQ(s.graph.row_ptr[1000000], s.graph.num_edges);
}

//===-- R-MAT -------------------------------------------------------------===//

/// Owns what mgrt_rmat_generate (or mgrt_synthetic_generate) returns.
struct Rmat : Sbm {
  explicit Rmat(const std::string &spec, bool dispatch = false) : Sbm(nullptr) {
    rc = dispatch ? mgrt_synthetic_generate(spec.c_str(), &graph, &features,
                                            &labels, err, sizeof err)
                  : mgrt_rmat_generate(spec.c_str(), &graph, &features, &labels,
                                       err, sizeof err);
  }
};

/// Checks the CSR contract plus: rows sorted, no duplicates, no self
/// loops, every edge with its reverse.
void expectSimpleSymmetric(const mgrt_graph &g) {
  char err[256] = "";
  ASSERT_EQ(mgrt_graph_check(&g, err, sizeof err), MGRT_OK) << err;
  for (int64_t i = 0; i < g.num_nodes; ++i) {
    const int64_t *b = g.col_idx + g.row_ptr[i],
                  *e = g.col_idx + g.row_ptr[i + 1];
    ASSERT_TRUE(std::is_sorted(b, e)) << "row " << i;
    ASSERT_EQ(std::adjacent_find(b, e), e) << "duplicate edge in row " << i;
    for (const int64_t *p = b; p < e; ++p) {
      ASSERT_NE(*p, i) << "self loop";
      const int64_t *rb = g.col_idx + g.row_ptr[*p],
                    *re = g.col_idx + g.row_ptr[*p + 1];
      ASSERT_TRUE(std::binary_search(rb, re, i))
          << "edge " << i << "->" << *p << " without its reverse";
    }
  }
}

TEST(RmatTest, ExactlyEEdgesSimpleSymmetricAndDeterministic) {
  // N not a power of two: draws past N are redrawn.
  const std::string spec =
      "synthetic:rmat,nodes=3000,edges=20000,classes=5,features=7,seed=42";
  Rmat a(spec), b(spec), c(spec + "3"), d(spec, /*dispatch=*/true);
  ASSERT_EQ(a.rc, MGRT_OK) << a.err;
  ASSERT_EQ(b.rc, MGRT_OK) << b.err;
  ASSERT_EQ(c.rc, MGRT_OK) << c.err;
  ASSERT_EQ(d.rc, MGRT_OK) << d.err;
  EXPECT_EQ(a.graph.num_nodes, 3000);
  EXPECT_EQ(a.graph.num_edges, 40000);
  expectSimpleSymmetric(a.graph);
  for (const Rmat *o : {&b, &d}) {
    ASSERT_EQ(a.graph.num_edges, o->graph.num_edges);
    EXPECT_TRUE(
        std::equal(a.graph.row_ptr, a.graph.row_ptr + 3001, o->graph.row_ptr));
    EXPECT_TRUE(std::equal(a.graph.col_idx, a.graph.col_idx + a.graph.num_edges,
                           o->graph.col_idx));
    EXPECT_EQ(0, std::memcmp(a.features.data, o->features.data,
                             sizeof(float) * 3000 * 7));
    EXPECT_EQ(
        0, std::memcmp(a.labels.data, o->labels.data, sizeof(int64_t) * 3000));
  }
  EXPECT_FALSE(
      std::equal(a.graph.row_ptr, a.graph.row_ptr + 3001, c.graph.row_ptr));
  // Default edges: 8 N.
  Rmat e("rmat,nodes=1000");
  ASSERT_EQ(e.rc, MGRT_OK) << e.err;
  EXPECT_EQ(e.graph.num_edges, 16000);
  EXPECT_EQ(e.features.shape[1], 16);
}

TEST(RmatTest, SkewedDegreesAndHomophilousClasses) {
  const int64_t n = 1 << 14, C = 4;
  Rmat r("synthetic:rmat,nodes=16384,edges=131072,classes=4,features=0,"
         "seed=5");
  ASSERT_EQ(r.rc, MGRT_OK) << r.err;
  const mgrt_graph &g = r.graph;
  std::vector<int64_t> deg(n);
  for (int64_t i = 0; i < n; ++i)
    deg[i] = g.row_ptr[i + 1] - g.row_ptr[i];
  std::vector<int64_t> sorted = deg;
  std::sort(sorted.begin(), sorted.end());
  const double mean = 2.0 * 131072 / n; // 16
  // A power law: hubs far above the mean, a median below it, many nodes
  // of degree <= 2 (an SBM / Erdos-Renyi graph of this mean has max ~35,
  // median ~16 and almost no such nodes).
  EXPECT_GT(sorted.back(), 40 * mean);
  EXPECT_LT(sorted[n / 2], mean / 2);
  EXPECT_GT(
      std::count_if(deg.begin(), deg.end(), [](int64_t d) { return d <= 2; }),
      n / 5);
  // Class sizes: equal runs of the R-MAT ids.
  std::vector<int64_t> size(C, 0);
  for (int64_t i = 0; i < n; ++i)
    ++size[r.label()[i]];
  for (int64_t c = 0; c < C; ++c)
    EXPECT_EQ(size[c], n / C);
  // Homophily: more edges inside a class than the 1/C of random ends; with
  // C = 4 (two levels of ids) about (a + d)^2 = 0.38 of them.
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k)
      same += r.label()[i] == r.label()[g.col_idx[k]];
  EXPECT_GT(static_cast<double>(same) / g.num_edges, 0.33);
  // Ids are shuffled: the hubs (class 0) are not the low ids.
  const int64_t hub = std::max_element(deg.begin(), deg.end()) - deg.begin();
  EXPECT_EQ(r.label()[hub], 0);
  int64_t lowIdsInClass0 = 0;
  for (int64_t i = 0; i < n / C; ++i)
    lowIdsInClass0 += r.label()[i] == 0;
  EXPECT_LT(lowIdsInClass0, n / C / 2);
}

TEST(RmatTest, FeaturesCorrelateWithLabels) {
  Rmat r("synthetic:rmat,nodes=6000,edges=30000,classes=4,features=10,"
         "signal=1,seed=9");
  ASSERT_EQ(r.rc, MGRT_OK) << r.err;
  const int64_t n = 6000, F = 10, C = 4;
  std::vector<double> mean(C * F, 0), count(C, 0);
  for (int64_t i = 0; i < n; ++i) {
    count[r.label()[i]] += 1;
    for (int64_t f = 0; f < F; ++f)
      mean[r.label()[i] * F + f] += r.feature()[i * F + f];
  }
  // One-hot class means of size `signal`, unit noise.
  for (int64_t c = 0; c < C; ++c)
    for (int64_t f = 0; f < F; ++f)
      EXPECT_NEAR(mean[c * F + f] / count[c], f % C == c ? 1.0 : 0.0, 0.1)
          << "class " << c << " feature " << f;
  double r2 = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < F; ++f) {
      const double z =
          r.feature()[i * F + f] - (f % C == r.label()[i] ? 1.0 : 0.0);
      r2 += z * z;
    }
  EXPECT_NEAR(r2 / (n * F), 1.0, 0.05);
}

TEST(RmatTest, SpecErrorsNameTheKeyOrValue) {
  struct Case {
    const char *spec, *expect;
  } cases[] = {
      {"synthetic:rmat", "missing required key 'nodes'"},
      {"synthetic:sbm,nodes=10", "unknown generator 'sbm'"},
      {"synthetic:rmat,nodes=10,colors=3", "unknown key 'colors'"},
      {"synthetic:rmat,nodes=0", "bad value '0' for key 'nodes'"},
      {"synthetic:rmat,nodes=10,edges=-1", "bad value '-1' for key 'edges'"},
      {"synthetic:rmat,nodes=10,a=1.5", "bad value '1.5' for key 'a'"},
      {"synthetic:rmat,nodes=10,a=0.5,b=0.3,c=0.3", "a + b + c = 1.1"},
      {"synthetic:rmat,nodes=10,edges=30", "more than half of the 45"},
      {"synthetic:rmat,nodes=10,classes=11", "key 'classes'"},
      {"synthetic:rmat,nodes=10,seed=1,seed=2", "key 'seed' given twice"},
      {"synthetic:rmat,nodes=10,edges", "malformed item 'edges'"},
      {"synthetic:rmat,nodes=2000000000,edges=3000000000", "supported"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    Rmat r(c.spec);
    EXPECT_NE(r.rc, MGRT_OK);
    EXPECT_TRUE(contains(r.err, c.expect)) << r.err;
    EXPECT_EQ(r.graph.row_ptr, nullptr);
    EXPECT_EQ(r.features.data, nullptr);
    EXPECT_EQ(r.labels.data, nullptr);
  }
  Rmat unknown("synthetic:ba,nodes=10", /*dispatch=*/true);
  EXPECT_EQ(unknown.rc, MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains(unknown.err, "unknown generator 'ba'")) << unknown.err;
}

TEST(RmatTest, EdgeCasesAndTrackedMemory) {
  const size_t before = mgrt_current_bytes();
  {
    Rmat single("synthetic:rmat,nodes=1,edges=0");
    ASSERT_EQ(single.rc, MGRT_OK) << single.err;
    EXPECT_EQ(single.graph.num_edges, 0);
    EXPECT_EQ(single.label()[0], 0);
    // Half of all pairs of a small graph, even with skew.
    Rmat dense("synthetic:rmat,nodes=64,edges=1008,features=0");
    ASSERT_EQ(dense.rc, MGRT_OK) << dense.err;
    EXPECT_EQ(dense.graph.num_edges, 2016);
    expectSimpleSymmetric(dense.graph);
    EXPECT_GT(mgrt_current_bytes(), before);
  }
  EXPECT_EQ(mgrt_current_bytes(), before);
}

//===-- Degrees -----------------------------------------------------------===//

TEST(GraphDegreesTest, InAndOut) {
  VecGraph d(5, {{0, 1}, {0, 2}, {0, 2}, {3, 3}, {4, 0}, {2, 0}});
  mgrt_tensor in, out;
  char err[256] = "";
  ASSERT_EQ(mgrt_graph_degrees(&d.g, &in, &out, err, sizeof err), MGRT_OK)
      << err;
  EXPECT_EQ(in.dtype, MGRT_I64);
  ASSERT_EQ(in.rank, 1);
  ASSERT_EQ(out.shape[0], 5);
  const int64_t *ip = static_cast<int64_t *>(in.data);
  const int64_t *op = static_cast<int64_t *>(out.data);
  EXPECT_EQ(std::vector<int64_t>(ip, ip + 5),
            (std::vector<int64_t>{2, 1, 2, 1, 0}));
  EXPECT_EQ(std::vector<int64_t>(op, op + 5),
            (std::vector<int64_t>{3, 0, 1, 1, 1}));
  mgrt_tensor_free(&in);
  mgrt_tensor_free(&out);

  // Undirected SBM: in == out == row length; only one output requested.
  Sbm s("synthetic:sbm,nodes=1000,seed=2");
  ASSERT_EQ(s.rc, MGRT_OK);
  ASSERT_EQ(mgrt_graph_degrees(&s.graph, &in, nullptr, err, sizeof err),
            MGRT_OK);
  for (int64_t i = 0; i < 1000; ++i)
    EXPECT_EQ(static_cast<int64_t *>(in.data)[i],
              s.graph.row_ptr[i + 1] - s.graph.row_ptr[i]);
  mgrt_tensor_free(&in);

  // A bad edge is reported, not read out of bounds.
  d.colIdx[1] = 9;
  EXPECT_EQ(mgrt_graph_degrees(&d.g, &in, &out, err, sizeof err),
            MGRT_ERR_FORMAT);
  EXPECT_TRUE(contains(err, "row 0")) << err;
  EXPECT_EQ(in.data, nullptr);
  EXPECT_EQ(mgrt_graph_check(&d.g, err, sizeof err), MGRT_ERR_FORMAT);
  EXPECT_TRUE(contains(err, "col_idx[1] = 9")) << err;
  EXPECT_EQ(mgrt_graph_degrees(nullptr, &in, &out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
}

//===-- SPD ---------------------------------------------------------------===//

TEST(SpdTest, MatchesFloydWarshall) {
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    for (bool undirected : {true, false}) {
      SCOPED_TRACE(testing::Message()
                   << "seed " << seed << " undirected " << undirected);
      const int64_t n = 40;
      VecGraph r = randomGraph(n, undirected ? 0.06 : 0.05, undirected, seed);
      // A sequence: a random subset of 25 nodes in random order.
      std::vector<int64_t> nodes(n);
      for (int64_t i = 0; i < n; ++i)
        nodes[i] = i;
      std::mt19937 gen(seed);
      std::shuffle(nodes.begin(), nodes.end(), gen);
      nodes.resize(25);
      const int64_t S = 25;
      for (int64_t maxd : {1, 2, 3, 1000}) {
        SCOPED_TRACE(testing::Message() << "max_distance " << maxd);
        const std::vector<int64_t> ref = floydWarshall(r.g, nodes, maxd);
        const std::vector<int64_t> full = spd(r.g, nodes, 0, S, maxd);
        ASSERT_EQ(full, ref);
        // Row blocks, as context-parallel ranks would ask: same rows.
        for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{
                 {0, 7}, {7, 19}, {19, 25}, {24, 25}, {3, 3}}) {
          const std::vector<int64_t> block = spd(r.g, nodes, b, e, maxd);
          EXPECT_TRUE(
              std::equal(block.begin(), block.end(), ref.begin() + b * S))
              << "rows [" << b << ", " << e << ")";
        }
        if (maxd == 1000 && undirected) {
          for (int64_t i = 0; i < S; ++i)
            for (int64_t j = 0; j < S; ++j)
              EXPECT_EQ(full[i * S + j], full[j * S + i]);
        }
      }
    }
  }
}

// More than 64 rows: the searches run 64 sources at a time, so blocks of
// rows that straddle 64-row boundaries and end mid-word are checked too.
TEST(SpdTest, MatchesFloydWarshallBeyondOneWordOfSources) {
  for (bool undirected : {true, false}) {
    SCOPED_TRACE(testing::Message() << "undirected " << undirected);
    const int64_t n = 180;
    VecGraph r = randomGraph(n, undirected ? 0.012 : 0.015, undirected, 7);
    std::vector<int64_t> nodes(n);
    for (int64_t i = 0; i < n; ++i)
      nodes[i] = i;
    std::mt19937 gen(11);
    std::shuffle(nodes.begin(), nodes.end(), gen);
    nodes.resize(150);
    const int64_t S = 150;
    for (int64_t maxd : {2, 5, 1000}) {
      SCOPED_TRACE(testing::Message() << "max_distance " << maxd);
      const std::vector<int64_t> ref = floydWarshall(r.g, nodes, maxd);
      ASSERT_EQ(spd(r.g, nodes, 0, S, maxd), ref);
      for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{
               {0, 64}, {0, 65}, {63, 130}, {70, 150}, {149, 150}}) {
        const std::vector<int64_t> block = spd(r.g, nodes, b, e, maxd);
        EXPECT_TRUE(std::equal(block.begin(), block.end(), ref.begin() + b * S))
            << "rows [" << b << ", " << e << ")";
      }
    }
  }
}

TEST(SpdTest, TruncationUnreachableAndInducedPaths) {
  // Path 0-1-2-3-4 (undirected), isolated 5, and 6 adjacent to 0 and 4.
  std::vector<std::pair<int64_t, int64_t>> e;
  for (auto [u, v] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 6}, {6, 4}}) {
    e.push_back({u, v});
    e.push_back({v, u});
  }
  VecGraph p(7, e);
  // Without node 6 the path is the only way: d(0, 4) = 4.
  std::vector<int64_t> seq = {0, 1, 2, 3, 4, 5};
  std::vector<int64_t> d = spd(p.g, seq, 0, 6, 100);
  EXPECT_EQ(d[0 * 6 + 4], 4);
  EXPECT_EQ(d[0 * 6 + 5], 100); // unreachable
  EXPECT_EQ(d[5 * 6 + 5], 0);
  EXPECT_EQ(d[5 * 6 + 0], 100);
  d = spd(p.g, seq, 0, 1, 3); // truncated
  EXPECT_EQ(d, (std::vector<int64_t>{0, 1, 2, 3, 3, 3}));
  // With node 6 in the sequence (last), 0 -> 6 -> 4 is shorter.
  seq.push_back(6);
  d = spd(p.g, seq, 0, 1, 100);
  EXPECT_EQ(d, (std::vector<int64_t>{0, 1, 2, 3, 2, 100, 1}));
  // max_distance 0: everything 0.
  d = spd(p.g, seq, 2, 4, 0);
  EXPECT_EQ(d, std::vector<int64_t>(14, 0));
  // Directed: 0 -> 1 only.
  VecGraph dir(2, {{0, 1}});
  d = spd(dir.g, {0, 1}, 0, 2, 9);
  EXPECT_EQ(d, (std::vector<int64_t>{0, 1, 9, 0}));
}

TEST(SpdTest, LargeSequenceOfASparseGraph) {
  // Sorted-index path (graph much larger than the sequence) vs dense path
  // (the sequence is most of the graph), cross-checked on one SBM.
  Sbm s("synthetic:sbm,nodes=50000,classes=4,seed=4");
  ASSERT_EQ(s.rc, MGRT_OK);
  std::vector<int64_t> order(50000);
  char err[256] = "";
  ASSERT_EQ(
      mgrt_partition_sequences(&s.graph, 512, order.data(), err, sizeof err),
      MGRT_OK);
  std::vector<int64_t> seq(order.begin(), order.begin() + 512);
  const std::vector<int64_t> sparse = spd(s.graph, seq, 100, 164, 6);
  // Same rows from the subgraph renumbered as its own small graph (dense).
  std::vector<int64_t> pos(50000, -1);
  for (int64_t i = 0; i < 512; ++i)
    pos[seq[i]] = i;
  std::vector<std::pair<int64_t, int64_t>> e;
  for (int64_t i = 0; i < 512; ++i)
    for (int64_t k = s.graph.row_ptr[seq[i]]; k < s.graph.row_ptr[seq[i] + 1];
         ++k)
      if (pos[s.graph.col_idx[k]] >= 0)
        e.push_back({i, pos[s.graph.col_idx[k]]});
  VecGraph sub(512, e);
  std::vector<int64_t> ident(512);
  for (int64_t i = 0; i < 512; ++i)
    ident[i] = i;
  EXPECT_EQ(sparse, spd(sub.g, ident, 100, 164, 6));
  // A sequence from the partition is connected: few truncated pairs.
  int64_t far = std::count(sparse.begin(), sparse.end(), 6);
  EXPECT_LT(far, static_cast<int64_t>(sparse.size()) / 2);
}

TEST(SpdTest, BadArguments) {
  VecGraph p(4, {{0, 1}, {1, 2}});
  int64_t out[16];
  char err[256] = "";
  const int64_t dup[] = {0, 1, 0}, range[] = {0, 4}, ok[] = {0, 1, 2, 3};
  EXPECT_EQ(mgrt_spd_block(&p.g, dup, 3, 0, 3, 5, out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err, "node 0 appears twice")) << err;
  EXPECT_EQ(mgrt_spd_block(&p.g, range, 2, 0, 2, 5, out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err, "nodes[1] = 4")) << err;
  EXPECT_EQ(mgrt_spd_block(&p.g, ok, 4, 2, 5, 5, out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err, "row block [2, 5)")) << err;
  EXPECT_EQ(mgrt_spd_block(&p.g, ok, 4, 0, 4, -1, out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_spd_block(&p.g, ok, 4, 0, 4, 5, nullptr, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_spd_block(nullptr, ok, 4, 0, 4, 5, out, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  p.colIdx[1] = -3;
  EXPECT_EQ(mgrt_spd_block(&p.g, ok, 4, 0, 4, 5, out, err, sizeof err),
            MGRT_ERR_FORMAT);
  EXPECT_TRUE(contains(err, "row 1")) << err;
  // Empty sequence and empty row block are fine.
  EXPECT_EQ(mgrt_spd_block(&p.g, nullptr, 0, 0, 0, 5, nullptr, err, sizeof err),
            MGRT_OK);
}

//===-- Partition ---------------------------------------------------------===//

bool isPermutation(std::vector<int64_t> order) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

TEST(PartitionTest, PermutationFollowingTheBlocks) {
  // 8 well-separated interleaved blocks of 500; sequences of 500 should
  // recover them far better than the identity order (where each sequence
  // mixes all blocks evenly).
  Sbm s("synthetic:sbm,nodes=4000,classes=8,p_in=0.03,p_out=0.0005,seed=6");
  ASSERT_EQ(s.rc, MGRT_OK) << s.err;
  std::vector<int64_t> order(4000, -1);
  char err[256] = "";
  ASSERT_EQ(
      mgrt_partition_sequences(&s.graph, 500, order.data(), err, sizeof err),
      MGRT_OK)
      << err;
  ASSERT_TRUE(isPermutation(order));
  // Fraction of edges inside a sequence.
  auto inside = [&](const std::vector<int64_t> &ord, int64_t len) {
    std::vector<int64_t> seqOf(4000);
    for (int64_t k = 0; k < 4000; ++k)
      seqOf[ord[k]] = k / len;
    int64_t in = 0;
    for (int64_t i = 0; i < 4000; ++i)
      for (int64_t k = s.graph.row_ptr[i]; k < s.graph.row_ptr[i + 1]; ++k)
        in += seqOf[i] == seqOf[s.graph.col_idx[k]];
    return static_cast<double>(in) / s.graph.num_edges;
  };
  std::vector<int64_t> ident(4000);
  for (int64_t i = 0; i < 4000; ++i)
    ident[i] = i;
  const double greedy = inside(order, 500), base = inside(ident, 500);
  EXPECT_GT(greedy, 0.5);
  EXPECT_GT(greedy, 3 * base);
  // Same graph, same order (deterministic).
  std::vector<int64_t> again(4000);
  ASSERT_EQ(
      mgrt_partition_sequences(&s.graph, 500, again.data(), err, sizeof err),
      MGRT_OK);
  EXPECT_EQ(order, again);
}

TEST(PartitionTest, RaggedDisconnectedAndErrors) {
  // Two triangles, an isolated node and a directed edge; seq_len 3 does
  // not divide 8, seq_len 1 and seq_len > N work too.
  VecGraph g(8, {{0, 1},
                 {1, 0},
                 {1, 2},
                 {2, 1},
                 {0, 2},
                 {2, 0},
                 {4, 5},
                 {5, 4},
                 {5, 6},
                 {6, 5},
                 {4, 6},
                 {6, 4},
                 {7, 3}});
  char err[256] = "";
  for (int64_t len : {1, 2, 3, 5, 8, 100}) {
    std::vector<int64_t> order(8, -1);
    ASSERT_EQ(
        mgrt_partition_sequences(&g.g, len, order.data(), err, sizeof err),
        MGRT_OK)
        << err;
    EXPECT_TRUE(isPermutation(order)) << "seq_len " << len;
    if (len == 3) { // each triangle is one sequence
      std::vector<int64_t> a(order.begin(), order.begin() + 3);
      std::sort(a.begin(), a.end());
      EXPECT_EQ(a, (std::vector<int64_t>{0, 1, 2}));
    }
  }
  int64_t order[8];
  EXPECT_EQ(mgrt_partition_sequences(&g.g, 0, order, err, sizeof err),
            MGRT_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err, "seq_len = 0")) << err;
  g.colIdx[3] = 8;
  EXPECT_EQ(mgrt_partition_sequences(&g.g, 4, order, err, sizeof err),
            MGRT_ERR_FORMAT);
  mgrt_graph empty{0, 0, g.rowPtr.data(), nullptr};
  EXPECT_EQ(mgrt_partition_sequences(&empty, 4, nullptr, err, sizeof err),
            MGRT_OK);
}

} // namespace
