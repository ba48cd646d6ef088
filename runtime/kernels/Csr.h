//===- Csr.h - CSR graph operands of the sparse kernels ---------*- C++ -*-===//
//
// Internal to the runtime. A view of the row_ptr / col_idx descriptors of
// mgrt_spmm_f32 and mgrt_sparse_attention_f32, checked against the CSR
// contract: 0 <= row_ptr[0] <= ... <= row_ptr[N] <= E and, for every edge a
// kernel reads, 0 <= col_idx[e] < M. Anything else aborts with the edge or
// row at fault (a bad graph would otherwise read out of bounds).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_CSR_H
#define MEGAGRAPH_RUNTIME_KERNELS_CSR_H

#include "megagraph/Runtime.h"

#include "support/Check.h"

#include <cstdint>

namespace mgrt {

struct CsrView {
  const char *kernel;
  const int64_t *rowPtr, *colIdx;
  int64_t rowStride, colStride;
  int64_t rows, edges, cols; // N, E, M

  int64_t rowBegin(int64_t i) const { return rowPtr[i * rowStride]; }
  int64_t rowEnd(int64_t i) const { return rowPtr[(i + 1) * rowStride]; }

  /// col_idx[e] of an edge of row `row`, checked against [0, M).
  int64_t col(int64_t e, int64_t row) const {
    const int64_t j = colIdx[e * colStride];
    MGRT_CHECK(j >= 0 && j < cols, kernel,
               "col_idx[%lld] = %lld (an edge of row %lld) is out of range "
               "[0, %lld)",
               (long long)e, (long long)j, (long long)row, (long long)cols);
    return j;
  }
};

/// Views row_ptr [N+1] and col_idx [E] of a graph with M columns, checking
/// the sizes and that row_ptr is monotone within [0, E].
inline CsrView csrView(const char *kernel, const mgrt_memref_i64_1 *rowPtr,
                       const mgrt_memref_i64_1 *colIdx, int64_t N, int64_t M) {
  MGRT_CHECK(rowPtr->sizes[0] == N + 1, kernel,
             "row_ptr has %lld entries, expected N + 1 = %lld",
             (long long)rowPtr->sizes[0], (long long)(N + 1));
  CsrView g{kernel,
            rowPtr->aligned + rowPtr->offset,
            colIdx->aligned + colIdx->offset,
            rowPtr->strides[0],
            colIdx->strides[0],
            N,
            colIdx->sizes[0],
            M};
  int64_t prev = g.rowBegin(0);
  MGRT_CHECK(prev >= 0 && prev <= g.edges, kernel,
             "row_ptr[0] = %lld is out of range [0, %lld]", (long long)prev,
             (long long)g.edges);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t next = g.rowEnd(i);
    MGRT_CHECK(next >= prev, kernel,
               "row_ptr is not monotone: row_ptr[%lld] = %lld < row_ptr[%lld] "
               "= %lld",
               (long long)(i + 1), (long long)next, (long long)i,
               (long long)prev);
    MGRT_CHECK(next <= g.edges, kernel,
               "row_ptr[%lld] = %lld exceeds the %lld edges of col_idx",
               (long long)(i + 1), (long long)next, (long long)g.edges);
    prev = next;
  }
  return g;
}

/// Rows per parallel task so that a task has about 64K multiply-adds of
/// work (`perEdge` per edge) given the average degree.
inline int64_t csrRowsPerTask(const CsrView &g, int64_t perEdge) {
  const int64_t used = g.rows ? g.rowEnd(g.rows - 1) - g.rowBegin(0) : 0;
  const int64_t perRow = (used / (g.rows ? g.rows : 1) + 1) * perEdge + 1;
  const int64_t r = 65536 / perRow;
  return r < 1 ? 1 : r;
}

/// Rows [r0, r1) of the SpMM out = A x (Spmm.cpp): out row i at
/// out + i * outStride, x row j at x + j * xStride, D columns.
void spmmRowRange(const CsrView &graph, const float *values,
                  int64_t valueStride, const float *x, int64_t xStride,
                  float *out, int64_t outStride, int64_t D, int64_t r0,
                  int64_t r1);

/// The rows rows[0 .. count) of the same SpMM, each computed exactly as
/// spmmRowRange computes it (same edges, same order), so a schedule that
/// reorders the rows gives a bit-identical product.
void spmmRowsOf(const CsrView &graph, const float *values, int64_t valueStride,
                const float *x, int64_t xStride, float *out, int64_t outStride,
                int64_t D, const int64_t *rows, int64_t count);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_CSR_H
