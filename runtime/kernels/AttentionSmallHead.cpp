//===- AttentionSmallHead.cpp - Attention forward for narrow heads --------===//
//
// The blockwise kernel (AttentionBlock.cpp) multiplies a [rows, 256] score
// block out of micro GEMMs whose inner dimension is the head width; at
// dh = 16 each register tile does 16 multiply-adds between its loads and
// stores, and the scores travel through an L2-sized buffer between Q K^T,
// the softmax and P V. This path turns the problem around: 16 query rows
// lie across the lanes of one vector, and the keys are walked one at a
// time, so that everything a key needs stays in registers:
//
//   s_j    = log2(e) (tab[idx_j] + sum_c (scale q_c) k[j][c])
//            one vector per key j: the 16 queries' scores in base 2 (dh
//            multiply-adds, k[j][c] broadcast; log2(e) folded into the
//            scaled q and the table)
//   m, l   the reference (running max, up to 2^kSlack) and sum of each
//            query row, lane-wise: no horizontal reduction anywhere, and
//            the accumulators are rescaled only when a group of kGroup
//            keys raises some row's max by more than kSlack
//   o_c   += 2^(s_j - m) v[j][c]                    dvh accumulators, one
//            per output column
//
// The accumulators o (dvh vectors) stay in registers from the first key to
// the last; the scores of a group of kGroup keys go from the Q K^T product
// through the exponential into the P V product without leaving them. k
// and v are packed per head, key by key. The spatial bias is a one- or
// two-register permute of the head's table column by the clamped distances,
// which each task transposes once into a [Sk][16]-byte index tile shared by
// the heads it runs. On AVX2 (16 ymm registers) the same walk runs on 8
// query rows per register with the accumulators in an L1 tile (the AVX2
// body below).
//
// Numerics: the blockwise kernel's up to rounding. P = 2^(s - m) with m
// within kSlack of the running max (P <= e^8 instead of <= 1: the quotient
// o / l and lse = m ln 2 + log l do not depend on m), out = o / l (0 where
// l = 0), lse -inf where l = 0. The base-2 exponential (exp2Score) needs
// no reduction by ln 2: a rounding, a subtraction, six multiply-adds and a
// scaling, about 1.5 ulp, where vexp spends sixteen operations for about
// 1; folding log2(e) into q and the table rounds each score once more.
//
//===----------------------------------------------------------------------===//

#include "kernels/AttentionSmallHead.h"

#include "megagraph/Runtime.h"

#include "kernels/VectorMath.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <immintrin.h>

namespace mgrt {
namespace {

/// Keys whose scores are in registers at once: the softmax checks for a new
/// row max once per group.
constexpr int kGroup = 8;

/// The kernel works in base 2: q and the spatial table are scaled by
/// log2(e) once, so a score s is log2(e) times the natural one and its
/// weight is 2^(s - m): the exponential needs no range reduction by ln 2.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;

/// How far (base-2 units) a row's scores may rise above the reference it
/// subtracts before the accumulators are rescaled: P <= 2^11.5 ~ e^8 ~ 3e3,
/// and a sum of 2^31 of them stays far below the float range.
constexpr float kSlack = 11.5f;

/// 2^r for |r| <= 1/2: a degree-6 polynomial fitted for least relative
/// error (1.9e-9 in exact arithmetic, under 1.5 ulp evaluated in float
/// with fused multiply-adds), constant term 1.
constexpr float kExp2Poly[7] = {1.f,
                                0.6931471824645996f,
                                0.24022647738456726f,
                                0.05550328642129898f,
                                0.009618470445275307f,
                                0.001339997281320393f,
                                0.00015350867761299014f};

/// Below this, 2^x is 0 (or, on AVX-512, a denormal under 2^-149).
constexpr float kExp2Floor = -127.f;

/// Whether some lane of a is greater than b's (false for NaN lanes). On
/// AVX-512 one mask compare and a test (inline assembly for the reason
/// fmaBroadcast gives); elsewhere the compare's lanes ORed as 64-bit words.
template <SimdLevel L> MGRT_INLINE bool anyGreater(VFloat a, VFloat b) {
  if constexpr (L == SimdLevel::V4) {
    bool any;
    asm("vcmpps $0x1e, %[b], %[a], %%k1\n\tkortestw %%k1, %%k1"
        : "=@ccnz"(any)
        : [a] "v"(a), [b] "v"(b)
        : "k1");
    return any;
  } else {
    const VInt gt = a > b;
    int64_t w[kLanes / 2];
    std::memcpy(w, &gt, sizeof w);
    int64_t any = 0;
#pragma GCC unroll 8
    for (int i = 0; i < kLanes / 2; ++i)
      any |= w[i];
    return any != 0;
  }
}

/// The 16 clamped table rows of one key (bytes in the tile), widened to
/// int32: on AVX-512 one vpmovzxbd from memory (inline assembly: GCC 12
/// widens int8 vectors lane by lane).
template <SimdLevel L> MGRT_INLINE VInt loadIndexTile(const uint8_t *p) {
  if constexpr (L == SimdLevel::V4) {
    VInt x;
    asm("vpmovzxbd %[m], %[x]"
        : [x] "=v"(x)
        : [m] "m"(*reinterpret_cast<const VByte *>(p)));
    return x;
  } else {
    return loadBytes(reinterpret_cast<const int8_t *>(p));
  }
}

/// 2^x for the weights (x <= kSlack; -inf gives 0): n = round(x), r = x - n
/// (exact), 2^r by kExp2Poly, times 2^n. On AVX-512 the rounding is one
/// vrndscaleps and the scaling one vscalefps (inline assembly for the
/// reason fmaBroadcast gives); elsewhere the rounding adds and subtracts
/// 1.5 * 2^23 and 2^n is built from n's bits (n = -127 gives 0).
template <SimdLevel L> MGRT_INLINE VFloat exp2Score(VFloat x) {
  const VFloat xc = vmax(x, splat(kExp2Floor));
  VFloat n;
  if constexpr (L == SimdLevel::V4)
    asm("vrndscaleps $0, %[x], %[n]" : [n] "=v"(n) : [x] "v"(xc));
  else
    n = (xc + 12582912.f) - 12582912.f;
  const VFloat r = xc - n;
  VFloat p = splat(kExp2Poly[6]);
#pragma GCC unroll 6
  for (int k = 5; k >= 0; --k)
    p = p * r + kExp2Poly[k];
  if constexpr (L == SimdLevel::V4) {
    VFloat y;
    asm("vscalefps %[n], %[p], %[y]" : [y] "=v"(y) : [p] "v"(p), [n] "v"(n));
    return y;
  } else {
    VInt bits = (__builtin_convertvector(n, VInt) + 127) << 23;
    VFloat scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
  }
}

/// acc += x * (*p in every lane). AVX-512 folds the broadcast into the
/// multiply-add ({1to16}), one instruction; GCC 12 will not emit that form
/// here by itself: it merges the broadcasts of 16 adjacent floats into one
/// load and 16 permutes (a shuffle per multiply-add), or, without SLP
/// vectorization, builds the vector lane by lane. Hence the inline
/// assembly, only in the AVX-512 body; the others multiply by a splat.
template <SimdLevel L>
MGRT_INLINE void fmaBroadcast(VFloat &acc, VFloat x, const float *p) {
  if constexpr (L == SimdLevel::V4)
    asm("vfmadd231ps %[m]%{1to16%}, %[x], %[acc]"
        : [acc] "+v"(acc)
        : [x] "v"(x), [m] "m"(*p));
  else
    acc += x * splat(*p);
}

/// G keys (packed k, v rows, index tiles at stride kLanes)
/// into the running state m, l, o of 16 query rows.
template <int G, int DH, int DV, int NT, SimdLevel L>
MGRT_INLINE void keyGroup(const float *qt, VFloat (&o)[DV], VFloat &m,
                          VFloat &ref, VFloat &l, VFloat t0, VFloat t1,
                          const float *kv, const uint8_t *idx) {
  constexpr int ld = DH + DV; // packed rows: k then v of one key
  VFloat s[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    if constexpr (NT == 0)
      s[g] = splat(0.f);
    else if constexpr (NT == 1)
      s[g] = __builtin_shuffle(t0, loadIndexTile<L>(idx + g * kLanes));
    else
      s[g] = __builtin_shuffle(t0, t1, loadIndexTile<L>(idx + g * kLanes));
  }
#pragma GCC unroll 32
  for (int c = 0; c < DH; ++c) {
    const VFloat qc = load(qt + c * kLanes);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
      fmaBroadcast<L>(s[g], qc, kv + g * ld + c);
  }
  VFloat mx = s[0];
#pragma GCC unroll 8
  for (int g = 1; g < G; ++g)
    mx = vmax(mx, s[g]);
  // m is the reference each row subtracts before exp, its running max up
  // to kSlack: P <= e^kSlack, and the rescale is only needed (and only
  // done, for every row at once) when a group raises some row's max by
  // more than that.
  if (anyGreater<L>(mx, m + kSlack)) {
    const VFloat mNew = vmax(mx, m);
    // 1 where the reference stays (also -inf to -inf), else 2^(m - m').
    const VFloat alpha = mx > m ? exp2Score<L>(m - mNew) : splat(1.f);
    l *= alpha;
#pragma GCC unroll 32
    for (int c = 0; c < DV; ++c)
      o[c] *= alpha;
    m = mNew;
    // A row whose scores so far are all -inf subtracts 0: its P stays 0.
    ref = m == splat(kNegInf) ? splat(0.f) : m;
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    s[g] = exp2Score<L>(s[g] - ref);
    l += s[g];
  }
#pragma GCC unroll 32
  for (int c = 0; c < DV; ++c)
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
      fmaBroadcast<L>(o[c], s[g], kv + g * ld + DH + c);
}

/// Query rows [i0, i0 + mq) (mq <= 16) of batch b, head h: out, and lse
/// when asked. `idx` is the task's index tile (NT > 0).
template <int DH, int DV, int NT, SimdLevel L>
MGRT_INLINE void headTile(const AttentionProblem &p, const float *packed,
                          const uint8_t *idx, int64_t b, int64_t h, int64_t i0,
                          int64_t mq) {
  alignas(64) float buf[(DH > DV ? DH : DV) * kLanes];
  const float *q = p.q + b * p.qStride[0] + i0 * p.qStride[1] + h * DH;
  const float qScale = p.scale * kLog2e;
  for (int64_t r = 0; r < kLanes; ++r)
    for (int c = 0; c < DH; ++c)
      buf[c * kLanes + r] = r < mq ? qScale * q[r * p.qStride[1] + c] : 0.f;
  alignas(64) float qt[DH * kLanes];
  std::memcpy(qt, buf, sizeof qt);

  VFloat o[DV];
#pragma GCC unroll 32
  for (int c = 0; c < DV; ++c)
    o[c] = splat(0.f);
  VFloat m = splat(kNegInf), ref = splat(0.f), l = splat(0.f);
  VFloat t0 = splat(0.f), t1 = splat(0.f);
  if constexpr (NT >= 1)
    t0 = load(p.spatial.head(h)) * kLog2e;
  if constexpr (NT == 2)
    t1 = load(p.spatial.head(h) + kLanes) * kLog2e;
  const float *kv = packed + (b * p.H + h) * p.Sk * (DH + DV);
  int64_t j = 0;
  // (No index tile without a spatial bias: idx stays null, never offset.)
  auto tileAt = [idx](int64_t j) { return NT ? idx + j * kLanes : idx; };
  for (; j + kGroup <= p.Sk; j += kGroup)
    keyGroup<kGroup, DH, DV, NT, L>(qt, o, m, ref, l, t0, t1,
                                    kv + j * (DH + DV), tileAt(j));
  for (; j < p.Sk; ++j)
    keyGroup<1, DH, DV, NT, L>(qt, o, m, ref, l, t0, t1, kv + j * (DH + DV),
                               tileAt(j));

  // out = o / l, 0 for a row without keys; lse = m ln 2 + log l (m is in
  // base 2), or -inf.
  const VFloat inv = l > splat(0.f) ? splat(1.f) / l : splat(0.f);
#pragma GCC unroll 32
  for (int c = 0; c < DV; ++c)
    store(buf + c * kLanes, o[c] * inv);
  float *out = p.out + b * p.oStride[0] + i0 * p.oStride[1] + h * DV;
  for (int64_t r = 0; r < mq; ++r)
    for (int c = 0; c < DV; ++c)
      out[r * p.oStride[1] + c] = buf[c * kLanes + r];
  if (p.lse) {
    float *lse = p.lse + (b * p.H + h) * p.Sq + i0;
    for (int64_t r = 0; r < mq; ++r)
      lse[r] = l[r] > 0.f ? m[r] * kLn2 + std::log(l[r]) : kNegInf;
  }
}

/// The 16 x 16 bytes r[0..15] (row i in r[i]) transposed in place: four
/// rounds of byte interleaves of r[i] and r[i + 8]. Each round rotates the
/// 8-bit position (row bits, then column bits) of every byte left by one,
/// so after four the row and column bits have traded places. SSE2: every
/// x86-64 CPU.
MGRT_INLINE void transpose16x16Bytes(__m128i (&r)[16]) {
#pragma GCC unroll 4
  for (int round = 0; round < 4; ++round) {
    __m128i t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      r[i] = t[i];
  }
}

/// The task's index tile: the clamped table rows of query rows
/// [i0, i0 + mq), transposed, idx[j * 16 + r] for row i0 + r (rows past mq
/// read row 0 of the table; their lanes are dropped). Blocks of 16 keys
/// are clamped 8 distances at a time (int16 max/min, then packed to bytes:
/// 0 <= index <= 31 fits) and transposed in registers; the last Sk % 16
/// keys one by one.
inline void fillIndexTile(const AttentionProblem &p, uint8_t *idx, int64_t b,
                          int64_t i0, int64_t mq) {
  static_assert(kLanes == 16, "the index tile holds 16 rows per key");
  const int32_t hi = static_cast<int32_t>(p.spatial.V - 1);
  const int64_t sk = p.Sk;
  const int16_t *rows[16];
  for (int64_t r = 0; r < 16; ++r)
    rows[r] = r < mq ? p.spatial.row(b, i0 + r) : nullptr;
  const __m128i zero = _mm_setzero_si128();
  const __m128i top = _mm_set1_epi16(static_cast<int16_t>(hi));
  int64_t j = 0;
  for (; j + 16 <= sk; j += 16) {
    __m128i t[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) {
      if (!rows[r]) {
        t[r] = zero;
        continue;
      }
      const auto *d = reinterpret_cast<const __m128i *>(rows[r] + j);
      const __m128i first =
          _mm_min_epi16(_mm_max_epi16(_mm_loadu_si128(d), zero), top);
      const __m128i second =
          _mm_min_epi16(_mm_max_epi16(_mm_loadu_si128(d + 1), zero), top);
      t[r] = _mm_packus_epi16(first, second);
    }
    transpose16x16Bytes(t);
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(idx + (j + k) * 16), t[k]);
  }
  for (; j < sk; ++j)
    for (int64_t r = 0; r < 16; ++r)
      idx[j * 16 + r] =
          rows[r] ? static_cast<uint8_t>(clampIndex(rows[r][j], hi)) : 0;
}

/// One task: query rows [i0, i0 + mq) of batch b, heads [h0, h1).
template <SimdLevel L>
MGRT_INLINE void smallHeadTaskBody(const AttentionProblem &p,
                                   const float *packed, uint8_t *idx, int64_t b,
                                   int64_t i0, int64_t h0, int64_t h1) {
  const int64_t mq = std::min<int64_t>(kLanes, p.Sq - i0);
  int nt = 0;
  if (p.spatial) {
    fillIndexTile(p, idx, b, i0, mq);
    nt = p.spatial.V <= kLanes ? 1 : 2;
  }
  for (int64_t h = h0; h < h1; ++h) {
#define MGRT_SMALL_HEAD_CASE(D, N)                                             \
  if (p.dh == D && nt == N)                                                    \
    headTile<D, D, N, L>(p, packed, idx, b, h, i0, mq);                        \
  else
    MGRT_SMALL_HEAD_CASE(16, 1)
    MGRT_SMALL_HEAD_CASE(16, 0)
    MGRT_SMALL_HEAD_CASE(16, 2)
    MGRT_SMALL_HEAD_CASE(8, 1)
    MGRT_SMALL_HEAD_CASE(8, 0)
    MGRT_SMALL_HEAD_CASE(8, 2)
    MGRT_SMALL_HEAD_CASE(32, 1)
    MGRT_SMALL_HEAD_CASE(32, 0)
    MGRT_SMALL_HEAD_CASE(32, 2)
#undef MGRT_SMALL_HEAD_CASE
    MGRT_CHECK(false, MGRT_KERNEL_ATTENTION,
               "no narrow-head kernel for dh=%lld", (long long)p.dh);
  }
}

__attribute__((target("arch=x86-64-v4"))) void
smallHeadTaskV4(const AttentionProblem &p, const float *packed, uint8_t *idx,
                int64_t b, int64_t i0, int64_t h0, int64_t h1) {
  smallHeadTaskBody<SimdLevel::V4>(p, packed, idx, b, i0, h0, h1);
}

// ---------------------------------------------------------------------------
// The AVX2 body. With 16 ymm registers the 16-lane body above cannot keep
// its dvh accumulators (two registers each) in registers, and spills in
// the innermost loops. Here 8 query rows lie across the lanes of one
// register, the accumulators o live in an L1-resident [dvh][8] tile that
// each key group loads, updates with its 8 keys and stores once (16
// multiply-adds per column between a load and a store), and a 16-row tile
// of the task is two 8-row halves. Per lane the arithmetic is the 16-lane
// body's: the same scores, the same reference and rescale rule, the same
// base-2 exponential's steps (exp2Score's portable form), the same order
// of the sums.
// ---------------------------------------------------------------------------

/// exp2Score on 8 lanes.
MGRT_V3_INLINE __m256 exp2_8(__m256 x) {
  const __m256 xc = _mm256_max_ps(x, _mm256_set1_ps(kExp2Floor));
  const __m256 n =
      _mm256_round_ps(xc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_sub_ps(xc, n);
  __m256 p = _mm256_set1_ps(kExp2Poly[6]);
#pragma GCC unroll 6
  for (int k = 5; k >= 0; --k)
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExp2Poly[k]));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/// The table entries of 8 clamped indices (bytes at p): a permute of each
/// 8-row part of the head's column, blended by the index's part.
template <int NT>
MGRT_V3_INLINE __m256 lookup8(const __m256 (&tab)[4], const uint8_t *p) {
  return lookupTable8<NT>(tab, _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                   reinterpret_cast<const __m128i *>(p))));
}

/// G keys into the running state of 8 query rows: m, ref, l in registers,
/// o ([DV][8]) in memory. qt is [DH][8]; idx points at the first key's 8
/// index bytes of this half, keys kLanes bytes apart.
template <int G, int DH, int DV, int NT>
MGRT_V3_INLINE void keyGroup8(const float *qt, float *o, __m256 &m, __m256 &ref,
                              __m256 &l, const __m256 (&tab)[4],
                              const float *kv, const uint8_t *idx) {
  constexpr int ld = DH + DV;
  __m256 s[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g)
    s[g] = NT ? lookup8<NT>(tab, idx + g * kLanes) : _mm256_setzero_ps();
#pragma GCC unroll 32
  for (int c = 0; c < DH; ++c) {
    const __m256 qc = _mm256_load_ps(qt + c * 8);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
      s[g] = _mm256_fmadd_ps(qc, _mm256_broadcast_ss(kv + g * ld + c), s[g]);
  }
  __m256 mx = s[0];
#pragma GCC unroll 8
  for (int g = 1; g < G; ++g)
    mx = _mm256_max_ps(mx, s[g]);
  const __m256 limit = _mm256_add_ps(m, _mm256_set1_ps(kSlack));
  if (_mm256_movemask_ps(_mm256_cmp_ps(mx, limit, _CMP_GT_OQ))) {
    const __m256 mNew = _mm256_max_ps(mx, m);
    const __m256 raise = _mm256_cmp_ps(mx, m, _CMP_GT_OQ);
    const __m256 alpha = _mm256_blendv_ps(
        _mm256_set1_ps(1.f), exp2_8(_mm256_sub_ps(m, mNew)), raise);
    l = _mm256_mul_ps(l, alpha);
#pragma GCC unroll 32
    for (int c = 0; c < DV; ++c)
      _mm256_store_ps(o + c * 8,
                      _mm256_mul_ps(_mm256_load_ps(o + c * 8), alpha));
    m = mNew;
    const __m256 empty = _mm256_cmp_ps(m, _mm256_set1_ps(kNegInf), _CMP_EQ_OQ);
    ref = _mm256_andnot_ps(empty, m);
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    s[g] = exp2_8(_mm256_sub_ps(s[g], ref));
    l = _mm256_add_ps(l, s[g]);
  }
#pragma GCC unroll 32
  for (int c = 0; c < DV; ++c) {
    __m256 acc = _mm256_load_ps(o + c * 8);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
      acc =
          _mm256_fmadd_ps(s[g], _mm256_broadcast_ss(kv + g * ld + DH + c), acc);
    _mm256_store_ps(o + c * 8, acc);
  }
}

/// Query rows [i0, i0 + mq) (mq <= 8) of batch b, head h; idx is this
/// half's first index byte (keys kLanes bytes apart).
template <int DH, int DV, int NT>
MGRT_V3_INLINE void headTile8(const AttentionProblem &p, const float *packed,
                              const uint8_t *idx, int64_t b, int64_t h,
                              int64_t i0, int64_t mq) {
  alignas(32) float qt[DH * 8];
  const float *q = p.q + b * p.qStride[0] + i0 * p.qStride[1] + h * DH;
  const float qScale = p.scale * kLog2e;
  for (int64_t r = 0; r < 8; ++r)
    for (int c = 0; c < DH; ++c)
      qt[c * 8 + r] = r < mq ? qScale * q[r * p.qStride[1] + c] : 0.f;
  alignas(32) float o[DV * 8] = {};
  __m256 m = _mm256_set1_ps(kNegInf), ref = _mm256_setzero_ps(),
         l = _mm256_setzero_ps();
  __m256 tab[4] = {};
#pragma GCC unroll 4
  for (int k = 0; k < NT; ++k)
    tab[k] = _mm256_mul_ps(_mm256_loadu_ps(p.spatial.head(h) + 8 * k),
                           _mm256_set1_ps(kLog2e));
  const float *kv = packed + (b * p.H + h) * p.Sk * (DH + DV);
  auto tileAt = [idx](int64_t j) { return NT ? idx + j * kLanes : idx; };
  int64_t j = 0;
  for (; j + kGroup <= p.Sk; j += kGroup)
    keyGroup8<kGroup, DH, DV, NT>(qt, o, m, ref, l, tab, kv + j * (DH + DV),
                                  tileAt(j));
  for (; j < p.Sk; ++j)
    keyGroup8<1, DH, DV, NT>(qt, o, m, ref, l, tab, kv + j * (DH + DV),
                             tileAt(j));

  // out = o / l, 0 for a row without keys; lse = m + log l, or -inf.
  alignas(32) float inv[8], mv[8], lv[8];
  const __m256 pos = _mm256_cmp_ps(l, _mm256_setzero_ps(), _CMP_GT_OQ);
  _mm256_store_ps(inv,
                  _mm256_and_ps(pos, _mm256_div_ps(_mm256_set1_ps(1.f), l)));
  _mm256_store_ps(mv, m);
  _mm256_store_ps(lv, l);
  float *out = p.out + b * p.oStride[0] + i0 * p.oStride[1] + h * DV;
  for (int64_t r = 0; r < mq; ++r)
    for (int c = 0; c < DV; ++c)
      out[r * p.oStride[1] + c] = o[c * 8 + r] * inv[r];
  if (p.lse) {
    float *lse = p.lse + (b * p.H + h) * p.Sq + i0;
    for (int64_t r = 0; r < mq; ++r)
      lse[r] = lv[r] > 0.f ? mv[r] * kLn2 + std::log(lv[r]) : kNegInf;
  }
}

/// One task on AVX2: the index tile as in smallHeadTaskBody, then each head
/// as two halves of 8 rows.
__attribute__((target("arch=x86-64-v3"))) void
smallHeadTaskV3(const AttentionProblem &p, const float *packed, uint8_t *idx,
                int64_t b, int64_t i0, int64_t h0, int64_t h1) {
  const int64_t mq = std::min<int64_t>(kLanes, p.Sq - i0);
  int nt = 0;
  if (p.spatial) {
    fillIndexTile(p, idx, b, i0, mq);
    nt = static_cast<int>((p.spatial.V + 7) / 8);
  }
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t half = 0; half * 8 < mq; ++half) {
      const uint8_t *at = idx ? idx + half * 8 : idx;
      const int64_t rows = std::min<int64_t>(8, mq - half * 8);
#define MGRT_SMALL_HEAD_CASE8(D, N)                                            \
  if (p.dh == D && nt == N)                                                    \
    headTile8<D, D, N>(p, packed, at, b, h, i0 + half * 8, rows);              \
  else
      MGRT_SMALL_HEAD_CASE8(16, 2)
      MGRT_SMALL_HEAD_CASE8(16, 1)
      MGRT_SMALL_HEAD_CASE8(16, 0)
      MGRT_SMALL_HEAD_CASE8(16, 3)
      MGRT_SMALL_HEAD_CASE8(16, 4)
      MGRT_SMALL_HEAD_CASE8(8, 2)
      MGRT_SMALL_HEAD_CASE8(8, 1)
      MGRT_SMALL_HEAD_CASE8(8, 0)
      MGRT_SMALL_HEAD_CASE8(8, 3)
      MGRT_SMALL_HEAD_CASE8(8, 4)
      MGRT_SMALL_HEAD_CASE8(32, 2)
      MGRT_SMALL_HEAD_CASE8(32, 1)
      MGRT_SMALL_HEAD_CASE8(32, 0)
      MGRT_SMALL_HEAD_CASE8(32, 3)
      MGRT_SMALL_HEAD_CASE8(32, 4)
#undef MGRT_SMALL_HEAD_CASE8
      MGRT_CHECK(false, MGRT_KERNEL_ATTENTION,
                 "no narrow-head kernel for dh=%lld", (long long)p.dh);
    }
}

void smallHeadTaskBaseline(const AttentionProblem &p, const float *packed,
                           uint8_t *idx, int64_t b, int64_t i0, int64_t h0,
                           int64_t h1) {
  smallHeadTaskBody<SimdLevel::Baseline>(p, packed, idx, b, i0, h0, h1);
}

} // namespace

namespace {

/// MEGAGRAPH_ATTENTION_SMALL_HEAD: unset (on with AVX2 or AVX-512), "0" (off),
/// "1" (on at every level), "v3" or "baseline" (on, and that body even on an
/// AVX-512 CPU: tests of the other bodies).
const char *smallHeadSetting() {
  const char *env = std::getenv("MEGAGRAPH_ATTENTION_SMALL_HEAD");
  return env ? env : "";
}

} // namespace

bool smallHeadApplies(const AttentionProblem &p) {
  // On by default with AVX-512 (16-lane body) and AVX2 (8-lane body).
  const char *env = smallHeadSetting();
  if (std::strcmp(env, "0") == 0)
    return false;
  const bool forced = std::strcmp(env, "1") == 0 ||
                      std::strcmp(env, "v3") == 0 ||
                      std::strcmp(env, "baseline") == 0;
  if (!forced && simdLevel() == SimdLevel::Baseline)
    return false;
  return !p.hasBias && !p.hasMask && p.dh == p.dvh &&
         (p.dh == 8 || p.dh == 16 || p.dh == 32) &&
         (!p.spatial || p.spatial.V <= 2 * kLanes);
}

void runSmallHeadAttention(const AttentionProblem &p) {
  const int threads = numThreads();
  const int64_t tiles = (p.Sq + kLanes - 1) / kLanes;
  // A task runs every head of its query tile (one index tile for all), or
  // one head when that leaves too few tasks to feed every thread.
  const int64_t perTask = p.B * tiles >= 4 * threads ? p.H : 1;
  const int64_t groups = p.H / perTask;
  std::vector<uint8_t *> idx(threads, nullptr);
  if (p.spatial)
    for (int t = 0; t < threads; ++t) {
      const size_t bytes =
          static_cast<size_t>(std::max<int64_t>(p.Sk, 1)) * kLanes;
      idx[t] = static_cast<uint8_t *>(mgrt_alloc(bytes));
      MGRT_CHECK(idx[t], MGRT_KERNEL_ATTENTION,
                 "out of memory (%zu bytes of scratch)", bytes);
    }
  // k and v of each (b, h) packed key by key, [Sk][dh + dvh]: the key
  // group's broadcasts then address one base register plus constants.
  const int64_t ld = p.dh + p.dvh;
  const size_t packedBytes =
      sizeof(float) * std::max<int64_t>(p.B * p.H * p.Sk * ld, 1);
  float *packed = static_cast<float *>(mgrt_alloc(packedBytes));
  MGRT_CHECK(packed, MGRT_KERNEL_ATTENTION,
             "out of memory (%zu bytes of packed K, V)", packedBytes);
  parallelFor(p.B * p.H, [&](int64_t task, int) {
    const int64_t b = task / p.H, h = task % p.H;
    const float *k = p.k + b * p.kStride[0] + h * p.dh;
    const float *v = p.v + b * p.vStride[0] + h * p.dvh;
    float *dst = packed + task * p.Sk * ld;
    for (int64_t j = 0; j < p.Sk; ++j, dst += ld) {
      std::copy(k + j * p.kStride[1], k + j * p.kStride[1] + p.dh, dst);
      std::copy(v + j * p.vStride[1], v + j * p.vStride[1] + p.dvh, dst + p.dh);
    }
  });
  SimdLevel level = simdLevel();
  if (std::strcmp(smallHeadSetting(), "baseline") == 0)
    level = SimdLevel::Baseline;
  else if (std::strcmp(smallHeadSetting(), "v3") == 0 && level == SimdLevel::V4)
    level = SimdLevel::V3;
  parallelFor(p.B * tiles * groups, [&](int64_t task, int worker) {
    const int64_t b = task / (tiles * groups);
    const int64_t i0 = (task / groups) % tiles * kLanes;
    const int64_t h0 = task % groups * perTask;
    switch (level) {
    case SimdLevel::V4:
      return smallHeadTaskV4(p, packed, idx[worker], b, i0, h0, h0 + perTask);
    case SimdLevel::V3:
      return smallHeadTaskV3(p, packed, idx[worker], b, i0, h0, h0 + perTask);
    default:
      return smallHeadTaskBaseline(p, packed, idx[worker], b, i0, h0,
                                   h0 + perTask);
    }
  });
  for (uint8_t *block : idx)
    if (block)
      mgrt_free(block);
  mgrt_free(packed);
}

} // namespace mgrt
