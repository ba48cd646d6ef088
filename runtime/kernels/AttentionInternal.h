//===- AttentionInternal.h - Attention entries with statistics --*- C++ -*-===//
//
// Internal to the runtime. The C entries _mlir_ciface_mgrt_attention_f32 and
// _bwd_f32 are thin wrappers of these two functions; the extra arguments let
// context-parallel attention (cp/CpAttention.cpp) split the keys into blocks
// that live on different ranks:
//   * the forward returns each query row's log-sum-exp, so partial results
//     over disjoint key blocks merge exactly (online-softmax merge);
//   * the backward takes the row statistics of the whole key range (instead
//     of computing them over the keys it is given) and can add into its
//     outputs, so dQ, dBias and a travelling dK / dV accumulate block by
//     block.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONINTERNAL_H
#define MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONINTERNAL_H

#include "megagraph/Runtime.h"

#include "kernels/SpatialBias.h"
#include "support/Check.h"

#include <vector>

namespace mgrt {

/// mgrt_attention_f32; when `lse` is not null it also receives, as a
/// contiguous [B,H,Sq] array, the natural log of sum_j exp(score_ij) over
/// the kept keys of every query row (-inf for a row that keeps none).
/// `spatial` (optional) adds its table entries to the scores.
void attentionForward(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                      mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                      mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                      int64_t numHeads, float scale, int64_t flags, float *lse,
                      const SpatialBias *spatial = nullptr);

/// mgrt_attention_bwd_f32 with two options.
///  * `lse`, `dvec` (both or neither, contiguous [B,H,Sq]): the row
///    log-sum-exp of the scores over ALL keys (as attentionForward writes
///    it; -inf or +inf for a row that keeps no key) and D = rowsum(dO * O)
///    per head, where O is the output over all keys. The kernel then skips
///    its statistics pass, and the keys it is given may be a block of them.
///  * `accumulate`: dq, dk, dv, dbias and dtable are added to, not
///    overwritten.
///  * `spatial`, `dtable` (both or neither): the spatial bias of the scores
///    and the [V,H] gradient of its table.
void attentionBackward(mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                       mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                       mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                       mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                       mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                       int64_t numHeads, float scale, int64_t flags,
                       const float *lse, const float *dvec, bool accumulate,
                       const SpatialBias *spatial = nullptr,
                       mgrt_memref_f32_2 *dtable = nullptr);

/// D = rowsum(dout_h * out_h), [B,H,Sq], for a backward given the forward's
/// out and lse (checked against dout's shape and the lse layout).
std::vector<float> forwardRowStats(const mgrt_memref_f32_3 *dout,
                                   const mgrt_memref_f32_3 *out,
                                   const mgrt_memref_f32_3 *lse,
                                   int64_t numHeads, const char *kernel);

/// Checks the distance [Db,Sq,Sk] (Db = B or 1, innermost stride 1) and
/// table [V,H] operands of a spatial kernel and returns their view; the
/// table is transposed into `tableT` ([H][SpatialBias::leading(V)]).
SpatialBias makeSpatialBias(const mgrt_memref_i16_3 *distance,
                            const mgrt_memref_f32_2 *table, int64_t B,
                            int64_t Sq, int64_t Sk, int64_t H,
                            const char *kernel, std::vector<float> &tableT);

/// Checks that `lse` is a contiguous [B,H,Sq] array (what the forward writes
/// and the backward reads).
inline void checkLseLayout(const mgrt_memref_f32_3 *lse, int64_t B, int64_t H,
                           int64_t Sq, const char *kernel) {
  MGRT_CHECK(lse->sizes[0] == B && lse->sizes[1] == H && lse->sizes[2] == Sq,
             kernel, "lse is [%lld,%lld,%lld], expected [%lld,%lld,%lld]",
             (long long)lse->sizes[0], (long long)lse->sizes[1],
             (long long)lse->sizes[2], (long long)B, (long long)H,
             (long long)Sq);
  MGRT_CHECK((Sq <= 1 || lse->strides[2] == 1) &&
                 (H <= 1 || lse->strides[1] == Sq) &&
                 (B <= 1 || lse->strides[0] == H * Sq),
             kernel, "lse must be contiguous");
}

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONINTERNAL_H
