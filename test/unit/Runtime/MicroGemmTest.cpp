//===- MicroGemmTest.cpp - Every micro GEMM implementation vs naive -------===//
//
// White-box: the attention kernel only runs the best implementation for the
// CPU, so the others are checked here directly (those the CPU can run).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "kernels/MicroGemm.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace mgrt_test;

namespace {

TEST(MicroGemm, EveryImplementationMatchesNaive) {
  int tested = 0;
  for (const char *name : {"avx512", "avx2", "generic"}) {
    mgrt::MicroGemmFn gemm = mgrt::microGemmFor(name);
    if (!gemm) {
      std::printf("note: micro GEMM '%s' not tested: this CPU lacks its "
                  "instructions\n",
                  name);
      continue;
    }
    ++tested;
    for (bool accumulate : {false, true})
      for (int64_t vectors : {1, 3, 4, 5, 9})
        for (int64_t K : {0, 1, 7, 64}) {
          const int64_t M = 2 * mgrt::kTileRows, lda = K + 3,
                        ldb = 16 * vectors + 16, ldc = 16 * vectors + 32;
          std::vector<float> a = randomFloats(M * lda, 1);
          std::vector<float> b = randomFloats(std::max<int64_t>(K, 1) * ldb, 2);
          std::vector<float> c = randomFloats(M * ldc, 3), want = c;
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < 16 * vectors; ++j) {
              double s = accumulate ? c[i * ldc + j] : 0.0;
              for (int64_t k = 0; k < K; ++k)
                s += (double)a[i * lda + k] * b[k * ldb + j];
              want[i * ldc + j] = (float)s;
            }
          gemm(accumulate, M, vectors, K, a.data(), lda, b.data(), ldb,
               c.data(), ldc);
          EXPECT_LE(maxAbsDiff(c, want), 1e-4f)
              << name << " accumulate=" << accumulate << " vectors=" << vectors
              << " K=" << K;
        }
  }
  EXPECT_GE(tested, 1); // generic always runs
}

TEST(MicroGemm, BestIsChosen) {
  EXPECT_NE(mgrt::microGemm(), nullptr);
  EXPECT_EQ(mgrt::microGemm(), mgrt::microGemmFor(mgrt::microGemmName()));
}

} // namespace
