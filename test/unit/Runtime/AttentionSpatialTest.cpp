//===- AttentionSpatialTest.cpp - The spatial attention kernels -----------===//
//
// mgrt_attention_spatial_f32 and its backward read Graphormer's spatial
// bias table[clamp(distance[b,i,j], 0, V-1), h] in place. The references
// build that bias as a dense [B,H,Sq,Sk] tensor (plus the dense bias, when
// the case has one): the forward against the float64 naive attention, the
// backward against LibTorch autograd in float64 (TorchReference.cpp), whose
// dbias summed per table row in double is the reference dtable. Distances
// are drawn beyond both ends of the table (the clamp), tables of up to 16,
// up to 32 and more rows take the kernels' three lookup and histogram
// paths, and the backward runs both with the forward's statistics and
// without, on the one-pass and the phased paths.
//
// Tolerance: as AttentionBackwardTest, |kernel - reference| <= 1e-4 *
// max(1, max |reference|); dtable sums up to B*Sq*Sk terms per entry, so
// its bound is relative to the sum of |dS| over the entry's pairs.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace mgrt_test;

namespace {

enum class Dense { None, Full, OneHead };

struct Case {
  const char *name;
  int64_t B, Sq, Sk, H, dh, dvh;
  int64_t V;          // table rows
  bool batchDistance; // distance [B,Sq,Sk] (else [1,Sq,Sk])
  Dense dense;
  bool mask; // random mask with an empty row
};

/// A case: the kernel operands, and the problem of the dense references
/// (bias = dense bias + the spatial bias, [B,H,Sq,Sk]).
struct Spatial {
  AttentionProblem ref;
  std::vector<int16_t> dist;
  std::vector<int64_t> distShape;
  std::vector<float> table, dense;
  std::vector<int64_t> denseShape;
};

int64_t clampRow(int16_t d, int64_t V) {
  return std::min<int64_t>(std::max<int64_t>(d, 0), V - 1);
}

Spatial makeCase(const Case &c, unsigned seed) {
  Spatial s;
  AttentionProblem &p = s.ref;
  p.B = c.B, p.Sq = c.Sq, p.Sk = c.Sk, p.H = c.H, p.dh = c.dh, p.dvh = c.dvh;
  p.scale = 1.f / std::sqrt(static_cast<float>(c.dh));
  p.q = randomFloats(c.B * c.Sq * c.H * c.dh, seed, -2, 2);
  p.k = randomFloats(c.B * c.Sk * c.H * c.dh, seed + 1, -2, 2);
  p.v = randomFloats(c.B * c.Sk * c.H * c.dvh, seed + 2);
  s.distShape = {c.batchDistance ? c.B : 1, c.Sq, c.Sk};
  std::mt19937 gen(seed + 3);
  s.dist.resize(numel(s.distShape));
  for (int16_t &d : s.dist) // 2 below and 3 beyond the table: clamped
    d = static_cast<int16_t>(static_cast<int64_t>(gen() % (c.V + 5)) - 2);
  s.table = randomFloats(c.V * c.H, seed + 4, -2, 2);
  if (c.dense != Dense::None) {
    s.denseShape = {c.B, c.dense == Dense::Full ? c.H : 1, c.Sq, c.Sk};
    s.dense = randomFloats(numel(s.denseShape), seed + 5, -1, 1);
  }
  p.biasShape = {c.B, c.H, c.Sq, c.Sk};
  p.bias.resize(numel(p.biasShape));
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t i = 0; i < c.Sq; ++i)
        for (int64_t j = 0; j < c.Sk; ++j) {
          const int64_t db = c.batchDistance ? b : 0;
          float x =
              s.table[clampRow(s.dist[(db * c.Sq + i) * c.Sk + j], c.V) * c.H +
                      h];
          if (c.dense != Dense::None)
            x += s.dense[((b * s.denseShape[1] +
                           (c.dense == Dense::Full ? h : 0)) *
                              c.Sq +
                          i) *
                             c.Sk +
                         j];
          p.bias[((b * c.H + h) * c.Sq + i) * c.Sk + j] = x;
        }
  if (c.mask) {
    p.maskShape = {c.B, 1, c.Sq, c.Sk};
    p.mask.resize(numel(p.maskShape));
    for (uint8_t &m : p.mask)
      m = gen() % 10 < 7;
    std::fill(p.mask.begin() + (c.Sq / 2) * c.Sk,
              p.mask.begin() + (c.Sq / 2 + 1) * c.Sk, 0);
  }
  return s;
}

/// The operand descriptors of one call.
struct Operands {
  mgrt_memref_f32_3 q, k, v;
  mgrt_memref_f32_4 bias{};
  mgrt_memref_i8_4 mask{};
  mgrt_memref_i16_3 dist;
  mgrt_memref_f32_2 table;
  int64_t flags = 0;

  explicit Operands(Spatial &s) {
    AttentionProblem &p = s.ref;
    const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
    q = memref<mgrt_memref_f32_3>(p.q.data(), {p.B, p.Sq, D});
    k = memref<mgrt_memref_f32_3>(p.k.data(), {p.B, p.Sk, D});
    v = memref<mgrt_memref_f32_3>(p.v.data(), {p.B, p.Sk, Dv});
    dist = memref<mgrt_memref_i16_3>(s.dist.data(), s.distShape);
    table = memref<mgrt_memref_f32_2>(
        s.table.data(), {static_cast<int64_t>(s.table.size()) / p.H, p.H});
    if (!s.dense.empty()) {
      bias = memref<mgrt_memref_f32_4>(s.dense.data(), s.denseShape);
      flags |= MGRT_ATTENTION_BIAS;
    }
    if (!p.maskShape.empty()) {
      mask = memref<mgrt_memref_i8_4>(reinterpret_cast<int8_t *>(p.mask.data()),
                                      p.maskShape);
      flags |= MGRT_ATTENTION_MASK;
    }
  }
  mgrt_memref_f32_4 *biasP() {
    return flags & MGRT_ATTENTION_BIAS ? &bias : nullptr;
  }
  mgrt_memref_i8_4 *maskP() {
    return flags & MGRT_ATTENTION_MASK ? &mask : nullptr;
  }
};

struct Forward {
  std::vector<float> out, lse;
};

Forward runForward(Spatial &s) {
  AttentionProblem &p = s.ref;
  Operands o(s);
  Forward f;
  f.out.assign(p.B * p.Sq * p.H * p.dvh, -7.f);
  f.lse.assign(p.B * p.H * p.Sq, -7.f);
  auto out = memref<mgrt_memref_f32_3>(f.out.data(), {p.B, p.Sq, p.H * p.dvh});
  auto lse = memref<mgrt_memref_f32_3>(f.lse.data(), {p.B, p.H, p.Sq});
  _mlir_ciface_mgrt_attention_spatial_f32(
      &out, &lse, &o.q, &o.k, &o.v, o.biasP(), o.maskP(), &o.dist, &o.table,
      p.H, p.scale, o.flags | MGRT_ATTENTION_LSE);
  return f;
}

struct Grads {
  std::vector<float> dq, dk, dv, dbias, dtable;
};

/// The backward kernel, given the forward's statistics or not, with
/// MEGAGRAPH_ATTENTION_BWD set to `mode` (null: unset); outputs prefilled
/// with garbage.
Grads runBackward(Spatial &s, const std::vector<float> &dout,
                  const Forward *stats, const char *mode = nullptr) {
  AttentionProblem &p = s.ref;
  Operands o(s);
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  Grads g;
  g.dq.assign(p.B * p.Sq * D, -7.f);
  g.dk.assign(p.B * p.Sk * D, -7.f);
  g.dv.assign(p.B * p.Sk * Dv, -7.f);
  g.dtable.assign(s.table.size(), -7.f);
  auto dq = memref<mgrt_memref_f32_3>(g.dq.data(), {p.B, p.Sq, D});
  auto dk = memref<mgrt_memref_f32_3>(g.dk.data(), {p.B, p.Sk, D});
  auto dv = memref<mgrt_memref_f32_3>(g.dv.data(), {p.B, p.Sk, Dv});
  auto dO = memref<mgrt_memref_f32_3>(const_cast<float *>(dout.data()),
                                      {p.B, p.Sq, Dv});
  auto dtable =
      memref<mgrt_memref_f32_2>(g.dtable.data(), {o.table.sizes[0], p.H});
  mgrt_memref_f32_4 dbias{};
  int64_t flags = o.flags;
  if (!s.dense.empty()) {
    g.dbias.assign(s.dense.size(), -7.f);
    dbias = memref<mgrt_memref_f32_4>(g.dbias.data(), s.denseShape);
    flags |= MGRT_ATTENTION_DBIAS;
  }
  mgrt_memref_f32_3 out{}, lse{};
  if (stats) {
    out = memref<mgrt_memref_f32_3>(const_cast<float *>(stats->out.data()),
                                    {p.B, p.Sq, Dv});
    lse = memref<mgrt_memref_f32_3>(const_cast<float *>(stats->lse.data()),
                                    {p.B, p.H, p.Sq});
    flags |= MGRT_ATTENTION_LSE;
  }
  if (mode)
    setenv("MEGAGRAPH_ATTENTION_BWD", mode, 1);
  _mlir_ciface_mgrt_attention_spatial_bwd_f32(
      &dq, &dk, &dv, flags & MGRT_ATTENTION_DBIAS ? &dbias : nullptr, &dtable,
      &dO, &o.q, &o.k, &o.v, o.biasP(), o.maskP(), &o.dist, &o.table,
      stats ? &out : nullptr, stats ? &lse : nullptr, p.H, p.scale, flags);
  unsetenv("MEGAGRAPH_ATTENTION_BWD");
  return g;
}

float maxAbs(const std::vector<float> &v) {
  float m = 0;
  for (float x : v)
    m = std::max(m, std::abs(x));
  return m;
}

void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                 const char *what, float tol = 1e-4f) {
  const float bound = tol * std::max(1.f, maxAbs(want));
  const float err = maxAbsDiff(got, want);
  EXPECT_LE(err, bound) << what << ": max |diff| " << err << ", max |ref| "
                        << maxAbs(want);
}

/// The references of a case: autograd's gradients, its [B,H,Sq,Sk] dbias
/// summed per table row (dtable) and to the dense bias's shape (dbias),
/// and the sum of |dS| per table entry (for dtable's tolerance).
struct Reference {
  AttentionGrads autograd;
  std::vector<float> dtable, dbias;
  std::vector<double> magnitude;
};

Reference reference(const Case &c, const Spatial &s,
                    const std::vector<float> &dout) {
  Reference r;
  r.autograd = torchAttentionBackward(s.ref, dout);
  const std::vector<float> &full = r.autograd.dbias;
  std::vector<double> dtable(c.V * c.H, 0.0);
  r.magnitude.assign(c.V * c.H, 0.0);
  std::vector<double> dbias(s.dense.size(), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t i = 0; i < c.Sq; ++i)
        for (int64_t j = 0; j < c.Sk; ++j) {
          const double x = full[((b * c.H + h) * c.Sq + i) * c.Sk + j];
          const int64_t db = c.batchDistance ? b : 0;
          const int64_t v = clampRow(s.dist[(db * c.Sq + i) * c.Sk + j], c.V);
          dtable[v * c.H + h] += x;
          r.magnitude[v * c.H + h] += std::abs(x);
          if (c.dense == Dense::Full)
            dbias[((b * c.H + h) * c.Sq + i) * c.Sk + j] += x;
          else if (c.dense == Dense::OneHead)
            dbias[(b * c.Sq + i) * c.Sk + j] += x;
        }
  r.dtable.assign(dtable.begin(), dtable.end());
  r.dbias.assign(dbias.begin(), dbias.end());
  return r;
}

void expectDTable(const std::vector<float> &got, const Reference &r,
                  const char *what) {
  ASSERT_EQ(got.size(), r.dtable.size()) << what;
  for (size_t e = 0; e < got.size(); ++e)
    EXPECT_NEAR(got[e], r.dtable[e],
                1e-4 * std::max(1.f, std::abs(r.dtable[e])) +
                    1e-5 * r.magnitude[e])
        << what << " entry " << e;
}

void checkCase(const Case &c) {
  SCOPED_TRACE(c.name);
  Spatial s = makeCase(c, 71);
  const std::vector<float> dout =
      randomFloats(c.B * c.Sq * c.H * c.dvh, 72, -1, 1);
  Forward fwd = runForward(s);
  std::vector<double> lse;
  expectClose(fwd.out, naiveAttention(s.ref, &lse), "out");
  for (size_t r = 0; r < lse.size(); ++r) {
    if (lse[r] == -INFINITY) {
      EXPECT_EQ(fwd.lse[r], -INFINITY) << "row " << r;
      continue;
    }
    EXPECT_NEAR(fwd.lse[r], lse[r], 1e-4 * std::max(1.0, std::abs(lse[r])))
        << "row " << r;
  }
  Reference ref = reference(c, s, dout);
  const struct {
    const char *what;
    bool stats;
    const char *mode;
  } runs[] = {{"given lse", true, nullptr},
              {"recomputed", false, nullptr},
              {"phased", false, "phased"}};
  for (const auto &run : runs) {
    SCOPED_TRACE(run.what);
    Grads g = runBackward(s, dout, run.stats ? &fwd : nullptr, run.mode);
    expectClose(g.dq, ref.autograd.dq, "dq");
    expectClose(g.dk, ref.autograd.dk, "dk");
    expectClose(g.dv, ref.autograd.dv, "dv");
    expectDTable(g.dtable, ref, "dtable");
    if (c.dense != Dense::None)
      expectClose(g.dbias, ref.dbias, "dbias");
  }
}

const Case kCases[] = {
    // V <= 16: one permute register; batch-broadcast distances.
    {"v9_b2_shared", 2, 97, 130, 2, 8, 16, 9, false, Dense::None, false},
    // The histogram's bin count is the table's: the first and the last
    // count of the one-register range.
    {"v2_two_bins", 1, 40, 70, 1, 8, 8, 2, true, Dense::None, true},
    {"v16_all_bins", 2, 70, 90, 2, 8, 8, 16, true, Dense::None, false},
    // V <= 32: two registers; with a full dense bias and a mask.
    {"v24_dense_mask", 2, 130, 100, 3, 16, 8, 24, true, Dense::Full, true},
    // V > 32: scalar lookups and histogram; a head-broadcast dense bias
    // (the phased backward).
    {"v40_one_head", 1, 64, 200, 2, 16, 16, 40, true, Dense::OneHead, false},
    // A single table row; Sq = Sk = 1.
    {"v1_s1", 1, 1, 1, 1, 8, 8, 1, true, Dense::None, false},
    // Several runs of query blocks per (b, h).
    {"v9_runs", 1, 300, 290, 1, 16, 16, 9, true, Dense::None, true},
    // Narrow heads without a dense bias or mask take the forward of
    // AttentionSmallHead.cpp (16 queries across the lanes, keys in groups
    // of 8): sizes off both multiples, one query, one key, one- and
    // two-register tables, dh = 8, 16, 32, B = 1 and 2, and enough tiles
    // that a task runs every head of its tile.
    {"narrow_s37", 1, 37, 37, 8, 16, 16, 9, true, Dense::None, false},
    {"narrow_s1", 1, 1, 1, 2, 16, 16, 9, true, Dense::None, false},
    {"narrow_sq1_sk45", 2, 1, 45, 2, 16, 16, 16, true, Dense::None, false},
    {"narrow_v20_shared", 2, 45, 131, 2, 16, 16, 20, false, Dense::None, false},
    {"narrow_d32_v32", 1, 70, 29, 2, 32, 32, 32, true, Dense::None, false},
    {"narrow_d8", 2, 33, 50, 3, 8, 8, 5, true, Dense::None, false},
    {"narrow_all_heads", 1, 200, 203, 4, 16, 16, 9, true, Dense::None, false},
};

TEST(AttentionSpatial, MatchesDenseReferencesAndAutograd) {
  for (const Case &c : kCases)
    checkCase(c);
}

// The narrow-head forward's AVX2 and portable builds (the CPU picks one
// body; MEGAGRAPH_ATTENTION_SMALL_HEAD selects the others): out and lse of
// the narrow cases against float64.
TEST(AttentionSpatial, NarrowHeadBodiesOfOtherLevels) {
  for (const char *level : {"v3", "baseline"})
    for (const Case &c : kCases) {
      if (std::strncmp(c.name, "narrow", 6) != 0)
        continue;
      SCOPED_TRACE(std::string(c.name) + " " + level);
      Spatial s = makeCase(c, 71);
      setenv("MEGAGRAPH_ATTENTION_SMALL_HEAD", level, 1);
      Forward fwd = runForward(s);
      unsetenv("MEGAGRAPH_ATTENTION_SMALL_HEAD");
      std::vector<double> lse;
      expectClose(fwd.out, naiveAttention(s.ref, &lse), "out");
      for (size_t r = 0; r < lse.size(); ++r)
        EXPECT_NEAR(fwd.lse[r], lse[r], 1e-4 * std::max(1.0, std::abs(lse[r])))
            << "row " << r;
    }
}

// A wrong table entry must show: the kernels read the table, not a copy of
// an earlier call.
TEST(AttentionSpatial, ReadsTheTableItIsGiven) {
  Case c{"table", 1, 20, 20, 2, 8, 8, 9, true, Dense::None, false};
  Spatial s = makeCase(c, 81);
  Forward before = runForward(s);
  for (float &x : s.table)
    x += 1.f; // a constant per row shift: softmax unchanged
  Forward shifted = runForward(s);
  expectClose(shifted.out, before.out, "out, table + 1", 1e-5f);
  s.table[3 * c.H] += 5.f; // row 3 of head 0 only
  Forward changed = runForward(s);
  EXPECT_GT(maxAbsDiff(changed.out, before.out), 1e-3f);
}

TEST(AttentionSpatial, ContractViolationAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the pool has threads
  Case c{"bad", 2, 8, 8, 2, 8, 8, 9, true, Dense::None, false};
  Spatial s = makeCase(c, 91);
  s.distShape = {3, 8, 8}; // neither B nor 1
  s.dist.resize(numel(s.distShape));
  EXPECT_DEATH(runForward(s),
               "distance is \\[3,8,8\\], expected \\[2\\|1,8,8\\]");
}

} // namespace
