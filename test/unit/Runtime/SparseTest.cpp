//===- SparseTest.cpp - mgrt_spmm_f32 and mgrt_sparse_attention_f32 -------===//
//
// Both CSR kernels against naive double references (empty rows, duplicate
// edges, edge bias, 1 / 2 / 4 heads, N != M, strided rank-1 operands, a row
// block of a larger graph), sparse attention against the dense kernel
// mgrt_attention_f32 with a mask built from the graph, and the contract
// checks on bad graphs.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mgrt_test;

namespace {

/// A random CSR graph of N rows over M columns: row i has degree
/// (i * 7 + seed) % (maxDeg + 1), so some rows are empty; duplicates
/// (repeated columns within a row) only when `duplicates`.
struct Graph {
  int64_t N, M;
  std::vector<int64_t> rowPtr, colIdx;
  int64_t edges() const { return static_cast<int64_t>(colIdx.size()); }
};

Graph randomGraph(int64_t N, int64_t M, int64_t maxDeg, bool duplicates,
                  unsigned seed) {
  Graph g{N, M, {0}, {}};
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < N; ++i) {
    int64_t deg = (i * 7 + seed) % (maxDeg + 1);
    if (!duplicates)
      deg = std::min(deg, M);
    std::vector<int64_t> cols;
    if (duplicates) {
      for (int64_t d = 0; d < deg; ++d)
        cols.push_back(gen() % M);
      if (deg >= 2)
        cols[1] = cols[0]; // at least one duplicate edge per row
    } else {
      std::vector<int64_t> all(M);
      for (int64_t j = 0; j < M; ++j)
        all[j] = j;
      std::shuffle(all.begin(), all.end(), gen);
      cols.assign(all.begin(), all.begin() + deg);
    }
    g.colIdx.insert(g.colIdx.end(), cols.begin(), cols.end());
    g.rowPtr.push_back(g.edges());
  }
  return g;
}

/// Rank-1 i64 descriptor over `v`.
mgrt_memref_i64_1 indices(std::vector<int64_t> &v) {
  return memref<mgrt_memref_i64_1>(v.data(), {static_cast<int64_t>(v.size())});
}

//===----------------------------------------------------------------------===//
// spmm
//===----------------------------------------------------------------------===//

std::vector<float> naiveSpmm(const Graph &g, const std::vector<float> &w,
                             const std::vector<float> &x, int64_t D) {
  std::vector<float> out(g.N * D);
  for (int64_t i = 0; i < g.N; ++i)
    for (int64_t d = 0; d < D; ++d) {
      double acc = 0;
      for (int64_t e = g.rowPtr[i]; e < g.rowPtr[i + 1]; ++e)
        acc += double(w[e]) * x[g.colIdx[e] * D + d];
      out[i * D + d] = static_cast<float>(acc);
    }
  return out;
}

std::vector<float> runSpmm(Graph &g, std::vector<float> &w,
                           std::vector<float> &x, int64_t D) {
  std::vector<float> out(g.N * D, -7.f);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {g.N, D});
  auto rp = indices(g.rowPtr), ci = indices(g.colIdx);
  auto wv = memref<mgrt_memref_f32_1>(w.data(), {g.edges()});
  auto xv = memref<mgrt_memref_f32_2>(x.data(), {g.M, D});
  _mlir_ciface_mgrt_spmm_f32(&o, &rp, &ci, &wv, &xv);
  return out;
}

TEST(Spmm, MatchesNaive) {
  struct {
    int64_t N, M, D, maxDeg;
    bool dup;
  } cases[] = {{1, 1, 1, 1, false},     {5, 9, 3, 4, true},
               {37, 11, 16, 9, true},   {100, 300, 33, 40, false},
               {300, 50, 64, 70, true}, {8, 8, 8, 0, false}};
  unsigned seed = 1;
  for (auto c : cases) {
    SCOPED_TRACE(testing::Message() << "N=" << c.N << " M=" << c.M
                                    << " D=" << c.D << " maxDeg=" << c.maxDeg);
    Graph g = randomGraph(c.N, c.M, c.maxDeg, c.dup, ++seed);
    std::vector<float> w = randomFloats(g.edges(), ++seed);
    std::vector<float> x = randomFloats(c.M * c.D, ++seed);
    std::vector<float> got = runSpmm(g, w, x, c.D);
    EXPECT_LE(maxAbsDiff(got, naiveSpmm(g, w, x, c.D)), 1e-5f);
    for (int64_t i = 0; i < g.N; ++i) {
      if (g.rowPtr[i] != g.rowPtr[i + 1])
        continue;
      for (int64_t d = 0; d < c.D; ++d)
        ASSERT_EQ(got[i * c.D + d], 0.f) << "empty row " << i;
    }
  }
}

TEST(Spmm, StridedIndicesAndRowBlock) {
  // row_ptr and values read with stride 2 and 3; rows 3..9 of a graph as a
  // block whose row_ptr does not start at 0, with the whole col_idx.
  Graph g = randomGraph(10, 12, 6, true, 5);
  const int64_t D = 5;
  std::vector<float> w = randomFloats(g.edges(), 6),
                     x = randomFloats(12 * D, 7);
  std::vector<int64_t> rp2(2 * g.rowPtr.size());
  for (size_t i = 0; i < g.rowPtr.size(); ++i)
    rp2[2 * i] = g.rowPtr[i];
  std::vector<float> w3(3 * w.size());
  for (size_t e = 0; e < w.size(); ++e)
    w3[3 * e] = w[e];
  std::vector<float> want = naiveSpmm(g, w, x, D);
  std::vector<float> out(7 * D);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {7, D});
  auto rp = memref<mgrt_memref_i64_1>(rp2.data(), {8}, {2}, 2 * 3);
  auto ci = indices(g.colIdx);
  auto wv = memref<mgrt_memref_f32_1>(w3.data(), {g.edges()}, {3});
  auto xv = memref<mgrt_memref_f32_2>(x.data(), {12, D});
  _mlir_ciface_mgrt_spmm_f32(&o, &rp, &ci, &wv, &xv);
  std::vector<float> wantBlock(want.begin() + 3 * D, want.end());
  EXPECT_LE(maxAbsDiff(out, wantBlock), 1e-5f);
}

//===----------------------------------------------------------------------===//
// sparse_attention
//===----------------------------------------------------------------------===//

struct SparseProblem {
  Graph g;
  int64_t H, D, Dv;
  float scale;
  std::vector<float> q, k, v, bias; // bias [E,H] or empty
};

SparseProblem makeSparse(int64_t N, int64_t M, int64_t H, int64_t dh,
                         int64_t dvh, int64_t maxDeg, bool dup, bool bias,
                         unsigned seed) {
  SparseProblem p{randomGraph(N, M, maxDeg, dup, seed),
                  H,
                  H * dh,
                  H * dvh,
                  1.f / std::sqrt(static_cast<float>(dh)),
                  {},
                  {},
                  {},
                  {}};
  p.q = randomFloats(N * p.D, seed + 1, -2, 2);
  p.k = randomFloats(M * p.D, seed + 2, -2, 2);
  p.v = randomFloats(M * p.Dv, seed + 3);
  if (bias)
    p.bias = randomFloats(p.g.edges() * H, seed + 4, -2, 2);
  return p;
}

std::vector<float> naiveSparseAttention(const SparseProblem &p) {
  const int64_t dh = p.D / p.H, dvh = p.Dv / p.H;
  std::vector<float> out(p.g.N * p.Dv, 0.f);
  for (int64_t i = 0; i < p.g.N; ++i)
    for (int64_t h = 0; h < p.H; ++h) {
      const int64_t e0 = p.g.rowPtr[i], e1 = p.g.rowPtr[i + 1];
      if (e0 == e1)
        continue;
      std::vector<double> s(e1 - e0);
      double mx = -INFINITY;
      for (int64_t e = e0; e < e1; ++e) {
        const int64_t j = p.g.colIdx[e];
        double dot = 0;
        for (int64_t d = 0; d < dh; ++d)
          dot += double(p.q[i * p.D + h * dh + d]) * p.k[j * p.D + h * dh + d];
        s[e - e0] = p.scale * dot + (p.bias.empty() ? 0 : p.bias[e * p.H + h]);
        mx = std::max(mx, s[e - e0]);
      }
      double sum = 0;
      for (double &x : s)
        sum += (x = std::exp(x - mx));
      for (int64_t d = 0; d < dvh; ++d) {
        double acc = 0;
        for (int64_t e = e0; e < e1; ++e)
          acc += s[e - e0] * p.v[p.g.colIdx[e] * p.Dv + h * dvh + d];
        out[i * p.Dv + h * dvh + d] = static_cast<float>(acc / sum);
      }
    }
  return out;
}

std::vector<float> runSparseAttention(SparseProblem &p) {
  std::vector<float> out(p.g.N * p.Dv, -7.f);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {p.g.N, p.Dv});
  auto q = memref<mgrt_memref_f32_2>(p.q.data(), {p.g.N, p.D});
  auto k = memref<mgrt_memref_f32_2>(p.k.data(), {p.g.M, p.D});
  auto v = memref<mgrt_memref_f32_2>(p.v.data(), {p.g.M, p.Dv});
  auto rp = indices(p.g.rowPtr), ci = indices(p.g.colIdx);
  mgrt_memref_f32_2 b{};
  const bool hasBias = !p.bias.empty();
  if (hasBias)
    b = memref<mgrt_memref_f32_2>(p.bias.data(), {p.g.edges(), p.H});
  _mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &k, &v, &rp, &ci,
                                         hasBias ? &b : nullptr, p.H, p.scale,
                                         hasBias ? 1 : 0);
  return out;
}

/// The dense kernel on the same problem: mask [1,1,N,M] from the graph,
/// bias [1,H,N,M] scattered from the edge bias (graphs without duplicates).
std::vector<float> runDenseMasked(SparseProblem &p) {
  const int64_t N = p.g.N, M = p.g.M;
  std::vector<uint8_t> mask(N * M, 0);
  std::vector<float> bias(p.H * N * M, 0.f);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t e = p.g.rowPtr[i]; e < p.g.rowPtr[i + 1]; ++e) {
      const int64_t j = p.g.colIdx[e];
      mask[i * M + j] = 1;
      if (!p.bias.empty())
        for (int64_t h = 0; h < p.H; ++h)
          bias[(h * N + i) * M + j] = p.bias[e * p.H + h];
    }
  std::vector<float> out(N * p.Dv, -7.f);
  auto o = memref<mgrt_memref_f32_3>(out.data(), {1, N, p.Dv});
  auto q = memref<mgrt_memref_f32_3>(p.q.data(), {1, N, p.D});
  auto k = memref<mgrt_memref_f32_3>(p.k.data(), {1, M, p.D});
  auto v = memref<mgrt_memref_f32_3>(p.v.data(), {1, M, p.Dv});
  auto b = memref<mgrt_memref_f32_4>(bias.data(), {1, p.H, N, M});
  auto m = memref<mgrt_memref_i8_4>(reinterpret_cast<int8_t *>(mask.data()),
                                    {1, 1, N, M});
  _mlir_ciface_mgrt_attention_f32(&o, &q, &k, &v, &b, &m, p.H, p.scale,
                                  MGRT_ATTENTION_BIAS | MGRT_ATTENTION_MASK);
  return out;
}

struct SparseCase {
  const char *name;
  int64_t N, M, H, dh, dvh, maxDeg;
  bool bias;
};

const SparseCase kSparseCases[] = {
    {"tiny", 1, 1, 1, 4, 4, 1, false},
    {"h1_n_ne_m", 13, 29, 1, 16, 8, 9, true},
    {"h2_bias", 40, 40, 2, 8, 16, 12, true},
    {"h4_nobias", 57, 23, 4, 8, 8, 23, false},
    {"h4_long_rows", 20, 200, 4, 16, 4, 150, true}, // several chunks per row
    {"h2_all_empty", 6, 5, 2, 4, 4, 0, true},
    {"h4_dh17", 33, 70, 4, 17, 3, 40, true}, // dh not a multiple of 16
};

TEST(SparseAttention, MatchesNaiveWithDuplicates) {
  unsigned seed = 100;
  for (const SparseCase &c : kSparseCases) {
    SCOPED_TRACE(c.name);
    SparseProblem p = makeSparse(c.N, c.M, c.H, c.dh, c.dvh, c.maxDeg, true,
                                 c.bias, seed += 10);
    std::vector<float> got = runSparseAttention(p);
    EXPECT_LE(maxAbsDiff(got, naiveSparseAttention(p)), 1e-5f);
    for (int64_t i = 0; i < p.g.N; ++i) {
      if (p.g.rowPtr[i] != p.g.rowPtr[i + 1])
        continue;
      for (int64_t d = 0; d < p.Dv; ++d)
        ASSERT_EQ(got[i * p.Dv + d], 0.f) << "empty row " << i;
    }
  }
}

TEST(SparseAttention, MatchesDenseMaskedAttention) {
  unsigned seed = 300;
  for (const SparseCase &c : kSparseCases) {
    SCOPED_TRACE(c.name);
    SparseProblem p = makeSparse(c.N, c.M, c.H, c.dh, c.dvh, c.maxDeg, false,
                                 c.bias, seed += 10);
    std::vector<float> got = runSparseAttention(p);
    EXPECT_LE(maxAbsDiff(got, runDenseMasked(p)), 1e-5f);
    EXPECT_LE(maxAbsDiff(got, naiveSparseAttention(p)), 1e-5f);
  }
}

TEST(SparseAttention, DuplicateEdgeCountsTwice) {
  // Row 0 has edges to 0, 1, 1: key 1 gets weight 2 e^s1 / (e^s0 + 2 e^s1).
  Graph g{1, 2, {0, 3}, {0, 1, 1}};
  SparseProblem p{g, 1, 1, 1, 1.f, {1.f}, {0.f, std::log(3.f)}, {1.f, 2.f}, {}};
  std::vector<float> got = runSparseAttention(p);
  const float w1 = 2 * 3.f / (1 + 2 * 3.f);
  EXPECT_NEAR(got[0], (1 - w1) * 1.f + w1 * 2.f, 1e-6f);
}

TEST(SparseAttention, MinusInfinityBiasDropsEdges) {
  // An edge bias of -inf masks the edge; a row whose edges are all masked
  // gives zeros (as the dense kernel does for a fully masked row).
  Graph g{2, 3, {0, 2, 3}, {0, 2, 1}};
  SparseProblem p{g,
                  1,
                  2,
                  2,
                  0.5f,
                  randomFloats(4, 1),
                  randomFloats(6, 2),
                  randomFloats(6, 3),
                  {-INFINITY, 0.3f, -INFINITY}};
  std::vector<float> got = runSparseAttention(p);
  EXPECT_FLOAT_EQ(got[0], p.v[2 * 2 + 0]);
  EXPECT_FLOAT_EQ(got[1], p.v[2 * 2 + 1]);
  EXPECT_EQ(got[2], 0.f);
  EXPECT_EQ(got[3], 0.f);
}

TEST(SparseAttention, StridedEdgeBias) {
  // edge_bias [E,H] given transposed ([H,E] storage, strides {1, E}).
  SparseProblem p = makeSparse(17, 21, 2, 8, 8, 10, true, true, 7);
  const int64_t E = p.g.edges();
  std::vector<float> biasT(E * p.H);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t h = 0; h < p.H; ++h)
      biasT[h * E + e] = p.bias[e * p.H + h];
  std::vector<float> out(p.g.N * p.Dv);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {p.g.N, p.Dv});
  auto q = memref<mgrt_memref_f32_2>(p.q.data(), {p.g.N, p.D});
  auto k = memref<mgrt_memref_f32_2>(p.k.data(), {p.g.M, p.D});
  auto v = memref<mgrt_memref_f32_2>(p.v.data(), {p.g.M, p.Dv});
  auto rp = indices(p.g.rowPtr), ci = indices(p.g.colIdx);
  auto b = memref<mgrt_memref_f32_2>(biasT.data(), {E, p.H}, {1, E});
  _mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &k, &v, &rp, &ci, &b, p.H,
                                         p.scale, 1);
  EXPECT_LE(maxAbsDiff(out, naiveSparseAttention(p)), 1e-5f);
}

//===----------------------------------------------------------------------===//
// Contract checks
//===----------------------------------------------------------------------===//

TEST(SparseDeathTest, BadGraphsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<float> x(4 * 2, 1.f), w(3, 1.f), out(2 * 2);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {2, 2});
  auto xv = memref<mgrt_memref_f32_2>(x.data(), {4, 2});
  auto wv = memref<mgrt_memref_f32_1>(w.data(), {3});
  std::vector<int64_t> rpOk{0, 1, 3}, rpBad{0, 2, 1}, rpLong{0, 1, 4};
  std::vector<int64_t> ciOk{0, 1, 3}, ciBad{0, 4, 1}, ciNeg{0, 1, -1};
  auto rp = indices(rpOk), ci = indices(ciOk);
  _mlir_ciface_mgrt_spmm_f32(&o, &rp, &ci, &wv, &xv); // fine
  EXPECT_FLOAT_EQ(out[2], 2.f);

  auto rpb = indices(rpBad);
  EXPECT_DEATH(_mlir_ciface_mgrt_spmm_f32(&o, &rpb, &ci, &wv, &xv),
               "mgrt_spmm_f32: row_ptr is not monotone: row_ptr\\[2\\] = 1 < "
               "row_ptr\\[1\\] = 2");
  auto rpl = indices(rpLong);
  EXPECT_DEATH(_mlir_ciface_mgrt_spmm_f32(&o, &rpl, &ci, &wv, &xv),
               "mgrt_spmm_f32: row_ptr\\[2\\] = 4 exceeds the 3 edges");
  auto cib = indices(ciBad);
  EXPECT_DEATH(_mlir_ciface_mgrt_spmm_f32(&o, &rp, &cib, &wv, &xv),
               "mgrt_spmm_f32: col_idx\\[1\\] = 4 \\(an edge of row 1\\) is "
               "out of range \\[0, 4\\)");
  auto cin = indices(ciNeg);
  EXPECT_DEATH(_mlir_ciface_mgrt_spmm_f32(&o, &rp, &cin, &wv, &xv),
               "col_idx\\[2\\] = -1");
  std::vector<int64_t> rpShort{0, 3};
  auto rps = indices(rpShort);
  EXPECT_DEATH(_mlir_ciface_mgrt_spmm_f32(&o, &rps, &ci, &wv, &xv),
               "row_ptr has 2 entries, expected N \\+ 1 = 3");

  // Sparse attention shares the checks.
  auto q = memref<mgrt_memref_f32_2>(out.data(), {2, 2});
  EXPECT_DEATH(_mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &xv, &xv, &rp,
                                                      &cib, nullptr, 1, 1.f, 0),
               "mgrt_sparse_attention_f32: col_idx\\[1\\] = 4");
  EXPECT_DEATH(_mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &xv, &xv, &rpb,
                                                      &ci, nullptr, 1, 1.f, 0),
               "mgrt_sparse_attention_f32: row_ptr is not monotone");
  EXPECT_DEATH(_mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &xv, &xv, &rp,
                                                      &ci, nullptr, 1, 1.f, 1),
               "edge_bias flag set but edge_bias is null");
  auto b = memref<mgrt_memref_f32_2>(w.data(), {3, 1});
  EXPECT_DEATH(_mlir_ciface_mgrt_sparse_attention_f32(&o, &q, &xv, &xv, &rp,
                                                      &ci, &b, 2, 1.f, 1),
               "edge_bias is \\[3,1\\], expected \\[E,H\\] = \\[3,2\\]");
}

} // namespace
