//===- MicroGemm.cpp - Register-tiled GEMM for small packed blocks --------===//
//
// Three implementations of the same contract (MicroGemm.h): AVX-512 (6 rows
// x 64 columns = 24 zmm accumulators), AVX2 + FMA (6 x 16 = 12 ymm) and a
// portable one, picked at first use by simdLevel (VectorMath.h). Intrinsics
// inside target-attributed functions: the library is built for plain
// x86-64 and still runs the wide code where the CPU has it.
//
//===----------------------------------------------------------------------===//

#include "kernels/MicroGemm.h"
#include "kernels/VectorMath.h"

#include <immintrin.h>

#include <cstring>
#include <vector>

namespace mgrt {
namespace {

#define MGRT_AVX512 __attribute__((target("avx512f,fma"), always_inline)) inline
#define MGRT_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

/// AVX-512 tile: kTileRows x (16 * NV) of C.
template <int NV, bool Accumulate>
MGRT_AVX512 void tileAvx512(const float *a, int64_t lda, const float *b,
                            int64_t ldb, float *c, int64_t ldc, int64_t K) {
  __m512 acc[kTileRows][NV];
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = Accumulate ? _mm512_loadu_ps(c + r * ldc + 16 * v)
                             : _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_ps(b + k * ldb + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
}

template <bool Accumulate>
__attribute__((target("avx512f,fma"))) void
gemmAvx512(int64_t M, int64_t vectors, int64_t K, const float *a, int64_t lda,
           const float *b, int64_t ldb, float *c, int64_t ldc) {
  for (int64_t v0 = 0; v0 < vectors; v0 += 4) {
    const int64_t nv = vectors - v0 < 4 ? vectors - v0 : 4;
    for (int64_t i = 0; i < M; i += kTileRows) {
      const float *at = a + i * lda, *bt = b + 16 * v0;
      float *ct = c + i * ldc + 16 * v0;
      switch (nv) {
      case 4:
        tileAvx512<4, Accumulate>(at, lda, bt, ldb, ct, ldc, K);
        break;
      case 3:
        tileAvx512<3, Accumulate>(at, lda, bt, ldb, ct, ldc, K);
        break;
      case 2:
        tileAvx512<2, Accumulate>(at, lda, bt, ldb, ct, ldc, K);
        break;
      default:
        tileAvx512<1, Accumulate>(at, lda, bt, ldb, ct, ldc, K);
      }
    }
  }
}

/// AVX2 tile: kTileRows x 16 of C (two ymm per row).
template <bool Accumulate>
MGRT_AVX2 void tileAvx2(const float *a, int64_t lda, const float *b,
                        int64_t ldb, float *c, int64_t ldc, int64_t K) {
  __m256 acc[kTileRows][2];
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v)
      acc[r][v] = Accumulate ? _mm256_loadu_ps(c + r * ldc + 8 * v)
                             : _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb),
                 b1 = _mm256_loadu_ps(b + k * ldb + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + k);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v)
      _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
}

template <bool Accumulate>
__attribute__((target("avx2,fma"))) void
gemmAvx2(int64_t M, int64_t vectors, int64_t K, const float *a, int64_t lda,
         const float *b, int64_t ldb, float *c, int64_t ldc) {
  for (int64_t v = 0; v < vectors; ++v)
    for (int64_t i = 0; i < M; i += kTileRows)
      tileAvx2<Accumulate>(a + i * lda, lda, b + 16 * v, ldb,
                           c + i * ldc + 16 * v, ldc, K);
}

/// Portable: one row of C at a time, 16 columns kept in a local array.
template <bool Accumulate>
void gemmGeneric(int64_t M, int64_t vectors, int64_t K, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float *c,
                 int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t v = 0; v < vectors; ++v) {
      float acc[16];
      for (int l = 0; l < 16; ++l)
        acc[l] = Accumulate ? c[i * ldc + 16 * v + l] : 0.f;
      for (int64_t k = 0; k < K; ++k) {
        const float av = a[i * lda + k];
        const float *br = b + k * ldb + 16 * v;
        for (int l = 0; l < 16; ++l)
          acc[l] += av * br[l];
      }
      for (int l = 0; l < 16; ++l)
        c[i * ldc + 16 * v + l] = acc[l];
    }
}

template <void (*Plain)(int64_t, int64_t, int64_t, const float *, int64_t,
                        const float *, int64_t, float *, int64_t),
          void (*Accum)(int64_t, int64_t, int64_t, const float *, int64_t,
                        const float *, int64_t, float *, int64_t)>
void dispatch(bool accumulate, int64_t M, int64_t vectors, int64_t K,
              const float *a, int64_t lda, const float *b, int64_t ldb,
              float *c, int64_t ldc) {
  (accumulate ? Accum : Plain)(M, vectors, K, a, lda, b, ldb, c, ldc);
}

struct Choice {
  MicroGemmFn fn;
  const char *name;
};

/// Every implementation, best first, with whether this CPU can run it.
struct Candidate {
  Choice choice;
  bool supported;
};

std::vector<Candidate> candidates() {
  // simdLevel: the CPU's level, or a lower one MEGAGRAPH_SIMD asks for.
  const SimdLevel level = simdLevel();
  return {
      {{dispatch<gemmAvx512<false>, gemmAvx512<true>>, "avx512"},
       level == SimdLevel::V4},
      {{dispatch<gemmAvx2<false>, gemmAvx2<true>>, "avx2"},
       level >= SimdLevel::V3},
      {{dispatch<gemmGeneric<false>, gemmGeneric<true>>, "generic"}, true},
  };
}

Choice choose() {
  for (const Candidate &c : candidates())
    if (c.supported)
      return c.choice;
  return {nullptr, "none"}; // unreachable: generic is always supported
}

const Choice &chosen() {
  static const Choice c = choose();
  return c;
}

} // namespace

MicroGemmFn microGemm() { return chosen().fn; }
const char *microGemmName() { return chosen().name; }

MicroGemmFn microGemmFor(const char *name) {
  for (const Candidate &c : candidates())
    if (c.supported && std::strcmp(c.choice.name, name) == 0)
      return c.choice.fn;
  return nullptr;
}

} // namespace mgrt
