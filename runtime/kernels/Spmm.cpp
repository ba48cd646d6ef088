//===- Spmm.cpp - Sparse (CSR) times dense matrix -------------------------===//
//
// _mlir_ciface_mgrt_spmm_f32: out[i] = sum_e values[e] * x[col_idx[e]] over
// the edges of row i (message passing, GCN aggregation). Each output row is
// accumulated in place, one axpy of a row of x per edge; tasks are blocks of
// rows sized by the average degree and handed out dynamically by the pool,
// so skewed degree distributions balance. No memory beyond the operands.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/Csr.h"
#include "kernels/VectorMath.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>

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

/// Rows [r0, r1) of the product.
MGRT_INLINE void spmmRowsBody(const SpmmProblem *p, int64_t r0, int64_t r1) {
  const int64_t D = p->D;
  for (int64_t i = r0; i < r1; ++i) {
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
}

MGRT_SIMD_DISPATCH(spmmRows, (const SpmmProblem *p, int64_t r0, int64_t r1),
                   (p, r0, r1))

} // namespace
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
