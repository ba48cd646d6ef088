//===- AttentionTest.cpp - mgrt_attention_f32 vs naive and LibTorch -------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mgrt_test;

namespace {

/// How bias / mask are shaped: absent, or [Bb,Hb,Sqb,Skb] where each of the
/// first three may be 1 (broadcast).
enum class Bcast { None, Full, OneBatch, OneHead, OneBoth, KeyPadding };

struct Case {
  const char *name;
  int64_t B, Sq, Sk, H, dh, dvh;
  Bcast bias, mask;
  bool emptyRow; // force one query row (or one batch for KeyPadding) to keep
                 // nothing
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
      // Key padding: the last batch keeps nothing; otherwise query row
      // Sq/2 of the first [b,h] keeps nothing.
      const int64_t rowLen = p.maskShape[3];
      if (c.mask == Bcast::KeyPadding)
        std::fill(p.mask.end() - rowLen, p.mask.end(), 0);
      else
        std::fill(p.mask.begin() + (c.Sq / 2) * rowLen,
                  p.mask.begin() + (c.Sq / 2 + 1) * rowLen, 0);
    }
  }
  return p;
}

/// Runs the kernel; bias / mask descriptors may use custom strides.
std::vector<float> runKernel(AttentionProblem &p,
                             const float *biasData = nullptr,
                             std::vector<int64_t> biasStrides = {}) {
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  std::vector<float> out(p.B * p.Sq * Dv, -7.f);
  auto o = memref<mgrt_memref_f32_3>(out.data(), {p.B, p.Sq, Dv});
  auto q = memref<mgrt_memref_f32_3>(p.q.data(), {p.B, p.Sq, D});
  auto k = memref<mgrt_memref_f32_3>(p.k.data(), {p.B, p.Sk, D});
  auto v = memref<mgrt_memref_f32_3>(p.v.data(), {p.B, p.Sk, Dv});
  int64_t flags = 0;
  mgrt_memref_f32_4 bias{};
  mgrt_memref_i8_4 mask{};
  if (!p.biasShape.empty()) {
    flags |= MGRT_ATTENTION_BIAS;
    bias = memref<mgrt_memref_f32_4>(
        const_cast<float *>(biasData ? biasData : p.bias.data()), p.biasShape,
        biasStrides);
  }
  if (!p.maskShape.empty()) {
    flags |= MGRT_ATTENTION_MASK;
    mask = memref<mgrt_memref_i8_4>(reinterpret_cast<int8_t *>(p.mask.data()),
                                    p.maskShape);
  }
  _mlir_ciface_mgrt_attention_f32(&o, &q, &k, &v, flags & 1 ? &bias : nullptr,
                                  flags & 2 ? &mask : nullptr, p.H, p.scale,
                                  flags);
  return out;
}

/// Compares the kernel with both references on one case.
void checkCase(const Case &c) {
  SCOPED_TRACE(c.name);
  AttentionProblem p = makeProblem(c, 17);
  std::vector<float> got = runKernel(p);
  std::vector<float> naive = naiveAttention(p);
  std::vector<float> torch = torchAttention(p);
  EXPECT_LE(maxAbsDiff(got, naive), 1e-4f);
  EXPECT_LE(maxAbsDiff(got, torch), 1e-4f);
  EXPECT_LE(maxAbsDiff(naive, torch), 1e-5f); // the two references agree
  if (c.emptyRow && c.mask != Bcast::KeyPadding) {
    // Row Sq/2 of batch 0 head 0 (if the mask is per head) is all zeros.
    const int64_t Dv = c.H * c.dvh;
    for (int64_t col = 0; col < c.dvh; ++col)
      EXPECT_EQ(got[(c.Sq / 2) * Dv + col], 0.f);
  }
}

const Case kCases[] = {
    {"tiny", 1, 1, 1, 1, 8, 8, Bcast::None, Bcast::None, false},
    {"s7_bias_full", 2, 7, 7, 2, 8, 8, Bcast::Full, Bcast::None, false},
    {"s64_bias_one_batch", 1, 64, 64, 4, 16, 16, Bcast::OneBatch, Bcast::None,
     false},
    {"s300_bias_one_head_keypad", 2, 300, 300, 2, 64, 64, Bcast::OneHead,
     Bcast::KeyPadding, true},
    {"sq7_sk300_dv32", 2, 7, 300, 1, 16, 32, Bcast::OneBoth, Bcast::Full, true},
    {"sq300_sk64_h8", 1, 300, 64, 8, 8, 16, Bcast::Full, Bcast::OneBatch, true},
    {"sq1_sk300", 2, 1, 300, 2, 64, 64, Bcast::OneBatch, Bcast::OneHead, false},
    {"sq64_sk7_dv8", 2, 64, 7, 2, 16, 8, Bcast::None, Bcast::OneBoth, true},
    {"s300_mask_only_d64", 1, 300, 300, 1, 64, 64, Bcast::None, Bcast::Full,
     true},
    {"s1_masked_all", 1, 1, 1, 1, 8, 8, Bcast::None, Bcast::Full, true},
    {"s520_two_blocks", 1, 520, 513, 2, 16, 16, Bcast::OneBoth, Bcast::None,
     false},
    {"no_keys", 2, 5, 0, 2, 8, 8, Bcast::Full, Bcast::None, false},
    // Narrow heads, no bias or mask: the forward of AttentionSmallHead.cpp
    // (16 queries across the lanes, keys in groups of 8), at sizes off both
    // multiples, one query or key, no keys, B = 1 and 2.
    {"narrow_s37_h8", 1, 37, 37, 8, 16, 16, Bcast::None, Bcast::None, false},
    {"narrow_s1", 1, 1, 1, 1, 16, 16, Bcast::None, Bcast::None, false},
    {"narrow_sq130_sk9_d32", 2, 130, 9, 2, 32, 32, Bcast::None, Bcast::None,
     false},
    {"narrow_sq17_sk300_d8", 2, 17, 300, 4, 8, 8, Bcast::None, Bcast::None,
     false},
    {"narrow_no_keys", 1, 20, 0, 2, 16, 16, Bcast::None, Bcast::None, false},
};

// Grouped (not one test per case) to keep the CTest process count low.
TEST(Attention, ShapesWithoutMask) {
  for (const Case &c : kCases)
    if (c.mask == Bcast::None)
      checkCase(c);
}

TEST(Attention, ShapesWithMask) {
  for (const Case &c : kCases)
    if (c.mask != Bcast::None)
      checkCase(c);
}

TEST(Attention, StridedBiasIsGathered) {
  // Bias stored transposed ([B,H,Sk,Sq] in memory) and read through strides.
  Case c{"strided", 2, 33, 45, 2, 8, 8, Bcast::Full, Bcast::None, false};
  AttentionProblem p = makeProblem(c, 5);
  std::vector<float> transposed(p.bias.size());
  for (int64_t bh = 0; bh < c.B * c.H; ++bh)
    for (int64_t i = 0; i < c.Sq; ++i)
      for (int64_t j = 0; j < c.Sk; ++j)
        transposed[(bh * c.Sk + j) * c.Sq + i] =
            p.bias[(bh * c.Sq + i) * c.Sk + j];
  std::vector<float> got = runKernel(p, transposed.data(),
                                     {c.H * c.Sk * c.Sq, c.Sk * c.Sq, 1, c.Sq});
  EXPECT_LE(maxAbsDiff(got, naiveAttention(p)), 1e-4f);
}

TEST(Attention, LargeScoresStayFinite) {
  // Scores around +-400: the online softmax must rescale, not overflow.
  Case c{"large", 1, 40, 600, 1, 16, 16, Bcast::Full, Bcast::None, false};
  AttentionProblem p = makeProblem(c, 9);
  for (float &b : p.bias)
    b *= 200.f;
  std::vector<float> got = runKernel(p);
  for (float x : got)
    ASSERT_TRUE(std::isfinite(x));
  EXPECT_LE(maxAbsDiff(got, naiveAttention(p)), 1e-4f);
}

TEST(Attention, NarrowHeadLargeScoresStayFinite) {
  // The narrow-head path without bias: queries scaled so that scores reach
  // +-several hundred and rows' maxima rise key group after key group.
  Case c{"narrow_large", 2,           45,   300, 2, 16, 16,
         Bcast::None,    Bcast::None, false};
  AttentionProblem p = makeProblem(c, 13);
  for (int64_t e = 0; e < static_cast<int64_t>(p.k.size()); ++e)
    p.k[e] *= 20.f * (1.f + static_cast<float>(e / (c.H * c.dh)) / c.Sk);
  std::vector<float> got = runKernel(p);
  for (float x : got)
    ASSERT_TRUE(std::isfinite(x));
  EXPECT_LE(maxAbsDiff(got, naiveAttention(p)), 1e-4f);
}

TEST(Attention, ContractViolationAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the pool has threads
  std::vector<float> x(4 * 24);
  auto d = memref<mgrt_memref_f32_3>(x.data(), {1, 4, 24});
  // 5 heads cannot split D = 24.
  EXPECT_DEATH(_mlir_ciface_mgrt_attention_f32(&d, &d, &d, &d, nullptr, nullptr,
                                               5, 1.f, 0),
               "mgrt_attention_f32: 5 heads do not divide D=24 and Dv=24");
}

TEST(Attention, ScratchIsFreedAndSmall) {
  Case c{"scratch", 1, 2048, 2048, 4, 8, 8, Bcast::None, Bcast::None, false};
  AttentionProblem p = makeProblem(c, 3);
  const size_t before = mgrt_current_bytes();
  mgrt_reset_peak();
  runKernel(p);
  EXPECT_EQ(mgrt_current_bytes(), before);
  EXPECT_GT(mgrt_peak_bytes(), before); // per-thread scratch is tracked
  // Blockwise: far below one [H,Sq,Sk] score matrix (64 MiB here).
  EXPECT_LT(mgrt_peak_bytes() - before,
            static_cast<size_t>(c.H * c.Sq * c.Sk * sizeof(float) / 2));
}

} // namespace
