//===- HaloMoa.cpp - The accelerator pipelines over a row block -----------===//
//
// _mlir_ciface_mgrt_halo_moa_{spmm_linear,linear_spmm}_f32 (contract in
// megagraph/RuntimeMoa.h): gt.spmm_linear and gt.linear_spmm with #gt.halo,
// the mixture of accelerators under partition parallelism. Each rank holds
// its block of n = N / P rows; the halo exchange is gp's (gp/HaloPlan.h),
// run on the calling thread (MPI_THREAD_FUNNELED), the pipelines are the
// one-process kernels' over the block's local CSR, whose columns index
// [rows ; halo].
//
// Aggregation first: the halo rows of x are exchanged, then the pipeline
// runs over the n local rows: chunk i's transform while chunk i+1 is
// aggregated. Transform first: the rows to aggregate need the transformed
// halo rows, which the other ranks compute, so the pipeline transforms the
// n rows chunk by chunk and aggregates the rows whose neighbours are all
// local as their chunks finish; then the transformed halo is exchanged (with
// MEGAGRAPH_GP_OVERLAP on, non-blocking while the transformed rows are
// copied out) and the rows with a halo neighbour are aggregated. With the
// overlap on, the aggregation-first kernel aggregates the interior rows
// while the halo of x arrives (as mgrt_halo_spmm_f32 does), then runs its
// pipeline over the block, aggregating only the boundary rows and
// transforming every row (MEGAGRAPH_GP_OVERLAP=0: exchange, then the
// whole pipeline). Each output row is the
// SpMM kernel's arithmetic over its edges in order, as in
// mgrt_halo_spmm_f32, and the bytes sent are the same as gp's.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeMoa.h"

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"
#include "gp/HaloPlan.h"
#include "kernels/Csr.h"
#include "kernels/MoaPipeline.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cstring>

using namespace mgrt;
using namespace mgrt::gp;

namespace {

constexpr const char *kSpmmLinear = MGRT_KERNEL_HALO_MOA_SPMM_LINEAR;
constexpr const char *kLinearSpmm = MGRT_KERNEL_HALO_MOA_LINEAR_SPMM;

/// This rank's block size n = N / P of a CSR of N rows, checked.
int64_t blockRows(const char *kName, const mgrt_comm_group *group,
                  const mgrt_memref_i64_1 *rowPtr) {
  const int P = group->size;
  const int64_t N = rowPtr->sizes[0] - 1;
  MGRT_CHECK(N >= 0 && N % P == 0, kName,
             "%lld CSR rows do not split into %d equal blocks", (long long)N,
             P);
  return N / P;
}

} // namespace

extern "C" void _mlir_ciface_mgrt_halo_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *rowPtr,
    mgrt_memref_i64_1 *colIdx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags, int64_t g0,
    int64_t g1, int64_t g2, int64_t g3, int64_t axes) {
  const char *kName = kSpmmLinear;
  MGRT_CHECK(out && agg && rowPtr && colIdx && values && x, kName,
             "null operand descriptor");
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, kName);
  const int64_t n = blockRows(kName, group, rowPtr), D = x->sizes[1];
  MGRT_CHECK(x->sizes[0] == n && agg->sizes[0] == n && agg->sizes[1] == D &&
                 x->strides[1] == 1 && values->sizes[0] == colIdx->sizes[0],
             kName,
             "shape mismatch: block of %lld rows, x [%lld,%lld] (innermost "
             "stride %lld) agg [%lld,%lld] values [%lld] col_idx [%lld]",
             (long long)n, (long long)x->sizes[0], (long long)D,
             (long long)x->strides[1], (long long)agg->sizes[0],
             (long long)agg->sizes[1], (long long)values->sizes[0],
             (long long)colIdx->sizes[0]);
  const HaloPlan &p = haloPlanOf(group, rowPtr, colIdx, n * group->size, kName);
  HaloBuffer xh((n + p.halo) * D, kName);
  LocalCsr local = localCsr(p, values);
  mgrt_memref_f32_2 xall{xh.data, xh.data, 0, {n + p.halo, D}, {D, 1}};
  if (!haloOverlap()) {
    // 1. [x ; halo]: own rows, then the rows the others send.
    gatherWithHalo(group, p, x, xh.data, kName);
    // 2. The pipeline over the local rows.
    _mlir_ciface_mgrt_moa_spmm_linear_f32(out, agg, &local.rowPtr,
                                          &local.colIdx, &local.values, &xall,
                                          scale, weight, bias, chunks, flags);
    return;
  }
  MGRT_CHECK(
      agg->strides[1] == 1 && (!(flags & 1) || (scale && scale->sizes[0] == n)),
      kName, "agg must have unit columns and scale %lld rows", (long long)n);
  // 1. The halo exchange starts; the own rows go to [x ; halo].
  const float *xs = x->aligned + x->offset;
  HaloExchange exchange(group, p, xs, x->strides[0], D, xh.data + n * D, kName);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(xh.data + i * D, xs + i * x->strides[0], sizeof(float) * D);
  // 2. The interior rows' aggregation (scaled) while the halo arrives, each
  //    row as the pipeline computes it.
  const CsrView graph =
      csrView(kName, &local.rowPtr, &local.colIdx, n, n + p.halo);
  const float *valueData = local.values.aligned + local.values.offset;
  const int64_t valueStride = local.values.strides[0];
  float *aggData = agg->aligned + agg->offset;
  const int64_t aggStride = agg->strides[0];
  const float *scaleData = flags & 1 ? scale->aligned + scale->offset : nullptr;
  const int64_t perTask = csrRowsPerTask(graph, std::max<int64_t>(D, 1));
  const bool completed = computeWhileExchanging(
      exchange, p.interior, perTask, [&](const int64_t *rows, int64_t count) {
        spmmRowsOf(graph, valueData, valueStride, xh.data, D, aggData,
                   aggStride, D, rows, count);
        if (flags & 1)
          for (int64_t k = 0; k < count; ++k) {
            const float s = scaleData[rows[k] * scale->strides[0]];
            float *row = aggData + rows[k] * aggStride;
            for (int64_t d = 0; d < D; ++d)
              row[d] *= s;
          }
      });
  countOverlap(p, completed);
  // 3. The pipeline over the local rows, aggregating the boundary rows.
  moaSpmmLinear(out, agg, &local.rowPtr, &local.colIdx, &local.values, &xall,
                scale, weight, bias, chunks, flags, &p.boundary);
}

extern "C" void _mlir_ciface_mgrt_halo_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes) {
  const char *kName = kLinearSpmm;
  MGRT_CHECK(out && transformed && rowPtr && colIdx && values && x && scale &&
                 weight && bias,
             kName, "null operand descriptor");
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, kName);
  const bool hasScale = flags & 1, hasBias = flags & 2;
  const int64_t n = blockRows(kName, group, rowPtr), D = x->sizes[1],
                F = weight->sizes[1];
  MGRT_CHECK(
      x->sizes[0] == n && weight->sizes[0] == D && out->sizes[0] == n &&
          out->sizes[1] == F && transformed->sizes[0] == n &&
          transformed->sizes[1] == F && out->strides[1] == 1 &&
          transformed->strides[1] == 1 &&
          values->sizes[0] == colIdx->sizes[0] &&
          (!hasScale || (scale->sizes[0] == n && scale->sizes[1] == 1)) &&
          (!hasBias || bias->sizes[0] == F),
      kName,
      "shape mismatch: block of %lld rows, x [%lld,%lld] weight [%lld,%lld] "
      "transformed [%lld,%lld] out [%lld,%lld] values [%lld] col_idx [%lld]",
      (long long)n, (long long)x->sizes[0], (long long)D,
      (long long)weight->sizes[0], (long long)F,
      (long long)transformed->sizes[0], (long long)transformed->sizes[1],
      (long long)out->sizes[0], (long long)out->sizes[1],
      (long long)values->sizes[0], (long long)colIdx->sizes[0]);
  MGRT_CHECK(chunks >= 1 && chunks <= std::max<int64_t>(n, 1), kName,
             "chunks = %lld must be in [1, %lld rows]", (long long)chunks,
             (long long)n);
  const HaloPlan &p = haloPlanOf(group, rowPtr, colIdx, n * group->size, kName);
  LocalCsr local = localCsr(p, values);
  const CsrView graph =
      csrView(kName, &local.rowPtr, &local.colIdx, n, n + p.halo);
  const float *valueData = local.values.aligned + local.values.offset;
  const int64_t valueStride = local.values.strides[0];
  float *outData = out->aligned + out->offset;
  const int64_t outStride = out->strides[0];
  // 1. t = [x W ; halo] (the halo rows are the other ranks' transformed
  //    rows); the rows with a halo neighbour wait for the exchange.
  HaloBuffer t((n + p.halo) * F, kName);
  const MoaRowOrder order = moaRowsByLargestColumn(graph, chunks, n);
  // 2. The pipeline over the local rows and the rows reading only them.
  moaLinearSpmmPipeline(
      graph, order, valueData, valueStride, x, weight,
      hasBias ? bias->aligned + bias->offset : nullptr, bias->strides[0],
      hasScale ? scale->aligned + scale->offset : nullptr, scale->strides[0],
      t.data, F, outData, outStride, chunks);
  // 3. The transformed rows are a result too (the weight's gradient): with
  //    the overlap on, copied out while the transformed halo arrives.
  float *ts = transformed->aligned + transformed->offset;
  auto copyOut = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      std::memcpy(ts + i * transformed->strides[0], t.data + i * F,
                  sizeof(float) * F);
  };
  if (haloOverlap()) {
    HaloExchange exchange(group, p, t.data, F, F, t.data + n * F, kName);
    constexpr int64_t kRowsPerTest = 256;
    for (int64_t i = 0; i < n; i += kRowsPerTest) {
      copyOut(i, std::min(n, i + kRowsPerTest));
      exchange.test();
    }
    exchange.wait();
  } else {
    exchangeHalo(group, p, t.data, F, F, t.data + n * F, kName);
    copyOut(0, n);
  }
  // 4. The rows that read the transformed halo.
  const int64_t perTask = csrRowsPerTask(graph, std::max<int64_t>(F, 1));
  computeRows(order.deferred, perTask, [&](const int64_t *rows, int64_t count) {
    spmmRowsOf(graph, valueData, valueStride, t.data, F, outData, outStride, F,
               rows, count);
  });
}
