//===- SpatialHistogramAvx2.cpp - The spatial dtable sums on AVX2 ---------===//
//
// spatialHistogram (SpatialBias.h) keeps one 16-lane accumulator per table
// row. On AVX2 such a vector is two ymm registers and the 16 registers of
// the ISA hold at most 7 rows' accumulators, so for the usual tables (10
// to 24 rows) the compare-and-add chain spilled on every score: the dtable
// sums took most of an AVX2 training step. Here 8 scores lie across one
// ymm register and the rows are taken 12 at a time (12 accumulators, the
// indices, the scores and a mask: 15 registers), one pass over the tile
// per group of 12 rows.
//
//===----------------------------------------------------------------------===//

#include "kernels/SpatialBias.h"

#include <immintrin.h>

namespace mgrt {
namespace {

/// Table rows [v0, v0 + G) of the tile's whole groups of 8 columns.
template <int G>
MGRT_V3_INLINE void binsAvx2(const float *ds, int64_t ldS, const int16_t *d,
                             int64_t ldD, int64_t rows, int64_t whole,
                             int32_t hi, int32_t v0, float *hist) {
  __m256 acc[G];
#pragma GCC unroll 12
  for (int v = 0; v < G; ++v)
    acc[v] = _mm256_setzero_ps();
  const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi32(hi);
  for (int64_t r = 0; r < rows; ++r) {
    const float *dsr = ds + r * ldS;
    const int16_t *dr = d + r * ldD;
    for (int64_t c = 0; c < whole; c += 8) {
      __m256i idx = _mm256_cvtepi16_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(dr + c)));
      idx = _mm256_min_epi32(_mm256_max_epi32(idx, zero), top);
      const __m256 x = _mm256_loadu_ps(dsr + c);
#pragma GCC unroll 12
      for (int v = 0; v < G; ++v) {
        const __m256 hit = _mm256_castsi256_ps(
            _mm256_cmpeq_epi32(idx, _mm256_set1_epi32(v0 + v)));
        acc[v] = _mm256_add_ps(acc[v], _mm256_and_ps(hit, x));
      }
    }
  }
#pragma GCC unroll 12
  for (int v = 0; v < G; ++v) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[v]);
    float sum = 0.f;
    for (float l : lanes)
      sum += l;
    hist[v0 + v] += sum;
  }
}

} // namespace

__attribute__((target("arch=x86-64-v3"))) void
spatialHistogramAvx2(const float *ds, int64_t ldS, const int16_t *d,
                     int64_t ldD, int64_t rows, int64_t n, int64_t V,
                     float *hist) {
  const int32_t hi = static_cast<int32_t>(V - 1);
  const int64_t whole = n / 8 * 8;
  constexpr int kGroup = 12;
  for (int32_t v0 = 0; v0 < V; v0 += kGroup) {
    switch (std::min<int64_t>(kGroup, V - v0)) {
      // clang-format off
#define MGRT_BINS8(G)                                                          \
  case G:                                                                      \
    binsAvx2<G>(ds, ldS, d, ldD, rows, whole, hi, v0, hist);                   \
    break;
      MGRT_BINS8(1) MGRT_BINS8(2) MGRT_BINS8(3) MGRT_BINS8(4)
      MGRT_BINS8(5) MGRT_BINS8(6) MGRT_BINS8(7) MGRT_BINS8(8)
      MGRT_BINS8(9) MGRT_BINS8(10) MGRT_BINS8(11) MGRT_BINS8(12)
#undef MGRT_BINS8
          // clang-format on
          default : break;
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = whole; c < n; ++c)
      hist[clampIndex(d[r * ldD + c], hi)] += ds[r * ldS + c];
}

} // namespace mgrt
