//===- SparseAttention.cpp - Multi-head attention over CSR edges ----------===//
//
// _mlir_ciface_mgrt_sparse_attention_f32: for every row i of the graph and
// head h, attention of q_h[i] over the keys / values of i's neighbours j
// (SDDMM, edge softmax and SpMM fused). The edges of a row are walked in
// chunks of kChunk with a running max m and sum l per head (online softmax):
//   s   = scale q_h[i].k_h[j] (+ edge_bias[e,h])      for the chunk's edges
//   m'  = max(m, max s); p = exp(s - m'); l = l e^(m-m') + sum p
//   out_h[i] = out_h[i] e^(m-m') + sum p v_h[j]
// then out_h[i] /= l, or 0 when the row kept nothing. The accumulator is the
// output row itself; scratch is H x kChunk scores per thread, never a score
// per edge. Tasks are blocks of rows handed out dynamically by the pool.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/Csr.h"
#include "kernels/VectorMath.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_SPARSE_ATTENTION;
constexpr int64_t kChunk = 32; // edges scored at a time, a multiple of kLanes

struct SparseAttentionProblem {
  CsrView graph;
  const float *q, *k, *v;
  int64_t qStride, kStride, vStride; // row strides
  float *out;
  int64_t oStride;
  const float *bias; // [E,H] or null
  int64_t biasStride[2];
  int64_t H, dh, dvh;
  float scale;
};

MGRT_INLINE float dot(const float *__restrict a, const float *__restrict b,
                      int64_t n) {
  const int64_t full = n / kLanes * kLanes;
  float sum = 0.f;
  if (full) {
    VFloat acc = splat(0.f);
    for (int64_t d = 0; d < full; d += kLanes)
      acc += load(a + d) * load(b + d);
    sum = reduceSum(acc);
  }
  for (int64_t d = full; d < n; ++d)
    sum += a[d] * b[d];
  return sum;
}

/// Rows [r0, r1); `scratch` holds H x kChunk scores, then m[H] and l[H].
MGRT_INLINE void attendRowsBody(const SparseAttentionProblem *p, float *scratch,
                                int64_t r0, int64_t r1) {
  const int64_t H = p->H, dh = p->dh, dvh = p->dvh, Dv = H * dvh;
  float *s = scratch, *m = scratch + kChunk * H, *l = m + H;
  int64_t cols[kChunk];
  for (int64_t i = r0; i < r1; ++i) {
    float *__restrict o = p->out + i * p->oStride;
    const float *qi = p->q + i * p->qStride;
    std::fill(o, o + Dv, 0.f);
    std::fill(m, m + H, kNegInf);
    std::fill(l, l + H, 0.f);
    const int64_t end = p->graph.rowEnd(i);
    for (int64_t e0 = p->graph.rowBegin(i); e0 < end; e0 += kChunk) {
      const int64_t n = std::min(kChunk, end - e0);
      // 1. Scores of the chunk, [H, kChunk]; lanes past n are -inf.
      for (int64_t c = 0; c < n; ++c) {
        const int64_t e = e0 + c;
        cols[c] = p->graph.col(e, i);
        const float *kj = p->k + cols[c] * p->kStride;
        for (int64_t h = 0; h < H; ++h)
          s[h * kChunk + c] = p->scale * dot(qi + h * dh, kj + h * dh, dh);
        if (p->bias)
          for (int64_t h = 0; h < H; ++h)
            s[h * kChunk + c] +=
                p->bias[e * p->biasStride[0] + h * p->biasStride[1]];
      }
      const int64_t nPad = (n + kLanes - 1) / kLanes * kLanes;
      // 2. Online softmax per head: scores become probabilities.
      for (int64_t h = 0; h < H; ++h) {
        float *sh = s + h * kChunk;
        for (int64_t c = n; c < nPad; ++c)
          sh[c] = kNegInf;
        VFloat vm = splat(kNegInf);
        for (int64_t c = 0; c < nPad; c += kLanes)
          vm = vmax(vm, load(sh + c));
        const float mNew = std::max(m[h], reduceMax(vm));
        if (mNew == kNegInf) { // nothing kept by this head so far
          for (int64_t c = 0; c < nPad; ++c)
            sh[c] = 0.f;
          continue;
        }
        if (mNew > m[h] && m[h] != kNegInf) {
          const float alpha = std::exp(m[h] - mNew);
          l[h] *= alpha;
          float *oh = o + h * dvh;
          for (int64_t d = 0; d < dvh; ++d)
            oh[d] *= alpha;
        }
        m[h] = mNew;
        VFloat vsum = splat(0.f);
        const VFloat vmNew = splat(mNew);
        for (int64_t c = 0; c < nPad; c += kLanes) {
          const VFloat pc = vexp(load(sh + c) - vmNew);
          store(sh + c, pc);
          vsum += pc;
        }
        l[h] += reduceSum(vsum);
      }
      // 3. Accumulate p v_h[j].
      for (int64_t c = 0; c < n; ++c) {
        const float *vj = p->v + cols[c] * p->vStride;
        for (int64_t h = 0; h < H; ++h) {
          const float w = s[h * kChunk + c];
          if (w == 0.f)
            continue;
          float *__restrict oh = o + h * dvh;
          const float *__restrict vh = vj + h * dvh;
          for (int64_t d = 0; d < dvh; ++d)
            oh[d] += w * vh[d];
        }
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      const float inv = l[h] > 0.f ? 1.f / l[h] : 0.f;
      float *oh = o + h * dvh;
      for (int64_t d = 0; d < dvh; ++d)
        oh[d] *= inv;
    }
  }
}

MGRT_SIMD_DISPATCH(attendRows,
                   (const SparseAttentionProblem *p, float *scratch, int64_t r0,
                    int64_t r1),
                   (p, scratch, r0, r1))

} // namespace
} // namespace mgrt

using namespace mgrt;

extern "C" void _mlir_ciface_mgrt_sparse_attention_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *q, mgrt_memref_f32_2 *k,
    mgrt_memref_f32_2 *v, mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
    mgrt_memref_f32_2 *edgeBias, int64_t numHeads, float scale, int64_t flags) {
  MGRT_CHECK(out && q && k && v && rowPtr && colIdx, kName,
             "null operand descriptor");
  const bool hasBias = flags & MGRT_SPARSE_ATTENTION_EDGE_BIAS;
  MGRT_CHECK(!hasBias || edgeBias, kName,
             "edge_bias flag set but edge_bias is null");
  const int64_t N = q->sizes[0], D = q->sizes[1], M = k->sizes[0];
  const int64_t Dv = v->sizes[1], H = numHeads;
  MGRT_CHECK(H > 0 && D % H == 0 && Dv % H == 0, kName,
             "%lld heads do not divide D=%lld and Dv=%lld", (long long)H,
             (long long)D, (long long)Dv);
  MGRT_CHECK(k->sizes[1] == D && v->sizes[0] == M && out->sizes[0] == N &&
                 out->sizes[1] == Dv,
             kName,
             "shape mismatch: q [%lld,%lld] k [%lld,%lld] v [%lld,%lld] "
             "out [%lld,%lld]",
             (long long)N, (long long)D, (long long)k->sizes[0],
             (long long)k->sizes[1], (long long)v->sizes[0],
             (long long)v->sizes[1], (long long)out->sizes[0],
             (long long)out->sizes[1]);
  MGRT_CHECK(q->strides[1] == 1 && k->strides[1] == 1 && v->strides[1] == 1 &&
                 out->strides[1] == 1,
             kName, "innermost strides of q, k, v, out must be 1");
  SparseAttentionProblem p{};
  p.graph = csrView(kName, rowPtr, colIdx, N, M);
  if (hasBias) {
    MGRT_CHECK(edgeBias->sizes[0] == p.graph.edges && edgeBias->sizes[1] == H,
               kName, "edge_bias is [%lld,%lld], expected [E,H] = [%lld,%lld]",
               (long long)edgeBias->sizes[0], (long long)edgeBias->sizes[1],
               (long long)p.graph.edges, (long long)H);
    p.bias = edgeBias->aligned + edgeBias->offset;
    p.biasStride[0] = edgeBias->strides[0];
    p.biasStride[1] = edgeBias->strides[1];
  }
  p.q = q->aligned + q->offset, p.k = k->aligned + k->offset;
  p.v = v->aligned + v->offset, p.out = out->aligned + out->offset;
  p.qStride = q->strides[0], p.kStride = k->strides[0];
  p.vStride = v->strides[0], p.oStride = out->strides[0];
  p.H = H, p.dh = D / H, p.dvh = Dv / H, p.scale = scale;
  if (N == 0 || Dv == 0)
    return;

  const int threads = numThreads();
  std::vector<std::vector<float>> scratch(threads,
                                          std::vector<float>((kChunk + 2) * H));
  const int64_t rowsPerTask = csrRowsPerTask(p.graph, D + Dv);
  const int64_t tasks = (N + rowsPerTask - 1) / rowsPerTask;
  parallelFor(tasks, [&](int64_t task, int worker) {
    attendRows(&p, scratch[worker].data(), task * rowsPerTask,
               std::min(N, (task + 1) * rowsPerTask));
  });
}
