//===- MatMulTest.cpp - mgrt_matmul_f32 vs a naive reference --------------===//

#include "RuntimeTestUtil.h"

#include "kernels/MatMul.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace mgrt_test;

namespace {

/// out[g] = a[g] @ b[g or 0] in double; a, b dense row-major.
std::vector<float> naiveMatMul(const std::vector<float> &a,
                               const std::vector<float> &b, int64_t G,
                               int64_t Gb, int64_t M, int64_t K, int64_t N) {
  std::vector<float> out(G * M * N);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += (double)a[(g * M + i) * K + k] *
               b[((Gb == 1 ? 0 : g) * K + k) * N + j];
        out[(g * M + i) * N + j] = (float)s;
      }
  return out;
}

struct Dims {
  int64_t G, Gb, M, K, N;
};

const mgrt::GemmBackend kBackends[] = {mgrt::GemmBackend::Blas,
                                       mgrt::GemmBackend::Native};

const Dims kShapes[] = {
    {1, 1, 1, 1, 1},      {3, 3, 7, 5, 9},       {4, 1, 33, 17, 65},
    {1, 1, 300, 64, 130}, {2, 2, 1, 128, 3},     {5, 1, 64, 1, 8},
    {2, 2, 3, 0, 4},      {1, 1, 250, 300, 600}, // several row blocks, K slices
                                                 // and N panels
};

/// One test per backend (shapes grouped to keep the CTest process count low).
class MatMulTest : public ::testing::TestWithParam<mgrt::GemmBackend> {};

TEST_P(MatMulTest, Shapes) {
  for (const Dims &d : kShapes) {
    SCOPED_TRACE(testing::Message() << "G=" << d.G << " Gb=" << d.Gb << " M="
                                    << d.M << " K=" << d.K << " N=" << d.N);
    std::vector<float> a = randomFloats(d.G * d.M * d.K, 1);
    std::vector<float> b = randomFloats(d.Gb * d.K * d.N, 2);
    std::vector<float> out(d.G * d.M * d.N, -5.f);
    auto ad = memref<mgrt_memref_f32_3>(a.data(), {d.G, d.M, d.K});
    auto bd = memref<mgrt_memref_f32_3>(b.data(), {d.Gb, d.K, d.N});
    auto od = memref<mgrt_memref_f32_3>(out.data(), {d.G, d.M, d.N});
    mgrt::matmul(&od, &ad, &bd, GetParam());
    EXPECT_LE(maxAbsDiff(out, naiveMatMul(a, b, d.G, d.Gb, d.M, d.K, d.N)),
              2e-4f);
  }
}

TEST(MatMul, DefaultBackend) {
  // Native exactly when OpenBLAS runs kernels older than the CPU, unless
  // MEGAGRAPH_GEMM says otherwise; either way the ABI entry point works.
  const char *name = mgrt::gemmBackendName(mgrt::defaultGemmBackend());
  EXPECT_TRUE(std::string(name) == "blas" || std::string(name) == "native");
  std::vector<float> a = randomFloats(6, 1), b = randomFloats(6, 2), out(4);
  auto ad = memref<mgrt_memref_f32_3>(a.data(), {1, 2, 3});
  auto bd = memref<mgrt_memref_f32_3>(b.data(), {1, 3, 2});
  auto od = memref<mgrt_memref_f32_3>(out.data(), {1, 2, 2});
  _mlir_ciface_mgrt_matmul_f32(&od, &ad, &bd);
  EXPECT_LE(maxAbsDiff(out, naiveMatMul(a, b, 1, 1, 2, 3, 2)), 1e-5f);
}

TEST_P(MatMulTest, StridedViews) {
  {
    // a as a transposed view (stride pattern [., 1, M]); b as every other
    // column of a wider buffer (innermost stride 2).
    const int64_t G = 2, M = 19, K = 23, N = 11;
    std::vector<float> a = randomFloats(G * M * K, 3);
    std::vector<float> b = randomFloats(G * K * N, 4);
    std::vector<float> aT(G * K * M), bWide(G * K * N * 2, 99.f);
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
          aT[(g * K + k) * M + i] = a[(g * M + i) * K + k];
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j)
          bWide[((g * K + k) * N + j) * 2] = b[(g * K + k) * N + j];
    }
    std::vector<float> out(G * M * N);
    auto ad = memref<mgrt_memref_f32_3>(aT.data(), {G, M, K}, {K * M, 1, M});
    auto bd = memref<mgrt_memref_f32_3>(bWide.data(), {G, K, N},
                                        {K * N * 2, N * 2, 2});
    auto od = memref<mgrt_memref_f32_3>(out.data(), {G, M, N});
    const size_t before = mgrt_current_bytes();
    mgrt::matmul(&od, &ad, &bd, GetParam());
    EXPECT_EQ(mgrt_current_bytes(), before); // copies and scratch released
    EXPECT_LE(maxAbsDiff(out, naiveMatMul(a, b, G, G, M, K, N)), 1e-4f);
  }
  {
    // out as a window of a wider buffer: offset 3, row stride N + 4.
    const int64_t M = 40, K = 8, N = 6;
    std::vector<float> a = randomFloats(M * K, 5), b = randomFloats(K * N, 6);
    std::vector<float> buf(3 + M * (N + 4), 42.f);
    auto ad = memref<mgrt_memref_f32_3>(a.data(), {1, M, K});
    auto bd = memref<mgrt_memref_f32_3>(b.data(), {1, K, N});
    auto od = memref<mgrt_memref_f32_3>(buf.data(), {1, M, N},
                                        {M * (N + 4), N + 4, 1}, 3);
    mgrt::matmul(&od, &ad, &bd, GetParam());
    std::vector<float> ref = naiveMatMul(a, b, 1, 1, M, K, N), got;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        got.push_back(buf[3 + i * (N + 4) + j]);
    EXPECT_LE(maxAbsDiff(got, ref), 1e-4f);
    EXPECT_EQ(buf[0], 42.f);     // before the offset: untouched
    EXPECT_EQ(buf[3 + N], 42.f); // row padding: untouched
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MatMulTest, ::testing::ValuesIn(kBackends),
                         [](const auto &info) {
                           return std::string(
                               mgrt::gemmBackendName(info.param));
                         });

} // namespace
