//===- AttentionBlock.h - The per-task work of the attention kernel -*- C++
//-*-===//
//
// Internal to the runtime. Attention.cpp checks the operands, fills an
// AttentionProblem and runs, on the pool, packKeysValues over every (batch,
// head, key block) and then attendBlock over every (batch, head, query
// block).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONBLOCK_H
#define MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONBLOCK_H

#include "kernels/MicroGemm.h"
#include "kernels/SpatialBias.h"
#include "support/Check.h"

#include <cstddef>
#include <cstdint>

namespace mgrt {

constexpr int64_t kAttnBlockK = 256; // keys per block, a multiple of 16
constexpr int64_t kAttnChunkK = 128; // keys per P V product (V chunk in L1)

/// Checks that a rank-4 descriptor broadcasts to `want` ([B,H,Sq,Sk]) and
/// returns its strides with every size-1 dimension's zeroed, so it
/// broadcasts. Shared by the forward and backward attention kernels.
template <typename Desc>
void broadcastStrides(const Desc *d, const int64_t (&want)[4],
                      const char *kernel, const char *what,
                      int64_t (&stride)[4]) {
  static const char *const dims[4] = {"batch", "heads", "queries", "keys"};
  for (int i = 0; i < 4; ++i) {
    MGRT_CHECK(d->sizes[i] == want[i] || d->sizes[i] == 1, kernel,
               "%s dimension %d (%s) is %lld, expected 1 or %lld", what, i,
               dims[i], (long long)d->sizes[i], (long long)want[i]);
    stride[i] = d->sizes[i] == 1 ? 0 : d->strides[i];
  }
}

/// A [d0,d1,d2,d3] operand (bias or mask) seen through its strides, with the
/// stride of every size-1 dimension zeroed so it broadcasts.
template <typename T> struct Broadcast4 {
  const T *base = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
};

/// Everything the tasks need to know about one call.
struct AttentionProblem {
  int64_t B, Sq, Sk, H, dh, dvh;
  float scale;
  const float *q, *k, *v;
  float *out;
  int64_t qStride[2], kStride[2], vStride[2], oStride[2]; // batch, row
  bool hasBias, hasMask, gatherBias, gatherMask;
  Broadcast4<float> bias;
  Broadcast4<int8_t> mask;
  MicroGemmFn gemm;
  // Optional [B,H,Sq] output: each row's log-sum-exp of its kept scores,
  // -inf for a row that keeps no key (attentionForward, AttentionInternal.h).
  float *lse = nullptr;
  // Optional spatial bias, added to the scores with (or without) `bias`.
  SpatialBias spatial;

  // Tiling.
  int64_t blockQ;  // query rows per task
  int64_t rowsPad; // blockQ rounded up to kTileRows
  int64_t dvPad;   // dvh rounded up to 16
  int64_t keyBlocks;

  // Keys and values packed once per call (O(B * Sk * (D + Dv)) floats):
  // for each (b, h, key block) K^T as [dh][ldKT] (zero past Sk), and for
  // each (b, h) V as [Sk][ldV] (zero past dvh).
  float *kt, *vp;
  int64_t ldKT, ldV;
  float *ktBlock(int64_t b, int64_t h, int64_t kb) const {
    return kt + ((b * H + h) * keyBlocks + kb) * dh * ldKT;
  }
  float *vHead(int64_t b, int64_t h) const {
    return vp + (b * H + h) * Sk * ldV;
  }
};

/// Per-worker buffers of attendBlock.
struct AttentionScratch {
  float *qs;              // [rowsPad, dh]         scaled queries
  float *scores;          // [rowsPad, ldS]        S, then P
  float *acc;             // [rowsPad, dvPad]      unnormalized output
  float *rowMax, *rowSum; // [rowsPad]
  float *bias;  // [blockQ, kAttnBlockK] gathered strided bias, or null
  int8_t *mask; // [blockQ, kAttnBlockK] gathered strided mask, or null

  /// Bytes needed for one worker, and carving them out of `block`.
  static size_t bytes(const AttentionProblem &p);
  void carve(const AttentionProblem &p, void *block);
};

/// Leading dimension of AttentionScratch::scores.
constexpr int64_t kAttnLdS = kAttnBlockK;

/// Packs key block kb of (b, h) into p.kt, and its rows of V into p.vp.
void packKeysValues(const AttentionProblem &p, int64_t b, int64_t h,
                    int64_t kb);

/// Attention of query rows [i0, i0 + blockQ) of batch b, head h into out.
void attendBlock(const AttentionProblem &p, AttentionScratch &s, int64_t b,
                 int64_t h, int64_t i0);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONBLOCK_H
