//===- PackedGemm.cpp - Single-threaded SGEMM on the micro GEMM -----------===//
//
// Loops (BLIS order): columns of C in panels of kPanelN, rows in blocks of
// kBlockM, the reduction in slices of kSliceK. Per (panel, block) a dense
// tile of C accumulates in scratch over the slices; per slice the A block is
// packed row-major and the B slice column-strip-major ([strip][k][64], so the
// strip the micro GEMM streams stays in L1), zero-padded to whole tiles.
// Packing B again for every row block costs 1/kBlockM of the arithmetic.
//
//===----------------------------------------------------------------------===//

#include "kernels/PackedGemm.h"

#include "kernels/MicroGemm.h"

#include <algorithm>
#include <cstring>

namespace mgrt {
namespace {

constexpr int64_t kBlockM = 120; // a multiple of kTileRows
constexpr int64_t kSliceK = 128;
constexpr int64_t kStrip = 64;   // columns per micro GEMM call (4 vectors)
constexpr int64_t kPanelN = 512; // a multiple of kStrip

struct Buffers {
  float *a; // [kBlockM][kSliceK]
  float *b; // [kPanelN / kStrip][kSliceK][kStrip]
  float *c; // [kBlockM][kPanelN]
};

Buffers carve(void *scratch) {
  float *f = static_cast<float *>(scratch);
  Buffers buf;
  buf.a = f, f += kBlockM * kSliceK;
  buf.b = f, f += kPanelN * kSliceK;
  buf.c = f;
  return buf;
}

void packA(const MatrixView &a, int64_t i0, int64_t rows, int64_t k0,
           int64_t depth, float *dst) {
  const int64_t rowsPad = (rows + kTileRows - 1) / kTileRows * kTileRows;
  for (int64_t r = 0; r < rowsPad; ++r) {
    float *d = dst + r * kSliceK;
    if (r >= rows) {
      std::fill(d, d + depth, 0.f);
      continue;
    }
    const float *s = a.data + (i0 + r) * a.rowStride + k0 * a.colStride;
    if (a.colStride == 1)
      std::memcpy(d, s, depth * sizeof(float));
    else
      for (int64_t k = 0; k < depth; ++k)
        d[k] = s[k * a.colStride];
  }
}

void packB(const MatrixView &b, int64_t k0, int64_t depth, int64_t j0,
           int64_t cols, float *dst) {
  for (int64_t s0 = 0; s0 < cols; s0 += kStrip) {
    const int64_t width = std::min(kStrip, cols - s0);
    float *strip = dst + (s0 / kStrip) * kSliceK * kStrip;
    for (int64_t k = 0; k < depth; ++k) {
      const float *src =
          b.data + (k0 + k) * b.rowStride + (j0 + s0) * b.colStride;
      float *d = strip + k * kStrip;
      if (b.colStride == 1)
        std::memcpy(d, src, width * sizeof(float));
      else
        for (int64_t j = 0; j < width; ++j)
          d[j] = src[j * b.colStride];
      std::fill(d + width, d + kStrip, 0.f);
    }
  }
}

} // namespace

size_t packedGemmScratchBytes() {
  return sizeof(float) *
         (kBlockM * kSliceK + kPanelN * kSliceK + kBlockM * kPanelN);
}

void packedGemm(int64_t M, int64_t N, int64_t K, MatrixView a, MatrixView b,
                float *c, int64_t ldc, void *scratch) {
  const MicroGemmFn gemm = microGemm();
  const Buffers buf = carve(scratch);
  for (int64_t j0 = 0; j0 < N; j0 += kPanelN) {
    const int64_t cols = std::min(kPanelN, N - j0);
    for (int64_t i0 = 0; i0 < M; i0 += kBlockM) {
      const int64_t rows = std::min(kBlockM, M - i0);
      const int64_t rowsPad = (rows + kTileRows - 1) / kTileRows * kTileRows;
      if (K == 0)
        std::fill(buf.c, buf.c + rowsPad * kPanelN, 0.f);
      for (int64_t k0 = 0; k0 < K; k0 += kSliceK) {
        const int64_t depth = std::min(kSliceK, K - k0);
        packA(a, i0, rows, k0, depth, buf.a);
        packB(b, k0, depth, j0, cols, buf.b);
        for (int64_t s0 = 0; s0 < cols; s0 += kStrip) {
          const int64_t vectors = (std::min(kStrip, cols - s0) + 15) / 16;
          gemm(/*accumulate=*/k0 > 0, rowsPad, vectors, depth, buf.a, kSliceK,
               buf.b + (s0 / kStrip) * kSliceK * kStrip, kStrip, buf.c + s0,
               kPanelN);
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(c + (i0 + r) * ldc + j0, buf.c + r * kPanelN,
                    cols * sizeof(float));
    }
  }
}

} // namespace mgrt
