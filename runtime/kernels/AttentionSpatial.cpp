//===- AttentionSpatial.cpp - Attention with the spatial bias in place ----===//
//
// _mlir_ciface_mgrt_attention_spatial_f32 and its backward: the attention
// kernels of Attention.cpp and AttentionBackward.cpp given Graphormer's
// spatial encoding as its int16 distances and [V,H] table instead of a
// [B,H,Sq,Sk] bias (SpatialBias.h). This file checks the two operands,
// transposes the table per head and picks the statistics the backward
// starts from; the score blocks read the table themselves.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/AttentionInternal.h"
#include "support/Check.h"

#include <cstdlib>
#include <cstring>

using namespace mgrt;

SpatialBias mgrt::makeSpatialBias(const mgrt_memref_i16_3 *distance,
                                  const mgrt_memref_f32_2 *table, int64_t B,
                                  int64_t Sq, int64_t Sk, int64_t H,
                                  const char *kernel,
                                  std::vector<float> &tableT) {
  MGRT_CHECK(distance && table, kernel, "null spatial distance or table");
  const int64_t Db = distance->sizes[0];
  MGRT_CHECK((Db == B || Db == 1) && distance->sizes[1] == Sq &&
                 distance->sizes[2] == Sk,
             kernel,
             "distance is [%lld,%lld,%lld], expected [%lld|1,%lld,%lld]",
             (long long)Db, (long long)distance->sizes[1],
             (long long)distance->sizes[2], (long long)B, (long long)Sq,
             (long long)Sk);
  MGRT_CHECK(Sk <= 1 || distance->strides[2] == 1, kernel,
             "the innermost stride of distance must be 1");
  const int64_t V = table->sizes[0];
  MGRT_CHECK(V >= 1 && V <= 32768 && table->sizes[1] == H, kernel,
             "table is [%lld,%lld], expected [V,%lld] with 1 <= V <= 32768",
             (long long)V, (long long)table->sizes[1], (long long)H);
  SpatialBias view;
  view.dist = distance->aligned + distance->offset;
  view.distStride[0] = Db == 1 ? 0 : distance->strides[0];
  view.distStride[1] = distance->strides[1];
  view.V = V;
  view.ldT = SpatialBias::leading(V);
  tableT.assign(static_cast<size_t>(H * view.ldT), 0.f);
  const float *t = table->aligned + table->offset;
  for (int64_t v = 0; v < V; ++v)
    for (int64_t h = 0; h < H; ++h)
      tableT[h * view.ldT + v] =
          t[v * table->strides[0] + h * table->strides[1]];
  view.tableT = tableT.data();
  return view;
}

extern "C" void _mlir_ciface_mgrt_attention_spatial_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_i16_3 *distance,
    mgrt_memref_f32_2 *table, int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *name = MGRT_KERNEL_ATTENTION_SPATIAL;
  MGRT_CHECK(q && k, name, "null operand descriptor");
  const int64_t B = q->sizes[0], Sq = q->sizes[1], Sk = k->sizes[1];
  std::vector<float> tableT;
  const SpatialBias spatial =
      makeSpatialBias(distance, table, B, Sq, Sk, numHeads, name, tableT);
  float *lseOut = nullptr;
  if (flags & MGRT_ATTENTION_LSE) {
    MGRT_CHECK(lse, name, "lse flag set but lse is null");
    checkLseLayout(lse, B, numHeads, Sq, name);
    lseOut = lse->aligned + lse->offset;
  }
  attentionForward(out, q, k, v, bias, mask, numHeads, scale,
                   flags & (MGRT_ATTENTION_BIAS | MGRT_ATTENTION_MASK), lseOut,
                   &spatial);
}

extern "C" void _mlir_ciface_mgrt_attention_spatial_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table,
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, int64_t numHeads,
    float scale, int64_t flags) {
  constexpr const char *name = MGRT_KERNEL_ATTENTION_SPATIAL_BWD;
  MGRT_CHECK(q && k && dout && dtable, name, "null operand descriptor");
  const int64_t B = q->sizes[0], Sq = q->sizes[1], Sk = k->sizes[1];
  std::vector<float> tableT;
  const SpatialBias spatial =
      makeSpatialBias(distance, table, B, Sq, Sk, numHeads, name, tableT);
  const int64_t kernelFlags =
      flags &
      (MGRT_ATTENTION_BIAS | MGRT_ATTENTION_MASK | MGRT_ATTENTION_DBIAS);
  // The forward's statistics, unless absent or MEGAGRAPH_ATTENTION_BWD=
  // recompute asks for the statistics pass (A/B runs).
  const char *env = std::getenv("MEGAGRAPH_ATTENTION_BWD");
  const bool given = (flags & MGRT_ATTENTION_LSE) &&
                     !(env && std::strcmp(env, "recompute") == 0);
  if (!given)
    return attentionBackward(dq, dk, dv, dbias, dout, q, k, v, bias, mask,
                             numHeads, scale, kernelFlags, nullptr, nullptr,
                             false, &spatial, dtable);
  MGRT_CHECK(out && lse, name, "lse flag set but out or lse is null");
  std::vector<float> dvec = forwardRowStats(dout, out, lse, numHeads, name);
  attentionBackward(dq, dk, dv, dbias, dout, q, k, v, bias, mask, numHeads,
                    scale, kernelFlags, lse->aligned + lse->offset, dvec.data(),
                    false, &spatial, dtable);
}
