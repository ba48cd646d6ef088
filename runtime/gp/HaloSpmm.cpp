//===- HaloSpmm.cpp - Partition-parallel SpMM with a halo exchange --------===//
//
// mgrt_halo_spmm_f32 (contract in megagraph/RuntimeGp.h). The plan of the
// CSR (gp/HaloPlan.h: this rank's rows over [x ; halo] and the rows to send
// to each other rank) is built once; each call then packs the rows to send,
// runs one all-to-all, and one SpMM of the local rows over [x ; halo].
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeGp.h"

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"
#include "gp/HaloPlan.h"
#include "support/Check.h"

#include <cstring>

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
  // 1. [x ; halo]: own rows, then the rows the others send.
  HaloBuffer xh((n + p.halo) * D, kName);
  gatherWithHalo(group, p, x, xh.data, kName);
  // 2. The local rows over [x ; halo].
  LocalCsr local = localCsr(p, values);
  mgrt_memref_f32_2 xall{xh.data, xh.data, 0, {n + p.halo, D}, {D, 1}};
  _mlir_ciface_mgrt_spmm_f32(out, &local.rowPtr, &local.colIdx, &local.values,
                             &xall);
}

extern "C" void _mlir_ciface_mgrt_halo_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_i64_1 *rowPtr,
    mgrt_memref_i64_1 *colIdx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes) {
  mgrt_halo_spmm_f32(mgrt::comm::shardGroup({{g0, g1, g2, g3}, axes}, kName),
                     out, rowPtr, colIdx, values, x);
}
