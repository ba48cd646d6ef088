//===- HaloSpmm.cpp - Partition-parallel SpMM with a halo exchange --------===//
//
// mgrt_halo_spmm_f32 (contract in megagraph/RuntimeGp.h). The plan of the
// CSR (gp/HaloPlan.h: this rank's rows over [x ; halo], the rows to send to
// each other rank, the interior and boundary rows) is built once; each call
// then packs the rows to send and starts one non-blocking all-to-all,
// aggregates the interior rows on the pool while the calling thread drives
// the exchange, waits for it, and aggregates the boundary rows. Every row is
// the arithmetic of mgrt_spmm_f32 over [x ; halo], so the product is the
// unoverlapped one bit for bit (MEGAGRAPH_GP_OVERLAP=0: exchange first, then
// one SpMM).
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeGp.h"

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"
#include "gp/HaloPlan.h"
#include "kernels/Csr.h"
#include "support/Check.h"

#include <algorithm>
#include <cstring>

using namespace mgrt;
using namespace mgrt::gp;

namespace {

constexpr const char *kName = "mgrt_halo_spmm_f32";

} // namespace

extern "C" void
mgrt_halo_spmm_f32(mgrt_comm_group *group, mgrt_memref_f32_2 *out,
                   mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
                   mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x) {
  MGRT_CHECK(group && out && rowPtr && colIdx && values && x, kName,
             "null operand");
  const int P = group->size;
  const int64_t N = rowPtr->sizes[0] - 1, n = out->sizes[0], D = out->sizes[1];
  MGRT_CHECK(N >= 0 && N % P == 0 && n == N / P && x->sizes[0] == n &&
                 x->sizes[1] == D && values->sizes[0] == colIdx->sizes[0],
             kName,
             "shape mismatch: %lld CSR rows over %d ranks, out [%lld,%lld] x "
             "[%lld,%lld] values [%lld] col_idx [%lld]",
             (long long)N, P, (long long)n, (long long)D,
             (long long)x->sizes[0], (long long)x->sizes[1],
             (long long)values->sizes[0], (long long)colIdx->sizes[0]);
  MGRT_CHECK(x->strides[1] == 1 && out->strides[1] == 1, kName,
             "innermost strides of x and out must be 1");
  const HaloPlan &p = haloPlanOf(group, rowPtr, colIdx, N, kName);
  HaloBuffer xh((n + p.halo) * D, kName);
  LocalCsr local = localCsr(p, values);
  if (!haloOverlap()) {
    // 1. [x ; halo]: own rows, then the rows the others send.
    gatherWithHalo(group, p, x, xh.data, kName);
    // 2. The local rows over [x ; halo].
    mgrt_memref_f32_2 xall{xh.data, xh.data, 0, {n + p.halo, D}, {D, 1}};
    _mlir_ciface_mgrt_spmm_f32(out, &local.rowPtr, &local.colIdx, &local.values,
                               &xall);
    return;
  }
  // 1. The halo exchange starts; the own rows go to [x ; halo].
  const float *xs = x->aligned + x->offset;
  HaloExchange exchange(group, p, xs, x->strides[0], D, xh.data + n * D, kName);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(xh.data + i * D, xs + i * x->strides[0], sizeof(float) * D);
  // 2. The interior rows while the halo arrives, then the boundary rows,
  //    each row as mgrt_spmm_f32 computes it (spmmRowsOf).
  const CsrView graph =
      csrView(kName, &local.rowPtr, &local.colIdx, n, n + p.halo);
  const float *valueData = local.values.aligned + local.values.offset;
  const int64_t valueStride = local.values.strides[0];
  float *outData = out->aligned + out->offset;
  const int64_t outStride = out->strides[0];
  auto rowsFn = [&](const int64_t *rows, int64_t count) {
    spmmRowsOf(graph, valueData, valueStride, xh.data, D, outData, outStride, D,
               rows, count);
  };
  const int64_t perTask = csrRowsPerTask(graph, std::max<int64_t>(D, 1));
  countOverlap(p,
               computeWhileExchanging(exchange, p.interior, perTask, rowsFn));
  computeRows(p.boundary, perTask, rowsFn);
}

extern "C" void _mlir_ciface_mgrt_halo_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_i64_1 *rowPtr,
    mgrt_memref_i64_1 *colIdx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes) {
  mgrt_halo_spmm_f32(mgrt::comm::shardGroup({{g0, g1, g2, g3}, axes}, kName),
                     out, rowPtr, colIdx, values, x);
}
