//===- AttentionBlock.cpp - The per-task work of the attention kernel -----===//
//
// One task = one (batch, head, block of queries), walking the keys block by
// block with the running max m and sum l of every query row (flash
// attention):
//   S   = (scale Q) K^T                      micro GEMM on packed K^T
//   S  += bias (+ table[clamp(distance)], the spatial bias read in place);
//   S   = -inf where masked
//   m'  = max(m, rowmax S); P = exp(S - m'); l = l e^(m-m') + rowsum P
//   acc = acc e^(m-m') + P V                 micro GEMM on packed V
// then out = acc / l, or 0 for a row that kept no key. Working memory per
// task is O(blockQ * (blockK + dv)), never O(Sq * Sk).
//
//===----------------------------------------------------------------------===//

#include "kernels/AttentionBlock.h"

#include "kernels/VectorMath.h"

#include <algorithm>
#include <cmath>

namespace mgrt {
namespace {

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// The spatial bias rows of one score block: distances (row stride ld) and
/// the head's table column; `dist` null when there is none.
struct SpatialRows {
  const int16_t *dist = nullptr;
  int64_t ld = 0;
  const float *tab = nullptr;
  int64_t V = 0;
};

/// Turns the [mq, nk] score block S (row stride ldS) into probabilities P in
/// place (columns up to the next multiple of 16 become 0) and rescales the
/// accumulator rows. bias / mask rows are contiguous (row stride biasLd /
/// maskLd, possibly 0) or null; the spatial rows are added too. Returns
/// whether any score was kept.
MGRT_INLINE bool softmaxBlock(float *S, int64_t ldS, int64_t mq, int64_t nk,
                              const float *bias, int64_t biasLd,
                              const SpatialRows &spatial, const int8_t *mask,
                              int64_t maskLd, float *rowMax, float *rowSum,
                              float *acc, int64_t ldAcc) {
  const int64_t nkPad = roundUp(nk, kLanes);
  bool anyKept = false;
  for (int64_t r = 0; r < mq; ++r) {
    float *s = S + r * ldS;
    if (bias) {
      const float *br = bias + r * biasLd;
      for (int64_t j = 0; j < nk; ++j)
        s[j] += br[j];
    }
    if (spatial.dist)
      addSpatialRow(s, spatial.dist + r * spatial.ld, nk, spatial.tab,
                    spatial.V);
    if (mask) {
      const int8_t *mr = mask + r * maskLd;
      for (int64_t j = 0; j < nk; ++j)
        s[j] = mr[j] ? s[j] : kNegInf;
    }
    for (int64_t j = nk; j < nkPad; ++j)
      s[j] = kNegInf;

    VFloat vm = splat(kNegInf);
    for (int64_t j = 0; j < nkPad; j += kLanes)
      vm = vmax(vm, load(s + j));
    const float mOld = rowMax[r];
    const float mNew = std::max(mOld, reduceMax(vm));
    if (mNew == kNegInf) { // nothing kept in this row so far
      for (int64_t j = 0; j < nkPad; j += kLanes)
        store(s + j, splat(0.f));
      continue;
    }
    anyKept = true;
    const VFloat vmNew = splat(mNew);
    VFloat vs = splat(0.f);
    for (int64_t j = 0; j < nkPad; j += kLanes) {
      const VFloat e = vexp(load(s + j) - vmNew);
      store(s + j, e);
      vs += e;
    }
    if (mOld != mNew) {
      const VFloat alpha = vexp(splat(mOld - mNew)); // 0 when mOld = -inf
      float *a = acc + r * ldAcc;
      for (int64_t c = 0; c < ldAcc; c += kLanes)
        store(a + c, load(a + c) * alpha);
      rowSum[r] *= alpha[0];
      rowMax[r] = mNew;
    }
    rowSum[r] += reduceSum(vs);
  }
  return anyKept;
}

} // namespace

size_t AttentionScratch::bytes(const AttentionProblem &p) {
  int64_t floats = roundUp(p.rowsPad * p.dh, kLanes) + p.rowsPad * kAttnLdS +
                   p.rowsPad * p.dvPad + 2 * roundUp(p.rowsPad, kLanes);
  if (p.gatherBias)
    floats += p.blockQ * kAttnBlockK;
  size_t bytes = floats * sizeof(float);
  if (p.gatherMask)
    bytes += p.blockQ * kAttnBlockK;
  return bytes;
}

void AttentionScratch::carve(const AttentionProblem &p, void *block) {
  float *f = static_cast<float *>(block);
  qs = f, f += roundUp(p.rowsPad * p.dh, kLanes);
  scores = f, f += p.rowsPad * kAttnLdS;
  acc = f, f += p.rowsPad * p.dvPad;
  rowMax = f, f += roundUp(p.rowsPad, kLanes);
  rowSum = f, f += roundUp(p.rowsPad, kLanes);
  bias = nullptr, mask = nullptr;
  if (p.gatherBias)
    bias = f, f += p.blockQ * kAttnBlockK;
  if (p.gatherMask)
    mask = reinterpret_cast<int8_t *>(f);
}

namespace {

MGRT_INLINE void packKeysValuesBody(const AttentionProblem &p, int64_t b,
                                    int64_t h, int64_t kb) {
  const int64_t j0 = kb * kAttnBlockK;
  const int64_t nk = std::min(kAttnBlockK, p.Sk - j0);
  const float *k = p.k + b * p.kStride[0] + j0 * p.kStride[1] + h * p.dh;
  float *kt = p.ktBlock(b, h, kb);
  for (int64_t c = 0; c < p.dh; ++c) {
    float *dst = kt + c * p.ldKT;
    for (int64_t j = 0; j < nk; ++j)
      dst[j] = k[j * p.kStride[1] + c];
    std::fill(dst + nk, dst + kAttnBlockK, 0.f);
  }
  const float *v = p.v + b * p.vStride[0] + j0 * p.vStride[1] + h * p.dvh;
  float *vp = p.vHead(b, h) + j0 * p.ldV;
  for (int64_t j = 0; j < nk; ++j) {
    std::copy(v + j * p.vStride[1], v + j * p.vStride[1] + p.dvh,
              vp + j * p.ldV);
    std::fill(vp + j * p.ldV + p.dvh, vp + j * p.ldV + p.dvPad, 0.f);
  }
}

MGRT_INLINE void attendBlockBody(const AttentionProblem &p, AttentionScratch &s,
                                 int64_t b, int64_t h, int64_t i0) {
  const int64_t mq = std::min(p.blockQ, p.Sq - i0);
  const int64_t rows = roundUp(mq, kTileRows);
  const int64_t dh = p.dh, dvh = p.dvh, dvPad = p.dvPad;

  // 1. Scaled queries; padding rows are zero, so their scores and P rows
  //    stay 0 and add nothing.
  const float *q = p.q + b * p.qStride[0] + i0 * p.qStride[1] + h * dh;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dh; ++c)
      s.qs[r * dh + c] = r < mq ? p.scale * q[r * p.qStride[1] + c] : 0.f;
  std::fill(s.acc, s.acc + rows * dvPad, 0.f);
  std::fill(s.rowMax, s.rowMax + rows, kNegInf);
  std::fill(s.rowSum, s.rowSum + rows, 0.f);
  const float *biasHead = p.hasBias
                              ? p.bias.base + b * p.bias.stride[0] +
                                    h * p.bias.stride[1] + i0 * p.bias.stride[2]
                              : nullptr;
  const int8_t *maskHead = p.hasMask ? p.mask.base + b * p.mask.stride[0] +
                                           h * p.mask.stride[1] +
                                           i0 * p.mask.stride[2]
                                     : nullptr;
  const float *vHead = p.vHead(b, h);

  for (int64_t kb = 0; kb < p.keyBlocks; ++kb) {
    const int64_t j0 = kb * kAttnBlockK;
    const int64_t nk = std::min(kAttnBlockK, p.Sk - j0);

    // 2. S = (scale Q) K^T.
    p.gemm(false, rows, roundUp(nk, kLanes) / kLanes, dh, s.qs, dh,
           p.ktBlock(b, h, kb), p.ldKT, s.scores, kAttnLdS);

    // 3. Bias (gathered first when its rows are strided), mask, softmax.
    const float *bp = nullptr;
    int64_t bld = 0;
    if (p.hasBias && !p.gatherBias) {
      bp = biasHead + j0, bld = p.bias.stride[2];
    } else if (p.hasBias) {
      for (int64_t r = 0; r < mq; ++r)
        for (int64_t j = 0; j < nk; ++j)
          s.bias[r * kAttnBlockK + j] =
              biasHead[r * p.bias.stride[2] + (j0 + j) * p.bias.stride[3]];
      bp = s.bias, bld = kAttnBlockK;
    }
    const int8_t *mp = nullptr;
    int64_t mld = 0;
    if (p.hasMask && !p.gatherMask) {
      mp = maskHead + j0, mld = p.mask.stride[2];
    } else if (p.hasMask) {
      for (int64_t r = 0; r < mq; ++r)
        for (int64_t j = 0; j < nk; ++j)
          s.mask[r * kAttnBlockK + j] =
              maskHead[r * p.mask.stride[2] + (j0 + j) * p.mask.stride[3]];
      mp = s.mask, mld = kAttnBlockK;
    }
    SpatialRows sp;
    if (p.spatial) {
      sp.dist = p.spatial.row(b, i0) + j0, sp.ld = p.spatial.distStride[1];
      sp.tab = p.spatial.head(h), sp.V = p.spatial.V;
    }
    if (!softmaxBlock(s.scores, kAttnLdS, mq, nk, bp, bld, sp, mp, mld,
                      s.rowMax, s.rowSum, s.acc, dvPad))
      continue; // nothing kept: P is all zero

    // 4. acc += P V, in chunks of keys whose V rows stay in L1.
    for (int64_t k0 = 0; k0 < nk; k0 += kAttnChunkK)
      p.gemm(true, rows, dvPad / kLanes, std::min(kAttnChunkK, nk - k0),
             s.scores + k0, kAttnLdS, vHead + (j0 + k0) * p.ldV, p.ldV, s.acc,
             dvPad);
  }

  // 5. Normalize; rows that kept nothing have rowSum 0 and give zeros.
  float *o = p.out + b * p.oStride[0] + i0 * p.oStride[1] + h * dvh;
  for (int64_t r = 0; r < mq; ++r) {
    const float inv = s.rowSum[r] > 0.f ? 1.f / s.rowSum[r] : 0.f;
    const float *a = s.acc + r * dvPad;
    float *orow = o + r * p.oStride[1];
    for (int64_t c = 0; c < dvh; ++c)
      orow[c] = a[c] * inv;
  }
  if (p.lse) {
    float *lse = p.lse + (b * p.H + h) * p.Sq + i0;
    for (int64_t r = 0; r < mq; ++r)
      lse[r] =
          s.rowSum[r] > 0.f ? s.rowMax[r] + std::log(s.rowSum[r]) : kNegInf;
  }
}

} // namespace

MGRT_SIMD_DISPATCH(packKeysValues,
                   (const AttentionProblem &p, int64_t b, int64_t h,
                    int64_t kb),
                   (p, b, h, kb))

MGRT_SIMD_DISPATCH(attendBlock,
                   (const AttentionProblem &p, AttentionScratch &s, int64_t b,
                    int64_t h, int64_t i0),
                   (p, s, b, h, i0))

} // namespace mgrt
