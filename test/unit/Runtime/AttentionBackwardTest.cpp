//===- AttentionBackwardTest.cpp - mgrt_attention_bwd_f32 vs autograd -----===//
//
// dq, dk, dv, dbias of the kernel (and of mgrt_attention_bwd_lse_f32, given
// the row log-sum-exp of mgrt_attention_lse_f32) against LibTorch autograd
// in float64
// (TorchReference.cpp) and, on one small case, against central finite
// differences of a float64 forward written out here.
//
// Tolerance: |kernel - reference| <= 1e-4 * max(1, max |reference|). The
// kernel runs in float32 and its gradients are sums over up to Sq or Sk
// (and, for a broadcast dbias, B*H) terms, so the error is relative to the
// magnitude of the gradient; every case here has gradients of order 1-10.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mgrt_test;

namespace {

/// bias / mask / dbias shapes: absent, or [Bb,Hb,Sqb,Skb] (1 = broadcast).
enum class Bcast { None, Full, OneBatch, OneHead, OneBoth, KeyPadding };

struct Case {
  const char *name;
  int64_t B, Sq, Sk, H, dh, dvh;
  Bcast bias, mask;
  bool emptyRow; // query row Sq/2 of the first mask slice keeps no key
};

std::vector<int64_t> shapeOf(Bcast b, const Case &c) {
  switch (b) {
  case Bcast::None:
    return {};
  case Bcast::Full:
    return {c.B, c.H, c.Sq, c.Sk};
  case Bcast::OneBatch:
    return {1, c.H, c.Sq, c.Sk};
  case Bcast::OneHead:
    return {c.B, 1, c.Sq, c.Sk};
  case Bcast::OneBoth:
    return {1, 1, c.Sq, c.Sk};
  case Bcast::KeyPadding:
    return {c.B, 1, 1, c.Sk};
  }
  return {};
}

AttentionProblem makeProblem(const Case &c, unsigned seed) {
  AttentionProblem p{c.B,
                     c.Sq,
                     c.Sk,
                     c.H,
                     c.dh,
                     c.dvh,
                     1.f / std::sqrt(static_cast<float>(c.dh)),
                     {},
                     {},
                     {},
                     {},
                     {},
                     {},
                     {}};
  p.q = randomFloats(c.B * c.Sq * c.H * c.dh, seed, -2, 2);
  p.k = randomFloats(c.B * c.Sk * c.H * c.dh, seed + 1, -2, 2);
  p.v = randomFloats(c.B * c.Sk * c.H * c.dvh, seed + 2);
  p.biasShape = shapeOf(c.bias, c);
  if (!p.biasShape.empty())
    p.bias = randomFloats(numel(p.biasShape), seed + 3, -2, 2);
  p.maskShape = shapeOf(c.mask, c);
  if (!p.maskShape.empty()) {
    std::mt19937 gen(seed + 4);
    p.mask.resize(numel(p.maskShape));
    for (uint8_t &m : p.mask)
      m = gen() % 10 < 7;
    if (c.emptyRow) {
      const int64_t rowLen = p.maskShape[3];
      const int64_t row = p.maskShape[2] == 1 ? 0 : c.Sq / 2;
      std::fill(p.mask.begin() + row * rowLen,
                p.mask.begin() + (row + 1) * rowLen, 0);
    }
  }
  return p;
}

/// The forward's result [B,Sq,Dv] and row log-sum-exp [B,H,Sq].
struct ForwardStats {
  std::vector<float> out, lse;
};

/// Runs the backward kernel (outputs prefilled with garbage); given the
/// forward's statistics, mgrt_attention_bwd_lse_f32 instead.
AttentionGrads runKernel(const AttentionProblem &p,
                         const std::vector<float> &dout, bool wantDBias = true,
                         const ForwardStats *stats = nullptr) {
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  AttentionGrads g;
  g.dq.assign(p.B * p.Sq * D, -7.f);
  g.dk.assign(p.B * p.Sk * D, -7.f);
  g.dv.assign(p.B * p.Sk * Dv, -7.f);
  auto dq = memref<mgrt_memref_f32_3>(g.dq.data(), {p.B, p.Sq, D});
  auto dk = memref<mgrt_memref_f32_3>(g.dk.data(), {p.B, p.Sk, D});
  auto dv = memref<mgrt_memref_f32_3>(g.dv.data(), {p.B, p.Sk, Dv});
  auto dO = memref<mgrt_memref_f32_3>(const_cast<float *>(dout.data()),
                                      {p.B, p.Sq, Dv});
  auto q = memref<mgrt_memref_f32_3>(const_cast<float *>(p.q.data()),
                                     {p.B, p.Sq, D});
  auto k = memref<mgrt_memref_f32_3>(const_cast<float *>(p.k.data()),
                                     {p.B, p.Sk, D});
  auto v = memref<mgrt_memref_f32_3>(const_cast<float *>(p.v.data()),
                                     {p.B, p.Sk, Dv});
  int64_t flags = 0;
  mgrt_memref_f32_4 bias{}, dbias{};
  mgrt_memref_i8_4 mask{};
  if (!p.biasShape.empty()) {
    flags |= MGRT_ATTENTION_BIAS;
    bias = memref<mgrt_memref_f32_4>(const_cast<float *>(p.bias.data()),
                                     p.biasShape);
    if (wantDBias) {
      flags |= MGRT_ATTENTION_DBIAS;
      g.dbias.assign(p.bias.size(), -7.f);
      dbias = memref<mgrt_memref_f32_4>(g.dbias.data(), p.biasShape);
    }
  }
  if (!p.maskShape.empty()) {
    flags |= MGRT_ATTENTION_MASK;
    mask = memref<mgrt_memref_i8_4>(
        reinterpret_cast<int8_t *>(const_cast<uint8_t *>(p.mask.data())),
        p.maskShape);
  }
  mgrt_memref_f32_4 *dbiasP = flags & MGRT_ATTENTION_DBIAS ? &dbias : nullptr;
  mgrt_memref_f32_4 *biasP = flags & MGRT_ATTENTION_BIAS ? &bias : nullptr;
  mgrt_memref_i8_4 *maskP = flags & MGRT_ATTENTION_MASK ? &mask : nullptr;
  if (!stats) {
    _mlir_ciface_mgrt_attention_bwd_f32(&dq, &dk, &dv, dbiasP, &dO, &q, &k, &v,
                                        biasP, maskP, p.H, p.scale, flags);
    return g;
  }
  auto out = memref<mgrt_memref_f32_3>(const_cast<float *>(stats->out.data()),
                                       {p.B, p.Sq, Dv});
  auto lse = memref<mgrt_memref_f32_3>(const_cast<float *>(stats->lse.data()),
                                       {p.B, p.H, p.Sq});
  _mlir_ciface_mgrt_attention_bwd_lse_f32(&dq, &dk, &dv, dbiasP, &dO, &q, &k,
                                          &v, biasP, maskP, &out, &lse, p.H,
                                          p.scale, flags);
  return g;
}

/// Runs mgrt_attention_lse_f32 (outputs prefilled with garbage).
ForwardStats runForwardLse(const AttentionProblem &p) {
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  ForwardStats f;
  f.out.assign(p.B * p.Sq * Dv, -7.f);
  f.lse.assign(p.B * p.H * p.Sq, -7.f);
  auto out = memref<mgrt_memref_f32_3>(f.out.data(), {p.B, p.Sq, Dv});
  auto lse = memref<mgrt_memref_f32_3>(f.lse.data(), {p.B, p.H, p.Sq});
  auto q = memref<mgrt_memref_f32_3>(const_cast<float *>(p.q.data()),
                                     {p.B, p.Sq, D});
  auto k = memref<mgrt_memref_f32_3>(const_cast<float *>(p.k.data()),
                                     {p.B, p.Sk, D});
  auto v = memref<mgrt_memref_f32_3>(const_cast<float *>(p.v.data()),
                                     {p.B, p.Sk, Dv});
  int64_t flags = 0;
  mgrt_memref_f32_4 bias{};
  mgrt_memref_i8_4 mask{};
  if (!p.biasShape.empty()) {
    flags |= MGRT_ATTENTION_BIAS;
    bias = memref<mgrt_memref_f32_4>(const_cast<float *>(p.bias.data()),
                                     p.biasShape);
  }
  if (!p.maskShape.empty()) {
    flags |= MGRT_ATTENTION_MASK;
    mask = memref<mgrt_memref_i8_4>(
        reinterpret_cast<int8_t *>(const_cast<uint8_t *>(p.mask.data())),
        p.maskShape);
  }
  _mlir_ciface_mgrt_attention_lse_f32(
      &out, &lse, &q, &k, &v, flags & MGRT_ATTENTION_BIAS ? &bias : nullptr,
      flags & MGRT_ATTENTION_MASK ? &mask : nullptr, p.H, p.scale, flags);
  return f;
}

float maxAbs(const std::vector<float> &v) {
  float m = 0;
  for (float x : v)
    m = std::max(m, std::abs(x));
  return m;
}

/// |got - want| <= tol * max(1, max |want|), NaN-safe.
void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                 const char *what, float tol = 1e-4f) {
  const float bound = tol * std::max(1.f, maxAbs(want));
  const float err = maxAbsDiff(got, want);
  EXPECT_LE(err, bound) << what << ": max |diff| " << err << ", max |ref| "
                        << maxAbs(want);
}

void checkCase(const Case &c) {
  SCOPED_TRACE(c.name);
  AttentionProblem p = makeProblem(c, 23);
  const std::vector<float> dout =
      randomFloats(c.B * c.Sq * c.H * c.dvh, 99, -1, 1);
  AttentionGrads got = runKernel(p, dout);
  AttentionGrads ref = torchAttentionBackward(p, dout);
  expectClose(got.dq, ref.dq, "dq");
  expectClose(got.dk, ref.dk, "dk");
  expectClose(got.dv, ref.dv, "dv");
  if (!p.biasShape.empty())
    expectClose(got.dbias, ref.dbias, "dbias");
  if (c.emptyRow && p.maskShape[2] != 1) {
    // Row Sq/2 of batch 0 keeps nothing in head 0 (all heads if the mask
    // broadcasts over heads): its dq is exactly zero.
    const int64_t D = c.H * c.dh;
    for (int64_t col = 0; col < c.dh; ++col)
      EXPECT_EQ(got.dq[(c.Sq / 2) * D + col], 0.f);
  }
}

const Case kCases[] = {
    {"s1", 1, 1, 1, 1, 8, 8, Bcast::None, Bcast::None, false},
    {"s1_bias", 2, 1, 1, 2, 8, 16, Bcast::Full, Bcast::None, false},
    {"s7_bias_full_h2", 2, 7, 7, 2, 8, 8, Bcast::Full, Bcast::None, false},
    {"s7_one_batch_mask", 2, 7, 7, 4, 8, 16, Bcast::OneBatch, Bcast::Full,
     true},
    {"s64_one_batch", 1, 64, 64, 4, 16, 16, Bcast::OneBatch, Bcast::None,
     false},
    {"s64_one_head_mask", 2, 64, 64, 2, 16, 8, Bcast::OneHead, Bcast::OneBatch,
     true},
    {"s130_one_both", 2, 130, 130, 2, 16, 16, Bcast::OneBoth, Bcast::None,
     false},
    {"s130_full_mask_h4", 1, 130, 130, 4, 8, 16, Bcast::Full, Bcast::Full,
     true},
    {"sq7_sk130", 2, 7, 130, 2, 16, 8, Bcast::OneHead, Bcast::OneHead, true},
    {"sq130_sk7", 2, 130, 7, 1, 8, 16, Bcast::OneBoth, Bcast::OneBoth, true},
    {"sq130_sk64_nobias_mask", 2, 130, 64, 4, 16, 8, Bcast::None, Bcast::Full,
     true},
    {"sq64_sk1", 1, 64, 1, 2, 8, 8, Bcast::Full, Bcast::None, false},
    {"keypad_bias", 2, 130, 100, 2, 8, 16, Bcast::KeyPadding, Bcast::KeyPadding,
     false},
    {"s200_two_blocks", 1, 200, 290, 2, 16, 24, Bcast::OneBoth, Bcast::Full,
     true},
};

// Grouped to keep the CTest process count low.
TEST(AttentionBackward, MatchesAutogradWithoutMask) {
  for (const Case &c : kCases)
    if (c.mask == Bcast::None)
      checkCase(c);
}

TEST(AttentionBackward, MatchesAutogradWithMask) {
  for (const Case &c : kCases)
    if (c.mask != Bcast::None)
      checkCase(c);
}

/// Runs the kernel with MEGAGRAPH_ATTENTION_BWD set to `mode` (null: unset).
AttentionGrads runKernelIn(const char *mode, const AttentionProblem &p,
                           const std::vector<float> &dout) {
  if (mode)
    setenv("MEGAGRAPH_ATTENTION_BWD", mode, 1);
  else
    unsetenv("MEGAGRAPH_ATTENTION_BWD");
  AttentionGrads g = runKernel(p, dout);
  unsetenv("MEGAGRAPH_ATTENTION_BWD");
  return g;
}

// A full dbias takes the one-pass path (dK, dV, dQ, dBias per tile, dQ
// summed over runs of key blocks); it must agree with autograd and with the
// two-pass path. One (b, h) splits the keys into several runs; ragged Sq and
// Sk pad both; the mask empties a row.
TEST(AttentionBackward, OnePassMatchesPhasedAndAutograd) {
  const Case cases[] = {
      {"one_bh_runs", 1, 300, 400, 1, 16, 16, Bcast::Full, Bcast::Full, true},
      {"b2_h3", 2, 97, 193, 3, 8, 16, Bcast::Full, Bcast::None, false},
      {"no_bias_runs", 1, 200, 500, 1, 16, 8, Bcast::None, Bcast::Full, true},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    AttentionProblem p = makeProblem(c, 41);
    const std::vector<float> dout =
        randomFloats(c.B * c.Sq * c.H * c.dvh, 42, -1, 1);
    AttentionGrads one = runKernelIn(nullptr, p, dout);
    AttentionGrads two = runKernelIn("phased", p, dout);
    AttentionGrads ref = torchAttentionBackward(p, dout);
    expectClose(one.dq, ref.dq, "dq");
    expectClose(one.dk, ref.dk, "dk");
    expectClose(one.dv, ref.dv, "dv");
    expectClose(one.dq, two.dq, "dq one pass vs phased");
    expectClose(one.dk, two.dk, "dk one pass vs phased");
    expectClose(one.dv, two.dv, "dv one pass vs phased");
    if (!p.biasShape.empty()) {
      expectClose(one.dbias, ref.dbias, "dbias");
      expectClose(one.dbias, two.dbias, "dbias one pass vs phased");
    }
  }
}

/// Row log-sum-exp [B,H,Sq] of the scores in double, -inf for a row that
/// keeps no key.
std::vector<double> naiveLse(const AttentionProblem &p) {
  std::vector<double> lse;
  naiveAttention(p, &lse);
  return lse;
}

// The forward's lse against a float64 reference; the backward given it (and
// the forward's result) against autograd and against the backward that
// recomputes the statistics, on the one-pass and the phased (broadcast
// dbias) paths, with masks and an empty row. A shifted lse must change the
// gradients: the kernel reads it instead of recomputing.
TEST(AttentionBackward, ForwardLseMatchesRecomputedAndAutograd) {
  const Case cases[] = {
      {"one_pass", 2, 97, 193, 3, 8, 16, Bcast::Full, Bcast::Full, true},
      {"phased_one_batch", 2, 130, 130, 2, 16, 16, Bcast::OneBatch,
       Bcast::OneHead, true},
      {"no_bias", 1, 200, 290, 2, 16, 24, Bcast::None, Bcast::Full, true},
      {"s1", 1, 1, 1, 1, 8, 8, Bcast::None, Bcast::None, false},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    AttentionProblem p = makeProblem(c, 51);
    const std::vector<float> dout =
        randomFloats(c.B * c.Sq * c.H * c.dvh, 52, -1, 1);
    ForwardStats fwd = runForwardLse(p);
    expectClose(fwd.out, torchAttention(p), "out");
    const std::vector<double> lse = naiveLse(p);
    for (size_t r = 0; r < lse.size(); ++r) {
      if (lse[r] == -INFINITY) {
        EXPECT_EQ(fwd.lse[r], -INFINITY) << "row " << r;
        continue;
      }
      EXPECT_NEAR(fwd.lse[r], lse[r], 1e-4 * std::max(1.0, std::abs(lse[r])))
          << "row " << r;
    }
    AttentionGrads given = runKernel(p, dout, true, &fwd);
    AttentionGrads recomputed = runKernel(p, dout);
    AttentionGrads ref = torchAttentionBackward(p, dout);
    expectClose(given.dq, ref.dq, "dq");
    expectClose(given.dk, ref.dk, "dk");
    expectClose(given.dv, ref.dv, "dv");
    expectClose(given.dq, recomputed.dq, "dq given vs recomputed", 1e-5f);
    expectClose(given.dk, recomputed.dk, "dk given vs recomputed", 1e-5f);
    expectClose(given.dv, recomputed.dv, "dv given vs recomputed", 1e-5f);
    if (!p.biasShape.empty()) {
      expectClose(given.dbias, ref.dbias, "dbias");
      expectClose(given.dbias, recomputed.dbias, "dbias given vs recomputed",
                  1e-5f);
    }
    // P = e^(S - lse): a shift by log 2 halves every probability, so dv
    // halves too.
    ForwardStats shifted = fwd;
    for (float &x : shifted.lse)
      x += std::log(2.f);
    AttentionGrads wrong = runKernel(p, dout, true, &shifted);
    std::vector<float> halfDv(ref.dv);
    for (float &x : halfDv)
      x *= 0.5f;
    expectClose(wrong.dv, halfDv, "dv with lse + log 2");
  }
}

// MEGAGRAPH_ATTENTION_BWD=recompute ignores the given statistics (A/B runs):
// even a wrong lse then gives the right gradients.
TEST(AttentionBackward, RecomputeIgnoresGivenLse) {
  Case c{"recompute", 2, 33, 45, 2, 8, 8, Bcast::Full, Bcast::Full, true};
  AttentionProblem p = makeProblem(c, 61);
  const std::vector<float> dout = randomFloats(c.B * c.Sq * c.H * c.dvh, 62);
  ForwardStats fwd = runForwardLse(p);
  for (float &x : fwd.lse)
    x += 1.f;
  setenv("MEGAGRAPH_ATTENTION_BWD", "recompute", 1);
  AttentionGrads got = runKernel(p, dout, true, &fwd);
  unsetenv("MEGAGRAPH_ATTENTION_BWD");
  AttentionGrads ref = torchAttentionBackward(p, dout);
  expectClose(got.dq, ref.dq, "dq");
  expectClose(got.dv, ref.dv, "dv");
  expectClose(got.dbias, ref.dbias, "dbias");
}

TEST(AttentionBackward, DBiasFlagClearLeavesNoBiasGradient) {
  Case c{"nodbias", 2, 33, 45, 2, 8, 8, Bcast::Full, Bcast::Full, true};
  AttentionProblem p = makeProblem(c, 5);
  const std::vector<float> dout = randomFloats(c.B * c.Sq * c.H * c.dvh, 6);
  AttentionGrads got = runKernel(p, dout, /*wantDBias=*/false);
  AttentionGrads ref = torchAttentionBackward(p, dout);
  EXPECT_TRUE(got.dbias.empty());
  expectClose(got.dq, ref.dq, "dq");
  expectClose(got.dk, ref.dk, "dk");
  expectClose(got.dv, ref.dv, "dv");
}

TEST(AttentionBackward, FullyMaskedEverywhereGivesZeros) {
  Case c{"allmasked", 1, 9, 11, 1, 8, 8, Bcast::Full, Bcast::Full, false};
  AttentionProblem p = makeProblem(c, 8);
  std::fill(p.mask.begin(), p.mask.end(), 0);
  AttentionGrads got = runKernel(p, randomFloats(c.B * c.Sq * c.H * c.dvh, 4));
  for (const std::vector<float> *g : {&got.dq, &got.dk, &got.dv, &got.dbias})
    for (float x : *g)
      ASSERT_EQ(x, 0.f);
}

/// Loss sum(dout * attention) in float64, straight from the definition.
double lossF64(const AttentionProblem &p, const std::vector<double> &q,
               const std::vector<double> &k, const std::vector<double> &v,
               const std::vector<double> &bias,
               const std::vector<float> &dout) {
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  auto bcast = [](const std::vector<int64_t> &shape, int64_t b, int64_t h,
                  int64_t i, int64_t j) {
    const int64_t idx[4] = {b, h, i, j};
    int64_t off = 0;
    for (int d = 0; d < 4; ++d)
      off = off * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
    return off;
  };
  double loss = 0;
  std::vector<double> s(p.Sk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Sq; ++i) {
        double m = -INFINITY;
        for (int64_t j = 0; j < p.Sk; ++j) {
          double x = 0;
          for (int64_t c = 0; c < p.dh; ++c)
            x += q[(b * p.Sq + i) * D + h * p.dh + c] *
                 k[(b * p.Sk + j) * D + h * p.dh + c];
          x *= p.scale;
          if (!p.biasShape.empty())
            x += bias[bcast(p.biasShape, b, h, i, j)];
          if (!p.maskShape.empty() && !p.mask[bcast(p.maskShape, b, h, i, j)])
            x = -INFINITY;
          s[j] = x;
          m = std::max(m, x);
        }
        if (m == -INFINITY)
          continue;
        double l = 0;
        for (int64_t j = 0; j < p.Sk; ++j)
          l += s[j] = std::exp(s[j] - m);
        for (int64_t c = 0; c < p.dvh; ++c) {
          double o = 0;
          for (int64_t j = 0; j < p.Sk; ++j)
            o += s[j] / l * v[(b * p.Sk + j) * Dv + h * p.dvh + c];
          loss += o * dout[(b * p.Sq + i) * Dv + h * p.dvh + c];
        }
      }
  return loss;
}

TEST(AttentionBackward, MatchesFiniteDifferences) {
  Case c{"fd", 2, 7, 9, 2, 8, 16, Bcast::OneBatch, Bcast::Full, true};
  AttentionProblem p = makeProblem(c, 31);
  const std::vector<float> dout = randomFloats(c.B * c.Sq * c.H * c.dvh, 32);
  AttentionGrads got = runKernel(p, dout);
  AttentionGrads ref = torchAttentionBackward(p, dout);
  std::vector<double> ops[4] = {{p.q.begin(), p.q.end()},
                                {p.k.begin(), p.k.end()},
                                {p.v.begin(), p.v.end()},
                                {p.bias.begin(), p.bias.end()}};
  const std::vector<float> *kernel[4] = {&got.dq, &got.dk, &got.dv, &got.dbias};
  const std::vector<float> *torch[4] = {&ref.dq, &ref.dk, &ref.dv, &ref.dbias};
  const char *names[4] = {"dq", "dk", "dv", "dbias"};
  const double h = 1e-5;
  for (int o = 0; o < 4; ++o) {
    std::vector<float> fd(ops[o].size());
    for (size_t e = 0; e < ops[o].size(); ++e) {
      const double x = ops[o][e];
      ops[o][e] = x + h;
      const double up = lossF64(p, ops[0], ops[1], ops[2], ops[3], dout);
      ops[o][e] = x - h;
      const double down = lossF64(p, ops[0], ops[1], ops[2], ops[3], dout);
      ops[o][e] = x;
      fd[e] = static_cast<float>((up - down) / (2 * h));
    }
    SCOPED_TRACE(names[o]);
    expectClose(*kernel[o], fd, "kernel vs finite differences");
    expectClose(*torch[o], fd, "autograd vs finite differences", 1e-6f);
  }
}

TEST(AttentionBackward, ScratchIsFreedAndSmall) {
  Case c{"scratch", 1, 1024, 1024, 4, 8, 8, Bcast::None, Bcast::None, false};
  AttentionProblem p = makeProblem(c, 3);
  const std::vector<float> dout = randomFloats(c.Sq * c.H * c.dvh, 2);
  const size_t before = mgrt_current_bytes();
  mgrt_reset_peak();
  runKernel(p, dout);
  EXPECT_EQ(mgrt_current_bytes(), before);
  EXPECT_GT(mgrt_peak_bytes(), before);
  // Blockwise: far below one [H,Sq,Sk] score matrix (16 MiB here).
  EXPECT_LT(mgrt_peak_bytes() - before,
            static_cast<size_t>(c.H * c.Sq * c.Sk * sizeof(float) / 4));
}

TEST(AttentionBackward, ContractViolationAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the pool has threads
  std::vector<float> x(4 * 24);
  auto d = memref<mgrt_memref_f32_3>(x.data(), {1, 4, 24});
  EXPECT_DEATH(_mlir_ciface_mgrt_attention_bwd_f32(&d, &d, &d, nullptr, &d, &d,
                                                   &d, &d, nullptr, nullptr, 5,
                                                   1.f, 0),
               "mgrt_attention_bwd_f32: 5 heads do not divide D=24");
  EXPECT_DEATH(_mlir_ciface_mgrt_attention_bwd_f32(&d, &d, &d, nullptr, &d, &d,
                                                   &d, &d, nullptr, nullptr, 2,
                                                   1.f, MGRT_ATTENTION_DBIAS),
               "dbias flag set but dbias is null");
  std::vector<float> l(2 * 4);
  auto lse = memref<mgrt_memref_f32_3>(l.data(), {1, 4, 2});
  EXPECT_DEATH(_mlir_ciface_mgrt_attention_bwd_lse_f32(
                   &d, &d, &d, nullptr, &d, &d, &d, &d, nullptr, nullptr, &d,
                   &lse, 2, 1.f, 0),
               "mgrt_attention_bwd_lse_f32: lse is \\[1,4,2\\], expected "
               "\\[1,2,4\\]");
  EXPECT_DEATH(_mlir_ciface_mgrt_attention_lse_f32(&d, &lse, &d, &d, &d,
                                                   nullptr, nullptr, 2, 1.f, 0),
               "mgrt_attention_lse_f32: lse is");
}

} // namespace
