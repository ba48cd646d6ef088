//===- Spmm.cpp - Sparse (CSR) times dense matrix -------------------------===//
//
// _mlir_ciface_mgrt_spmm_f32: out[i] = sum_e values[e] * x[col_idx[e]] over
// the edges of row i (message passing, GCN aggregation). Each output row is
// accumulated in place, one axpy of a row of x per edge; tasks are blocks of
// rows sized by the average degree and handed out dynamically by the pool,
// so skewed degree distributions balance. No memory beyond the operands.
//
// _mlir_ciface_mgrt_csr_transpose: the pattern of the transposed matrix (a
// counting sort of the entries by column, stable), which turns a COO edge
// list into CSR and gives the backward of an SpMM its A^T.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/Csr.h"
#include "kernels/VectorMath.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_SPMM;

struct SpmmProblem {
  CsrView graph;
  const float *values;
  int64_t valueStride;
  const float *x;
  int64_t xStride; // row stride of x
  float *out;
  int64_t outStride; // row stride of out
  int64_t D;
};

/// Row i of the product: its edges in order, one axpy each. Every caller
/// (a range of rows or a list) computes a row with this same arithmetic.
MGRT_INLINE void spmmRow(const SpmmProblem *p, int64_t i) {
  const int64_t D = p->D;
  float *__restrict o = p->out + i * p->outStride;
  std::fill(o, o + D, 0.f);
  const int64_t e1 = p->graph.rowEnd(i);
  for (int64_t e = p->graph.rowBegin(i); e < e1; ++e) {
    const int64_t j = p->graph.col(e, i);
    const float w = p->values[e * p->valueStride];
    const float *__restrict xr = p->x + j * p->xStride;
    for (int64_t d = 0; d < D; ++d)
      o[d] += w * xr[d];
  }
}

/// Rows [r0, r1) of the product.
MGRT_INLINE void spmmRowsBody(const SpmmProblem *p, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i)
    spmmRow(p, i);
}

/// Rows rows[0 .. count) of the product.
MGRT_INLINE void spmmRowListBody(const SpmmProblem *p, const int64_t *rows,
                                 int64_t count) {
  for (int64_t k = 0; k < count; ++k)
    spmmRow(p, rows[k]);
}

MGRT_SIMD_DISPATCH(spmmRows, (const SpmmProblem *p, int64_t r0, int64_t r1),
                   (p, r0, r1))
MGRT_SIMD_DISPATCH(spmmRowList,
                   (const SpmmProblem *p, const int64_t *rows, int64_t count),
                   (p, rows, count))

} // namespace

void spmmRowRange(const CsrView &graph, const float *values,
                  int64_t valueStride, const float *x, int64_t xStride,
                  float *out, int64_t outStride, int64_t D, int64_t r0,
                  int64_t r1) {
  SpmmProblem p{graph, values, valueStride, x, xStride, out, outStride, D};
  spmmRows(&p, r0, r1);
}

void spmmRowsOf(const CsrView &graph, const float *values, int64_t valueStride,
                const float *x, int64_t xStride, float *out, int64_t outStride,
                int64_t D, const int64_t *rows, int64_t count) {
  SpmmProblem p{graph, values, valueStride, x, xStride, out, outStride, D};
  spmmRowList(&p, rows, count);
}

} // namespace mgrt

using namespace mgrt;

extern "C" void _mlir_ciface_mgrt_spmm_f32(mgrt_memref_f32_2 *out,
                                           mgrt_memref_i64_1 *rowPtr,
                                           mgrt_memref_i64_1 *colIdx,
                                           mgrt_memref_f32_1 *values,
                                           mgrt_memref_f32_2 *x) {
  MGRT_CHECK(out && rowPtr && colIdx && values && x, kName,
             "null operand descriptor");
  const int64_t N = out->sizes[0], D = out->sizes[1], M = x->sizes[0];
  MGRT_CHECK(x->sizes[1] == D && values->sizes[0] == colIdx->sizes[0], kName,
             "shape mismatch: out [%lld,%lld] x [%lld,%lld] values [%lld] "
             "col_idx [%lld]",
             (long long)N, (long long)D, (long long)M, (long long)x->sizes[1],
             (long long)values->sizes[0], (long long)colIdx->sizes[0]);
  MGRT_CHECK(x->strides[1] == 1 && out->strides[1] == 1, kName,
             "innermost strides of x and out must be 1");
  SpmmProblem p{csrView(kName, rowPtr, colIdx, N, M),
                values->aligned + values->offset,
                values->strides[0],
                x->aligned + x->offset,
                x->strides[0],
                out->aligned + out->offset,
                out->strides[0],
                D};
  if (N == 0 || D == 0)
    return;
  const int64_t rowsPerTask = csrRowsPerTask(p.graph, D);
  const int64_t tasks = (N + rowsPerTask - 1) / rowsPerTask;
  parallelFor(tasks, [&](int64_t task, int) {
    spmmRows(&p, task * rowsPerTask, std::min(N, (task + 1) * rowsPerTask));
  });
}

extern "C" void _mlir_ciface_mgrt_csr_transpose(mgrt_memref_i64_1 *rowPtrT,
                                                mgrt_memref_i64_1 *colIdxT,
                                                mgrt_memref_i64_1 *perm,
                                                mgrt_memref_i64_1 *rowPtr,
                                                mgrt_memref_i64_1 *colIdx) {
  constexpr const char *name = MGRT_KERNEL_CSR_TRANSPOSE;
  MGRT_CHECK(rowPtrT && colIdxT && perm && rowPtr && colIdx, name,
             "null operand descriptor");
  const int64_t E = colIdx->sizes[0], M = rowPtrT->sizes[0] - 1;
  MGRT_CHECK(M >= 0 && colIdxT->sizes[0] == E && perm->sizes[0] == E, name,
             "shape mismatch: row_ptr_t [%lld] col_idx_t [%lld] perm [%lld] "
             "col_idx [%lld]",
             (long long)rowPtrT->sizes[0], (long long)colIdxT->sizes[0],
             (long long)perm->sizes[0], (long long)E);
  // Without row_ptr every entry is its own row: the view over row_ptr
  // e -> e is the identity, spelled as a stride-1 iota of E + 1.
  const bool coo = rowPtr->sizes[0] == 0;
  std::vector<int64_t> iota;
  if (coo) {
    iota.resize(E + 1);
    for (int64_t e = 0; e <= E; ++e)
      iota[e] = e;
  }
  mgrt_memref_i64_1 cooPtr{iota.data(), iota.data(), 0, {E + 1}, {1}};
  const mgrt_memref_i64_1 *rp = coo ? &cooPtr : rowPtr;
  const CsrView g = csrView(name, rp, colIdx, rp->sizes[0] - 1, M);
  int64_t *outPtr = rowPtrT->aligned + rowPtrT->offset;
  int64_t *outCol = colIdxT->aligned + colIdxT->offset;
  int64_t *outPerm = perm->aligned + perm->offset;
  const int64_t sp = rowPtrT->strides[0], sc = colIdxT->strides[0],
                spm = perm->strides[0];
  // 1. Entries per column, 2. their prefix sums, 3. the stable placement.
  std::vector<int64_t> next(M + 1, 0);
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t e = g.rowBegin(i); e < g.rowEnd(i); ++e)
      ++next[g.col(e, i) + 1];
  for (int64_t j = 0; j < M; ++j)
    next[j + 1] += next[j];
  for (int64_t j = 0; j <= M; ++j)
    outPtr[j * sp] = next[j];
  for (int64_t k = 0; k < E; ++k) // entries outside every row stay defined
    outCol[k * sc] = outPerm[k * spm] = 0;
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t e = g.rowBegin(i); e < g.rowEnd(i); ++e) {
      const int64_t pos = next[g.colIdx[e * g.colStride]]++;
      outCol[pos * sc] = i;
      outPerm[pos * spm] = e;
    }
}
