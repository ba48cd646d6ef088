//===- MoaSpmmLinearTest.cpp - mgrt_moa_spmm_linear_f32 ------------------===//
//
// The chunked aggregation + transform pipeline against the unchunked
// mgrt_spmm_f32 followed by a naive double GEMM: N not divisible by the
// chunk count, one chunk, one chunk per row, rows without edges, with and
// without the row scale and the bias, a transposed (strided) weight, both
// group splits (MEGAGRAPH_MOA_SPMM_THREADS), the pool's threads and one
// thread (the call nested in a pool task runs inline), the pipeline left
// only some rows to aggregate (moaSpmmLinear's `todo`, gp's overlap), and
// the chunk contract.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "megagraph/RuntimeMoa.h"

#include "kernels/MoaPipeline.h"
#include "support/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mgrt_test;

namespace {

struct Problem {
  int64_t N, M, D, F;
  std::vector<int64_t> rowPtr{0}, colIdx;
  std::vector<float> values, x, scale, weightT, bias; // weightT is [F, D]
};

/// Row i has (i * 5 + 3) % (maxDeg + 1) edges, so some rows have none.
Problem makeProblem(int64_t N, int64_t M, int64_t D, int64_t F, int64_t maxDeg,
                    unsigned seed) {
  Problem p{N, M, D, F};
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t deg = (i * 5 + 3) % (maxDeg + 1);
    for (int64_t d = 0; d < deg; ++d)
      p.colIdx.push_back(gen() % M);
    p.rowPtr.push_back(static_cast<int64_t>(p.colIdx.size()));
  }
  p.values = randomFloats(p.colIdx.size(), seed + 1);
  p.x = randomFloats(M * D, seed + 2);
  p.scale = randomFloats(N, seed + 3, 0.1f, 1.f);
  p.weightT = randomFloats(F * D, seed + 4);
  p.bias = randomFloats(F, seed + 5);
  return p;
}

/// The descriptors of a problem's CSR and x, shared by both sides.
struct Operands {
  mgrt_memref_i64_1 rp, ci;
  mgrt_memref_f32_1 v;
  mgrt_memref_f32_2 xv;
};

Operands operandsOf(Problem &p) {
  return {memref<mgrt_memref_i64_1>(p.rowPtr.data(), {p.N + 1}),
          memref<mgrt_memref_i64_1>(p.colIdx.data(),
                                    {static_cast<int64_t>(p.colIdx.size())}),
          memref<mgrt_memref_f32_1>(p.values.data(),
                                    {static_cast<int64_t>(p.values.size())}),
          memref<mgrt_memref_f32_2>(p.x.data(), {p.M, p.D})};
}

/// agg and out through the unchunked SpMM kernel and a double GEMM.
void reference(Problem &p, bool useScale, bool useBias, std::vector<float> &agg,
               std::vector<float> &out) {
  agg.assign(p.N * p.D, 0.f);
  auto a = memref<mgrt_memref_f32_2>(agg.data(), {p.N, p.D});
  Operands in = operandsOf(p);
  _mlir_ciface_mgrt_spmm_f32(&a, &in.rp, &in.ci, &in.v, &in.xv);
  if (useScale)
    for (int64_t i = 0; i < p.N; ++i)
      for (int64_t d = 0; d < p.D; ++d)
        agg[i * p.D + d] *= p.scale[i];
  out.assign(p.N * p.F, 0.f);
  for (int64_t i = 0; i < p.N; ++i)
    for (int64_t f = 0; f < p.F; ++f) {
      double acc = useBias ? p.bias[f] : 0.0;
      for (int64_t d = 0; d < p.D; ++d)
        acc += double(agg[i * p.D + d]) * p.weightT[f * p.D + d];
      out[i * p.F + f] = static_cast<float>(acc);
    }
}

void runMoa(Problem &p, bool useScale, bool useBias, int64_t chunks,
            std::vector<float> &agg, std::vector<float> &out) {
  agg.assign(p.N * p.D, -7.f);
  out.assign(p.N * p.F, -7.f);
  auto o = memref<mgrt_memref_f32_2>(out.data(), {p.N, p.F});
  auto a = memref<mgrt_memref_f32_2>(agg.data(), {p.N, p.D});
  Operands in = operandsOf(p);
  float placeholder = 0.f;
  auto s = useScale ? memref<mgrt_memref_f32_2>(p.scale.data(), {p.N, 1})
                    : memref<mgrt_memref_f32_2>(&placeholder, {1, 1});
  // weight [D, F] read through the transpose of weightT [F, D].
  auto w = memref<mgrt_memref_f32_2>(p.weightT.data(), {p.D, p.F}, {1, p.D});
  auto b = useBias ? memref<mgrt_memref_f32_1>(p.bias.data(), {p.F})
                   : memref<mgrt_memref_f32_1>(&placeholder, {1});
  _mlir_ciface_mgrt_moa_spmm_linear_f32(&o, &a, &in.rp, &in.ci, &in.v, &in.xv,
                                        &s, &w, &b, chunks,
                                        (useScale ? 1 : 0) | (useBias ? 2 : 0));
}

struct Case {
  int64_t N, M, D, F, maxDeg, chunks;
  bool scale, bias;
};

void checkCase(const Case &c, unsigned seed, bool nested) {
  SCOPED_TRACE(testing::Message()
               << "N=" << c.N << " D=" << c.D << " F=" << c.F
               << " chunks=" << c.chunks << " scale=" << c.scale
               << " bias=" << c.bias << " nested=" << nested);
  Problem p = makeProblem(c.N, c.M, c.D, c.F, c.maxDeg, seed);
  std::vector<float> wantAgg, wantOut, agg, out;
  reference(p, c.scale, c.bias, wantAgg, wantOut);
  if (nested) // inside a pool task the kernel runs on one thread
    mgrt::parallelFor(2, [&](int64_t task, int) {
      if (task == 0)
        runMoa(p, c.scale, c.bias, c.chunks, agg, out);
    });
  else
    runMoa(p, c.scale, c.bias, c.chunks, agg, out);
  EXPECT_LE(maxAbsDiff(agg, wantAgg), 1e-6f);
  EXPECT_LE(maxAbsDiff(out, wantOut), 1e-4f);
  for (int64_t i = 0; i < p.N; ++i) {
    if (p.rowPtr[i] != p.rowPtr[i + 1])
      continue;
    for (int64_t d = 0; d < p.D; ++d)
      ASSERT_EQ(agg[i * p.D + d], 0.f) << "row without edges " << i;
  }
}

const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, false, false},
    {37, 23, 5, 3, 6, 4, true, true},
    {37, 23, 5, 3, 6, 37, true, false},
    {300, 300, 16, 8, 12, 1, false, true},
    {1001, 700, 33, 17, 20, 7, true, true},
    {4099, 4099, 8, 32, 9, 16, false, false},
    {64, 64, 8, 8, 0, 3, true, true}, // no edges at all
};

TEST(MoaSpmmLinear, MatchesUnchunked) {
  unsigned seed = 11;
  for (const Case &c : kCases)
    checkCase(c, seed += 7, /*nested=*/false);
}

TEST(MoaSpmmLinear, OnlyTheRowsLeftToIt) {
  // gp's overlap: the caller aggregates (and scales) some rows, the
  // pipeline the others (`todo`) and transforms all; agg and out are the
  // whole pipeline's bit for bit, and the caller's rows are left as they
  // were written.
  for (const Case &c : kCases) {
    SCOPED_TRACE(testing::Message() << "N=" << c.N << " chunks=" << c.chunks);
    Problem p = makeProblem(c.N, c.M, c.D, c.F, c.maxDeg, 29);
    std::vector<float> wantAgg, wantOut;
    runMoa(p, c.scale, c.bias, c.chunks, wantAgg, wantOut);
    std::vector<int64_t> todo;
    for (int64_t i = 0; i < p.N; ++i)
      if (i % 3 != 1)
        todo.push_back(i);
    // The caller's rows: the whole pipeline's values (as the caller
    // computes them); the rest poisoned.
    std::vector<float> agg(p.N * p.D, std::nanf("")), out(p.N * p.F, -7.f);
    for (int64_t i = 1; i < p.N; i += 3)
      std::copy(wantAgg.begin() + i * p.D, wantAgg.begin() + (i + 1) * p.D,
                agg.begin() + i * p.D);
    auto o = memref<mgrt_memref_f32_2>(out.data(), {p.N, p.F});
    auto a = memref<mgrt_memref_f32_2>(agg.data(), {p.N, p.D});
    Operands in = operandsOf(p);
    float placeholder = 0.f;
    auto sc = c.scale ? memref<mgrt_memref_f32_2>(p.scale.data(), {p.N, 1})
                      : memref<mgrt_memref_f32_2>(&placeholder, {1, 1});
    auto w = memref<mgrt_memref_f32_2>(p.weightT.data(), {p.D, p.F}, {1, p.D});
    auto b = c.bias ? memref<mgrt_memref_f32_1>(p.bias.data(), {p.F})
                    : memref<mgrt_memref_f32_1>(&placeholder, {1});
    mgrt::moaSpmmLinear(&o, &a, &in.rp, &in.ci, &in.v, &in.xv, &sc, &w, &b,
                        c.chunks, (c.scale ? 1 : 0) | (c.bias ? 2 : 0), &todo);
    EXPECT_EQ(
        std::memcmp(agg.data(), wantAgg.data(), sizeof(float) * agg.size()), 0);
    EXPECT_EQ(
        std::memcmp(out.data(), wantOut.data(), sizeof(float) * out.size()), 0);
  }
}

TEST(MoaSpmmLinear, OneThread) {
  unsigned seed = 101;
  for (const Case &c : kCases)
    checkCase(c, seed += 7, /*nested=*/true);
}

TEST(MoaSpmmLinear, GroupSplits) {
  // One aggregation thread and as many as the pool allows (each group
  // keeps one thread at least).
  for (const char *t : {"1", "64"}) {
    setenv("MEGAGRAPH_MOA_SPMM_THREADS", t, 1);
    unsigned seed = 301;
    for (const Case &c : kCases)
      checkCase(c, seed += 7, /*nested=*/false);
  }
  unsetenv("MEGAGRAPH_MOA_SPMM_THREADS");
}

TEST(MoaSpmmLinearDeathTest, ChunkContract) {
  Problem p = makeProblem(5, 5, 2, 2, 2, 3);
  std::vector<float> agg, out;
  EXPECT_DEATH(runMoa(p, false, false, 6, agg, out),
               "chunks = 6 must be in \\[1, N = 5\\]");
  EXPECT_DEATH(runMoa(p, false, false, 0, agg, out),
               "chunks = 0 must be in \\[1, N = 5\\]");
}

} // namespace
