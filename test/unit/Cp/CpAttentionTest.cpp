//===- CpAttentionTest.cpp - Context-parallel attention under mpirun ------===//
//
// mgrt_cp_attention_f32 / _bwd_f32 (megagraph/RuntimeCp.h), all three
// modes (all-gather, ring, Ulysses), against the single-process kernels on the
// full problem. Every operand is a deterministic function of its global index,
// so each rank builds only its own rows for the cp call and the whole problem
// for the reference; the largest error over the ranks (all-reduced) must stay
// within 1e-4. Row blocks are uneven; one case gives a rank no rows at all. The
// spatial entries (mgrt_cp_attention_spatial_f32 / _bwd_f32) are checked the
// same way against the single-process spatial kernels. Ulysses alone: the heads
// must split over the group, and the bytes each rank sends are exactly its
// all-to-alls' (q, k, v and the bias to heads, the output back). A last test
// prints each rank's peak tracked bytes against the single-process run.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeCp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

mgrt_comm_group *world() { return mgrt_comm_world(); }
int np() { return mgrt_comm_size(world()); }
int rank() { return mgrt_comm_rank(world()); }

/// A value in [-1, 1) from a seed and a global index.
float hashValue(uint64_t seed, int64_t a, int64_t b, int64_t c, int64_t d) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull;
  for (int64_t v : {a, b, c, d}) {
    x ^= static_cast<uint64_t>(v) + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
  }
  return static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.f;
}

/// The keep mask of the masked cases: row 3 keeps nothing, rows 1 mod 7 keep
/// only keys 0..4 (one rank's block, so the others see an empty row), the
/// rest keep about 80% of the keys.
int8_t keep(int64_t b, int64_t i, int64_t j) {
  if (i == 3)
    return 0;
  if (i % 7 == 1)
    return j < 5;
  return hashValue(7, b, 0, i, j) > -0.6f;
}

struct Case {
  int64_t B = 2, H = 4, D = 32, Dv = 24, S = 200;
  int64_t biasB = 1, biasH = 4; // bias / dbias [biasB, biasH, rows, S]
  bool hasBias = true, hasMask = true, wantDBias = true;
  bool packedQkv = false; // q, k, v as column views of one [B, n, 2D+Dv]
  bool emptyRank = false; // rank 1 holds no rows
};

/// Uneven row blocks of S over C ranks.
std::vector<int64_t> splitRows(int64_t S, int C, bool emptyRank) {
  std::vector<int64_t> w(C);
  for (int r = 0; r < C; ++r)
    w[r] = (emptyRank && r == 1) ? 0 : 2 + (r * 5 + 3) % 7;
  const int64_t sum = std::accumulate(w.begin(), w.end(), int64_t(0));
  std::vector<int64_t> rows(C);
  int64_t used = 0;
  for (int r = 0; r < C; ++r) {
    rows[r] = r + 1 == C ? S - used : S * w[r] / sum;
    used += rows[r];
  }
  return rows;
}

mgrt_memref_f32_3 desc3(float *p, int64_t d0, int64_t d1, int64_t d2,
                        int64_t ld) {
  mgrt_memref_f32_3 d{};
  d.allocated = d.aligned = p;
  d.sizes[0] = d0, d.sizes[1] = d1, d.sizes[2] = d2;
  d.strides[0] = d1 * ld, d.strides[1] = ld, d.strides[2] = 1;
  return d;
}

template <typename T, typename Desc>
Desc desc4(T *p, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  Desc d{};
  d.allocated = d.aligned = p;
  d.sizes[0] = d0, d.sizes[1] = d1, d.sizes[2] = d2, d.sizes[3] = d3;
  d.strides[3] = 1, d.strides[2] = d3, d.strides[1] = d2 * d3;
  d.strides[0] = d1 * d2 * d3;
  return d;
}

/// The operands and results of one problem over rows [first, first + n).
struct Rows {
  int64_t n, first;
  std::vector<float> qkv, dout, out, dq, dk, dv, bias, dbias;
  std::vector<int8_t> mask;
  mgrt_memref_f32_3 q, k, v, dO, o, dQ, dK, dV;
  mgrt_memref_f32_4 b, dB;
  mgrt_memref_i8_4 m;

  Rows(const Case &c, int64_t n, int64_t first) : n(n), first(first) {
    const int64_t B = c.B, D = c.D, Dv = c.Dv, S = c.S;
    const int64_t w = 2 * D + Dv;
    qkv.resize(B * n * w);
    dout.resize(B * n * Dv);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t x = 0; x < Dv; ++x)
          dout[(b * n + i) * Dv + x] = hashValue(2, b, first + i, x, 0);
    if (c.packedQkv) {
      q = desc3(qkv.data(), B, n, D, w);
      k = desc3(qkv.data() + D, B, n, D, w);
      v = desc3(qkv.data() + 2 * D, B, n, Dv, w);
    } else { // three contiguous arrays carved from qkv
      q = desc3(qkv.data(), B, n, D, D);
      k = desc3(qkv.data() + B * n * D, B, n, D, D);
      v = desc3(qkv.data() + 2 * B * n * D, B, n, Dv, Dv);
    }
    // Element (b, i, x) of q, k, v depends on the global row only.
    int id = 0;
    for (mgrt_memref_f32_3 *t : {&q, &k, &v}) {
      ++id;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t x = 0; x < t->sizes[2]; ++x)
            t->aligned[b * t->strides[0] + i * t->strides[1] + x] =
                hashValue(id, b, first + i, x, 1);
    }
    dO = desc3(dout.data(), B, n, Dv, Dv);
    out.assign(B * n * Dv, 99.f), dq.assign(B * n * D, 99.f);
    dk.assign(B * n * D, 99.f), dv.assign(B * n * Dv, 99.f);
    o = desc3(out.data(), B, n, Dv, Dv);
    dQ = desc3(dq.data(), B, n, D, D);
    dK = desc3(dk.data(), B, n, D, D);
    dV = desc3(dv.data(), B, n, Dv, Dv);
    bias.resize(c.biasB * c.biasH * n * S);
    for (int64_t b = 0; b < c.biasB; ++b)
      for (int64_t h = 0; h < c.biasH; ++h)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < S; ++j)
            bias[((b * c.biasH + h) * n + i) * S + j] =
                2.f * hashValue(3, b, h, first + i, j);
    dbias.assign(bias.size(), 99.f);
    b = desc4<float, mgrt_memref_f32_4>(bias.data(), c.biasB, c.biasH, n, S);
    dB = desc4<float, mgrt_memref_f32_4>(dbias.data(), c.biasB, c.biasH, n, S);
    mask.resize(B * n * S);
    for (int64_t bb = 0; bb < B; ++bb)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < S; ++j)
          mask[(bb * n + i) * S + j] = keep(bb, first + i, j);
    m = desc4<int8_t, mgrt_memref_i8_4>(mask.data(), B, 1, n, S);
  }
};

int64_t flagsOf(const Case &c) {
  return (c.hasBias ? MGRT_ATTENTION_BIAS : 0) |
         (c.hasMask ? MGRT_ATTENTION_MASK : 0) |
         (c.wantDBias ? MGRT_ATTENTION_DBIAS : 0);
}

/// Largest |local - reference rows| of a [d0, rows, d2] block (rows dim 1)
/// or, with `rows4`, of a [d0, d1, rows, S] block.
float maxDiff3(const std::vector<float> &loc, const std::vector<float> &ref,
               int64_t d0, int64_t n, int64_t first, int64_t S, int64_t d2) {
  float e = 0.f;
  for (int64_t a = 0; a < d0; ++a)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t x = 0; x < d2; ++x)
        e = std::max(e, std::fabs(loc[(a * n + i) * d2 + x] -
                                  ref[(a * S + first + i) * d2 + x]));
  return e;
}

float allMax(float x) {
  float y = x;
  mgrt_comm_all_reduce(world(), &x, &y, 1, MGRT_F32, MGRT_COMM_MAX);
  return y;
}

class CpAttention : public ::testing::TestWithParam<int> {};

const char *modeName(int mode) {
  return mode == MGRT_CP_RING      ? "ring"
         : mode == MGRT_CP_ULYSSES ? "ulysses"
                                   : "allgather";
}

/// Forward and backward of `c` in mode GetParam() against the reference.
void checkCase(const Case &c, int mode) {
  const int C = np(), r = rank();
  const std::vector<int64_t> rows = splitRows(c.S, C, c.emptyRank);
  int64_t first = 0;
  for (int s = 0; s < r; ++s)
    first += rows[s];
  const float scale = 1.f / std::sqrt(float(c.D / c.H));
  const int64_t flags = flagsOf(c);

  // 1. Reference: the single-process kernels on the whole problem.
  Rows full(c, c.S, 0);
  _mlir_ciface_mgrt_attention_f32(
      &full.o, &full.q, &full.k, &full.v, c.hasBias ? &full.b : nullptr,
      c.hasMask ? &full.m : nullptr, c.H, scale, flags);
  _mlir_ciface_mgrt_attention_bwd_f32(
      &full.dQ, &full.dK, &full.dV, c.wantDBias ? &full.dB : nullptr, &full.dO,
      &full.q, &full.k, &full.v, c.hasBias ? &full.b : nullptr,
      c.hasMask ? &full.m : nullptr, c.H, scale, flags);

  // 2. This rank's rows through the cp group.
  Rows loc(c, rows[r], first);
  ASSERT_EQ(mgrt_cp_attention_f32(world(), mode, &loc.o, &loc.q, &loc.k, &loc.v,
                                  c.hasBias ? &loc.b : nullptr,
                                  c.hasMask ? &loc.m : nullptr, c.H, scale,
                                  flags),
            MGRT_OK);
  ASSERT_EQ(mgrt_cp_attention_bwd_f32(
                world(), mode, &loc.dQ, &loc.dK, &loc.dV,
                c.wantDBias ? &loc.dB : nullptr, &loc.dO, &loc.q, &loc.k,
                &loc.v, c.hasBias ? &loc.b : nullptr,
                c.hasMask ? &loc.m : nullptr, c.H, scale, flags),
            MGRT_OK);

  // 3. Errors, the largest over the ranks.
  const int64_t n = rows[r];
  const float eOut =
      allMax(maxDiff3(loc.out, full.out, c.B, n, first, c.S, c.Dv));
  const float eDq = allMax(maxDiff3(loc.dq, full.dq, c.B, n, first, c.S, c.D));
  const float eDk = allMax(maxDiff3(loc.dk, full.dk, c.B, n, first, c.S, c.D));
  const float eDv = allMax(maxDiff3(loc.dv, full.dv, c.B, n, first, c.S, c.Dv));
  // dbias [biasB, biasH, rows, S]: rows are dimension 2.
  const float eDb =
      c.wantDBias ? allMax(maxDiff3(loc.dbias, full.dbias, c.biasB * c.biasH, n,
                                    first, c.S, c.S))
                  : 0.f;
  if (r == 0) {
    std::printf("  [%s np=%d rows", modeName(mode), C);
    for (int64_t x : rows)
      std::printf(" %lld", (long long)x);
    std::printf("] max abs err: out %.2e dq %.2e dk %.2e dv %.2e dbias %.2e\n",
                eOut, eDq, eDk, eDv, eDb);
  }
  EXPECT_LE(eOut, 1e-4f);
  EXPECT_LE(eDq, 1e-4f);
  EXPECT_LE(eDk, 1e-4f);
  EXPECT_LE(eDv, 1e-4f);
  EXPECT_LE(eDb, 1e-4f);
}

TEST_P(CpAttention, BiasBroadcastOverBatchWithMask) {
  Case c; // bias, dbias [1, H, rows, S]; mask [B, 1, rows, S]
  checkCase(c, GetParam());
}

TEST_P(CpAttention, PerBatchBiasBroadcastOverHeadsPackedQkv) {
  Case c;
  c.biasB = c.B, c.biasH = 1, c.hasMask = false, c.packedQkv = true;
  c.S = 173;
  checkCase(c, GetParam());
}

TEST_P(CpAttention, NoBiasNoMask) {
  Case c;
  c.hasBias = c.hasMask = c.wantDBias = false;
  c.B = 3, c.S = 131;
  checkCase(c, GetParam());
}

TEST_P(CpAttention, RankWithoutRows) {
  if (np() < 2)
    GTEST_SKIP() << "needs two ranks";
  Case c;
  c.emptyRank = true;
  checkCase(c, GetParam());
}

TEST_P(CpAttention, RejectsBiasWithoutAllKeys) {
  Case c;
  const std::vector<int64_t> rows = splitRows(c.S, np(), false);
  int64_t first = 0;
  for (int s = 0; s < rank(); ++s)
    first += rows[s];
  Rows loc(c, rows[rank()], first);
  loc.b.sizes[3] = c.S - 1; // a bias that lacks a key column
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  EXPECT_EQ(mgrt_cp_attention_f32(world(), GetParam(), &loc.o, &loc.q, &loc.k,
                                  &loc.v, &loc.b, nullptr, c.H, 1.f,
                                  MGRT_ATTENTION_BIAS),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::strstr(mgrt_comm_last_error(), "bias key dimension"), nullptr);
  EXPECT_EQ(mgrt_cp_attention_f32(world(), 7, &loc.o, &loc.q, &loc.k, &loc.v,
                                  nullptr, nullptr, c.H, 1.f, 0),
            MGRT_ERR_ARGUMENT);
  mgrt_comm_set_error_mode(prev);
}

TEST_P(CpAttention, CompiledCodeEntriesMatchTheCApi) {
  Case c;
  const std::vector<int64_t> rows = splitRows(c.S, np(), false);
  int64_t first = 0;
  for (int s = 0; s < rank(); ++s)
    first += rows[s];
  const int64_t flags = flagsOf(c);
  Rows a(c, rows[rank()], first), b(c, rows[rank()], first);
  ASSERT_EQ(mgrt_cp_attention_f32(world(), GetParam(), &a.o, &a.q, &a.k, &a.v,
                                  &a.b, &a.m, c.H, 0.3f, flags),
            MGRT_OK);
  ASSERT_EQ(mgrt_cp_attention_bwd_f32(world(), GetParam(), &a.dQ, &a.dK, &a.dV,
                                      &a.dB, &a.dO, &a.q, &a.k, &a.v, &a.b,
                                      &a.m, c.H, 0.3f, flags),
            MGRT_OK);
  // The cp axis of a 1 x 1 x C x 1 grid (dp x pp x cp, axis 2).
  _mlir_ciface_mgrt_cp_attention_f32(&b.o, &b.q, &b.k, &b.v, &b.b, &b.m, c.H,
                                     0.3f, flags, 1, 1, np(), 1, 1 << 2,
                                     GetParam(), /*seq=*/0);
  _mlir_ciface_mgrt_cp_attention_bwd_f32(
      &b.dQ, &b.dK, &b.dV, &b.dB, &b.dO, &b.q, &b.k, &b.v, &b.b, &b.m, c.H,
      0.3f, flags, 1, 1, np(), 1, 1 << 2, GetParam(), /*seq=*/0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
  EXPECT_EQ(a.dbias, b.dbias);
}

/// Compiled code with uneven blocks (C does not divide S): every rank's
/// operands hold ceil(S / C) rows, its block (mgrt_cp_block_rows) first and
/// padding after it. The padding (NaN here) must be neither read nor a
/// key, the block's results must equal the C API's on the block alone, and
/// the results' padding rows must be zero.
TEST_P(CpAttention, CompiledCodePadsUnevenBlocks) {
  Case c;
  const int C = np(), r = rank();
  c.S = 7 * C + (C > 1 ? C - 1 : 0); // C > 1 does not divide it
  const int64_t all = (c.S + C - 1) / C;
  const int64_t n = mgrt_cp_block_rows(c.S, C, r);
  const int64_t first = mgrt_cp_block_first(c.S, C, r);
  const int64_t flags = flagsOf(c);
  Rows a(c, n, first), p(c, all, first);
  const float nan = std::nanf("");
  for (mgrt_memref_f32_3 *t : {&p.q, &p.k, &p.v, &p.dO})
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t i = n; i < all; ++i)
        for (int64_t x = 0; x < t->sizes[2]; ++x)
          t->aligned[b * t->strides[0] + i * t->strides[1] + x] = nan;
  for (int64_t h = 0; h < c.biasB * c.biasH; ++h)
    for (int64_t i = n; i < all; ++i)
      for (int64_t j = 0; j < c.S; ++j)
        p.bias[(h * all + i) * c.S + j] = nan;
  ASSERT_EQ(mgrt_cp_attention_f32(world(), GetParam(), &a.o, &a.q, &a.k, &a.v,
                                  &a.b, &a.m, c.H, 0.3f, flags),
            MGRT_OK);
  ASSERT_EQ(mgrt_cp_attention_bwd_f32(world(), GetParam(), &a.dQ, &a.dK, &a.dV,
                                      &a.dB, &a.dO, &a.q, &a.k, &a.v, &a.b,
                                      &a.m, c.H, 0.3f, flags),
            MGRT_OK);
  _mlir_ciface_mgrt_cp_attention_f32(&p.o, &p.q, &p.k, &p.v, &p.b, &p.m, c.H,
                                     0.3f, flags, 1, 1, C, 1, 1 << 2,
                                     GetParam(), c.S);
  _mlir_ciface_mgrt_cp_attention_bwd_f32(
      &p.dQ, &p.dK, &p.dV, &p.dB, &p.dO, &p.q, &p.k, &p.v, &p.b, &p.m, c.H,
      0.3f, flags, 1, 1, C, 1, 1 << 2, GetParam(), c.S);
  // [d0, rows, d2] arrays: the block's rows equal, the padding zero.
  int wrong = 0;
  auto compare = [&](const std::vector<float> &block,
                     const std::vector<float> &padded, int64_t d0, int64_t d2) {
    for (int64_t x = 0; x < d0; ++x)
      for (int64_t i = 0; i < all; ++i)
        for (int64_t y = 0; y < d2; ++y) {
          const float got = padded[(x * all + i) * d2 + y];
          const float want = i < n ? block[(x * n + i) * d2 + y] : 0.f;
          wrong += !(got == want);
        }
  };
  compare(a.out, p.out, c.B, c.Dv);
  compare(a.dq, p.dq, c.B, c.D);
  compare(a.dk, p.dk, c.B, c.D);
  compare(a.dv, p.dv, c.B, c.Dv);
  compare(a.dbias, p.dbias, c.biasB * c.biasH, c.S);
  EXPECT_EQ(wrong, 0) << "rank " << r << " of " << C << ": " << n << " of "
                      << all << " rows";
}

/// The spatial entries (mgrt_cp_attention_spatial_f32 / _bwd_f32) against
/// the single-process spatial kernels: int16 distances d(b, i, j) that
/// depend on the global key column (and run below 0 and past V - 1, so the
/// clamp matters), this rank's rows of them over all S keys; the table
/// gradient is each rank's part, all-reduced here as the step does.
void checkSpatial(Case c, int mode, int64_t V) {
  const int C = np(), r = rank();
  const std::vector<int64_t> rows = splitRows(c.S, C, c.emptyRank);
  int64_t first = 0;
  for (int s = 0; s < r; ++s)
    first += rows[s];
  const float scale = 1.f / std::sqrt(float(c.D / c.H));
  const int64_t flags = flagsOf(c);
  auto dist = [](int64_t b, int64_t i, int64_t j) {
    return static_cast<int16_t>((std::abs(i - 2 * j) + 3 * b) % 13 - 2);
  };
  std::vector<float> table(V * c.H);
  for (int64_t v = 0; v < V; ++v)
    for (int64_t h = 0; h < c.H; ++h)
      table[v * c.H + h] = 3.f * hashValue(5, v, h, 0, 0);
  mgrt_memref_f32_2 T{};
  T.allocated = T.aligned = table.data();
  T.sizes[0] = V, T.sizes[1] = c.H, T.strides[0] = c.H, T.strides[1] = 1;
  struct Spatial {
    std::vector<int16_t> d;
    std::vector<float> dt;
    mgrt_memref_i16_3 D{};
    mgrt_memref_f32_2 dT{};
  };
  auto makeSpatial = [&](int64_t n, int64_t first) {
    Spatial sp;
    sp.d.resize(c.B * n * c.S);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < c.S; ++j)
          sp.d[(b * n + i) * c.S + j] = dist(b, first + i, j);
    sp.D.allocated = sp.D.aligned = sp.d.data();
    sp.D.sizes[0] = c.B, sp.D.sizes[1] = n, sp.D.sizes[2] = c.S;
    sp.D.strides[0] = n * c.S, sp.D.strides[1] = c.S, sp.D.strides[2] = 1;
    sp.dt.assign(V * c.H, 99.f);
    sp.dT = T;
    sp.dT.allocated = sp.dT.aligned = sp.dt.data();
    return sp;
  };

  // 1. Reference: the single-process spatial kernels on the whole problem.
  Rows full(c, c.S, 0);
  Spatial fs = makeSpatial(c.S, 0);
  _mlir_ciface_mgrt_attention_spatial_f32(
      &full.o, nullptr, &full.q, &full.k, &full.v,
      c.hasBias ? &full.b : nullptr, c.hasMask ? &full.m : nullptr, &fs.D, &T,
      c.H, scale, flags & ~int64_t(MGRT_ATTENTION_DBIAS));
  _mlir_ciface_mgrt_attention_spatial_bwd_f32(
      &full.dQ, &full.dK, &full.dV, c.wantDBias ? &full.dB : nullptr, &fs.dT,
      &full.dO, &full.q, &full.k, &full.v, c.hasBias ? &full.b : nullptr,
      c.hasMask ? &full.m : nullptr, &fs.D, &T, nullptr, nullptr, c.H, scale,
      flags);

  // 2. This rank's rows (and distance rows) through the cp group.
  Rows loc(c, rows[r], first);
  Spatial ls = makeSpatial(rows[r], first);
  ASSERT_EQ(mgrt_cp_attention_spatial_f32(
                world(), mode, &loc.o, &loc.q, &loc.k, &loc.v,
                c.hasBias ? &loc.b : nullptr, c.hasMask ? &loc.m : nullptr,
                &ls.D, &T, c.H, scale, flags & ~int64_t(MGRT_ATTENTION_DBIAS)),
            MGRT_OK);
  ASSERT_EQ(mgrt_cp_attention_spatial_bwd_f32(
                world(), mode, &loc.dQ, &loc.dK, &loc.dV,
                c.wantDBias ? &loc.dB : nullptr, &ls.dT, &loc.dO, &loc.q,
                &loc.k, &loc.v, c.hasBias ? &loc.b : nullptr,
                c.hasMask ? &loc.m : nullptr, &ls.D, &T, c.H, scale, flags),
            MGRT_OK);
  std::vector<float> dtable(V * c.H);
  mgrt_comm_all_reduce(world(), ls.dt.data(), dtable.data(), V * c.H, MGRT_F32,
                       MGRT_COMM_SUM);

  // 3. Errors, the largest over the ranks.
  const int64_t n = rows[r];
  const float eOut =
      allMax(maxDiff3(loc.out, full.out, c.B, n, first, c.S, c.Dv));
  const float eDq = allMax(maxDiff3(loc.dq, full.dq, c.B, n, first, c.S, c.D));
  const float eDk = allMax(maxDiff3(loc.dk, full.dk, c.B, n, first, c.S, c.D));
  const float eDv = allMax(maxDiff3(loc.dv, full.dv, c.B, n, first, c.S, c.Dv));
  const float eDb =
      c.wantDBias ? allMax(maxDiff3(loc.dbias, full.dbias, c.biasB * c.biasH, n,
                                    first, c.S, c.S))
                  : 0.f;
  float eDt = 0.f, scaleDt = 0.f;
  for (int64_t x = 0; x < V * c.H; ++x) {
    eDt = std::max(eDt, std::fabs(dtable[x] - fs.dt[x]));
    scaleDt = std::max(scaleDt, std::fabs(fs.dt[x]));
  }
  if (r == 0)
    std::printf("  [spatial %s np=%d V=%lld] max abs err: out %.2e dq %.2e "
                "dk %.2e dv %.2e dbias %.2e dtable %.2e (of %.2e)\n",
                modeName(mode), C, (long long)V, eOut, eDq, eDk, eDv, eDb, eDt,
                scaleDt);
  EXPECT_LE(eOut, 1e-4f);
  EXPECT_LE(eDq, 1e-4f);
  EXPECT_LE(eDk, 1e-4f);
  EXPECT_LE(eDv, 1e-4f);
  EXPECT_LE(eDb, 1e-4f);
  EXPECT_LE(eDt, 1e-4f * std::max(1.f, scaleDt));
  EXPECT_GT(scaleDt, 0.f);
}

TEST_P(CpAttention, SpatialBiasWithBiasAndMask) {
  Case c; // uneven blocks, bias [1, H, rows, S] and mask beside the table
  checkSpatial(c, GetParam(), /*V=*/9);
}

TEST_P(CpAttention, SpatialBiasNarrowHeads) {
  Case c; // dh = dvh = 8: the narrow-head forward, a 20-row table
  c.Dv = c.D, c.hasBias = c.hasMask = c.wantDBias = false, c.S = 157;
  checkSpatial(c, GetParam(), /*V=*/20);
}

TEST_P(CpAttention, SpatialBiasRankWithoutRows) {
  if (np() < 2)
    GTEST_SKIP() << "needs two ranks";
  Case c;
  c.emptyRank = true, c.hasBias = c.wantDBias = false;
  checkSpatial(c, GetParam(), /*V=*/5);
}

INSTANTIATE_TEST_SUITE_P(Modes, CpAttention,
                         ::testing::Values(int(MGRT_CP_ALLGATHER),
                                           int(MGRT_CP_RING),
                                           int(MGRT_CP_ULYSSES)),
                         [](const ::testing::TestParamInfo<int> &info) {
                           return info.param == MGRT_CP_RING      ? "Ring"
                                  : info.param == MGRT_CP_ULYSSES ? "Ulysses"
                                                                  : "AllGather";
                         });

TEST(CpUlysses, RejectsHeadsTheGroupDoesNotDivide) {
  if (np() < 2)
    GTEST_SKIP() << "needs two ranks";
  Case c; // 3 heads over 2 or 4 ranks
  c.H = 3, c.biasH = 3, c.D = c.Dv = 24;
  const std::vector<int64_t> rows = splitRows(c.S, np(), false);
  int64_t first = 0;
  for (int s = 0; s < rank(); ++s)
    first += rows[s];
  Rows loc(c, rows[rank()], first);
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  EXPECT_EQ(mgrt_cp_attention_f32(world(), MGRT_CP_ULYSSES, &loc.o, &loc.q,
                                  &loc.k, &loc.v, nullptr, nullptr, c.H, 1.f,
                                  0),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::strstr(mgrt_comm_last_error(), "to divide the 3 heads"),
            nullptr)
      << mgrt_comm_last_error();
  mgrt_comm_set_error_mode(prev);
}

/// The bytes a rank sends in one Ulysses forward (mgrt_comm_bytes_sent):
/// the row-count all-gather of the layout, q, k and v to heads (1 - 1/C of
/// this rank's rows), the [1, H, rows, S] bias to heads (1 - 1/C of its
/// rows), the [B, 1, rows, S] int8 mask (whole, to every other rank: it is
/// not split by heads) and the output back to rows (the other ranks' rows
/// of this rank's H / C heads). Then the backward: q, k, v, dO to heads,
/// bias and mask again, dq, dk, dv and dbias back.
TEST(CpUlysses, BytesSentAreTheAllToAlls) {
  Case c;
  const int C = np(), r = rank();
  const std::vector<int64_t> rows = splitRows(c.S, C, false);
  int64_t first = 0;
  for (int s = 0; s < r; ++s)
    first += rows[s];
  const int64_t R = rows[r], others = c.S - R, flags = flagsOf(c);
  Rows loc(c, R, first);
  const int64_t f = sizeof(float), layout = (C - 1) * sizeof(int64_t);
  // To heads: this rank's rows of the other ranks' heads; back: the other
  // ranks' rows of this rank's heads.
  auto to = [&](int64_t width) { return c.B * R * width / C * (C - 1) * f; };
  auto back = [&](int64_t width) { return c.B * others * width / C * f; };
  const int64_t bias = c.biasB * c.H * R * c.S / C * (C - 1) * f;
  const int64_t dbias = c.biasB * c.H * others * c.S / C * f;
  const int64_t mask = c.B * R * c.S * (C - 1);
  uint64_t before = mgrt_comm_bytes_sent();
  ASSERT_EQ(mgrt_cp_attention_f32(world(), MGRT_CP_ULYSSES, &loc.o, &loc.q,
                                  &loc.k, &loc.v, &loc.b, &loc.m, c.H, 0.3f,
                                  flags),
            MGRT_OK);
  const int64_t fwd = int64_t(mgrt_comm_bytes_sent() - before);
  EXPECT_EQ(fwd, layout + to(2 * c.D + c.Dv) + bias + mask + back(c.Dv));
  before = mgrt_comm_bytes_sent();
  ASSERT_EQ(mgrt_cp_attention_bwd_f32(world(), MGRT_CP_ULYSSES, &loc.dQ,
                                      &loc.dK, &loc.dV, &loc.dB, &loc.dO,
                                      &loc.q, &loc.k, &loc.v, &loc.b, &loc.m,
                                      c.H, 0.3f, flags),
            MGRT_OK);
  const int64_t bwd = int64_t(mgrt_comm_bytes_sent() - before);
  EXPECT_EQ(bwd, layout + to(2 * c.D + 2 * c.Dv) + bias + mask +
                     back(2 * c.D + c.Dv) + dbias);
  if (r == 0)
    std::printf("  [ulysses np=%d S=%lld] rank 0 sends %lld bytes forward, "
                "%lld backward\n",
                C, (long long)c.S, (long long)fwd, (long long)bwd);
}

/// The spatial Ulysses entries gather the int16 distance rows of all ranks
/// once while they stay the same (a step's attentions read the same
/// ones): a second call with the same rows sends that much less, one with
/// changed rows on one rank gathers again.
TEST(CpUlysses, DistanceRowsTravelOncePerStep) {
  Case c;
  c.hasBias = c.hasMask = c.wantDBias = false, c.S = 64;
  const int C = np(), r = rank();
  const std::vector<int64_t> rows = splitRows(c.S, C, false);
  int64_t first = 0;
  for (int s = 0; s < r; ++s)
    first += rows[s];
  const int64_t R = rows[r], V = 6;
  Rows loc(c, R, first);
  std::vector<int16_t> d(c.B * R * c.S);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < c.S; ++j)
        d[(b * R + i) * c.S + j] = static_cast<int16_t>((first + i + j) % V);
  mgrt_memref_i16_3 D{};
  D.allocated = D.aligned = d.data();
  D.sizes[0] = c.B, D.sizes[1] = R, D.sizes[2] = c.S;
  D.strides[0] = R * c.S, D.strides[1] = c.S, D.strides[2] = 1;
  std::vector<float> table(V * c.H, 0.25f);
  mgrt_memref_f32_2 T{};
  T.allocated = T.aligned = table.data();
  T.sizes[0] = V, T.sizes[1] = c.H, T.strides[0] = c.H, T.strides[1] = 1;
  auto sent = [&] {
    const uint64_t before = mgrt_comm_bytes_sent();
    EXPECT_EQ(mgrt_cp_attention_spatial_f32(world(), MGRT_CP_ULYSSES, &loc.o,
                                            &loc.q, &loc.k, &loc.v, nullptr,
                                            nullptr, &D, &T, c.H, 0.3f, 0),
              MGRT_OK);
    return int64_t(mgrt_comm_bytes_sent() - before);
  };
  for (int16_t &x : d) // rows no earlier call has seen
    x = static_cast<int16_t>(V - 1 - x);
  const int64_t gathered = sent(), reused = sent();
  const int64_t rowsBytes = (C - 1) * c.B * R * c.S * int64_t(sizeof(int16_t));
  EXPECT_EQ(gathered - reused, rowsBytes);
  if (r == C - 1)
    d[0] = static_cast<int16_t>(d[0] + 1); // one rank's rows change
  EXPECT_EQ(sent(), gathered);
}

/// A tracked (mgrt_alloc) array, so the peak counts it.
struct Tracked {
  float *p;
  explicit Tracked(size_t n)
      : p(static_cast<float *>(mgrt_alloc(n * sizeof(float)))) {
    for (size_t i = 0; i < n; ++i)
      p[i] = 0.01f * float(i % 97);
  }
  ~Tracked() { mgrt_free(p); }
};

/// Peak tracked bytes of one forward + backward over `n` rows of a problem
/// with a [1, H, n, S] bias and its gradient; cp over the world when
/// `mode` >= 0, the single-process kernels otherwise.
size_t peakBytes(int64_t n, int64_t S, int mode) {
  const int64_t B = 1, H = 4, D = 32;
  const size_t before = mgrt_current_bytes();
  mgrt_reset_peak();
  {
    Tracked q(B * n * D), k(B * n * D), v(B * n * D), o(B * n * D),
        dout(B * n * D), dq(B * n * D), dk(B * n * D), dv(B * n * D),
        bias(H * n * S), dbias(H * n * S);
    mgrt_memref_f32_3 Q = desc3(q.p, B, n, D, D), K = desc3(k.p, B, n, D, D),
                      V = desc3(v.p, B, n, D, D), O = desc3(o.p, B, n, D, D),
                      G = desc3(dout.p, B, n, D, D),
                      dQ = desc3(dq.p, B, n, D, D),
                      dK = desc3(dk.p, B, n, D, D),
                      dV = desc3(dv.p, B, n, D, D);
    auto Bi = desc4<float, mgrt_memref_f32_4>(bias.p, 1, H, n, S);
    auto dBi = desc4<float, mgrt_memref_f32_4>(dbias.p, 1, H, n, S);
    const int64_t flags = MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
    if (mode < 0) {
      _mlir_ciface_mgrt_attention_f32(&O, &Q, &K, &V, &Bi, nullptr, H, 0.35f,
                                      flags);
      _mlir_ciface_mgrt_attention_bwd_f32(&dQ, &dK, &dV, &dBi, &G, &Q, &K, &V,
                                          &Bi, nullptr, H, 0.35f, flags);
    } else {
      EXPECT_EQ(mgrt_cp_attention_f32(world(), mode, &O, &Q, &K, &V, &Bi,
                                      nullptr, H, 0.35f, flags),
                MGRT_OK);
      EXPECT_EQ(mgrt_cp_attention_bwd_f32(world(), mode, &dQ, &dK, &dV, &dBi,
                                          &G, &Q, &K, &V, &Bi, nullptr, H,
                                          0.35f, flags),
                MGRT_OK);
    }
  }
  return mgrt_peak_bytes() - before;
}

TEST(CpAttentionMemory, PeakBytesPerRank) {
  const int64_t S = 1024;
  const int C = np(), r = rank();
  const std::vector<int64_t> rows = splitRows(S, C, false);
  int64_t single = 0;
  if (r == 0)
    single = static_cast<int64_t>(peakBytes(S, S, -1));
  mgrt_comm_broadcast(world(), &single, 1, MGRT_I64, 0);
  for (int mode : {int(MGRT_CP_ALLGATHER), int(MGRT_CP_RING)}) {
    const int64_t mine = static_cast<int64_t>(peakBytes(rows[r], S, mode));
    std::vector<int64_t> all(C);
    mgrt_comm_all_gather(world(), &mine, 1, all.data(), nullptr, MGRT_I64);
    if (r == 0) {
      std::printf("  S=%lld H=4 D=32, [1,H,rows,S] bias + dbias, %s, "
                  "peak MiB: single process %.2f | per rank",
                  (long long)S, mode == MGRT_CP_RING ? "ring" : "allgather",
                  single / 1048576.0);
      for (int s = 0; s < C; ++s)
        std::printf(" %.2f (%lld rows)", all[s] / 1048576.0,
                    (long long)rows[s]);
      std::printf("\n");
    }
    // Each rank holds its own bias rows only: its peak follows its share of
    // the rows (the [S,S] terms dominate), with slack for K / V buffers.
    const double share = double(rows[r]) / double(S);
    EXPECT_LT(double(mine), (share + 0.1) * double(single))
        << "rank " << r << " rows " << rows[r];
  }
}

} // namespace

int main(int argc, char **argv) {
  if (mgrt_comm_init(&argc, &argv) != MGRT_OK)
    return 1;
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  int all = rc;
  mgrt_comm_all_reduce(world(), &rc, &all, 1, MGRT_I32, MGRT_COMM_MAX);
  mgrt_comm_finalize();
  return all;
}
