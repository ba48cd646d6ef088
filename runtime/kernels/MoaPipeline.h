//===- MoaPipeline.h - Shared parts of the MoA pipelines ---------*- C++
//-*-===//
//
// Internal to the runtime (and its white-box tests). What the two mixture-
// of-accelerators kernels share: the aggregation group's size, the GEMM of
// a block of rows, and, for the transform-first kernel, the order in which
// the aggregated rows become ready.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_MOAPIPELINE_H
#define MEGAGRAPH_RUNTIME_KERNELS_MOAPIPELINE_H

#include "megagraph/Runtime.h"

#include "kernels/Csr.h"
#include "kernels/MatMul.h"

#include <cstdint>
#include <vector>

namespace mgrt {

/// Rows of one GEMM block: thin enough to spread a chunk over the
/// transform group, thick enough for GEMM efficiency.
constexpr int64_t kMoaGemmRows = 128;

/// The aggregation group's size for `threads` threads:
/// MEGAGRAPH_MOA_SPMM_THREADS if set, else proportional to the two parts'
/// estimated time (an SpMM multiply-add streams a row from memory and costs
/// about four GEMM multiply-adds), leaving each group one thread (all of
/// them with one thread).
int moaSpmmThreads(int threads, double spmmWork, double gemmWork);

/// Rows [r0, r1) of out = a @ weight (+ bias[F]) (* scale[r], a column of
/// stride `scaleStride`): a [*, D] with row stride `aStride` and column
/// stride `aColStride`, weight [D, F] of any strides, out [*, F] with row
/// stride `outStride` and unit columns. bias and scale may be null. The
/// product goes through `matmul` (inline when nested in a pool task), the
/// bias and the scale are applied after it, as the unfused ops would.
void moaGemmRows(const float *a, int64_t aStride, int64_t aColStride,
                 const mgrt_memref_f32_2 *weight, const float *bias,
                 int64_t biasStride, const float *scale, int64_t scaleStride,
                 float *out, int64_t outStride, int64_t r0, int64_t r1,
                 GemmBackend backend);

/// Chunk c of `chunks` over `rows` rows is [c * rows / chunks, (c + 1) *
/// rows / chunks); the chunk holding row j (0 <= j < rows).
inline int64_t moaChunkOf(int64_t j, int64_t rows, int64_t chunks) {
  return ((j + 1) * chunks - 1) / rows;
}

/// The output rows of an SpMM whose first `ready` columns (all of them
/// when `ready` < 0) are cut into `chunks` chunks, grouped by the chunk of
/// their largest column (rows without edges with chunk 0), row order kept
/// within a group (a counting sort, O(N + E)): group k is rows[begin[k] ..
/// begin[k + 1]), ready once chunks 0..k of the columns are. Rows with a
/// column at or past `ready` (a halo the caller fills after the chunks)
/// are in no group but in `deferred`, in row order.
struct MoaRowOrder {
  std::vector<int64_t> rows;     // the grouped rows
  std::vector<int64_t> begin;    // chunks + 1
  std::vector<int64_t> deferred; // rows reading a column >= ready
};
MoaRowOrder moaRowsByLargestColumn(const CsrView &graph, int64_t chunks,
                                   int64_t ready = -1);

/// mgrt_moa_spmm_linear_f32 (agg = scale * (A x), out = agg @ W + bias,
/// pipelined over `chunks` row chunks). With `todo` (ascending rows), the
/// pipeline aggregates only those rows; the caller has written the others'
/// agg rows (scaled), each as the pipeline would, and every row is
/// transformed.
void moaSpmmLinear(mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg,
                   mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
                   mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
                   mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
                   mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags,
                   const std::vector<int64_t> *todo);

/// The transform-first pipeline of mgrt_moa_linear_spmm_f32 on checked
/// operands: t rows [0, M) = scale * (x @ weight + bias) (x [M, D]) in
/// `chunks` chunks, and out = A t for the rows of `graph` in `order`'s
/// groups (moaRowsByLargestColumn(graph, chunks, M)), each block as soon
/// as the chunks it reads are transformed. `order.deferred` rows are left
/// to the caller. scale and bias may be null; t and out have unit columns.
void moaLinearSpmmPipeline(const CsrView &graph, const MoaRowOrder &order,
                           const float *values, int64_t valueStride,
                           const mgrt_memref_f32_2 *x,
                           const mgrt_memref_f32_2 *weight, const float *bias,
                           int64_t biasStride, const float *scale,
                           int64_t scaleStride, float *t, int64_t tStride,
                           float *out, int64_t outStride, int64_t chunks);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_MOAPIPELINE_H
