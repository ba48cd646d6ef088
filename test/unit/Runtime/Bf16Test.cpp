//===- Bf16Test.cpp - The BF16 kernels of --precision bf16 ----------------===//
//
// Rounding to bfloat16 (ties to even, NaN and infinities kept) in scalar
// code and with AVX-512 BF16 (bit for bit the same off denormals), and the
// BF16 GEMM: exactly the float32 GEMM of the rounded operands, and not the
// float32 GEMM of the operands themselves.
//
//===----------------------------------------------------------------------===//

#include "kernels/Bf16.h"

#include "RuntimeTestUtil.h"
#include "megagraph/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace mgrt_test;

namespace {

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float scalar(float x) {
  float y;
  mgrt::roundBf16Scalar(&x, &y, 1);
  return y;
}

TEST(Bf16, RoundsToNearestEven) {
  const float ulp = std::ldexp(1.f, -7); // of bfloat16 values in [1, 2)
  EXPECT_EQ(scalar(1.f), 1.f);
  EXPECT_EQ(scalar(1.f + ulp), 1.f + ulp);
  EXPECT_EQ(scalar(1.f + 0.5f * ulp), 1.f);             // tie: to even
  EXPECT_EQ(scalar(1.f + 1.5f * ulp), 1.f + 2.f * ulp); // tie: to even
  EXPECT_EQ(scalar(1.f + 0.51f * ulp), 1.f + ulp);      // above the tie
  EXPECT_EQ(scalar(-1.f - 0.49f * ulp), -1.f);          // below the tie
  EXPECT_EQ(scalar(3.14159265f), 3.140625f);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(scalar(inf), inf);
  EXPECT_EQ(scalar(-inf), -inf);
  EXPECT_TRUE(std::isnan(scalar(std::nanf(""))));
  EXPECT_EQ(scalar(std::numeric_limits<float>::max()), inf); // overflows
  EXPECT_EQ(mgrt_round_bf16(1.f + 0.5f * ulp), 1.f);
}

TEST(Bf16, Avx512MatchesScalar) {
  std::vector<float> x = randomFloats(10007, 3, -1000, 1000);
  for (size_t i = 0; i < x.size(); i += 7)
    x[i] = std::ldexp(1.f + 0.5f * std::ldexp(1.f, -7), int(i % 40) - 20);
  std::vector<float> s(x.size()), v(x.size());
  mgrt::roundBf16Scalar(x.data(), s.data(), (int64_t)x.size());
  if (!mgrt::roundBf16Avx512(x.data(), v.data(), (int64_t)x.size()))
    GTEST_SKIP() << "no AVX-512 BF16 on this CPU";
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bits(v[i]), bits(s[i])) << "element " << i << " = " << x[i];
}

TEST(Bf16, MatmulIsTheFloat32MatmulOfRoundedOperands) {
  const int64_t G = 2, M = 17, K = 300, N = 9;
  std::vector<float> a = randomFloats(G * M * K, 5),
                     b = randomFloats(G * K * N, 6), ra(a.size()), rb(b.size()),
                     got(G * M * N), want(got.size()), fp32(got.size());
  mgrt::roundBf16Scalar(a.data(), ra.data(), (int64_t)a.size());
  mgrt::roundBf16Scalar(b.data(), rb.data(), (int64_t)b.size());
  auto m3 = [](float *p, int64_t d0, int64_t d1, int64_t d2) {
    return memref<mgrt_memref_f32_3>(p, {d0, d1, d2});
  };
  auto da = m3(a.data(), G, M, K), db = m3(b.data(), G, K, N),
       dra = m3(ra.data(), G, M, K), drb = m3(rb.data(), G, K, N),
       dgot = m3(got.data(), G, M, N), dwant = m3(want.data(), G, M, N),
       dfp = m3(fp32.data(), G, M, N);
  _mlir_ciface_mgrt_matmul_bf16_f32(&dgot, &da, &db);
  _mlir_ciface_mgrt_matmul_f32(&dwant, &dra, &drb);
  _mlir_ciface_mgrt_matmul_f32(&dfp, &da, &db);
  EXPECT_EQ(maxAbsDiff(got, want), 0.f);
  EXPECT_GT(maxAbsDiff(got, fp32), 1e-3f) << "the operands were not rounded";
}

} // namespace
