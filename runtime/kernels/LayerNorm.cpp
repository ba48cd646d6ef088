//===- LayerNorm.cpp - Row-wise layer normalization -----------------------===//
//
// out = (x - mean) / sqrt(var + eps) * gamma + beta per row of x [R,C], with
// the biased variance computed in a second pass over the (cached) row, which
// is more accurate than E[x^2] - E[x]^2. Rows are spread over the pool.
// Strided rows and gamma / beta are copied to contiguous scratch first.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "kernels/VectorMath.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_LAYER_NORM;

/// Normalizes one contiguous row of C floats from x into y (may alias).
MGRT_INLINE void normalizeRowBody(const float *x, float *y, int64_t C,
                                  const float *gamma, const float *beta,
                                  float epsilon) {
  const int64_t full = C / kLanes * kLanes;
  VFloat vs = splat(0.f);
  for (int64_t c = 0; c < full; c += kLanes)
    vs += load(x + c);
  float sum = reduceSum(vs);
  for (int64_t c = full; c < C; ++c)
    sum += x[c];
  const float mean = sum / static_cast<float>(C);

  VFloat vq = splat(0.f);
  const VFloat vmean = splat(mean);
  for (int64_t c = 0; c < full; c += kLanes) {
    VFloat d = load(x + c) - vmean;
    vq += d * d;
  }
  float sq = reduceSum(vq);
  for (int64_t c = full; c < C; ++c)
    sq += (x[c] - mean) * (x[c] - mean);
  const float inv = 1.f / std::sqrt(sq / static_cast<float>(C) + epsilon);

  const VFloat vinv = splat(inv);
  for (int64_t c = 0; c < full; c += kLanes) {
    VFloat r = (load(x + c) - vmean) * vinv * load(gamma + c);
    if (beta)
      r += load(beta + c);
    store(y + c, r);
  }
  for (int64_t c = full; c < C; ++c)
    y[c] = (x[c] - mean) * inv * gamma[c] + (beta ? beta[c] : 0.f);
}

MGRT_SIMD_DISPATCH(normalizeRow,
                   (const float *x, float *y, int64_t C, const float *gamma,
                    const float *beta, float epsilon),
                   (x, y, C, gamma, beta, epsilon))

/// A contiguous copy of a strided vector of C floats.
std::vector<float> gather(const mgrt_memref_f32_1 *m, int64_t C) {
  std::vector<float> v(C);
  for (int64_t c = 0; c < C; ++c)
    v[c] = m->aligned[m->offset + c * m->strides[0]];
  return v;
}

} // namespace
} // namespace mgrt

using namespace mgrt;

extern "C" void _mlir_ciface_mgrt_layer_norm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *x, mgrt_memref_f32_1 *gamma,
    mgrt_memref_f32_1 *beta, float epsilon, int64_t hasBeta) {
  MGRT_CHECK(out && x && gamma && (beta || !hasBeta), kName,
             "null operand descriptor");
  const int64_t R = x->sizes[0], C = x->sizes[1];
  MGRT_CHECK(out->sizes[0] == R && out->sizes[1] == C && gamma->sizes[0] == C &&
                 (!hasBeta || beta->sizes[0] == C),
             kName,
             "shape mismatch: x [%lld,%lld] out [%lld,%lld] gamma [%lld]",
             (long long)R, (long long)C, (long long)out->sizes[0],
             (long long)out->sizes[1], (long long)gamma->sizes[0]);
  if (R == 0 || C == 0)
    return;

  std::vector<float> gammaCopy, betaCopy;
  const float *g = gamma->aligned + gamma->offset;
  if (gamma->strides[0] != 1)
    gammaCopy = gather(gamma, C), g = gammaCopy.data();
  const float *bt = nullptr;
  if (hasBeta) {
    bt = beta->aligned + beta->offset;
    if (beta->strides[0] != 1)
      betaCopy = gather(beta, C), bt = betaCopy.data();
  }

  const float *xBase = x->aligned + x->offset;
  float *oBase = out->aligned + out->offset;
  const bool dense = x->strides[1] == 1 && out->strides[1] == 1;
  std::vector<std::vector<float>> rowScratch(dense ? 0 : numThreads(),
                                             std::vector<float>(C));
  // About 64K elements per task keeps the pool overhead negligible.
  const int64_t rowsPerTask = std::max<int64_t>(1, 65536 / C);
  const int64_t tasks = (R + rowsPerTask - 1) / rowsPerTask;
  parallelFor(tasks, [&](int64_t task, int worker) {
    const int64_t r1 = std::min(R, (task + 1) * rowsPerTask);
    for (int64_t r = task * rowsPerTask; r < r1; ++r) {
      const float *xr = xBase + r * x->strides[0];
      float *yr = oBase + r * out->strides[0];
      if (dense) {
        normalizeRow(xr, yr, C, g, bt, epsilon);
        continue;
      }
      float *tmp = rowScratch[worker].data();
      for (int64_t c = 0; c < C; ++c)
        tmp[c] = xr[c * x->strides[1]];
      normalizeRow(tmp, tmp, C, g, bt, epsilon);
      for (int64_t c = 0; c < C; ++c)
        yr[c * out->strides[1]] = tmp[c];
    }
  });
}
