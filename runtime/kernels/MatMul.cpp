//===- MatMul.cpp - Batched float32 matmul --------------------------------===//
//
// out[g] = a[g] @ b[g] (b may be shared by every g). The pool splits the work
// into (batch, block of rows) tasks, each one single-threaded GEMM, so one
// big product and many small ones both use every core. Two backends
// (MatMul.h): OpenBLAS, where operands whose innermost stride is 1 go as
// they are, transposed views (outer stride 1) as Trans and any other layout
// as a dense copy; and packedGemm, which reads any strides while packing.
//
//===----------------------------------------------------------------------===//

#include "kernels/MatMul.h"

#include "kernels/PackedGemm.h"

#include "support/Blas.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mgrt {
namespace {

constexpr const char *kName = MGRT_KERNEL_MATMUL;

/// One [rows, cols] matrix of a batch as BLAS sees it.
struct BlasMatrix {
  const float *data;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

/// Chooses how BLAS reads a strided [rows, cols] view; returns false when
/// neither layout fits (the caller copies).
bool asBlas(const float *data, int64_t rows, int64_t cols, int64_t rowStride,
            int64_t colStride, BlasMatrix &m) {
  if (colStride == 1 && rowStride >= std::max<int64_t>(cols, 1)) {
    m = {data, CblasNoTrans, rowStride};
    return true;
  }
  if (rowStride == 1 && colStride >= std::max<int64_t>(rows, 1)) {
    m = {data, CblasTrans, colStride};
    return true;
  }
  if (rows <= 1 && colStride == 1) { // a single row: any row stride works
    m = {data, CblasNoTrans, std::max<int64_t>(cols, 1)};
    return true;
  }
  if (cols <= 1 && rowStride == 1) {
    m = {data, CblasTrans, std::max<int64_t>(rows, 1)};
    return true;
  }
  return false;
}

/// A dense row-major copy of a [G,R,C] memref (G may be 1).
float *denseCopy(const mgrt_memref_f32_3 *m) {
  const int64_t g = m->sizes[0], r = m->sizes[1], c = m->sizes[2];
  float *dst = static_cast<float *>(mgrt_alloc(sizeof(float) * g * r * c));
  MGRT_CHECK(dst, kName, "out of memory copying a strided operand");
  const float *src = m->aligned + m->offset;
  for (int64_t i = 0; i < g; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < c; ++k)
        dst[(i * r + j) * c + k] =
            src[i * m->strides[0] + j * m->strides[1] + k * m->strides[2]];
  return dst;
}

} // namespace
GemmBackend defaultGemmBackend() {
  static const GemmBackend backend = [] {
    if (const char *env = std::getenv("MEGAGRAPH_GEMM")) {
      if (std::strcmp(env, "blas") == 0)
        return GemmBackend::Blas;
      if (std::strcmp(env, "native") == 0)
        return GemmBackend::Native;
    }
    return blasCoreHint() ? GemmBackend::Native : GemmBackend::Blas;
  }();
  return backend;
}

const char *gemmBackendName(GemmBackend backend) {
  return backend == GemmBackend::Blas ? "blas" : "native";
}

void matmul(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *a, mgrt_memref_f32_3 *b,
            GemmBackend backend, bool wholeRows) {
  MGRT_CHECK(out && a && b, kName, "null operand descriptor");
  const int64_t G = a->sizes[0], M = a->sizes[1], K = a->sizes[2];
  const int64_t N = b->sizes[2];
  MGRT_CHECK((b->sizes[0] == G || b->sizes[0] == 1) && b->sizes[1] == K &&
                 out->sizes[0] == G && out->sizes[1] == M && out->sizes[2] == N,
             kName,
             "shape mismatch: a [%lld,%lld,%lld] b [%lld,%lld,%lld] "
             "out [%lld,%lld,%lld]",
             (long long)G, (long long)M, (long long)K, (long long)b->sizes[0],
             (long long)b->sizes[1], (long long)b->sizes[2],
             (long long)out->sizes[0], (long long)out->sizes[1],
             (long long)out->sizes[2]);
  MGRT_CHECK(out->strides[2] == 1 &&
                 (out->strides[1] >= std::max<int64_t>(N, 1) || M <= 1),
             kName, "out must have innermost stride 1 and rows apart");
  if (G == 0 || M == 0 || N == 0)
    return;
  float *o = out->aligned + out->offset;
  if (K == 0) {
    for (int64_t g = 0; g < G; ++g)
      for (int64_t i = 0; i < M; ++i)
        std::fill(o + g * out->strides[0] + i * out->strides[1],
                  o + g * out->strides[0] + i * out->strides[1] + N, 0.f);
    return;
  }

  // Row blocks so that there are a few tasks per thread, but no block
  // thinner than 32 rows (GEMM efficiency).
  const int64_t threads = numThreads();
  int64_t rowBlocks = 1;
  if (G < 2 * threads && !wholeRows) {
    const int64_t want = (2 * threads + G - 1) / G;
    rowBlocks = std::max<int64_t>(1, std::min(want, M / 32));
  }
  const int64_t rowsPerBlock = (M + rowBlocks - 1) / rowBlocks;
  rowBlocks = (M + rowsPerBlock - 1) / rowsPerBlock;
  const int64_t ldo = M <= 1 ? std::max<int64_t>(N, 1) : out->strides[1];
  const float *aData = a->aligned + a->offset, *bData = b->aligned + b->offset;
  const int64_t bBatchStride = b->sizes[0] == 1 ? 0 : b->strides[0];

  if (backend == GemmBackend::Native) {
    const size_t bytes = packedGemmScratchBytes();
    std::vector<void *> scratch(threads);
    for (void *&s : scratch) {
      s = mgrt_alloc(bytes);
      MGRT_CHECK(s, kName, "out of memory (%zu bytes of scratch)", bytes);
    }
    parallelFor(G * rowBlocks, [&](int64_t task, int worker) {
      const int64_t g = task / rowBlocks, rb = task % rowBlocks;
      const int64_t i0 = rb * rowsPerBlock;
      const int64_t rows = std::min(rowsPerBlock, M - i0);
      MatrixView av{aData + g * a->strides[0] + i0 * a->strides[1],
                    a->strides[1], a->strides[2]};
      MatrixView bv{bData + g * bBatchStride, b->strides[1], b->strides[2]};
      packedGemm(rows, N, K, av, bv, o + g * out->strides[0] + i0 * ldo, ldo,
                 scratch[worker]);
    });
    for (void *s : scratch)
      mgrt_free(s);
    return;
  }

  // OpenBLAS: operands it cannot read as they are get a dense copy.
  initBlas();
  float *aCopy = nullptr, *bCopy = nullptr;
  BlasMatrix am, bm;
  int64_t aBatch = a->strides[0], bBatch = bBatchStride;
  if (!asBlas(aData, M, K, a->strides[1], a->strides[2], am)) {
    aCopy = denseCopy(a);
    aBatch = M * K;
    asBlas(aCopy, M, K, K, 1, am);
  }
  if (!asBlas(bData, K, N, b->strides[1], b->strides[2], bm)) {
    bCopy = denseCopy(b);
    bBatch = b->sizes[0] == 1 ? 0 : K * N;
    asBlas(bCopy, K, N, N, 1, bm);
  }
  parallelFor(G * rowBlocks, [&](int64_t task, int) {
    const int64_t g = task / rowBlocks, rb = task % rowBlocks;
    const int64_t i0 = rb * rowsPerBlock, rows = std::min(rowsPerBlock, M - i0);
    // Row i0 of a: i0 * ld in a NoTrans matrix, i0 columns in a Trans one.
    const float *ap =
        am.data + g * aBatch + i0 * (am.trans == CblasNoTrans ? am.ld : 1);
    cblas_sgemm(CblasRowMajor, am.trans, bm.trans, rows, N, K, 1.f, ap, am.ld,
                bm.data + g * bBatch, bm.ld, 0.f,
                o + g * out->strides[0] + i0 * ldo, ldo);
  });
  mgrt_free(aCopy);
  mgrt_free(bCopy);
}

} // namespace mgrt

extern "C" void _mlir_ciface_mgrt_matmul_f32(mgrt_memref_f32_3 *out,
                                             mgrt_memref_f32_3 *a,
                                             mgrt_memref_f32_3 *b) {
  mgrt::matmul(out, a, b, mgrt::defaultGemmBackend());
}
