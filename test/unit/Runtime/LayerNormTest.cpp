//===- LayerNormTest.cpp - mgrt_layer_norm_f32 vs naive and LibTorch ------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

using namespace mgrt_test;

namespace {

std::vector<float> naiveLayerNorm(const std::vector<float> &x, int64_t R,
                                  int64_t C, const std::vector<float> &g,
                                  const std::vector<float> *b, float eps) {
  std::vector<float> out(R * C);
  for (int64_t r = 0; r < R; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < C; ++c)
      mean += x[r * C + c];
    mean /= C;
    for (int64_t c = 0; c < C; ++c)
      var += (x[r * C + c] - mean) * (x[r * C + c] - mean);
    var /= C;
    for (int64_t c = 0; c < C; ++c)
      out[r * C + c] =
          (float)((x[r * C + c] - mean) / std::sqrt(var + eps) * g[c] +
                  (b ? (*b)[c] : 0.0));
  }
  return out;
}

struct LnCase {
  int64_t R, C;
  bool hasBeta;
};

TEST(LayerNorm, MatchesNaiveAndTorch) {
  for (const LnCase p :
       {LnCase{1, 1, true}, LnCase{3, 7, false}, LnCase{64, 16, true},
        LnCase{300, 512, true}, LnCase{5000, 33, false}}) {
    SCOPED_TRACE(testing::Message()
                 << "R=" << p.R << " C=" << p.C << " beta=" << p.hasBeta);
    std::vector<float> x = randomFloats(p.R * p.C, 11, -3, 5);
    std::vector<float> g = randomFloats(p.C, 12), b = randomFloats(p.C, 13);
    std::vector<float> out(p.R * p.C);
    auto xd = memref<mgrt_memref_f32_2>(x.data(), {p.R, p.C});
    auto od = memref<mgrt_memref_f32_2>(out.data(), {p.R, p.C});
    auto gd = memref<mgrt_memref_f32_1>(g.data(), {p.C});
    auto bd = memref<mgrt_memref_f32_1>(b.data(), {p.C});
    const float eps = 1e-5f;
    _mlir_ciface_mgrt_layer_norm_f32(&od, &xd, &gd, p.hasBeta ? &bd : nullptr,
                                     eps, p.hasBeta);
    const std::vector<float> *beta = p.hasBeta ? &b : nullptr;
    EXPECT_LE(maxAbsDiff(out, naiveLayerNorm(x, p.R, p.C, g, beta, eps)),
              1e-4f);
    EXPECT_LE(maxAbsDiff(out, torchLayerNorm(x, p.R, p.C, g, beta, eps)),
              1e-4f);
  }
}

TEST(LayerNorm, StridedRowsAndGamma) {
  // x read as a transposed view, gamma with stride 2; in-place-free output.
  const int64_t R = 9, C = 20;
  std::vector<float> x = randomFloats(R * C, 21), xT(R * C);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      xT[c * R + r] = x[r * C + c];
  std::vector<float> g = randomFloats(C, 22), gWide(2 * C);
  for (int64_t c = 0; c < C; ++c)
    gWide[2 * c] = g[c];
  std::vector<float> out(R * C);
  auto xd = memref<mgrt_memref_f32_2>(xT.data(), {R, C}, {1, R});
  auto od = memref<mgrt_memref_f32_2>(out.data(), {R, C});
  auto gd = memref<mgrt_memref_f32_1>(gWide.data(), {C}, {2});
  _mlir_ciface_mgrt_layer_norm_f32(&od, &xd, &gd, nullptr, 1e-6f, 0);
  EXPECT_LE(maxAbsDiff(out, naiveLayerNorm(x, R, C, g, nullptr, 1e-6f)), 1e-4f);
}

} // namespace
