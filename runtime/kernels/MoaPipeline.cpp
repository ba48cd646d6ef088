//===- MoaPipeline.cpp - Shared parts of the MoA pipelines ----------------===//
//
// See MoaPipeline.h.
//
//===----------------------------------------------------------------------===//

#include "kernels/MoaPipeline.h"

#include <algorithm>
#include <cstdlib>

namespace mgrt {

int moaSpmmThreads(int threads, double spmmWork, double gemmWork) {
  if (threads <= 1)
    return threads;
  if (const char *env = std::getenv("MEGAGRAPH_MOA_SPMM_THREADS")) {
    const int v = std::atoi(env);
    if (v >= 1)
      return std::min(v, threads - 1);
  }
  const double s = 4.0 * spmmWork, total = s + gemmWork;
  int t = total > 0 ? static_cast<int>(threads * s / total + 0.5) : 1;
  return std::clamp(t, 1, threads - 1);
}

void moaGemmRows(const float *a, int64_t aStride, int64_t aColStride,
                 const mgrt_memref_f32_2 *weight, const float *bias,
                 int64_t biasStride, const float *scale, int64_t scaleStride,
                 float *out, int64_t outStride, int64_t r0, int64_t r1,
                 GemmBackend backend) {
  const int64_t rows = r1 - r0, D = weight->sizes[0], F = weight->sizes[1];
  float *aData = const_cast<float *>(a); // read only
  mgrt_memref_f32_3 a3{aData,
                       aData,
                       r0 * aStride,
                       {1, rows, D},
                       {rows * aStride, aStride, aColStride}};
  mgrt_memref_f32_3 w3{
      weight->allocated,
      weight->aligned,
      weight->offset,
      {1, D, F},
      {D * weight->strides[0], weight->strides[0], weight->strides[1]}};
  mgrt_memref_f32_3 o3{
      out, out, r0 * outStride, {1, rows, F}, {rows * outStride, outStride, 1}};
  // One GEMM over the block's rows (run inline: nested in a pool task), as
  // mgrt_matmul_f32 runs one over each of its own row blocks: where the
  // blocks coincide, the rows come out bit for bit the same.
  matmul(&o3, &a3, &w3, backend, /*wholeRows=*/true);
  for (int64_t r = r0; r < r1; ++r) {
    float *row = out + r * outStride;
    if (bias)
      for (int64_t f = 0; f < F; ++f)
        row[f] += bias[f * biasStride];
    if (scale) {
      const float s = scale[r * scaleStride];
      for (int64_t f = 0; f < F; ++f)
        row[f] *= s;
    }
  }
}

MoaRowOrder moaRowsByLargestColumn(const CsrView &graph, int64_t chunks,
                                   int64_t ready) {
  const int64_t N = graph.rows, M = ready < 0 ? graph.cols : ready;
  constexpr int64_t kDeferred = -1;
  std::vector<int64_t> level(N, 0);
  MoaRowOrder order;
  order.begin.assign(chunks + 1, 0);
  for (int64_t i = 0; i < N; ++i) {
    int64_t largest = -1;
    for (int64_t e = graph.rowBegin(i), e1 = graph.rowEnd(i); e < e1; ++e)
      largest = std::max(largest, graph.col(e, i)); // checks the range
    if (largest >= M) {
      level[i] = kDeferred;
      order.deferred.push_back(i);
      continue;
    }
    level[i] = largest < 0 ? 0 : moaChunkOf(largest, M, chunks);
    ++order.begin[level[i] + 1];
  }
  for (int64_t k = 0; k < chunks; ++k)
    order.begin[k + 1] += order.begin[k];
  order.rows.resize(order.begin[chunks]);
  std::vector<int64_t> next(order.begin.begin(), order.begin.end() - 1);
  for (int64_t i = 0; i < N; ++i)
    if (level[i] != kDeferred)
      order.rows[next[level[i]]++] = i;
  return order;
}

} // namespace mgrt
