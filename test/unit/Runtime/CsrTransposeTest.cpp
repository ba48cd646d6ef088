//===- CsrTransposeTest.cpp - mgrt_csr_transpose
//---------------------------===//
//
// The transposed pattern of a random CSR graph (empty rows and columns,
// duplicate entries, a row block of a larger col_idx) and of a COO list
// against a naive stable sort by column; an SpMM over the transpose equals
// the naive A^T x; out-of-range columns abort.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace mgrt_test;

namespace {

mgrt_memref_i64_1 indices(std::vector<int64_t> &v) {
  return memref<mgrt_memref_i64_1>(v.data(), {static_cast<int64_t>(v.size())});
}

struct Transposed {
  std::vector<int64_t> rowPtr, colIdx, perm;
};

/// Runs the kernel on rows [rowPtr] (empty: COO) and col_idx with M columns.
Transposed run(std::vector<int64_t> rowPtr, std::vector<int64_t> colIdx,
               int64_t M) {
  Transposed t{std::vector<int64_t>(M + 1, -1),
               std::vector<int64_t>(colIdx.size(), -1),
               std::vector<int64_t>(colIdx.size(), -1)};
  mgrt_memref_i64_1 rpT = indices(t.rowPtr), ciT = indices(t.colIdx),
                    perm = indices(t.perm), rp = indices(rowPtr),
                    ci = indices(colIdx);
  _mlir_ciface_mgrt_csr_transpose(&rpT, &ciT, &perm, &rp, &ci);
  return t;
}

/// The naive transpose: for each column j, the entries (row, e) with
/// col_idx[e] == j in row-major input order.
Transposed naive(const std::vector<int64_t> &rowPtr,
                 const std::vector<int64_t> &colIdx, int64_t M) {
  const int64_t E = colIdx.size();
  std::vector<int64_t> rowOf(E, 0);
  const int64_t N = rowPtr.empty() ? E : rowPtr.size() - 1;
  for (int64_t i = 0; i < N; ++i)
    for (int64_t e = rowPtr.empty() ? i : rowPtr[i];
         e < (rowPtr.empty() ? i + 1 : rowPtr[i + 1]); ++e)
      rowOf[e] = i;
  Transposed t{{0}, {}, {}};
  for (int64_t j = 0; j < M; ++j) {
    for (int64_t e = 0; e < E; ++e)
      if (colIdx[e] == j) {
        t.colIdx.push_back(rowOf[e]);
        t.perm.push_back(e);
      }
    t.rowPtr.push_back(t.colIdx.size());
  }
  return t;
}

TEST(CsrTranspose, CsrMatchesNaive) {
  std::mt19937 gen(5);
  const int64_t N = 37, M = 23;
  std::vector<int64_t> rowPtr{0}, colIdx;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t deg = (i * 5) % 7; // some empty rows
    for (int64_t d = 0; d < deg; ++d)
      colIdx.push_back(gen() % (M - 3)); // the last 3 columns stay empty
    if (deg >= 2)
      colIdx.back() = colIdx[colIdx.size() - 2]; // a duplicate entry
    rowPtr.push_back(colIdx.size());
  }
  Transposed got = run(rowPtr, colIdx, M), want = naive(rowPtr, colIdx, M);
  EXPECT_EQ(got.rowPtr, want.rowPtr);
  EXPECT_EQ(got.colIdx, want.colIdx);
  EXPECT_EQ(got.perm, want.perm);

  // An SpMM over the transpose is A^T x.
  const int64_t D = 3;
  std::vector<float> w(colIdx.size()), x(N * D), wT(colIdx.size());
  for (auto &v : w)
    v = float(gen() % 100) / 50.f - 1.f;
  for (auto &v : x)
    v = float(gen() % 100) / 50.f - 1.f;
  for (size_t k = 0; k < wT.size(); ++k)
    wT[k] = w[got.perm[k]];
  std::vector<float> out(M * D, 0.f);
  auto outD = memref<mgrt_memref_f32_2>(out.data(), {M, D});
  auto xD = memref<mgrt_memref_f32_2>(x.data(), {N, D});
  auto wD = memref<mgrt_memref_f32_1>(wT.data(), {(int64_t)wT.size()});
  mgrt_memref_i64_1 rpT = indices(got.rowPtr), ciT = indices(got.colIdx);
  _mlir_ciface_mgrt_spmm_f32(&outD, &rpT, &ciT, &wD, &xD);
  std::vector<double> ref(M * D, 0.0);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t e = rowPtr[i]; e < rowPtr[i + 1]; ++e)
      for (int64_t d = 0; d < D; ++d)
        ref[colIdx[e] * D + d] += double(w[e]) * x[i * D + d];
  for (int64_t k = 0; k < M * D; ++k)
    EXPECT_NEAR(out[k], ref[k], 1e-5) << "at " << k;
}

TEST(CsrTranspose, CooSortsByDestination) {
  // Edge e goes to row dst[e]: the CSR of the scatter out[dst[e]] += m[e].
  std::vector<int64_t> dst{3, 0, 3, 1, 0, 3};
  Transposed got = run({}, dst, 5);
  EXPECT_EQ(got.rowPtr, (std::vector<int64_t>{0, 2, 3, 3, 6, 6}));
  EXPECT_EQ(got.perm, (std::vector<int64_t>{1, 4, 3, 0, 2, 5}));
  EXPECT_EQ(got.colIdx, got.perm);
  Transposed want = naive({}, dst, 5);
  EXPECT_EQ(got.rowPtr, want.rowPtr);
  EXPECT_EQ(got.perm, want.perm);
}

TEST(CsrTransposeDeathTest, OutOfRangeColumnAborts) {
  std::vector<int64_t> dst{0, 5};
  EXPECT_DEATH(run({}, dst, 5), "col_idx\\[1\\] = 5");
}

} // namespace
