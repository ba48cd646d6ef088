//===- CudaKernelTest.cpp - GPU kernels vs the CPU runtime ----------------===//
//
// Every kernel of libmegagraph_cuda against the CPU path on the same inputs:
// the CPU runtime's own kernels (attention forward/backward, layer norm) or
// a float64 loop where the CPU path is generated code (GEMM, layer-norm
// backward, softmax, embeddings). FP32 must agree to 1e-3 (max abs error,
// the bar); BF16 runs are compared with the CPU kernel fed the same
// bf16-rounded inputs, to a bound that covers bf16 output rounding.
// Without a GPU every test but NoDevice is skipped with a message.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "RuntimeTestUtil.h"
#include "megagraph/Runtime.h"
#include "megagraph/RuntimeCuda.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace mgrt_test;

namespace {

uint16_t toBf16Bits(float x) { // round to nearest even, as the device does
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
float fromBf16Bits(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
std::vector<float> roundBf16(const std::vector<float> &v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = fromBf16Bits(toBf16Bits(v[i]));
  return r;
}
std::vector<uint16_t> bf16Bits(const std::vector<float> &v) {
  std::vector<uint16_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = toBf16Bits(v[i]);
  return r;
}
std::vector<float> fromBits(const std::vector<uint16_t> &v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = fromBf16Bits(v[i]);
  return r;
}

/// Row-major element strides of a dense [d0,d1,d2,d3] broadcasting operand
/// seen as [B,H,Sq,Sk]: zero where the dimension is 1.
void broadcastStrides(const std::vector<int64_t> &shape, int64_t out[4]) {
  std::vector<int64_t> s = rowMajor(shape);
  for (int i = 0; i < 4; ++i)
    out[i] = shape[i] == 1 ? 0 : s[i];
}

struct Case {
  int64_t B, Sq, Sk, H, dh, dvh;
  std::vector<int64_t> biasShape, maskShape;
};

AttentionProblem makeProblem(const Case &c, unsigned seed) {
  AttentionProblem p;
  p.B = c.B, p.Sq = c.Sq, p.Sk = c.Sk, p.H = c.H, p.dh = c.dh, p.dvh = c.dvh;
  p.scale = 1.f / std::sqrt((float)c.dh);
  p.q = randomFloats(c.B * c.Sq * c.H * c.dh, seed);
  p.k = randomFloats(c.B * c.Sk * c.H * c.dh, seed + 1);
  p.v = randomFloats(c.B * c.Sk * c.H * c.dvh, seed + 2);
  p.biasShape = c.biasShape;
  p.maskShape = c.maskShape;
  if (!c.biasShape.empty())
    p.bias = randomFloats(numel(c.biasShape), seed + 3, -2, 2);
  if (!c.maskShape.empty()) {
    std::vector<float> r = randomFloats(numel(c.maskShape), seed + 4, 0, 1);
    p.mask.resize(r.size());
    for (size_t i = 0; i < r.size(); ++i)
      p.mask[i] = r[i] < 0.7f;
    // The first query row keeps no key at all.
    int64_t sk = c.maskShape[3], sq = c.maskShape[2];
    if (sq > 1)
      for (int64_t j = 0; j < sk; ++j)
        p.mask[j] = 0;
  }
  return p;
}

std::vector<float> cpuForward(const AttentionProblem &p) {
  std::vector<float> out(p.B * p.Sq * p.H * p.dvh);
  std::vector<float> q = p.q, k = p.k, v = p.v, bias = p.bias;
  std::vector<uint8_t> mask = p.mask;
  auto md = memref<mgrt_memref_f32_3>(out.data(), {p.B, p.Sq, p.H * p.dvh});
  auto qd = memref<mgrt_memref_f32_3>(q.data(), {p.B, p.Sq, p.H * p.dh});
  auto kd = memref<mgrt_memref_f32_3>(k.data(), {p.B, p.Sk, p.H * p.dh});
  auto vd = memref<mgrt_memref_f32_3>(v.data(), {p.B, p.Sk, p.H * p.dvh});
  mgrt_memref_f32_4 bd;
  mgrt_memref_i8_4 mdsk;
  int64_t flags = 0;
  if (!bias.empty()) {
    bd = memref<mgrt_memref_f32_4>(bias.data(), p.biasShape);
    flags |= MGRT_ATTENTION_BIAS;
  }
  if (!mask.empty()) {
    mdsk = memref<mgrt_memref_i8_4>((int8_t *)mask.data(), p.maskShape);
    flags |= MGRT_ATTENTION_MASK;
  }
  _mlir_ciface_mgrt_attention_f32(
      &md, &qd, &kd, &vd, bias.empty() ? nullptr : &bd,
      mask.empty() ? nullptr : &mdsk, p.H, p.scale, flags);
  return out;
}

AttentionGrads cpuBackward(const AttentionProblem &p,
                           const std::vector<float> &dout) {
  AttentionGrads g;
  g.dq.resize(p.q.size());
  g.dk.resize(p.k.size());
  g.dv.resize(p.v.size());
  g.dbias.resize(p.bias.size());
  std::vector<float> q = p.q, k = p.k, v = p.v, bias = p.bias, dO = dout;
  std::vector<uint8_t> mask = p.mask;
  auto dqd = memref<mgrt_memref_f32_3>(g.dq.data(), {p.B, p.Sq, p.H * p.dh});
  auto dkd = memref<mgrt_memref_f32_3>(g.dk.data(), {p.B, p.Sk, p.H * p.dh});
  auto dvd = memref<mgrt_memref_f32_3>(g.dv.data(), {p.B, p.Sk, p.H * p.dvh});
  auto dod = memref<mgrt_memref_f32_3>(dO.data(), {p.B, p.Sq, p.H * p.dvh});
  auto qd = memref<mgrt_memref_f32_3>(q.data(), {p.B, p.Sq, p.H * p.dh});
  auto kd = memref<mgrt_memref_f32_3>(k.data(), {p.B, p.Sk, p.H * p.dh});
  auto vd = memref<mgrt_memref_f32_3>(v.data(), {p.B, p.Sk, p.H * p.dvh});
  mgrt_memref_f32_4 bd, dbd;
  mgrt_memref_i8_4 mdsk;
  int64_t flags = 0;
  if (!bias.empty()) {
    bd = memref<mgrt_memref_f32_4>(bias.data(), p.biasShape);
    dbd = memref<mgrt_memref_f32_4>(g.dbias.data(), p.biasShape);
    flags |= MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
  }
  if (!mask.empty()) {
    mdsk = memref<mgrt_memref_i8_4>((int8_t *)mask.data(), p.maskShape);
    flags |= MGRT_ATTENTION_MASK;
  }
  _mlir_ciface_mgrt_attention_bwd_f32(
      &dqd, &dkd, &dvd, bias.empty() ? nullptr : &dbd, &dod, &qd, &kd, &vd,
      bias.empty() ? nullptr : &bd, mask.empty() ? nullptr : &mdsk, p.H,
      p.scale, flags);
  return g;
}

/// Device problem: q/k/v/out in `bf16` or float32, bias/mask dense.
struct DeviceAttention {
  mgrt_cuda_attention a;
  std::unique_ptr<DeviceBuffer<float>> qf, kf, vf, of, bias, lse;
  std::unique_ptr<DeviceBuffer<uint16_t>> qh, kh, vh, oh;
  std::unique_ptr<DeviceBuffer<uint8_t>> mask;

  DeviceAttention(const AttentionProblem &p, bool bf16) {
    std::memset(&a, 0, sizeof(a));
    a.dtype = bf16 ? MGRT_CUDA_BF16 : MGRT_CUDA_F32;
    a.B = p.B, a.Sq = p.Sq, a.Sk = p.Sk, a.H = p.H, a.dh = p.dh, a.dvh = p.dvh,
    a.scale = p.scale;
    if (bf16) {
      qh.reset(new DeviceBuffer<uint16_t>(bf16Bits(p.q)));
      kh.reset(new DeviceBuffer<uint16_t>(bf16Bits(p.k)));
      vh.reset(new DeviceBuffer<uint16_t>(bf16Bits(p.v)));
      oh.reset(new DeviceBuffer<uint16_t>(p.B * p.Sq * p.H * p.dvh));
      a.q = qh->ptr, a.k = kh->ptr, a.v = vh->ptr, a.out = oh->ptr;
    } else {
      qf.reset(new DeviceBuffer<float>(p.q));
      kf.reset(new DeviceBuffer<float>(p.k));
      vf.reset(new DeviceBuffer<float>(p.v));
      of.reset(new DeviceBuffer<float>(p.B * p.Sq * p.H * p.dvh));
      a.q = qf->ptr, a.k = kf->ptr, a.v = vf->ptr, a.out = of->ptr;
    }
    a.q_stride[0] = p.Sq * p.H * p.dh, a.q_stride[1] = p.H * p.dh;
    a.k_stride[0] = p.Sk * p.H * p.dh, a.k_stride[1] = p.H * p.dh;
    a.v_stride[0] = p.Sk * p.H * p.dvh, a.v_stride[1] = p.H * p.dvh;
    a.out_stride[0] = p.Sq * p.H * p.dvh, a.out_stride[1] = p.H * p.dvh;
    if (!p.bias.empty()) {
      bias.reset(new DeviceBuffer<float>(p.bias));
      a.bias = bias->get();
      broadcastStrides(p.biasShape, a.bias_stride);
    }
    if (!p.mask.empty()) {
      mask.reset(new DeviceBuffer<uint8_t>(p.mask));
      a.mask = mask->get();
      broadcastStrides(p.maskShape, a.mask_stride);
    }
    lse.reset(new DeviceBuffer<float>(p.B * p.H * p.Sq));
    a.lse = lse->get();
  }
  std::vector<float> out() const {
    return oh ? fromBits(oh->host()) : of->host();
  }
};

const Case kCases[] = {
    // Ragged sizes, full bias, broadcast mask with a fully masked row.
    {2, 100, 77, 2, 24, 24, {2, 2, 100, 77}, {1, 1, 100, 77}},
    // Head size 64, bias shared by the batch, no mask.
    {1, 300, 300, 4, 64, 64, {1, 4, 300, 300}, {}},
    // Small heads, different q/k and v head sizes, per-key mask.
    {3, 65, 129, 3, 16, 32, {}, {3, 1, 1, 129}},
    // Large heads, bias broadcast over heads and batch.
    {2, 70, 70, 1, 128, 128, {1, 1, 70, 70}, {}},
    // Head size 64 (the BF16 tensor-core kernels) with a bias shared by
    // the batch (its gradient is a sum) and a per-batch mask.
    {2, 130, 90, 2, 64, 64, {1, 2, 130, 90}, {2, 1, 130, 90}},
};

TEST(CudaDevice, NoDeviceIsReportedCleanly) {
  int n = mgrt_cuda_device_count();
  EXPECT_GE(n, 0);
  EXPECT_NE(mgrt_cuda_device_name(), nullptr);
  if (n == 0)
    EXPECT_STREQ(mgrt_cuda_device_name(), "none");
}

TEST(CudaMemory, TracksCurrentAndPeak) {
  REQUIRE_GPU();
  size_t base = mgrt_cuda_current_bytes();
  mgrt_cuda_reset_peak();
  void *a = mgrt_cuda_alloc(1 << 20), *b = mgrt_cuda_alloc(3 << 20);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(mgrt_cuda_current_bytes(), base + (4 << 20));
  mgrt_cuda_free(a);
  EXPECT_EQ(mgrt_cuda_current_bytes(), base + (3 << 20));
  EXPECT_EQ(mgrt_cuda_peak_bytes(), base + (4 << 20));
  mgrt_cuda_free(b);
  EXPECT_EQ(mgrt_cuda_current_bytes(), base);
}

TEST(CudaAttention, ForwardF32MatchesCpu) {
  REQUIRE_GPU();
  unsigned seed = 10;
  for (const Case &c : kCases) {
    AttentionProblem p = makeProblem(c, seed += 10);
    DeviceAttention d(p, /*bf16=*/false);
    mgrt_cuda_attention_forward(&d.a, nullptr);
    float err = maxAbsDiff(d.out(), cpuForward(p));
    EXPECT_LE(err, 1e-3f) << "dh=" << c.dh << " Sq=" << c.Sq;
  }
}

TEST(CudaAttention, BackwardF32MatchesCpu) {
  REQUIRE_GPU();
  unsigned seed = 100;
  for (const Case &c : kCases) {
    AttentionProblem p = makeProblem(c, seed += 10);
    std::vector<float> dout = randomFloats(p.B * p.Sq * p.H * p.dvh, seed + 7);
    AttentionGrads want = cpuBackward(p, dout);
    DeviceAttention d(p, false);
    mgrt_cuda_attention_forward(&d.a, nullptr);
    DeviceBuffer<float> dO(dout), dq(p.q.size()), dk(p.k.size()),
        dv(p.v.size()), dbias(std::max<size_t>(p.bias.size(), 1));
    mgrt_cuda_attention_grad g;
    std::memset(&g, 0, sizeof(g));
    g.dout = dO.ptr, g.dq = dq.ptr, g.dk = dk.ptr, g.dv = dv.ptr;
    if (!p.bias.empty()) {
      g.dbias = dbias.get();
      broadcastStrides(p.biasShape, g.dbias_stride);
    }
    mgrt_cuda_attention_backward(&d.a, &g, nullptr);
    EXPECT_LE(maxAbsDiff(dq.host(), want.dq), 1e-3f) << "dq dh=" << c.dh;
    EXPECT_LE(maxAbsDiff(dk.host(), want.dk), 1e-3f) << "dk dh=" << c.dh;
    EXPECT_LE(maxAbsDiff(dv.host(), want.dv), 1e-3f) << "dv dh=" << c.dh;
    if (!p.bias.empty()) {
      std::vector<float> got = dbias.host();
      got.resize(p.bias.size());
      EXPECT_LE(maxAbsDiff(got, want.dbias), 1e-3f) << "dbias dh=" << c.dh;
    }
    // Without the forward's statistics the backward recomputes them.
    d.a.lse = nullptr;
    mgrt_cuda_attention_backward(&d.a, &g, nullptr);
    EXPECT_LE(maxAbsDiff(dq.host(), want.dq), 1e-3f) << "dq (no lse)";
  }
}

TEST(CudaAttention, Bf16MatchesCpuOnRoundedInputs) {
  REQUIRE_GPU();
  unsigned seed = 200;
  for (const Case &c : kCases) {
    AttentionProblem p = makeProblem(c, seed += 10);
    AttentionProblem r = p; // the CPU sees what the GPU sees
    r.q = roundBf16(p.q), r.k = roundBf16(p.k), r.v = roundBf16(p.v);
    DeviceAttention d(p, /*bf16=*/true);
    mgrt_cuda_attention_forward(&d.a, nullptr);
    // bf16 output rounding (2^-8 relative, |out| <= 1) plus bf16 P on the
    // tensor-core path.
    EXPECT_LE(maxAbsDiff(d.out(), cpuForward(r)), 2e-2f) << "dh=" << c.dh;

    std::vector<float> dout =
        roundBf16(randomFloats(p.B * p.Sq * p.H * p.dvh, seed + 7));
    AttentionGrads want = cpuBackward(r, dout);
    DeviceBuffer<uint16_t> dO(bf16Bits(dout)), dq(p.q.size()), dk(p.k.size()),
        dv(p.v.size());
    DeviceBuffer<float> dbias(std::max<size_t>(p.bias.size(), 1));
    mgrt_cuda_attention_grad g;
    std::memset(&g, 0, sizeof(g));
    g.dout = dO.ptr, g.dq = dq.ptr, g.dk = dk.ptr, g.dv = dv.ptr;
    if (!p.bias.empty()) {
      g.dbias = dbias.get();
      broadcastStrides(p.biasShape, g.dbias_stride);
    }
    mgrt_cuda_attention_backward(&d.a, &g, nullptr);
    auto rel = [](const std::vector<float> &got, const std::vector<float> &w) {
      float m = 0;
      for (float x : w)
        m = std::max(m, std::abs(x));
      return maxAbsDiff(got, w) / std::max(m, 1e-6f);
    };
    EXPECT_LE(rel(fromBits(dq.host()), want.dq), 3e-2f) << "dq dh=" << c.dh;
    EXPECT_LE(rel(fromBits(dk.host()), want.dk), 3e-2f) << "dk dh=" << c.dh;
    EXPECT_LE(rel(fromBits(dv.host()), want.dv), 3e-2f) << "dv dh=" << c.dh;
    if (!p.bias.empty()) {
      std::vector<float> got = dbias.host();
      got.resize(p.bias.size());
      EXPECT_LE(rel(got, want.dbias), 3e-2f) << "dbias dh=" << c.dh;
    }
  }
}

TEST(CudaAttention, RejectsUnsupportedHeadSize) {
  REQUIRE_GPU();
  mgrt_cuda_attention a;
  std::memset(&a, 0, sizeof(a));
  a.B = a.Sq = a.Sk = a.H = 1;
  a.dh = 160, a.dvh = 64;
  EXPECT_DEATH(mgrt_cuda_attention_forward(&a, nullptr),
               "mgrt_cuda_attention_forward: head sizes dh=160 dvh=64");
}

/// out = op(a) @ op(b) in double.
std::vector<float> refGemm(const std::vector<float> &a,
                           const std::vector<float> &b, int64_t G, int64_t M,
                           int64_t N, int64_t K, bool ta, bool tb,
                           bool sharedB) {
  std::vector<float> out(G * M * N);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = ta ? a[g * M * K + k * M + i] : a[g * M * K + i * K + k];
          int64_t bo = sharedB ? 0 : g * K * N;
          double y = tb ? b[bo + j * K + k] : b[bo + k * N + j];
          s += x * y;
        }
        out[g * M * N + i * N + j] = (float)s;
      }
  return out;
}

TEST(CudaMatmul, MatchesReferenceInEveryMode) {
  REQUIRE_GPU();
  const int64_t G = 3, M = 70, N = 45, K = 129;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int shared = 0; shared < 2; ++shared) {
        std::vector<float> a = randomFloats(G * M * K, 1 + ta);
        std::vector<float> b = randomFloats((shared ? 1 : G) * K * N, 3 + tb);
        std::vector<float> want = refGemm(a, b, G, M, N, K, ta, tb, shared);
        DeviceBuffer<float> da(a), db(b), dout(G * M * N);
        const int64_t bStride = shared ? 0 : K * N;
        mgrt_cuda_matmul(dout.ptr, da.ptr, db.ptr, G, M, N, K, ta, tb, bStride,
                         MGRT_CUDA_MATH_FP32, nullptr);
        EXPECT_LE(maxAbsDiff(dout.host(), want), 1e-3f)
            << "fp32 ta=" << ta << " tb=" << tb << " shared=" << shared;
        mgrt_cuda_matmul(dout.ptr, da.ptr, db.ptr, G, M, N, K, ta, tb, bStride,
                         MGRT_CUDA_MATH_TF32, nullptr);
        EXPECT_LE(maxAbsDiff(dout.host(), want), 5e-2f) << "tf32";
        // BF16: the reference sees the rounded inputs.
        std::vector<float> ar = roundBf16(a), br = roundBf16(b);
        std::vector<float> wantR = refGemm(ar, br, G, M, N, K, ta, tb, shared);
        DeviceBuffer<uint16_t> ha(bf16Bits(a)), hb(bf16Bits(b)),
            hout(G * M * N);
        mgrt_cuda_matmul(hout.ptr, ha.ptr, hb.ptr, G, M, N, K, ta, tb, bStride,
                         MGRT_CUDA_MATH_BF16, nullptr);
        // bf16 output rounding: 2^-9 relative to the largest |out|.
        float big = 0;
        for (float x : wantR)
          big = std::max(big, std::abs(x));
        EXPECT_LE(maxAbsDiff(fromBits(hout.host()), wantR) / big, 1e-2f)
            << "bf16";
      }
}

TEST(CudaLayerNorm, ForwardAndBackwardMatch) {
  REQUIRE_GPU();
  for (int64_t C : {48, 300, 1000}) {
    const int64_t R = 37;
    std::vector<float> x = randomFloats(R * C, 5, -3, 3);
    std::vector<float> gamma = randomFloats(C, 6), beta = randomFloats(C, 7);
    std::vector<float> dout = randomFloats(R * C, 8);
    std::vector<float> want(R * C);
    auto od = memref<mgrt_memref_f32_2>(want.data(), {R, C});
    auto xd = memref<mgrt_memref_f32_2>(x.data(), {R, C});
    auto gd = memref<mgrt_memref_f32_1>(gamma.data(), {C});
    auto bd = memref<mgrt_memref_f32_1>(beta.data(), {C});
    _mlir_ciface_mgrt_layer_norm_f32(&od, &xd, &gd, &bd, 1e-5f, 1);

    DeviceBuffer<float> dx(x), dg(gamma), db(beta), dout_(dout), out(R * C),
        mean(R), rstd(R), dxg(R * C), dgg(C), dbg(C);
    mgrt_cuda_layer_norm_forward(out.get(), mean.get(), rstd.get(), dx.get(),
                                 dg.get(), db.get(), R, C, 1e-5f, nullptr);
    EXPECT_LE(maxAbsDiff(out.host(), want), 1e-3f) << "C=" << C;

    // float64 reference of the backward.
    std::vector<float> wdx(R * C), wdg(C, 0), wdb(C, 0);
    std::vector<double> dgAcc(C, 0), dbAcc(C, 0);
    for (int64_t r = 0; r < R; ++r) {
      double mu = 0, var = 0;
      for (int64_t c = 0; c < C; ++c)
        mu += x[r * C + c];
      mu /= C;
      for (int64_t c = 0; c < C; ++c)
        var += (x[r * C + c] - mu) * (x[r * C + c] - mu);
      double rs = 1 / std::sqrt(var / C + 1e-5);
      double m1 = 0, m2 = 0;
      for (int64_t c = 0; c < C; ++c) {
        double xh = (x[r * C + c] - mu) * rs, gdy = gamma[c] * dout[r * C + c];
        m1 += gdy / C;
        m2 += gdy * xh / C;
        dgAcc[c] += dout[r * C + c] * xh;
        dbAcc[c] += dout[r * C + c];
      }
      for (int64_t c = 0; c < C; ++c) {
        double xh = (x[r * C + c] - mu) * rs;
        wdx[r * C + c] =
            (float)(rs * (gamma[c] * dout[r * C + c] - m1 - xh * m2));
      }
    }
    for (int64_t c = 0; c < C; ++c)
      wdg[c] = (float)dgAcc[c], wdb[c] = (float)dbAcc[c];
    mgrt_cuda_layer_norm_backward(dxg.get(), dgg.get(), dbg.get(), dout_.get(),
                                  dx.get(), dg.get(), mean.get(), rstd.get(), R,
                                  C, nullptr);
    EXPECT_LE(maxAbsDiff(dxg.host(), wdx), 1e-3f) << "dx C=" << C;
    EXPECT_LE(maxAbsDiff(dgg.host(), wdg), 1e-3f) << "dgamma C=" << C;
    EXPECT_LE(maxAbsDiff(dbg.host(), wdb), 1e-3f) << "dbeta C=" << C;
  }
}

TEST(CudaSoftmax, MatchesReference) {
  REQUIRE_GPU();
  const int64_t R = 19, C = 1500;
  std::vector<float> x = randomFloats(R * C, 9, -20, 20), want(R * C);
  for (int64_t r = 0; r < R; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < C; ++c)
      m = std::max<double>(m, x[r * C + c]);
    for (int64_t c = 0; c < C; ++c)
      s += std::exp(x[r * C + c] - m);
    for (int64_t c = 0; c < C; ++c)
      want[r * C + c] = (float)(std::exp(x[r * C + c] - m) / s);
  }
  DeviceBuffer<float> dx(x), out(R * C);
  mgrt_cuda_softmax(out.get(), dx.get(), R, C, nullptr);
  EXPECT_LE(maxAbsDiff(out.host(), want), 1e-5f);
}

TEST(CudaEmbedding, GatherAndScatterAdd) {
  REQUIRE_GPU();
  const int64_t V = 50, C = 33, N = 400;
  std::vector<float> table = randomFloats(V * C, 11),
                     dout = randomFloats(N * C, 12);
  std::vector<int64_t> index(N);
  for (int64_t i = 0; i < N; ++i)
    index[i] = (i * 7919) % (V + 3) - 1; // includes -1 and V, V+1 (skipped)
  std::vector<float> wantOut(N * C, 0), wantGrad(V * C, 0);
  for (int64_t i = 0; i < N; ++i)
    if (index[i] >= 0 && index[i] < V)
      for (int64_t c = 0; c < C; ++c) {
        wantOut[i * C + c] = table[index[i] * C + c];
        wantGrad[index[i] * C + c] += dout[i * C + c];
      }
  DeviceBuffer<float> dt(table), dO(dout), out(N * C),
      grad(std::vector<float>(V * C, 0.f));
  DeviceBuffer<int64_t> di(index);
  mgrt_cuda_embedding_forward(out.get(), dt.get(), di.get(), N, V, C, nullptr);
  EXPECT_EQ(maxAbsDiff(out.host(), wantOut), 0.f);
  mgrt_cuda_embedding_backward(grad.get(), dO.get(), di.get(), N, V, C,
                               nullptr);
  EXPECT_LE(maxAbsDiff(grad.host(), wantGrad), 1e-4f);
}

} // namespace
