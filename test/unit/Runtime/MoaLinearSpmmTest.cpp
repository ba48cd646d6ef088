//===- MoaLinearSpmmTest.cpp - mgrt_moa_linear_spmm_f32 ------------------===//
//
// The transform-first pipeline (t = scale * (x W + bias), out = A t over K
// chunks of t's rows): t against a double GEMM, out bit for bit against
// the unchunked mgrt_spmm_f32 on the same t, both bit for bit the same on
// the pool's threads and on one thread (the call nested in a pool task
// runs inline, each chunk's ready rows right after it, so a row aggregated
// before its chunks are transformed reads the NaN t starts with), and, with
// the native GEMM (MEGAGRAPH_GEMM=native, as ctest's
// moa-linear-spmm-4-threads runs it), for every chunk count. Cases: N not
// divisible by K, K = 1, K = M, rows without edges, a row whose largest
// neighbour is in the last chunk, N != M, a transposed weight and x, both group
// splits. Also the row order (moaRowsByLargestColumn, with and without
// columns left to a halo) and the chunk contract.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "megagraph/RuntimeMoa.h"

#include "kernels/MatMul.h"
#include "kernels/MoaPipeline.h"
#include "support/ThreadPool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace mgrt_test;

namespace {

struct Problem {
  int64_t N, M, D, F;
  std::vector<int64_t> rowPtr{0}, colIdx;
  std::vector<float> values, xT, scale, weightT,
      bias; // xT [D, M], weightT [F, D]
};

/// Row i has (i * 5 + 3) % (maxDeg + 1) edges to random columns, so some
/// rows have none; row 1 (when there is one) has an edge to column 0 and,
/// last in the row, one to column M - 1 (its largest neighbour is in the
/// last chunk).
Problem makeProblem(int64_t N, int64_t M, int64_t D, int64_t F, int64_t maxDeg,
                    unsigned seed) {
  Problem p{N, M, D, F};
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < N; ++i) {
    if (i == 1 && maxDeg > 0) {
      p.colIdx.push_back(0);
      p.colIdx.push_back(M - 1);
    } else {
      const int64_t deg = (i * 5 + 3) % (maxDeg + 1);
      for (int64_t d = 0; d < deg; ++d)
        p.colIdx.push_back(gen() % M);
    }
    p.rowPtr.push_back(static_cast<int64_t>(p.colIdx.size()));
  }
  p.values = randomFloats(p.colIdx.size(), seed + 1);
  p.xT = randomFloats(D * M, seed + 2);
  p.scale = randomFloats(M, seed + 3, 0.1f, 1.f);
  p.weightT = randomFloats(F * D, seed + 4);
  p.bias = randomFloats(F, seed + 5);
  return p;
}

struct Result {
  std::vector<float> t, out;
};

/// The pipelined kernel; t and out start as NaN.
Result runMoa(Problem &p, bool useScale, bool useBias, int64_t chunks) {
  Result r;
  r.t.assign(p.M * p.F, std::nanf(""));
  r.out.assign(p.N * p.F, std::nanf(""));
  auto o = memref<mgrt_memref_f32_2>(r.out.data(), {p.N, p.F});
  auto t = memref<mgrt_memref_f32_2>(r.t.data(), {p.M, p.F});
  auto rp = memref<mgrt_memref_i64_1>(p.rowPtr.data(), {p.N + 1});
  auto ci = memref<mgrt_memref_i64_1>(p.colIdx.data(),
                                      {static_cast<int64_t>(p.colIdx.size())});
  auto v = memref<mgrt_memref_f32_1>(p.values.data(),
                                     {static_cast<int64_t>(p.values.size())});
  // x [M, D] and weight [D, F] read through their transposes.
  auto x = memref<mgrt_memref_f32_2>(p.xT.data(), {p.M, p.D}, {1, p.M});
  auto w = memref<mgrt_memref_f32_2>(p.weightT.data(), {p.D, p.F}, {1, p.D});
  float placeholder = 0.f;
  auto s = useScale ? memref<mgrt_memref_f32_2>(p.scale.data(), {p.M, 1})
                    : memref<mgrt_memref_f32_2>(&placeholder, {1, 1});
  auto b = useBias ? memref<mgrt_memref_f32_1>(p.bias.data(), {p.F})
                   : memref<mgrt_memref_f32_1>(&placeholder, {1});
  _mlir_ciface_mgrt_moa_linear_spmm_f32(&o, &t, &rp, &ci, &v, &x, &s, &w, &b,
                                        chunks,
                                        (useScale ? 1 : 0) | (useBias ? 2 : 0));
  return r;
}

/// t in double precision.
std::vector<float> referenceT(const Problem &p, bool useScale, bool useBias) {
  std::vector<float> t(p.M * p.F);
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t f = 0; f < p.F; ++f) {
      double acc = useBias ? p.bias[f] : 0.0;
      for (int64_t d = 0; d < p.D; ++d)
        acc += double(p.xT[d * p.M + i]) * p.weightT[f * p.D + d];
      t[i * p.F + f] = static_cast<float>(useScale ? acc * p.scale[i] : acc);
    }
  return t;
}

/// The unchunked SpMM kernel over `t`.
std::vector<float> spmmOf(Problem &p, std::vector<float> &t) {
  std::vector<float> out(p.N * p.F, std::nanf(""));
  auto o = memref<mgrt_memref_f32_2>(out.data(), {p.N, p.F});
  auto rp = memref<mgrt_memref_i64_1>(p.rowPtr.data(), {p.N + 1});
  auto ci = memref<mgrt_memref_i64_1>(p.colIdx.data(),
                                      {static_cast<int64_t>(p.colIdx.size())});
  auto v = memref<mgrt_memref_f32_1>(p.values.data(),
                                     {static_cast<int64_t>(p.values.size())});
  auto x = memref<mgrt_memref_f32_2>(t.data(), {p.M, p.F});
  _mlir_ciface_mgrt_spmm_f32(&o, &rp, &ci, &v, &x);
  return out;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  int64_t N, M, D, F, maxDeg;
  bool scale, bias;
};

const Case kCases[] = {
    {1, 1, 1, 1, 1, false, false},
    {37, 23, 5, 3, 6, true, true},
    {300, 300, 16, 8, 12, false, true},
    {1001, 700, 33, 17, 20, true, false},
    {4099, 4099, 8, 32, 9, false, false},
    {64, 64, 8, 8, 0, true, true}, // no edges at all
};

/// Chunk counts of a case: 1, 2 when it fits, 7 (M not a multiple) when it
/// fits, and M (one row per chunk).
std::vector<int64_t> chunkCounts(int64_t M) {
  std::vector<int64_t> ks{1};
  for (int64_t k : {int64_t(2), int64_t(7)})
    if (k <= M)
      ks.push_back(k);
  if (M > 1)
    ks.push_back(M);
  return ks;
}

/// Every chunk count of case `c`, on the pool and nested (one thread):
/// t close to the double GEMM, out bit-identical to the SpMM of t, rows
/// without edges zero, the same bits on any threads, and with the native
/// GEMM the same bits for any chunks (OpenBLAS's sgemm rounds a row
/// differently depending on the block it is in, as in mgrt_matmul_f32,
/// whose blocks follow the thread count).
void checkCase(const Case &c, unsigned seed) {
  Problem p = makeProblem(c.N, c.M, c.D, c.F, c.maxDeg, seed);
  const std::vector<float> wantT = referenceT(p, c.scale, c.bias);
  const bool native = mgrt::defaultGemmBackend() == mgrt::GemmBackend::Native;
  Result first;
  for (int64_t k : chunkCounts(c.M)) {
    Result pooled;
    for (bool nested : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << "N=" << c.N << " M=" << c.M << " D=" << c.D
                   << " F=" << c.F << " chunks=" << k << " scale=" << c.scale
                   << " bias=" << c.bias << " nested=" << nested);
      Result r;
      if (nested) // inside a pool task the kernel runs on one thread
        mgrt::parallelFor(2, [&](int64_t task, int) {
          if (task == 0)
            r = runMoa(p, c.scale, c.bias, k);
        });
      else
        r = runMoa(p, c.scale, c.bias, k);
      EXPECT_LE(maxAbsDiff(r.t, wantT), 1e-4f);
      const std::vector<float> want = spmmOf(p, r.t);
      EXPECT_TRUE(sameBits(r.out, want))
          << "out differs from the SpMM of t by " << maxAbsDiff(r.out, want);
      for (int64_t i = 0; i < p.N; ++i) {
        if (p.rowPtr[i] != p.rowPtr[i + 1])
          continue;
        for (int64_t f = 0; f < p.F; ++f)
          ASSERT_EQ(r.out[i * p.F + f], 0.f) << "row without edges " << i;
      }
      if (!nested) {
        pooled = r;
        continue;
      }
      EXPECT_TRUE(sameBits(r.t, pooled.t) && sameBits(r.out, pooled.out))
          << "results depend on the threads";
      if (first.t.empty()) {
        first = r;
      } else if (native) {
        EXPECT_TRUE(sameBits(r.t, first.t) && sameBits(r.out, first.out))
            << "results depend on the chunks";
      } else {
        EXPECT_LE(maxAbsDiff(r.out, first.out), 1e-4f);
      }
    }
  }
}

TEST(MoaLinearSpmm, MatchesUnchunked) {
  unsigned seed = 17;
  for (const Case &c : kCases)
    checkCase(c, seed += 7);
}

TEST(MoaLinearSpmm, GroupSplits) {
  // One aggregation thread and as many as the pool allows (each group
  // keeps one thread at least).
  for (const char *t : {"1", "64"}) {
    setenv("MEGAGRAPH_MOA_SPMM_THREADS", t, 1);
    unsigned seed = 401;
    for (const Case &c : kCases)
      checkCase(c, seed += 7);
  }
  unsetenv("MEGAGRAPH_MOA_SPMM_THREADS");
}

TEST(MoaLinearSpmm, RowOrder) {
  // 10 columns in 3 chunks: [0, 3), [3, 6), [6, 10).
  std::vector<int64_t> rowPtr{0, 2, 2, 3, 5, 6, 8};
  std::vector<int64_t> colIdx{0, 2, /*row 1: none*/ 9, 5, 3, 6, 9, 0};
  auto rp = memref<mgrt_memref_i64_1>(rowPtr.data(), {7});
  auto ci = memref<mgrt_memref_i64_1>(colIdx.data(), {8});
  const mgrt::CsrView g = mgrt::csrView("test", &rp, &ci, 6, 10);
  for (int64_t j = 0; j < 10; ++j)
    EXPECT_EQ(mgrt::moaChunkOf(j, 10, 3), j < 3 ? 0 : j < 6 ? 1 : 2) << j;
  const mgrt::MoaRowOrder order = mgrt::moaRowsByLargestColumn(g, 3);
  // Largest columns 2, -, 9, 5, 6, 9: chunks 0, 0 (no edges), 2, 1, 2, 2.
  EXPECT_EQ(order.begin, (std::vector<int64_t>{0, 2, 3, 6}));
  EXPECT_EQ(order.rows, (std::vector<int64_t>{0, 1, 3, 2, 4, 5}));
  // One chunk per column, and one chunk.
  EXPECT_EQ(mgrt::moaRowsByLargestColumn(g, 10).begin,
            (std::vector<int64_t>{0, 1, 1, 2, 2, 2, 3, 4, 4, 4, 6}));
  EXPECT_EQ(mgrt::moaRowsByLargestColumn(g, 1).rows,
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(order.deferred.empty());
  // Only the first 6 columns chunked (the rest a halo filled later, as the
  // partition-parallel kernel has it): chunks [0, 2), [2, 4), [4, 6). Rows
  // 2, 4 and 5 read a column >= 6 and wait for the halo; rows 1 (no
  // edges), 0 (largest 2) and 3 (largest 5) go to chunks 0, 1, 2.
  const mgrt::MoaRowOrder ready6 = mgrt::moaRowsByLargestColumn(g, 3, 6);
  EXPECT_EQ(ready6.begin, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ready6.rows, (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(ready6.deferred, (std::vector<int64_t>{2, 4, 5}));
}

TEST(MoaLinearSpmmDeathTest, ChunkContract) {
  Problem p = makeProblem(6, 5, 2, 2, 2, 3);
  EXPECT_DEATH(runMoa(p, false, false, 6),
               "chunks = 6 must be in \\[1, M = 5\\]");
  EXPECT_DEATH(runMoa(p, false, false, 0),
               "chunks = 0 must be in \\[1, M = 5\\]");
}

} // namespace
