//===- AttentionBackward.cpp - Backward of the fused attention kernel -----===//
//
// _mlir_ciface_mgrt_attention_bwd_f32, flash-attention-2 style: the scores
// are recomputed block by block (kBlk queries x kBlk keys), never stored.
// With S = scale Q K^T + bias (-inf where masked), P = softmax_rows(S):
//
//   0. pack      per (b, h): scale*Q, its transpose, dO, dO^T, K, K^T, V, V^T
//                (zero padded to kBlk rows / 16 columns; O(inputs) floats)
//   A. stats     per (b, h, query block), over all key blocks:
//                  S = (scale Q) K^T, dP = dO V^T, online over the keys
//                  m = max S, l = sum e^(S-m), u = sum e^(S-m) dP
//                LSE = m + log l and D = u / l = rowsum(P dP) = rowsum(dO O)
//                (a row that keeps no key: LSE = +inf, so its P is 0);
//                skipped when attentionBackward (AttentionInternal.h) is
//                given LSE and D: over a larger key range (context
//                parallel), or by _mlir_ciface_mgrt_attention_bwd_lse_f32
//                from the forward's lse and D = rowsum(dO * O)
//   B. dK, dV    per (b, h, key block), over all query blocks, transposed:
//                  S^T = K (scale Q)^T, dP^T = V dO^T, P^T = e^(S^T - LSE)
//                  dS^T = P^T (dP^T - D); dV += P^T dO; dK += dS^T (scale Q)
//   C. dQ, dBias per (dbias batch, dbias head, query block), over every
//                (b, h) that broadcast onto it and all key blocks:
//                  dS = P (dP - D); dQ += scale dS K; dBias += dS
//   A+B+C.       when dbias is absent or not broadcast (the usual case),
//                one pass instead, per (b, h, run of query blocks): a query
//                block's statistics (phase A), then each of its tiles once,
//                which gives dQ, the tile of dBias and the run's share of
//                dK^T and dV^T (summed over runs after). The scores are
//                computed twice, not three times, and the second read of
//                the bias rows finds them in cache. MEGAGRAPH_ATTENTION_BWD
//                =phased selects the phases A, B, C (A/B runs).
//
// Each output element is owned by one task (dK, dV in the one pass: one
// partial per run), so there are no atomics and no per-thread copies of
// dBias. A dBias that is broadcast over the query dimension makes one phase
// C task per (dbias batch, head) (its rows sum over every query). Working
// memory: the packed operands, O(kBlk^2 + kBlk*(dh + dv)) floats per thread
// and O(runs * Sk * (dh + dv)) per (b, h) of partials, never a score matrix.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/AttentionBlock.h"
#include "kernels/AttentionInternal.h"
#include "kernels/MicroGemm.h"
#include "kernels/VectorMath.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_ATTENTION_BWD;
/// Query and key block: a multiple of kTileRows (micro GEMM rows) and of
/// kLanes (micro GEMM columns), since both roles swap between phases.
constexpr int64_t kBlk = 96;
constexpr float kPosInf = std::numeric_limits<float>::infinity();

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// A [d0,d1,d2,d3] operand seen through its strides; size-1 dimensions have
/// stride 0 so they broadcast (reads) or accumulate (dbias writes).
template <typename T> struct View4 {
  T *base = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  T *at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return base + b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3];
  }
};

struct BwdProblem {
  int64_t B, Sq, Sk, H, dh, dvh;
  int64_t dhPad, dvPad, SqP, SkP, qBlocks, kBlocks;
  int64_t dhR, dvR; // dh, dvh rounded up to kTileRows (rows of QsT, dOT)
  float scale;
  const float *q, *k, *v, *dout;
  float *dq, *dk, *dv;
  int64_t qStride[2], kStride[2], vStride[2], doStride[2]; // batch, row
  int64_t dqStride[2], dkStride[2], dvStride[2];
  bool hasBias, hasMask, wantDBias;
  View4<const float> bias;
  View4<const int8_t> mask;
  View4<float> dbias;
  int64_t dbiasSizes[4];
  MicroGemmFn gemm;
  bool accumulate; // add into dq, dk, dv, dbias, dtable (attentionBackward)
  // Optional spatial bias; each task sums its dS into its own [H][V] slot
  // of dtable partials (doubles), reduced in task order at the end.
  SpatialBias spatial;

  // Packed operands, per (b, h): Qs [SqP][dhPad], QsT [dhR][SqP],
  // dO [SqP][dvPad], dOT [dvR][SqP], Kp [SkP][dhPad], KT [dh][SkP],
  // Vp [SkP][dvPad], VT [dvh][SkP]; lse, dvec [SqP]. Padding is zero (lse
  // +inf), so padded queries and keys contribute nothing.
  float *qs, *qsT, *dO, *dOT, *kp, *kT, *vp, *vT, *lse, *dvec;
  int64_t bh(int64_t b, int64_t h) const { return b * H + h; }
  float *Qs(int64_t b, int64_t h) const { return qs + bh(b, h) * SqP * dhPad; }
  float *QsT(int64_t b, int64_t h) const { return qsT + bh(b, h) * dhR * SqP; }
  float *DO(int64_t b, int64_t h) const { return dO + bh(b, h) * SqP * dvPad; }
  float *DOT(int64_t b, int64_t h) const { return dOT + bh(b, h) * dvR * SqP; }
  float *Kp(int64_t b, int64_t h) const { return kp + bh(b, h) * SkP * dhPad; }
  float *KT(int64_t b, int64_t h) const { return kT + bh(b, h) * dh * SkP; }
  float *Vp(int64_t b, int64_t h) const { return vp + bh(b, h) * SkP * dvPad; }
  float *VT(int64_t b, int64_t h) const { return vT + bh(b, h) * dvh * SkP; }
  float *Lse(int64_t b, int64_t h) const { return lse + bh(b, h) * SqP; }
  float *Dvec(int64_t b, int64_t h) const { return dvec + bh(b, h) * SqP; }
};

/// Per-worker buffers.
struct BwdScratch {
  float *s, *dp;    // [kBlk][kBlk]: S (then P, dS) and dP, or transposed
  float *accK;      // [kBlk][dhPad]: dK or dQ accumulator, or [dhR][kBlk] dK^T
  float *accV;      // [kBlk][dvPad]: dV accumulator, or [dvR][kBlk] dV^T
  float *m, *l, *u; // [kBlk]
  float *hist;      // [V]: one tile's dS summed per table row (spatial)
  static size_t floats(const BwdProblem &p) {
    return 2 * kBlk * kBlk +
           kBlk * (std::max(p.dhPad, p.dhR) + std::max(p.dvPad, p.dvR)) +
           3 * kBlk + p.spatial.V;
  }
  void carve(const BwdProblem &p, float *f) {
    s = f, f += kBlk * kBlk;
    dp = f, f += kBlk * kBlk;
    accK = f, f += kBlk * std::max(p.dhPad, p.dhR);
    accV = f, f += kBlk * std::max(p.dvPad, p.dvR);
    m = f, f += kBlk;
    l = f, f += kBlk;
    u = f, f += kBlk;
    hist = f;
    std::fill(hist, hist + p.spatial.V, 0.f);
  }
};

/// Adds the dS of tile rows [0, mq) x columns [0, nk) (row stride kBlk),
/// queries i0.. and keys j0.. of (b, h), into the task's dtable partials
/// `part` ([H][V]) through the worker's tile histogram.
MGRT_INLINE void addSpatialGradient(const BwdProblem &p, BwdScratch &s,
                                    const float *ds, int64_t b, int64_t h,
                                    int64_t i0, int64_t mq, int64_t j0,
                                    int64_t nk, double *part) {
  const int64_t V = p.spatial.V;
  spatialHistogram(ds, kBlk, p.spatial.row(b, i0) + j0, p.spatial.distStride[1],
                   mq, nk, V, s.hist);
  double *dst = part + h * V;
  for (int64_t v = 0; v < V; ++v) {
    dst[v] += s.hist[v];
    s.hist[v] = 0.f;
  }
}

MGRT_INLINE void packBody(const BwdProblem &p, int64_t b, int64_t h) {
  const int64_t dh = p.dh, dvh = p.dvh;
  const float *q = p.q + b * p.qStride[0] + h * dh;
  const float *o = p.dout + b * p.doStride[0] + h * dvh;
  float *qs = p.Qs(b, h), *qsT = p.QsT(b, h), *dO = p.DO(b, h),
        *dOT = p.DOT(b, h);
  for (int64_t r = 0; r < p.SqP; ++r) {
    const bool in = r < p.Sq;
    for (int64_t c = 0; c < p.dhPad; ++c) {
      const float x = in && c < dh ? p.scale * q[r * p.qStride[1] + c] : 0.f;
      qs[r * p.dhPad + c] = x;
      if (c < dh)
        qsT[c * p.SqP + r] = x;
    }
    for (int64_t c = 0; c < p.dvPad; ++c) {
      const float x = in && c < dvh ? o[r * p.doStride[1] + c] : 0.f;
      dO[r * p.dvPad + c] = x;
      if (c < dvh)
        dOT[c * p.SqP + r] = x;
    }
  }
  std::fill(qsT + dh * p.SqP, qsT + p.dhR * p.SqP, 0.f);
  std::fill(dOT + dvh * p.SqP, dOT + p.dvR * p.SqP, 0.f);
  const float *k = p.k + b * p.kStride[0] + h * dh;
  const float *v = p.v + b * p.vStride[0] + h * dvh;
  float *kp = p.Kp(b, h), *kT = p.KT(b, h), *vp = p.Vp(b, h), *vT = p.VT(b, h);
  for (int64_t j = 0; j < p.SkP; ++j) {
    const bool in = j < p.Sk;
    for (int64_t c = 0; c < p.dhPad; ++c) {
      const float x = in && c < dh ? k[j * p.kStride[1] + c] : 0.f;
      kp[j * p.dhPad + c] = x;
      if (c < dh)
        kT[c * p.SkP + j] = x;
    }
    for (int64_t c = 0; c < p.dvPad; ++c) {
      const float x = in && c < dvh ? v[j * p.vStride[1] + c] : 0.f;
      vp[j * p.dvPad + c] = x;
      if (c < dvh)
        vT[c * p.SkP + j] = x;
    }
  }
}

/// S [kBlk][kBlk] (row = query i0+r, column = key j0+c): adds the bias,
/// sets masked scores and padded keys (c >= nk) to -inf. Rows r >= mq are
/// left as they are (their LSE is +inf).
MGRT_INLINE void biasMaskRows(const BwdProblem &p, float *S, int64_t b,
                              int64_t h, int64_t i0, int64_t mq, int64_t j0,
                              int64_t nk) {
  for (int64_t r = 0; r < mq; ++r) {
    float *row = S + r * kBlk;
    if (p.hasBias) {
      const float *br = p.bias.at(b, h, i0 + r, j0);
      const int64_t st = p.bias.stride[3];
      for (int64_t c = 0; c < nk; ++c)
        row[c] += br[c * st];
    }
    if (p.spatial)
      addSpatialRow(row, p.spatial.row(b, i0 + r) + j0, nk, p.spatial.head(h),
                    p.spatial.V);
    if (p.hasMask) {
      const int8_t *mr = p.mask.at(b, h, i0 + r, j0);
      const int64_t st = p.mask.stride[3];
      for (int64_t c = 0; c < nk; ++c)
        row[c] = mr[c * st] ? row[c] : kNegInf;
    }
    for (int64_t c = nk; c < kBlk; ++c)
      row[c] = kNegInf;
  }
}

/// Phase A: LSE and D of query rows [i0, i0 + kBlk) of (b, h).
MGRT_INLINE void statsBody(const BwdProblem &p, BwdScratch &s, int64_t b,
                           int64_t h, int64_t qb) {
  const int64_t i0 = qb * kBlk, mq = std::min(kBlk, p.Sq - i0);
  const float *qs = p.Qs(b, h) + i0 * p.dhPad, *dO = p.DO(b, h) + i0 * p.dvPad;
  const float *kT = p.KT(b, h), *vT = p.VT(b, h);
  std::fill(s.m, s.m + kBlk, kNegInf);
  std::fill(s.l, s.l + kBlk, 0.f);
  std::fill(s.u, s.u + kBlk, 0.f);
  for (int64_t kb = 0; kb < p.kBlocks; ++kb) {
    const int64_t j0 = kb * kBlk, nk = std::min(kBlk, p.Sk - j0);
    p.gemm(false, kBlk, kBlk / kLanes, p.dh, qs, p.dhPad, kT + j0, p.SkP, s.s,
           kBlk);
    p.gemm(false, kBlk, kBlk / kLanes, p.dvh, dO, p.dvPad, vT + j0, p.SkP, s.dp,
           kBlk);
    biasMaskRows(p, s.s, b, h, i0, mq, j0, nk);
    for (int64_t r = 0; r < mq; ++r) {
      const float *row = s.s + r * kBlk, *dpr = s.dp + r * kBlk;
      VFloat vm = splat(kNegInf);
      for (int64_t c = 0; c < kBlk; c += kLanes)
        vm = vmax(vm, load(row + c));
      const float mNew = std::max(s.m[r], reduceMax(vm));
      if (mNew == kNegInf)
        continue; // nothing kept in this row so far
      const VFloat vmNew = splat(mNew);
      VFloat vl = splat(0.f), vu = splat(0.f);
      for (int64_t c = 0; c < kBlk; c += kLanes) {
        const VFloat e = vexp(load(row + c) - vmNew);
        vl += e;
        vu += e * load(dpr + c);
      }
      const float alpha = s.m[r] == kNegInf ? 0.f : std::exp(s.m[r] - mNew);
      s.l[r] = s.l[r] * alpha + reduceSum(vl);
      s.u[r] = s.u[r] * alpha + reduceSum(vu);
      s.m[r] = mNew;
    }
  }
  float *lse = p.Lse(b, h) + i0, *dvec = p.Dvec(b, h) + i0;
  for (int64_t r = 0; r < kBlk; ++r) {
    const bool kept = r < mq && s.l[r] > 0.f;
    lse[r] = kept ? s.m[r] + std::log(s.l[r]) : kPosInf;
    dvec[r] = kept ? s.u[r] / s.l[r] : 0.f;
  }
}

/// Phase B: dK and dV of keys [j0, j0 + kBlk) of (b, h).
MGRT_INLINE void keyBlockBody(const BwdProblem &p, BwdScratch &s, int64_t b,
                              int64_t h, int64_t kb) {
  const int64_t j0 = kb * kBlk, nk = std::min(kBlk, p.Sk - j0);
  const float *kp = p.Kp(b, h) + j0 * p.dhPad, *vp = p.Vp(b, h) + j0 * p.dvPad;
  const float *qs = p.Qs(b, h), *qsT = p.QsT(b, h), *dO = p.DO(b, h),
              *dOT = p.DOT(b, h);
  std::fill(s.accK, s.accK + kBlk * p.dhPad, 0.f);
  std::fill(s.accV, s.accV + kBlk * p.dvPad, 0.f);
  for (int64_t qb = 0; qb < p.qBlocks; ++qb) {
    const int64_t i0 = qb * kBlk, mq = std::min(kBlk, p.Sq - i0);
    // S^T = K (scale Q)^T, dP^T = V dO^T: rows are keys, columns queries.
    p.gemm(false, kBlk, kBlk / kLanes, p.dh, kp, p.dhPad, qsT + i0, p.SqP, s.s,
           kBlk);
    p.gemm(false, kBlk, kBlk / kLanes, p.dvh, vp, p.dvPad, dOT + i0, p.SqP,
           s.dp, kBlk);
    const float *lse = p.Lse(b, h) + i0, *dvec = p.Dvec(b, h) + i0;
    bool any = false;
    for (int64_t c = 0; c < kBlk; ++c) {
      float *row = s.s + c * kBlk, *dpr = s.dp + c * kBlk;
      if (c >= nk) { // padded key: P = dS = 0
        std::fill(row, row + kBlk, 0.f);
        std::fill(dpr, dpr + kBlk, 0.f);
        continue;
      }
      if (p.hasBias) {
        const float *bc = p.bias.at(b, h, i0, j0 + c);
        const int64_t st = p.bias.stride[2];
        for (int64_t r = 0; r < mq; ++r)
          row[r] += bc[r * st];
      }
      if (p.spatial) { // transposed: a column of the distances
        const int16_t *dc = p.spatial.row(b, i0) + j0 + c;
        const int64_t st = p.spatial.distStride[1];
        const float *tab = p.spatial.head(h);
        const auto top = static_cast<int32_t>(p.spatial.V - 1);
        for (int64_t r = 0; r < mq; ++r)
          row[r] += tab[clampIndex(dc[r * st], top)];
      }
      if (p.hasMask) {
        const int8_t *mc = p.mask.at(b, h, i0, j0 + c);
        const int64_t st = p.mask.stride[2];
        for (int64_t r = 0; r < mq; ++r)
          row[r] = mc[r * st] ? row[r] : kNegInf;
      }
      VFloat vany = splat(0.f);
      for (int64_t r = 0; r < kBlk; r += kLanes) {
        const VFloat pr = vexp(load(row + r) - load(lse + r));
        store(row + r, pr);
        store(dpr + r, pr * (load(dpr + r) - load(dvec + r)));
        vany += pr;
      }
      any = any || reduceSum(vany) > 0.f;
    }
    if (!any)
      continue; // every probability of this block is 0
    p.gemm(true, kBlk, p.dvPad / kLanes, mq, s.s, kBlk, dO + i0 * p.dvPad,
           p.dvPad, s.accV, p.dvPad);
    p.gemm(true, kBlk, p.dhPad / kLanes, mq, s.dp, kBlk, qs + i0 * p.dhPad,
           p.dhPad, s.accK, p.dhPad);
  }
  float *dk = p.dk + b * p.dkStride[0] + j0 * p.dkStride[1] + h * p.dh;
  float *dv = p.dv + b * p.dvStride[0] + j0 * p.dvStride[1] + h * p.dvh;
  for (int64_t c = 0; c < nk; ++c) {
    const float *ak = s.accK + c * p.dhPad, *av = s.accV + c * p.dvPad;
    float *dkr = dk + c * p.dkStride[1], *dvr = dv + c * p.dvStride[1];
    if (p.accumulate) {
      for (int64_t x = 0; x < p.dh; ++x)
        dkr[x] += ak[x];
      for (int64_t x = 0; x < p.dvh; ++x)
        dvr[x] += av[x];
    } else {
      std::copy(ak, ak + p.dh, dkr);
      std::copy(av, av + p.dvh, dvr);
    }
  }
}

/// dQ rows [i0, i0 + mq) of (b, h) from the block's accumulator: scaled,
/// added to dQ under `accumulate`, stored otherwise.
MGRT_INLINE void storeDq(const BwdProblem &p, const BwdScratch &s, int64_t b,
                         int64_t h, int64_t i0, int64_t mq) {
  float *dq = p.dq + b * p.dqStride[0] + i0 * p.dqStride[1] + h * p.dh;
  for (int64_t r = 0; r < mq; ++r)
    for (int64_t c = 0; c < p.dh; ++c)
      dq[r * p.dqStride[1] + c] =
          (p.accumulate ? dq[r * p.dqStride[1] + c] : 0.f) +
          p.scale * s.accK[r * p.dhPad + c];
}

/// Phase C: dQ of query rows [i0, i0 + kBlk) of (b, h), and their dS added
/// into dbias and the dtable partials `part`.
MGRT_INLINE void queryBlockBody(const BwdProblem &p, BwdScratch &s, int64_t b,
                                int64_t h, int64_t qb, double *part) {
  const int64_t i0 = qb * kBlk, mq = std::min(kBlk, p.Sq - i0);
  const float *qs = p.Qs(b, h) + i0 * p.dhPad, *dO = p.DO(b, h) + i0 * p.dvPad;
  const float *kT = p.KT(b, h), *vT = p.VT(b, h), *kp = p.Kp(b, h);
  const float *lse = p.Lse(b, h) + i0, *dvec = p.Dvec(b, h) + i0;
  std::fill(s.accK, s.accK + kBlk * p.dhPad, 0.f);
  for (int64_t kb = 0; kb < p.kBlocks; ++kb) {
    const int64_t j0 = kb * kBlk, nk = std::min(kBlk, p.Sk - j0);
    p.gemm(false, kBlk, kBlk / kLanes, p.dh, qs, p.dhPad, kT + j0, p.SkP, s.s,
           kBlk);
    p.gemm(false, kBlk, kBlk / kLanes, p.dvh, dO, p.dvPad, vT + j0, p.SkP, s.dp,
           kBlk);
    biasMaskRows(p, s.s, b, h, i0, mq, j0, nk);
    bool any = false;
    for (int64_t r = 0; r < kBlk; ++r) {
      float *row = s.s + r * kBlk;
      const float *dpr = s.dp + r * kBlk;
      if (r >= mq || lse[r] == kPosInf) { // padded or fully masked row
        std::fill(row, row + kBlk, 0.f);
        continue;
      }
      const VFloat vl = splat(lse[r]), vd = splat(dvec[r]);
      VFloat vany = splat(0.f);
      for (int64_t c = 0; c < kBlk; c += kLanes) {
        const VFloat pr = vexp(load(row + c) - vl);
        store(row + c, pr * (load(dpr + c) - vd));
        vany += pr;
      }
      any = any || reduceSum(vany) > 0.f;
    }
    if (!any)
      continue; // dS = 0
    if (p.spatial)
      addSpatialGradient(p, s, s.s, b, h, i0, mq, j0, nk, part);
    if (p.wantDBias)
      for (int64_t r = 0; r < mq; ++r) {
        const float *row = s.s + r * kBlk;
        float *db = p.dbias.at(b, h, i0 + r, j0);
        const int64_t st = p.dbias.stride[3];
        if (st == 1)
          for (int64_t c = 0; c < nk; ++c)
            db[c] += row[c];
        else
          for (int64_t c = 0; c < nk; ++c)
            db[c * st] += row[c];
      }
    p.gemm(true, kBlk, p.dhPad / kLanes, nk, s.s, kBlk, kp + j0 * p.dhPad,
           p.dhPad, s.accK, p.dhPad);
  }
  storeDq(p, s, b, h, i0, mq);
}

/// exp(x) on 8 lanes, as vexp: Cephes' expf polynomial, exactly 0 below
/// -87.3 and for -inf; a NaN stays NaN (max_ps returns its second operand
/// when one is unordered).
MGRT_V3_INLINE __m256 vexp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3f);
  const __m256 xc = _mm256_max_ps(lo, x);
  const __m256 fn =
      _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 q = _mm256_set1_ps(1.9875691500E-4f);
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.3981999507E-3f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(8.3334519073E-3f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(4.1665795894E-2f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.6666665459E-1f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(5.0000001201E-1f));
  q = _mm256_add_ps(_mm256_fmadd_ps(q, _mm256_mul_ps(r, r), r),
                    _mm256_set1_ps(1.f));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvttps_epi32(fn), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(q, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), y);
}

/// The table entries (tab: NT registers of 8 rows) of 8 distances at d,
/// clamped to [0, hi].
template <int NT>
MGRT_V3_INLINE __m256 spatialLookup8(const __m256 (&tab)[4], const int16_t *d,
                                     __m256i hi) {
  __m256i ix = _mm256_cvtepi16_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(d)));
  ix = _mm256_min_epi32(_mm256_max_epi32(ix, _mm256_setzero_si256()), hi);
  return lookupTable8<NT>(tab, ix);
}

/// tileProbabilities on AVX2, for NT table registers (0: no spatial bias).
/// A tile without a mask, whose dense bias (if any) has unit key stride and
/// whose table fits the NT registers, adds the bias and the spatial table
/// entries as it exponentiates; other tiles go through biasMaskRows first.
template <int NT>
__attribute__((target("arch=x86-64-v3"), noinline)) bool
tileProbabilitiesAvx2(const BwdProblem &p, BwdScratch &s, int64_t b, int64_t h,
                      int64_t i0, int64_t mq, int64_t j0, int64_t nk,
                      const float *lse, const float *dvec) {
  const bool fused = !p.hasMask && (!p.hasBias || p.bias.stride[3] == 1) &&
                     (NT > 0) == static_cast<bool>(p.spatial) &&
                     p.spatial.V <= 8 * NT;
  if (!fused)
    biasMaskRows(p, s.s, b, h, i0, mq, j0, nk);
  __m256 tab[4] = {};
  if (NT > 0)
    for (int k = 0; k < NT; ++k)
      tab[k] = _mm256_loadu_ps(p.spatial.head(h) + 8 * k);
  const __m256i hi = _mm256_set1_epi32(
      static_cast<int32_t>(std::max<int64_t>(p.spatial.V - 1, 0)));
  __m256 vany = _mm256_setzero_ps();
  for (int64_t r = 0; r < kBlk; ++r) {
    float *row = s.s + r * kBlk, *dpr = s.dp + r * kBlk;
    if (r >= mq || lse[r] == kPosInf) { // padded or fully masked row
      std::fill(row, row + kBlk, 0.f);
      std::fill(dpr, dpr + kBlk, 0.f);
      continue;
    }
    const float *br =
        fused && p.hasBias ? p.bias.at(b, h, i0 + r, j0) : nullptr;
    const int16_t *dr =
        fused && NT > 0 ? p.spatial.row(b, i0 + r) + j0 : nullptr;
    const __m256 vl = _mm256_set1_ps(lse[r]), vd = _mm256_set1_ps(dvec[r]);
    // Fused, keys past nk are padding (P = dS = 0) and the distance and
    // bias rows end at nk: whole groups of 8 here, the rest below.
    const int64_t whole = fused ? nk / 8 * 8 : kBlk;
    for (int64_t c = 0; c < whole; c += 8) {
      __m256 x = _mm256_loadu_ps(row + c);
      if (br)
        x = _mm256_add_ps(x, _mm256_loadu_ps(br + c));
      if (NT > 0 && dr)
        x = _mm256_add_ps(x, spatialLookup8<NT>(tab, dr + c, hi));
      const __m256 pr = vexp8(_mm256_sub_ps(x, vl));
      _mm256_storeu_ps(row + c, pr);
      _mm256_storeu_ps(
          dpr + c,
          _mm256_mul_ps(pr, _mm256_sub_ps(_mm256_loadu_ps(dpr + c), vd)));
      vany = _mm256_add_ps(vany, pr);
    }
    if (whole == kBlk)
      continue;
    float tail = 0.f;
    for (int64_t c = whole; c < nk; ++c) {
      float x = row[c] + (br ? br[c] : 0.f);
      if (NT > 0)
        x += p.spatial.head(
            h)[clampIndex(dr[c], static_cast<int32_t>(p.spatial.V - 1))];
      const float pr = std::exp(x - lse[r]);
      row[c] = pr;
      dpr[c] = pr * (dpr[c] - dvec[r]);
      tail += pr;
    }
    std::fill(row + nk, row + kBlk, 0.f);
    std::fill(dpr + nk, dpr + kBlk, 0.f);
    vany = _mm256_add_ps(vany, _mm256_set_ps(0, 0, 0, 0, 0, 0, 0, tail));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vany);
  float sum = 0.f;
  for (float x : lanes)
    sum += x;
  return !(sum == 0.f);
}

/// One (query block, key block) tile of the one pass, rows = queries: adds
/// the bias and mask to S (rows r < mq), then P = exp(S - LSE) in s.s and
/// dS = P (dP - D) in s.dp; padded and fully masked rows are 0. Returns
/// whether any P is nonzero: P >= 0, so the tile's sum is 0 only if every
/// P is (then P = dS = 0 and the tile adds nothing); a NaN sum is not 0,
/// so NaN still propagates. On AVX2 the 16-lane vector code would split
/// every comparison into scalars (GCC 12 lowers a 64-byte vector compare
/// lane by lane without AVX-512), hence the 8-lane intrinsics there.
template <SimdLevel L>
MGRT_INLINE bool tileProbabilities(const BwdProblem &p, BwdScratch &s,
                                   int64_t b, int64_t h, int64_t i0, int64_t mq,
                                   int64_t j0, int64_t nk, const float *lse,
                                   const float *dvec) {
  if constexpr (L == SimdLevel::V3) {
    const int64_t V = p.spatial ? p.spatial.V : 0;
    if (V == 0)
      return tileProbabilitiesAvx2<0>(p, s, b, h, i0, mq, j0, nk, lse, dvec);
    if (V <= 8)
      return tileProbabilitiesAvx2<1>(p, s, b, h, i0, mq, j0, nk, lse, dvec);
    if (V <= 16)
      return tileProbabilitiesAvx2<2>(p, s, b, h, i0, mq, j0, nk, lse, dvec);
    return tileProbabilitiesAvx2<4>(p, s, b, h, i0, mq, j0, nk, lse, dvec);
  }
  biasMaskRows(p, s.s, b, h, i0, mq, j0, nk);
  VFloat vany = splat(0.f);
  for (int64_t r = 0; r < kBlk; ++r) {
    float *row = s.s + r * kBlk, *dpr = s.dp + r * kBlk;
    if (r >= mq || lse[r] == kPosInf) { // padded or fully masked row
      std::fill(row, row + kBlk, 0.f);
      std::fill(dpr, dpr + kBlk, 0.f);
      continue;
    }
    const VFloat vl = splat(lse[r]), vd = splat(dvec[r]);
    for (int64_t c = 0; c < kBlk; c += kLanes) {
      const VFloat pr = vexp(load(row + c) - vl);
      store(row + c, pr);
      store(dpr + c, pr * (load(dpr + c) - vd));
      vany += pr;
    }
  }
  return !(reduceSum(vany) == 0.f);
}

/// Phases A, B and C in one pass over query blocks [qb0, qb1) of (b, h).
/// Per query block: its statistics (phase A, unless given), then each of
/// its (query block, key block) tiles once, queries as rows: S, dP, then P
/// and dS. The block's rows of the bias, just read by phase A, are still
/// in cache. The tiles give dQ (the block's rows, owned here), the tile of
/// dBias (owned here: dbias is not broadcast), and this run's share of dV^T
/// += dO^T P and dK^T += (scale Q)^T dS, added into `dkPart` [dhR][SkP] and
/// `dvPart` [dvR][SkP] (the transposed operands are packed, so no tile is
/// transposed).
template <SimdLevel L>
MGRT_INLINE void queryRunBody(const BwdProblem &p, BwdScratch &s, int64_t b,
                              int64_t h, int64_t qb0, int64_t qb1,
                              bool haveStats, float *dkPart, float *dvPart,
                              double *part) {
  const float *qsT = p.QsT(b, h), *dOT = p.DOT(b, h), *kT = p.KT(b, h),
              *vT = p.VT(b, h), *kp = p.Kp(b, h);
  for (int64_t qb = qb0; qb < qb1; ++qb) {
    if (!haveStats)
      statsBody(p, s, b, h, qb);
    const int64_t i0 = qb * kBlk, mq = std::min(kBlk, p.Sq - i0);
    const float *qs = p.Qs(b, h) + i0 * p.dhPad,
                *dO = p.DO(b, h) + i0 * p.dvPad;
    const float *lse = p.Lse(b, h) + i0, *dvec = p.Dvec(b, h) + i0;
    std::fill(s.accK, s.accK + kBlk * p.dhPad, 0.f);
    for (int64_t kb = 0; kb < p.kBlocks; ++kb) {
      const int64_t j0 = kb * kBlk, nk = std::min(kBlk, p.Sk - j0);
      p.gemm(false, kBlk, kBlk / kLanes, p.dh, qs, p.dhPad, kT + j0, p.SkP, s.s,
             kBlk);
      p.gemm(false, kBlk, kBlk / kLanes, p.dvh, dO, p.dvPad, vT + j0, p.SkP,
             s.dp, kBlk);
      const bool any =
          tileProbabilities<L>(p, s, b, h, i0, mq, j0, nk, lse, dvec);
      if (p.wantDBias)
        for (int64_t r = 0; r < mq; ++r) {
          const float *row = s.dp + r * kBlk;
          float *db = p.dbias.at(b, h, i0 + r, j0);
          const int64_t st = p.dbias.stride[3];
          if (p.accumulate)
            for (int64_t c = 0; c < nk; ++c)
              db[c * st] += row[c];
          else if (st == 1)
            std::copy(row, row + nk, db);
          else
            for (int64_t c = 0; c < nk; ++c)
              db[c * st] = row[c];
        }
      if (!any)
        continue; // P = dS = 0
      if (p.spatial)
        addSpatialGradient(p, s, s.dp, b, h, i0, mq, j0, nk, part);
      p.gemm(true, p.dvR, kBlk / kLanes, mq, dOT + i0, p.SqP, s.s, kBlk,
             dvPart + j0, p.SkP);
      p.gemm(true, p.dhR, kBlk / kLanes, mq, qsT + i0, p.SqP, s.dp, kBlk,
             dkPart + j0, p.SkP);
      p.gemm(true, kBlk, p.dhPad / kLanes, nk, s.dp, kBlk, kp + j0 * p.dhPad,
             p.dhPad, s.accK, p.dhPad);
    }
    storeDq(p, s, b, h, i0, mq);
  }
}

} // namespace

// The dispatched entry points (their parameter types have internal linkage).
namespace bwd_detail {
MGRT_SIMD_DISPATCH(pack, (const BwdProblem &p, int64_t b, int64_t h), (p, b, h))
MGRT_SIMD_DISPATCH(stats,
                   (const BwdProblem &p, BwdScratch &s, int64_t b, int64_t h,
                    int64_t qb),
                   (p, s, b, h, qb))
MGRT_SIMD_DISPATCH(keyBlock,
                   (const BwdProblem &p, BwdScratch &s, int64_t b, int64_t h,
                    int64_t kb),
                   (p, s, b, h, kb))
MGRT_SIMD_DISPATCH_LEVEL(queryRun,
                         (const BwdProblem &p, BwdScratch &s, int64_t b,
                          int64_t h, int64_t qb0, int64_t qb1, bool haveStats,
                          float *dkPart, float *dvPart, double *part),
                         (p, s, b, h, qb0, qb1, haveStats, dkPart, dvPart,
                          part))
MGRT_SIMD_DISPATCH(queryBlock,
                   (const BwdProblem &p, BwdScratch &s, int64_t b, int64_t h,
                    int64_t qb, double *part),
                   (p, s, b, h, qb, part))
} // namespace bwd_detail

namespace {

/// Sets dbias row (b, h, i) (indices of the broadcasting view) to 0.
void zeroDBiasRow(const BwdProblem &p, int64_t b, int64_t h, int64_t i) {
  float *row = p.dbias.at(b, h, i, 0);
  const int64_t st = p.dbias.stride[3], n = p.dbiasSizes[3];
  if (st == 1)
    std::fill(row, row + n, 0.f);
  else
    for (int64_t j = 0; j < n; ++j)
      row[j * st] = 0.f;
}

/// Whether phases B and C run as one pass: every dbias element must belong
/// to one (b, h, query, key), so that one tile task owns it. The variable
/// MEGAGRAPH_ATTENTION_BWD=phased forces the two passes (A/B runs, tests).
bool onePass(const BwdProblem &p) {
  const char *env = std::getenv("MEGAGRAPH_ATTENTION_BWD");
  if (env && std::strcmp(env, "phased") == 0)
    return false;
  return !p.wantDBias || (p.dbiasSizes[0] == p.B && p.dbiasSizes[1] == p.H &&
                          p.dbiasSizes[2] == p.Sq && p.dbiasSizes[3] == p.Sk);
}

/// Views a bias / mask / dbias descriptor as a broadcasting [B,H,Sq,Sk]
/// operand.
template <typename T, typename Desc>
View4<T> view4(const Desc *d, const int64_t (&want)[4], const char *what) {
  View4<T> view;
  view.base = d->aligned + d->offset;
  broadcastStrides(d, want, kName, what, view.stride);
  return view;
}

/// Zeroes a rank-3 output through its strides.
void zero3(mgrt_memref_f32_3 *d) {
  float *base = d->aligned + d->offset;
  for (int64_t i = 0; i < d->sizes[0]; ++i)
    for (int64_t j = 0; j < d->sizes[1]; ++j)
      std::fill(base + i * d->strides[0] + j * d->strides[1],
                base + i * d->strides[0] + j * d->strides[1] + d->sizes[2],
                0.f);
}

} // namespace
} // namespace mgrt

using namespace mgrt;

extern "C" void _mlir_ciface_mgrt_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  attentionBackward(dq, dk, dv, dbias, dout, q, k, v, bias, mask, numHeads,
                    scale, flags, nullptr, nullptr, false);
}

extern "C" void _mlir_ciface_mgrt_attention_bwd_lse_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse,
    int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *name = MGRT_KERNEL_ATTENTION_BWD_LSE;
  MGRT_CHECK(dout && q && out && lse, name, "null operand descriptor");
  const char *env = std::getenv("MEGAGRAPH_ATTENTION_BWD");
  if (env && std::strcmp(env, "recompute") == 0)
    return attentionBackward(dq, dk, dv, dbias, dout, q, k, v, bias, mask,
                             numHeads, scale, flags, nullptr, nullptr, false);
  std::vector<float> dvec = forwardRowStats(dout, out, lse, numHeads, name);
  attentionBackward(dq, dk, dv, dbias, dout, q, k, v, bias, mask, numHeads,
                    scale, flags, lse->aligned + lse->offset, dvec.data(),
                    false);
}

std::vector<float> mgrt::forwardRowStats(const mgrt_memref_f32_3 *dout,
                                         const mgrt_memref_f32_3 *out,
                                         const mgrt_memref_f32_3 *lse,
                                         int64_t numHeads, const char *name) {
  const int64_t B = dout->sizes[0], Sq = dout->sizes[1], Dv = dout->sizes[2];
  const int64_t H = numHeads;
  MGRT_CHECK(H > 0 && Dv % H == 0, name, "%lld heads do not divide Dv=%lld",
             (long long)H, (long long)Dv);
  MGRT_CHECK(out->sizes[0] == B && out->sizes[1] == Sq && out->sizes[2] == Dv &&
                 out->strides[2] == 1 && dout->strides[2] == 1,
             name, "out must be [%lld,%lld,%lld] like dout, innermost stride 1",
             (long long)B, (long long)Sq, (long long)Dv);
  checkLseLayout(lse, B, H, Sq, name);
  // D = rowsum(dO * O) per head: the rowsum(P * dP) of the statistics pass.
  const int64_t dvh = Dv / H;
  std::vector<float> dvec(static_cast<size_t>(B * H * Sq));
  const float *o = out->aligned + out->offset;
  const float *g = dout->aligned + dout->offset;
  parallelFor(B * H, [&](int64_t t, int) {
    const int64_t b = t / H, h = t % H;
    for (int64_t i = 0; i < Sq; ++i) {
      const float *orow =
          o + b * out->strides[0] + i * out->strides[1] + h * dvh;
      const float *grow =
          g + b * dout->strides[0] + i * dout->strides[1] + h * dvh;
      float sum = 0.f;
      for (int64_t c = 0; c < dvh; ++c)
        sum += orow[c] * grow[c];
      dvec[t * Sq + i] = sum;
    }
  });
  return dvec;
}

void mgrt::attentionBackward(mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                             mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                             mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                             mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                             mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                             int64_t numHeads, float scale, int64_t flags,
                             const float *lseIn, const float *dvecIn,
                             bool accumulate, const SpatialBias *spatial,
                             mgrt_memref_f32_2 *dtable) {
  MGRT_CHECK(dq && dk && dv && dout && q && k && v, kName,
             "null operand descriptor");
  const bool hasBias = flags & MGRT_ATTENTION_BIAS;
  const bool hasMask = flags & MGRT_ATTENTION_MASK;
  const bool wantDBias = flags & MGRT_ATTENTION_DBIAS;
  MGRT_CHECK(!hasBias || bias, kName, "bias flag set but bias is null");
  MGRT_CHECK(!hasMask || mask, kName, "mask flag set but mask is null");
  MGRT_CHECK(!wantDBias || dbias, kName, "dbias flag set but dbias is null");
  MGRT_CHECK(!lseIn == !dvecIn, kName, "lse and D must be given together");
  MGRT_CHECK(!spatial == !dtable, kName,
             "a spatial bias and dtable must be given together");

  const int64_t B = q->sizes[0], Sq = q->sizes[1], D = q->sizes[2];
  const int64_t Sk = k->sizes[1], Dv = v->sizes[2], H = numHeads;
  MGRT_CHECK(H > 0 && D % H == 0 && Dv % H == 0, kName,
             "%lld heads do not divide D=%lld and Dv=%lld", (long long)H,
             (long long)D, (long long)Dv);
  auto same3 = [](const mgrt_memref_f32_3 *d, int64_t a, int64_t b, int64_t c) {
    return d->sizes[0] == a && d->sizes[1] == b && d->sizes[2] == c;
  };
  MGRT_CHECK(
      same3(k, B, Sk, D) && same3(v, B, Sk, Dv) && same3(dout, B, Sq, Dv) &&
          same3(dq, B, Sq, D) && same3(dk, B, Sk, D) && same3(dv, B, Sk, Dv),
      kName,
      "shape mismatch: q [%lld,%lld,%lld] k [%lld,%lld,%lld] "
      "v [%lld,%lld,%lld] dout [%lld,%lld,%lld]; dq, dk, dv must "
      "match q, k, v",
      (long long)B, (long long)Sq, (long long)D, (long long)k->sizes[0],
      (long long)k->sizes[1], (long long)k->sizes[2], (long long)v->sizes[0],
      (long long)v->sizes[1], (long long)v->sizes[2], (long long)dout->sizes[0],
      (long long)dout->sizes[1], (long long)dout->sizes[2]);
  MGRT_CHECK(q->strides[2] == 1 && k->strides[2] == 1 && v->strides[2] == 1 &&
                 dout->strides[2] == 1 && dq->strides[2] == 1 &&
                 dk->strides[2] == 1 && dv->strides[2] == 1,
             kName, "innermost strides of q, k, v, dout, dq, dk, dv must be 1");

  BwdProblem p{};
  const int64_t full[4] = {B, H, Sq, Sk};
  p.hasBias = hasBias, p.hasMask = hasMask, p.wantDBias = wantDBias;
  p.accumulate = accumulate;
  if (hasBias)
    p.bias = view4<const float>(bias, full, "bias");
  if (hasMask)
    p.mask = view4<const int8_t>(mask, full, "mask");
  if (wantDBias) {
    p.dbias = view4<float>(dbias, full, "dbias");
    for (int i = 0; i < 4; ++i)
      p.dbiasSizes[i] = dbias->sizes[i];
  }
  if (spatial) {
    p.spatial = *spatial;
    MGRT_CHECK(dtable->sizes[0] == p.spatial.V && dtable->sizes[1] == H, kName,
               "dtable is [%lld,%lld], expected [%lld,%lld]",
               (long long)dtable->sizes[0], (long long)dtable->sizes[1],
               (long long)p.spatial.V, (long long)H);
  }
  // dtable [V,H] from per-task [H][V] partials, summed in task order.
  auto reduceDTable = [&](const double *parts, int64_t tasks) {
    if (!spatial)
      return;
    float *base = dtable->aligned + dtable->offset;
    const int64_t V = p.spatial.V;
    for (int64_t v = 0; v < V; ++v)
      for (int64_t h = 0; h < H; ++h) {
        double sum = 0;
        for (int64_t t = 0; t < tasks; ++t)
          sum += parts[(t * H + h) * V + v];
        float &dst = base[v * dtable->strides[0] + h * dtable->strides[1]];
        dst = static_cast<float>((accumulate ? dst : 0.0) + sum);
      }
  };
  if (B == 0 || Sq == 0 || Sk == 0) { // no score: every gradient is 0
    if (!accumulate)
      zero3(dq), zero3(dk), zero3(dv);
    reduceDTable(nullptr, 0);
    for (int64_t b = 0; b < (wantDBias && !accumulate ? p.dbiasSizes[0] : 0);
         ++b)
      for (int64_t h = 0; h < p.dbiasSizes[1]; ++h)
        for (int64_t i = 0; i < p.dbiasSizes[2]; ++i)
          zeroDBiasRow(p, b, h, i);
    return;
  }

  // 1. The problem and its tiling.
  p.B = B, p.Sq = Sq, p.Sk = Sk, p.H = H, p.dh = D / H, p.dvh = Dv / H;
  p.dhPad = roundUp(p.dh, kLanes), p.dvPad = roundUp(p.dvh, kLanes);
  p.dhR = roundUp(p.dh, kTileRows), p.dvR = roundUp(p.dvh, kTileRows);
  p.SqP = roundUp(Sq, kBlk), p.SkP = roundUp(Sk, kBlk);
  p.qBlocks = p.SqP / kBlk, p.kBlocks = p.SkP / kBlk;
  p.scale = scale;
  p.q = q->aligned + q->offset, p.k = k->aligned + k->offset;
  p.v = v->aligned + v->offset, p.dout = dout->aligned + dout->offset;
  p.dq = dq->aligned + dq->offset, p.dk = dk->aligned + dk->offset;
  p.dv = dv->aligned + dv->offset;
  const mgrt_memref_f32_3 *descs[7] = {q, k, v, dout, dq, dk, dv};
  int64_t *strides[7] = {p.qStride,  p.kStride,  p.vStride, p.doStride,
                         p.dqStride, p.dkStride, p.dvStride};
  for (int i = 0; i < 7; ++i)
    strides[i][0] = descs[i]->strides[0], strides[i][1] = descs[i]->strides[1];
  p.gemm = microGemm();

  // 2. Buffers, all tracked: packed operands, LSE and D, per-worker scratch.
  const int64_t BH = B * H;
  const size_t packedFloats =
      BH * (p.SqP * (p.dhPad + p.dhR + p.dvPad + p.dvR) +
            2 * p.SkP * (p.dhPad + p.dvPad) + 2 * p.SqP);
  float *packed =
      static_cast<float *>(mgrt_alloc(packedFloats * sizeof(float)));
  MGRT_CHECK(packed, kName, "out of memory (%zu bytes of packed operands)",
             packedFloats * sizeof(float));
  {
    float *f = packed;
    p.qs = f, f += BH * p.SqP * p.dhPad;
    p.qsT = f, f += BH * p.SqP * p.dhR;
    p.dO = f, f += BH * p.SqP * p.dvPad;
    p.dOT = f, f += BH * p.SqP * p.dvR;
    p.kp = f, f += BH * p.SkP * p.dhPad;
    p.kT = f, f += BH * p.SkP * p.dhPad;
    p.vp = f, f += BH * p.SkP * p.dvPad;
    p.vT = f, f += BH * p.SkP * p.dvPad;
    p.lse = f, f += BH * p.SqP;
    p.dvec = f;
  }
  const int threads = numThreads();
  const size_t scratchBytes = BwdScratch::floats(p) * sizeof(float);
  std::vector<void *> blocks(threads);
  std::vector<BwdScratch> scratch(threads);
  for (int t = 0; t < threads; ++t) {
    blocks[t] = mgrt_alloc(scratchBytes);
    MGRT_CHECK(blocks[t], kName, "out of memory (%zu bytes of scratch)",
               scratchBytes);
    scratch[t].carve(p, static_cast<float *>(blocks[t]));
  }

  // 3. Pack, statistics, dK / dV, dQ / dBias.
  parallelFor(BH, [&](int64_t t, int) { bwd_detail::pack(p, t / H, t % H); });
  if (lseIn) { // given statistics over all keys; padding as statsBody's
    for (int64_t t = 0; t < BH; ++t) {
      float *lse = p.lse + t * p.SqP, *dvec = p.dvec + t * p.SqP;
      for (int64_t r = 0; r < p.SqP; ++r) {
        const float x = r < Sq ? lseIn[t * Sq + r] : kPosInf;
        const bool kept = x != kPosInf && x != kNegInf;
        lse[r] = kept ? x : kPosInf;
        dvec[r] = kept ? dvecIn[t * Sq + r] : 0.f;
      }
    }
  }
  if (onePass(p)) {
    // 4. Statistics, dQ, dBias, dK, dV in one pass (queryRunBody), split
    // into `runs` runs of query blocks per (b, h) so that every thread has
    // work; each run sums its share of dK^T, dV^T into its own buffers,
    // which together stay within the size of the packed operands.
    const int64_t partFloats = (p.dhR + p.dvR) * p.SkP;
    const int64_t runs =
        std::min({p.qBlocks, std::max<int64_t>(1, (2 * threads + BH - 1) / BH),
                  std::max<int64_t>(1, static_cast<int64_t>(packedFloats) /
                                           (BH * partFloats))});
    const int64_t perRun = (p.qBlocks + runs - 1) / runs;
    const size_t partBytes = sizeof(float) * BH * runs * partFloats;
    float *parts = static_cast<float *>(mgrt_alloc(partBytes));
    MGRT_CHECK(parts, kName, "out of memory (%zu bytes of dK, dV partials)",
               partBytes);
    std::vector<double> tableParts(spatial ? BH * runs * H * p.spatial.V : 0);
    parallelFor(BH * runs, [&](int64_t t, int w) {
      float *part = parts + t * partFloats;
      std::fill(part, part + partFloats, 0.f);
      const int64_t bh = t / runs, qb0 = t % runs * perRun;
      bwd_detail::queryRun(
          p, scratch[w], bh / H, bh % H, qb0, std::min(p.qBlocks, qb0 + perRun),
          lseIn != nullptr, part, part + p.dhR * p.SkP,
          spatial ? tableParts.data() + t * H * p.spatial.V : nullptr);
    });
    reduceDTable(tableParts.data(), BH * runs);
    parallelFor(BH, [&](int64_t t, int) {
      const int64_t b = t / H, h = t % H;
      const float *part = parts + t * runs * partFloats;
      float *dkh = p.dk + b * p.dkStride[0] + h * p.dh;
      float *dvh = p.dv + b * p.dvStride[0] + h * p.dvh;
      auto sum = [&](int64_t offset) {
        float x = 0.f;
        for (int64_t run = 0; run < runs; ++run)
          x += part[run * partFloats + offset];
        return x;
      };
      for (int64_t j = 0; j < Sk; ++j) {
        float *dkr = dkh + j * p.dkStride[1], *dvr = dvh + j * p.dvStride[1];
        for (int64_t x = 0; x < p.dh; ++x)
          dkr[x] = (accumulate ? dkr[x] : 0.f) + sum(x * p.SkP + j);
        for (int64_t x = 0; x < p.dvh; ++x)
          dvr[x] = (accumulate ? dvr[x] : 0.f) + sum((p.dhR + x) * p.SkP + j);
      }
    });
    mgrt_free(parts);
    for (void *block : blocks)
      mgrt_free(block);
    mgrt_free(packed);
    return;
  }

  if (!lseIn)
    parallelFor(BH * p.qBlocks, [&](int64_t t, int w) {
      bwd_detail::stats(p, scratch[w], t / (H * p.qBlocks), (t / p.qBlocks) % H,
                        t % p.qBlocks);
    });
  // 4'. dK / dV, then dQ / dBias, each recomputing the tiles.
  parallelFor(BH * p.kBlocks, [&](int64_t t, int w) {
    bwd_detail::keyBlock(p, scratch[w], t / (H * p.kBlocks),
                         (t / p.kBlocks) % H, t % p.kBlocks);
  });
  // Phase C tasks: one per dbias (batch, head, query block) group, walking
  // every (b, h, query block) that adds into it; without dbias, one per
  // (b, h, query block).
  const bool bAll = wantDBias && p.dbiasSizes[0] == 1 && B > 1;
  const bool hAll = wantDBias && p.dbiasSizes[1] == 1 && H > 1;
  const bool qAll = wantDBias && p.dbiasSizes[2] == 1 && Sq > 1;
  const int64_t gB = bAll ? 1 : B, gH = hAll ? 1 : H, gQ = qAll ? 1 : p.qBlocks;
  std::vector<double> tableParts(spatial ? gB * gH * gQ * H * p.spatial.V : 0);
  parallelFor(gB * gH * gQ, [&](int64_t t, int w) {
    const int64_t tb = t / (gH * gQ), th = (t / gQ) % gH, tq = t % gQ;
    double *part = spatial ? tableParts.data() + t * H * p.spatial.V : nullptr;
    // The dbias rows this task sums into are its own: overwritten, they
    // start at 0 (zeroed here, in parallel and just before they are used).
    if (wantDBias && !accumulate) {
      const int64_t r0 = qAll ? 0 : tq * kBlk;
      const int64_t r1 = qAll ? 1 : std::min(Sq, r0 + kBlk);
      for (int64_t i = r0; i < r1; ++i)
        zeroDBiasRow(p, tb, th, i);
    }
    for (int64_t b = bAll ? 0 : tb; b < (bAll ? B : tb + 1); ++b)
      for (int64_t h = hAll ? 0 : th; h < (hAll ? H : th + 1); ++h)
        for (int64_t qb = qAll ? 0 : tq; qb < (qAll ? p.qBlocks : tq + 1); ++qb)
          bwd_detail::queryBlock(p, scratch[w], b, h, qb, part);
  });
  reduceDTable(tableParts.data(), gB * gH * gQ);

  for (void *block : blocks)
    mgrt_free(block);
  mgrt_free(packed);
}
