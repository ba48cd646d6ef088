//===- CpRing.cpp - Context-parallel attention, ring variant --------------===//
//
// Ring attention over the row blocks of a cp group. In step t = 0..C-1 rank
// r holds the K / V block of rank (r - t) mod C and attends its local
// queries to it, with the bias / mask columns of that block (a strided view
// of the local rows: nothing about the bias moves) and, for a spatial bias,
// the same columns of the local distance rows (keyColumns: the block's
// first global row is its first key column). Meanwhile the block
// moves on to rank r + 1 (the transfer runs on the calling thread, the
// attention on a helper thread, so MPI stays FUNNELED). A rank holds at
// most two blocks: the one it attends to and the one it receives.
//
// Forward: each step's output O_t and row log-sum-exp L_t (from the
// kernel's online softmax) merge into the running (O, L):
//   m = max(L, L_t); w = e^(L-m), w_t = e^(L_t-m)
//   O = (w O + w_t O_t) / (w + w_t); L = m + log(w + w_t)
// which is exact: softmax over the union of disjoint key blocks.
//
// Backward: a forward ring first gives the full-range L and
// D = rowsum(dO * O) of every local row; then each block travels with a dK /
// dV accumulator, every step adding this rank's queries' contribution (the
// kernel with given statistics, in accumulate mode) and adding into the
// local dQ, this block's dbias columns and the table gradient of the local
// rows (which the step sums over the group, as every parameter's). K / V move
// during the step, the accumulator after it; one extra transfer after the last
// step brings each accumulator home.
//
//===----------------------------------------------------------------------===//

#include "cp/CpCommon.h"

#include "comm/CommGroup.h"
#include "kernels/AttentionInternal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

namespace mgrt::cp {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kTagKV = 7101, kTagGrad = 7102;

/// Runs compute() and comm() at once (compute on a helper thread) when
/// overlap is on, else one after the other; returns comm's status.
template <typename Compute, typename Comm>
int overlapped(Compute &&compute, Comm &&comm) {
  if (!overlapEnabled()) {
    compute();
    return comm();
  }
  std::thread worker(compute);
  const int rc = comm();
  worker.join();
  return rc;
}

/// Merges the partial output oT [B,S_r,Dv] (contiguous) with row
/// log-sum-exps lseT into out / lse ([B,H,S_r]).
void mergePartial(mgrt_memref_f32_3 *out, float *lse, const float *oT,
                  const float *lseT, int64_t H) {
  const int64_t B = out->sizes[0], Sr = out->sizes[1], Dv = out->sizes[2];
  const int64_t dvh = Dv / H;
  float *base = out->aligned + out->offset;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sr; ++i) {
        const float lt = lseT[(b * H + h) * Sr + i];
        if (lt == kNegInf)
          continue; // this block keeps no key of the row
        float &la = lse[(b * H + h) * Sr + i];
        float *o = base + b * out->strides[0] + i * out->strides[1] + h * dvh;
        const float *ot = oT + (b * Sr + i) * Dv + h * dvh;
        if (la == kNegInf) {
          std::copy(ot, ot + dvh, o);
          la = lt;
          continue;
        }
        const float m = std::max(la, lt);
        const float wa = std::exp(la - m), wt = std::exp(lt - m);
        const float inv = 1.f / (wa + wt);
        for (int64_t c = 0; c < dvh; ++c)
          o[c] = (o[c] * wa + ot[c] * wt) * inv;
        la = m + std::log(wa + wt);
      }
}

} // namespace

int ringForward(mgrt_comm_group *group, const Layout &l, mgrt_memref_f32_3 *out,
                mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
                mgrt_memref_i8_4 *mask, int64_t numHeads, float scale,
                int64_t flags, float *lse, const SpatialBias *spatial) {
  const int64_t B = q->sizes[0], Sr = q->sizes[1], D = k->sizes[2],
                Dv = v->sizes[2], H = numHeads;
  const int C = l.size, r = l.rank, next = (r + 1) % C, prev = (r + C - 1) % C;
  const bool hasBias = flags & MGRT_ATTENTION_BIAS;
  const bool hasMask = flags & MGRT_ATTENTION_MASK;

  // 1. Two block buffers [K (B n D) | V (B n Dv)]; the local block first.
  const size_t blockFloats = B * l.maxRows * (D + Dv);
  Buffer cur(blockFloats), nxt(C > 1 ? blockFloats : 0);
  packRows(k, cur.data());
  packRows(v, cur.data() + B * Sr * D);
  Buffer oT(C > 1 ? B * Sr * Dv : 0), lseT(C > 1 ? B * H * Sr : 0);
  std::fill(lse, lse + B * H * Sr, kNegInf);
  zero3(out);

  // 2. C steps: attend to the held block while the next one arrives.
  for (int t = 0; t < C; ++t) {
    const int src = (r - t + 2 * C) % C;
    const int64_t n = l.rows[src];
    auto compute = [&, t, src, n] {
      if (n == 0 || Sr == 0)
        return;
      mgrt_memref_f32_3 kb = desc3(cur.data(), B, n, D),
                        vb = desc3(cur.data() + B * n * D, B, n, Dv);
      mgrt_memref_f32_4 bs{};
      mgrt_memref_i8_4 ms{};
      if (hasBias)
        bs = keySlice(bias, l.first[src], n);
      if (hasMask)
        ms = keySlice(mask, l.first[src], n);
      SpatialBias sp;
      if (spatial)
        sp = keyColumns(*spatial, l.first[src]);
      if (t == 0) {
        attentionForward(out, q, &kb, &vb, hasBias ? &bs : nullptr,
                         hasMask ? &ms : nullptr, H, scale, flags, lse,
                         spatial ? &sp : nullptr);
        return;
      }
      mgrt_memref_f32_3 od = desc3(oT.data(), B, Sr, Dv);
      attentionForward(&od, q, &kb, &vb, hasBias ? &bs : nullptr,
                       hasMask ? &ms : nullptr, H, scale, flags, lseT.data(),
                       spatial ? &sp : nullptr);
      mergePartial(out, lse, oT.data(), lseT.data(), H);
    };
    if (t + 1 == C) {
      compute();
      break;
    }
    const int64_t nNext = l.rows[(r - t - 1 + 2 * C) % C];
    const int rc = overlapped(compute, [&] {
      return mgrt_comm_sendrecv(group, cur.data(), B * n * (D + Dv), next,
                                nxt.data(), B * nNext * (D + Dv), prev,
                                MGRT_F32, kTagKV);
    });
    if (rc)
      return rc;
    std::swap(cur, nxt);
  }
  return MGRT_OK;
}

int ringBackward(mgrt_comm_group *group, const Layout &l, mgrt_memref_f32_3 *dq,
                 mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
                 mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout,
                 mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                 mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
                 mgrt_memref_i8_4 *mask, int64_t numHeads, float scale,
                 int64_t flags, const SpatialBias *spatial,
                 mgrt_memref_f32_2 *dtable) {
  const int64_t B = q->sizes[0], Sr = q->sizes[1], D = k->sizes[2],
                Dv = v->sizes[2], H = numHeads, dvh = Dv / H;
  const int C = l.size, r = l.rank, next = (r + 1) % C, prev = (r + C - 1) % C;
  const bool hasBias = flags & MGRT_ATTENTION_BIAS;
  const bool hasMask = flags & MGRT_ATTENTION_MASK;
  const bool wantDBias = flags & MGRT_ATTENTION_DBIAS;

  // 1. Row statistics over all keys: L from a forward ring, D = dO . O.
  Buffer lse(B * H * Sr), dvec(B * H * Sr);
  {
    Buffer o(B * Sr * Dv);
    mgrt_memref_f32_3 od = desc3(o.data(), B, Sr, Dv);
    if (int rc = ringForward(group, l, &od, q, k, v, bias, mask, H, scale,
                             flags & ~int64_t(MGRT_ATTENTION_DBIAS), lse.data(),
                             spatial))
      return rc;
    const float *g = dout->aligned + dout->offset;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Sr; ++i) {
          const float *gr =
              g + b * dout->strides[0] + i * dout->strides[1] + h * dvh;
          const float *orow = o.data() + (b * Sr + i) * Dv + h * dvh;
          float acc = 0.f;
          for (int64_t c = 0; c < dvh; ++c)
            acc += gr[c * dout->strides[2]] * orow[c];
          dvec.data()[(b * H + h) * Sr + i] = acc;
        }
  }

  // 2. Two block buffers [K | V | dK | dV] (B n (D + Dv) floats per half);
  //    the local block with a zero accumulator first. Every step adds.
  const size_t blockFloats = 2 * B * l.maxRows * (D + Dv);
  Buffer cur(blockFloats), nxt(C > 1 ? blockFloats : 0);
  packRows(k, cur.data());
  packRows(v, cur.data() + B * Sr * D);
  std::fill(cur.data() + B * Sr * (D + Dv), cur.data() + 2 * B * Sr * (D + Dv),
            0.f);
  zero3(dq);
  if (wantDBias)
    zero4(dbias);
  if (spatial)
    zero2(dtable);

  // 3. C steps; K / V move during a step, dK / dV after it.
  for (int t = 0; t < C; ++t) {
    const int src = (r - t + 2 * C) % C;
    const int64_t n = l.rows[src], half = B * n * (D + Dv);
    auto compute = [&, src, n, half] {
      if (n == 0 || Sr == 0)
        return;
      float *blk = cur.data();
      mgrt_memref_f32_3 kb = desc3(blk, B, n, D),
                        vb = desc3(blk + B * n * D, B, n, Dv),
                        dkb = desc3(blk + half, B, n, D),
                        dvb = desc3(blk + half + B * n * D, B, n, Dv);
      mgrt_memref_f32_4 bs{}, dbs{};
      mgrt_memref_i8_4 ms{};
      if (hasBias)
        bs = keySlice(bias, l.first[src], n);
      if (hasMask)
        ms = keySlice(mask, l.first[src], n);
      if (wantDBias)
        dbs = keySlice(dbias, l.first[src], n);
      SpatialBias sp;
      if (spatial)
        sp = keyColumns(*spatial, l.first[src]);
      attentionBackward(dq, &dkb, &dvb, wantDBias ? &dbs : nullptr, dout, q,
                        &kb, &vb, hasBias ? &bs : nullptr,
                        hasMask ? &ms : nullptr, H, scale, flags, lse.data(),
                        dvec.data(), /*accumulate=*/true,
                        spatial ? &sp : nullptr, spatial ? dtable : nullptr);
    };
    if (C == 1) {
      compute();
      break;
    }
    // The block after this one: the next step's, or (after the last step)
    // this rank's own, coming home with its accumulator.
    const int64_t nNext = l.rows[(r - t - 1 + 2 * C) % C],
                  halfNext = B * nNext * (D + Dv);
    int rc;
    if (t + 1 < C) {
      rc = overlapped(compute, [&] {
        return mgrt_comm_sendrecv(group, cur.data(), half, next, nxt.data(),
                                  halfNext, prev, MGRT_F32, kTagKV);
      });
    } else {
      compute();
      rc = MGRT_OK;
    }
    if (!rc)
      rc = mgrt_comm_sendrecv(group, cur.data() + half, half, next,
                              nxt.data() + halfNext, halfNext, prev, MGRT_F32,
                              kTagGrad);
    if (rc)
      return rc;
    std::swap(cur, nxt);
  }

  // 4. The local block's accumulators are home.
  const int64_t half = B * Sr * (D + Dv);
  unpackRows(cur.data() + half, dk);
  unpackRows(cur.data() + half + B * Sr * D, dv);
  return MGRT_OK;
}

} // namespace mgrt::cp
