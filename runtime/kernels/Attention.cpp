//===- Attention.cpp - Fused multi-head attention with bias and mask ------===//
//
// _mlir_ciface_mgrt_attention_f32 (and _lse_f32, which also returns the row
// log-sum-exp): checks the operands, chooses the tiling,
// packs K^T and V once (so no task repacks them per query block), then runs
// the flash-attention tasks of AttentionBlock.cpp on the pool. Memory beyond
// the operands: the packed K and V plus a few blocks of scratch per thread,
// never a score matrix.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/AttentionBlock.h"
#include "kernels/AttentionInternal.h"
#include "kernels/AttentionSmallHead.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_ATTENTION;
constexpr int64_t kMaxBlockQ = 120; // a multiple of kTileRows
constexpr int64_t kMinBlockQ = 12;

/// Views a bias or mask descriptor as a broadcasting [B,H,Sq,Sk] operand.
template <typename T, typename Desc>
Broadcast4<T> broadcastView(const Desc *d, const int64_t (&want)[4],
                            const char *what) {
  Broadcast4<T> view;
  view.base = d->aligned + d->offset;
  broadcastStrides(d, want, kName, what, view.stride);
  return view;
}

} // namespace
} // namespace mgrt

using namespace mgrt;

extern "C" void
_mlir_ciface_mgrt_attention_f32(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                                mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                                mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                                int64_t numHeads, float scale, int64_t flags) {
  attentionForward(out, q, k, v, bias, mask, numHeads, scale, flags, nullptr);
}

extern "C" void _mlir_ciface_mgrt_attention_lse_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  MGRT_CHECK(lse && q, MGRT_KERNEL_ATTENTION_LSE, "null operand descriptor");
  checkLseLayout(lse, q->sizes[0], numHeads, q->sizes[1],
                 MGRT_KERNEL_ATTENTION_LSE);
  attentionForward(out, q, k, v, bias, mask, numHeads, scale, flags,
                   lse->aligned + lse->offset);
}

void mgrt::attentionForward(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                            mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                            mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                            int64_t numHeads, float scale, int64_t flags,
                            float *lse, const SpatialBias *spatial) {
  MGRT_CHECK(out && q && k && v, kName, "null operand descriptor");
  const bool hasBias = flags & MGRT_ATTENTION_BIAS;
  const bool hasMask = flags & MGRT_ATTENTION_MASK;
  MGRT_CHECK(!hasBias || bias, kName, "bias flag set but bias is null");
  MGRT_CHECK(!hasMask || mask, kName, "mask flag set but mask is null");

  const int64_t B = q->sizes[0], Sq = q->sizes[1], D = q->sizes[2];
  const int64_t Sk = k->sizes[1], Dv = v->sizes[2], H = numHeads;
  MGRT_CHECK(H > 0 && D % H == 0 && Dv % H == 0, kName,
             "%lld heads do not divide D=%lld and Dv=%lld", (long long)H,
             (long long)D, (long long)Dv);
  MGRT_CHECK(k->sizes[0] == B && v->sizes[0] == B && out->sizes[0] == B &&
                 k->sizes[2] == D && v->sizes[1] == Sk && out->sizes[1] == Sq &&
                 out->sizes[2] == Dv,
             kName,
             "shape mismatch: q [%lld,%lld,%lld] k [%lld,%lld,%lld] "
             "v [%lld,%lld,%lld] out [%lld,%lld,%lld]",
             (long long)B, (long long)Sq, (long long)D, (long long)k->sizes[0],
             (long long)k->sizes[1], (long long)k->sizes[2],
             (long long)v->sizes[0], (long long)v->sizes[1],
             (long long)v->sizes[2], (long long)out->sizes[0],
             (long long)out->sizes[1], (long long)out->sizes[2]);
  MGRT_CHECK(q->strides[2] == 1 && k->strides[2] == 1 && v->strides[2] == 1 &&
                 out->strides[2] == 1,
             kName, "innermost strides of q, k, v, out must be 1");
  if (B == 0 || Sq == 0 || Dv == 0)
    return;

  // 1. The problem and its tiling.
  AttentionProblem p{};
  p.B = B, p.Sq = Sq, p.Sk = Sk, p.H = H, p.dh = D / H, p.dvh = Dv / H;
  p.scale = scale;
  p.q = q->aligned + q->offset, p.k = k->aligned + k->offset;
  p.v = v->aligned + v->offset, p.out = out->aligned + out->offset;
  p.qStride[0] = q->strides[0], p.qStride[1] = q->strides[1];
  p.kStride[0] = k->strides[0], p.kStride[1] = k->strides[1];
  p.vStride[0] = v->strides[0], p.vStride[1] = v->strides[1];
  p.oStride[0] = out->strides[0], p.oStride[1] = out->strides[1];
  const int64_t full[4] = {B, H, Sq, Sk};
  p.hasBias = hasBias, p.hasMask = hasMask;
  if (hasBias)
    p.bias = broadcastView<float>(bias, full, "bias");
  if (hasMask)
    p.mask = broadcastView<int8_t>(mask, full, "mask");
  p.gatherBias = hasBias && p.bias.stride[3] != 1;
  p.gatherMask = hasMask && p.mask.stride[3] != 1;
  p.gemm = microGemm();
  p.lse = lse;
  if (spatial)
    p.spatial = *spatial;
  // Narrow heads without a dense bias or mask: queries across the lanes,
  // scores in registers (AttentionSmallHead.cpp).
  if (smallHeadApplies(p))
    return runSmallHeadAttention(p);

  // Smaller query blocks when there are too few tasks to feed every thread.
  const int threads = numThreads();
  p.blockQ = kMaxBlockQ;
  while (p.blockQ > kMinBlockQ &&
         B * H * ((Sq + p.blockQ - 1) / p.blockQ) < 4 * threads)
    p.blockQ /= 2;
  p.blockQ = std::min(p.blockQ, Sq);
  p.rowsPad = (p.blockQ + kTileRows - 1) / kTileRows * kTileRows;
  p.dvPad = (p.dvh + 15) / 16 * 16;
  p.keyBlocks = (Sk + kAttnBlockK - 1) / kAttnBlockK;
  // Leading dimensions off multiples of 1 KiB, which would map the rows a
  // micro GEMM streams onto a few L1 sets.
  p.ldKT = kAttnBlockK + 16;
  p.ldV = p.dvPad % 256 == 0 ? p.dvPad + 16 : p.dvPad;

  // 2. Buffers: packed K^T and V, and per-worker scratch, all tracked.
  const size_t ktBytes = sizeof(float) * B * H * p.keyBlocks * p.dh * p.ldKT;
  const size_t vpBytes = sizeof(float) * B * H * Sk * p.ldV;
  p.kt = static_cast<float *>(mgrt_alloc(ktBytes));
  p.vp = static_cast<float *>(mgrt_alloc(vpBytes));
  MGRT_CHECK(p.kt && p.vp, kName, "out of memory (%zu bytes of packed K, V)",
             ktBytes + vpBytes);
  const size_t scratchBytes = AttentionScratch::bytes(p);
  std::vector<void *> blocks(threads);
  std::vector<AttentionScratch> scratch(threads);
  for (int t = 0; t < threads; ++t) {
    blocks[t] = mgrt_alloc(scratchBytes);
    MGRT_CHECK(blocks[t], kName, "out of memory (%zu bytes of scratch)",
               scratchBytes);
    scratch[t].carve(p, blocks[t]);
  }

  // 3. Pack, then attend.
  parallelFor(B * H * p.keyBlocks, [&](int64_t task, int) {
    packKeysValues(p, task / (H * p.keyBlocks), (task / p.keyBlocks) % H,
                   task % p.keyBlocks);
  });
  // Tasks in (b, h, query block) order; with a spatial bias (b, query
  // block, h), so that the heads of a block read its distance rows while
  // they are in cache.
  const int64_t qBlocks = (Sq + p.blockQ - 1) / p.blockQ;
  parallelFor(B * H * qBlocks, [&](int64_t task, int worker) {
    const int64_t b = task / (H * qBlocks);
    const int64_t h = p.spatial ? task % H : (task / qBlocks) % H;
    const int64_t qb = p.spatial ? (task / H) % qBlocks : task % qBlocks;
    attendBlock(p, scratch[worker], b, h, qb * p.blockQ);
  });

  for (void *block : blocks)
    mgrt_free(block);
  mgrt_free(p.kt);
  mgrt_free(p.vp);
}
