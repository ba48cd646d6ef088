//===- SpatialBias.h - Graphormer's spatial bias inside attention -*- C++
//-*-===//
//
// Internal to the runtime. The spatial attention kernels
// (mgrt_attention_spatial_f32 and its backward) never build the
// [B,H,Sq,Sk] bias table[clamp(distance[b,i,j]), h]: the forward adds the
// table entry to each score as it computes the score block, and the
// backward sums each dS into the table row of its distance. This header
// holds the operand view and the two inner loops, inlined into the
// per-target bodies of Attention(Block|Backward).cpp:
//   addSpatialRow     s[j] += table_h[clamp(d[j])] for one row of scores;
//                     a table of up to 16 (32) rows lives in one (two)
//                     registers and 16 lookups are one permute;
//   spatialHistogram  hist[clamp(d[i][j])] += ds[i][j] over a tile; with up
//                     to 24 table rows one accumulator register per row of
//                     the table, and per 16 scores one compare and one
//                     masked add per row of the table, no scatter (whose
//                     repeated indices would serialize on memory); on AVX2
//                     8 scores and 12 table rows at a time instead
//                     (SpatialHistogramAvx2.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_SPATIALBIAS_H
#define MEGAGRAPH_RUNTIME_KERNELS_SPATIALBIAS_H

#include "kernels/VectorMath.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace mgrt {

/// The spatial operands of one call: int16 distances [Db,Sq,Sk] (Db = B or
/// 1: batch stride 0, column stride 1) and the table transposed per head,
/// [H][ldT] (zero past its V rows).
struct SpatialBias {
  const int16_t *dist = nullptr;  // null: no spatial bias
  int64_t distStride[2] = {0, 0}; // batch, row
  const float *tableT = nullptr;
  int64_t V = 0, ldT = 0;

  explicit operator bool() const { return dist != nullptr; }
  const int16_t *row(int64_t b, int64_t i) const {
    return dist + b * distStride[0] + i * distStride[1];
  }
  const float *head(int64_t h) const { return tableT + h * ldT; }
  /// Leading dimension of tableT for a table of `v` rows: whole vectors,
  /// and at least the two vectors addSpatialRow loads.
  static int64_t leading(int64_t v) {
    return std::max<int64_t>(2 * kLanes, (v + kLanes - 1) / kLanes * kLanes);
  }
};

typedef int16_t VShort __attribute__((vector_size(32)));

/// 16 distances widened to int32 and clamped to [0, hi].
MGRT_INLINE VInt loadIndices(const int16_t *p, int32_t hi) {
  VShort s;
  std::memcpy(&s, p, sizeof s);
  VInt x = __builtin_convertvector(s, VInt);
  const VInt zero = VInt{} + 0, top = VInt{} + hi;
  x = x < zero ? zero : x;
  return x > top ? top : x;
}

/// The table entries of 8 indices ix (already clamped to the table) for
/// the AVX2 bodies: a permute of each 8-row part of the head's column (tab:
/// NT registers), blended by the index's part.
template <int NT>
MGRT_V3_INLINE __m256 lookupTable8(const __m256 (&tab)[4], __m256i ix) {
  __m256 r = _mm256_permutevar8x32_ps(tab[0], ix);
#pragma GCC unroll 4
  for (int k = 1; k < NT; ++k) {
    const __m256 part = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(ix, _mm256_set1_epi32(8 * k - 1)));
    r = _mm256_blendv_ps(r, _mm256_permutevar8x32_ps(tab[k], ix), part);
  }
  return r;
}

/// The clamped index of one distance.
MGRT_INLINE int32_t clampIndex(int16_t d, int32_t hi) {
  return std::min<int32_t>(std::max<int32_t>(d, 0), hi);
}

/// s[j] += tab[clamp(d[j], 0, V - 1)] for j < n (tab padded as tableT).
MGRT_INLINE void addSpatialRow(float *s, const int16_t *d, int64_t n,
                               const float *tab, int64_t V) {
  const int32_t hi = static_cast<int32_t>(V - 1);
  int64_t j = 0;
  if (V <= kLanes) { // one register, a one-source permute
    const VFloat t = load(tab);
    for (; j + kLanes <= n; j += kLanes)
      store(s + j, load(s + j) + __builtin_shuffle(t, loadIndices(d + j, hi)));
  } else if (V <= 2 * kLanes) {
    const VFloat lo = load(tab), up = load(tab + kLanes);
    for (; j + kLanes <= n; j += kLanes)
      store(s + j,
            load(s + j) + __builtin_shuffle(lo, up, loadIndices(d + j, hi)));
  }
  for (; j < n; ++j)
    s[j] += tab[clampIndex(d[j], hi)];
}

/// spatialHistogram for tables of at most NB rows: one accumulator
/// register per row for the whole block, bins unrolled.
template <int NB>
MGRT_INLINE void histogramBins(const float *ds, int64_t ldS, const int16_t *d,
                               int64_t ldD, int64_t rows, int64_t n, int32_t hi,
                               float *hist) {
  VFloat acc[NB];
#pragma GCC unroll 32
  for (int v = 0; v < NB; ++v)
    acc[v] = splat(0.f);
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t r = 0; r < rows; ++r) {
    const float *dsr = ds + r * ldS;
    const int16_t *dr = d + r * ldD;
    for (int64_t c = 0; c < whole; c += kLanes) {
      const VInt idx = loadIndices(dr + c, hi);
      const VFloat x = load(dsr + c);
#pragma GCC unroll 32
      for (int v = 0; v < NB; ++v)
        acc[v] = idx == v ? acc[v] + x : acc[v];
    }
    for (int64_t c = whole; c < n; ++c)
      hist[clampIndex(dr[c], hi)] += dsr[c];
  }
#pragma GCC unroll 32
  for (int v = 0; v < NB; ++v)
    if (v <= hi)
      hist[v] += reduceSum(acc[v]);
}

/// spatialHistogram on AVX2 (SpatialHistogramAvx2.cpp): 8 scores per ymm
/// register and at most 12 table rows' accumulators at a time, where the
/// 16-lane accumulators would spill on AVX2's 16 registers.
void spatialHistogramAvx2(const float *ds, int64_t ldS, const int16_t *d,
                          int64_t ldD, int64_t rows, int64_t n, int64_t V,
                          float *hist);

/// hist[v] += sum of ds[r * ldS + c] over r < rows, c < n with
/// clamp(d[r * ldD + c], 0, V - 1) = v (hist: V floats).
MGRT_INLINE void spatialHistogram(const float *ds, int64_t ldS,
                                  const int16_t *d, int64_t ldD, int64_t rows,
                                  int64_t n, int64_t V, float *hist) {
  if (simdLevel() == SimdLevel::V3)
    return spatialHistogramAvx2(ds, ldS, d, ldD, rows, n, V, hist);
  const int32_t hi = static_cast<int32_t>(V - 1);
  switch (V) { // one register per table row, as many as the table has
    // clang-format off
#define MGRT_BINS(NB)                                                          \
  case NB:                                                                     \
    return histogramBins<NB>(ds, ldS, d, ldD, rows, n, hi, hist);
    MGRT_BINS(1) MGRT_BINS(2) MGRT_BINS(3) MGRT_BINS(4)
    MGRT_BINS(5) MGRT_BINS(6) MGRT_BINS(7) MGRT_BINS(8)
    MGRT_BINS(9) MGRT_BINS(10) MGRT_BINS(11) MGRT_BINS(12)
    MGRT_BINS(13) MGRT_BINS(14) MGRT_BINS(15) MGRT_BINS(16)
#undef MGRT_BINS
  default:
    break;
  }
  // clang-format on
  if (V <= 24)
    return histogramBins<24>(ds, ldS, d, ldD, rows, n, hi, hist);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c)
      hist[clampIndex(d[r * ldD + c], hi)] += ds[r * ldS + c];
}

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_SPATIALBIAS_H
