//===- CudaStepCallsTest.cpp - What --target cuda programs call
//------------===//
//
// The memref-descriptor calls of a compiled CUDA step (runtime/cuda/
// StepCalls.cu) against the CPU runtime's calls on the same operands:
// matmul over contiguous, transposed, padded and broadcast layouts, the
// attention forward and backward with broadcast bias and mask; and the
// program support of runtime/cuda/Program.cu: device copies of globals and
// the entry staging. FP32, max abs error <= 1e-3. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "RuntimeTestUtil.h"
#include "megagraph/Runtime.h"
#include "megagraph/RuntimeCuda.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mgrt_test;

extern "C" {
void _mlir_ciface_mgrt_cuda_matmul_f32(mgrt_memref_f32_3 *out,
                                       mgrt_memref_f32_3 *a,
                                       mgrt_memref_f32_3 *b);
void _mlir_ciface_mgrt_cuda_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags);
void _mlir_ciface_mgrt_cuda_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags);
void _mlir_ciface_mgrt_cuda_matmul_bf16_f32(mgrt_memref_f32_3 *out,
                                            mgrt_memref_f32_3 *a,
                                            mgrt_memref_f32_3 *b);
void _mlir_ciface_mgrt_cuda_attention_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags);
void _mlir_ciface_mgrt_cuda_attention_bwd_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags);
}

namespace {

/// One matmul operand layout: storage sizes and a view over them.
struct View {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0, storage = 0;
};

/// [G,R,C] viewed contiguously, transposed in storage, or padded rows.
View layout(int64_t G, int64_t R, int64_t C, const std::string &kind) {
  View v;
  v.sizes = {G, R, C};
  if (kind == "contiguous") {
    v.strides = {R * C, C, 1};
    v.storage = G * R * C;
  } else if (kind == "transposed") {
    v.strides = {R * C, 1, R};
    v.storage = G * R * C;
  } else if (kind == "broadcast") { // G stays 1: shared by the batch
    v.strides = {0, C, 1};
    v.sizes[0] = 1;
    v.storage = R * C;
  } else { // padded: rows of C + 3 floats, 1 float of offset
    v.strides = {R * (C + 3), C + 3, 1};
    v.offset = 1;
    v.storage = 1 + G * R * (C + 3);
  }
  return v;
}

TEST(CudaStepCalls, MatmulLayoutsMatchCpu) {
  REQUIRE_GPU();
  const int64_t G = 3, M = 37, K = 29, N = 41;
  unsigned seed = 1;
  for (const char *ka : {"contiguous", "transposed", "padded"})
    for (const char *kb : {"contiguous", "transposed", "padded", "broadcast"})
      for (const char *ko : {"contiguous", "padded"}) {
        View va = layout(G, M, K, ka), vb = layout(G, K, N, kb),
             vo = layout(G, M, N, ko);
        std::vector<float> ha0 = randomFloats(va.storage, ++seed);
        std::vector<float> hb0 = randomFloats(vb.storage, ++seed);
        DeviceBuffer<float> a(ha0), b(hb0),
            out(std::vector<float>(vo.storage, 7.f));
        std::vector<float> want(vo.storage, 7.f);
        auto ha = memref<mgrt_memref_f32_3>(ha0.data(), va.sizes, va.strides,
                                            va.offset);
        auto hb = memref<mgrt_memref_f32_3>(hb0.data(), vb.sizes, vb.strides,
                                            vb.offset);
        auto ho = memref<mgrt_memref_f32_3>(want.data(), vo.sizes, vo.strides,
                                            vo.offset);
        _mlir_ciface_mgrt_matmul_f32(&ho, &ha, &hb);
        auto da =
            memref<mgrt_memref_f32_3>(a.get(), va.sizes, va.strides, va.offset);
        auto db =
            memref<mgrt_memref_f32_3>(b.get(), vb.sizes, vb.strides, vb.offset);
        auto dout = memref<mgrt_memref_f32_3>(out.get(), vo.sizes, vo.strides,
                                              vo.offset);
        _mlir_ciface_mgrt_cuda_matmul_f32(&dout, &da, &db);
        EXPECT_LE(maxAbsDiff(out.host(), want), 1e-3f)
            << "a " << ka << ", b " << kb << ", out " << ko;
      }
}

TEST(CudaStepCalls, AttentionForwardAndBackwardMatchCpu) {
  REQUIRE_GPU();
  // q is a column slice of a wider projection (row stride 3*D), as the
  // compiled step passes it; bias [1,H,S,S] shared by the batch; mask
  // [B,1,1,S].
  const int64_t B = 2, S = 70, H = 2, D = 48, Dv = 48;
  std::vector<float> qkvHost = randomFloats(B * S * 3 * D, 5);
  std::vector<float> vHost = randomFloats(B * S * Dv, 6);
  std::vector<float> biasHost = randomFloats(H * S * S, 7, -2, 2);
  std::vector<float> doutHost = randomFloats(B * S * Dv, 8);
  std::vector<uint8_t> maskHost(B * S);
  for (size_t i = 0; i < maskHost.size(); ++i)
    maskHost[i] = (i * 7) % 5 != 0;
  DeviceBuffer<float> qkv(qkvHost), v(vHost), bias(biasHost), dout(doutHost);
  DeviceBuffer<uint8_t> mask(maskHost);
  const float scale = 1.f / std::sqrt((float)(D / H));
  const int64_t flags =
      MGRT_ATTENTION_BIAS | MGRT_ATTENTION_MASK | MGRT_ATTENTION_DBIAS;
  struct Operands {
    mgrt_memref_f32_3 q, k, v, out, dq, dk, dv, dout;
    mgrt_memref_f32_4 bias, dbias;
    mgrt_memref_i8_4 mask;
  };
  auto operands = [&](float *qkvp, float *vp, float *biasp, uint8_t *maskp,
                      float *outp, float *dqp, float *dkp, float *dvp,
                      float *doutp, float *dbiasp) {
    Operands o;
    o.q = memref<mgrt_memref_f32_3>(qkvp, {B, S, D}, {S * 3 * D, 3 * D, 1});
    o.k = memref<mgrt_memref_f32_3>(qkvp, {B, S, D}, {S * 3 * D, 3 * D, 1}, D);
    o.v = memref<mgrt_memref_f32_3>(vp, {B, S, Dv});
    o.out = memref<mgrt_memref_f32_3>(outp, {B, S, Dv});
    o.dq = memref<mgrt_memref_f32_3>(dqp, {B, S, D});
    o.dk = memref<mgrt_memref_f32_3>(dkp, {B, S, D});
    o.dv = memref<mgrt_memref_f32_3>(dvp, {B, S, Dv});
    o.dout = memref<mgrt_memref_f32_3>(doutp, {B, S, Dv});
    o.bias = memref<mgrt_memref_f32_4>(biasp, {1, H, S, S});
    o.dbias = memref<mgrt_memref_f32_4>(dbiasp, {1, H, S, S});
    o.mask = memref<mgrt_memref_i8_4>(reinterpret_cast<int8_t *>(maskp),
                                      {B, 1, 1, S});
    return o;
  };
  // CPU reference.
  std::vector<float> out(B * S * Dv), dq(B * S * D), dk(B * S * D),
      dv(B * S * Dv), dbias(H * S * S);
  Operands c = operands(qkvHost.data(), vHost.data(), biasHost.data(),
                        maskHost.data(), out.data(), dq.data(), dk.data(),
                        dv.data(), doutHost.data(), dbias.data());
  _mlir_ciface_mgrt_attention_f32(&c.out, &c.q, &c.k, &c.v, &c.bias, &c.mask, H,
                                  scale, flags & 3);
  _mlir_ciface_mgrt_attention_bwd_f32(&c.dq, &c.dk, &c.dv, &c.dbias, &c.dout,
                                      &c.q, &c.k, &c.v, &c.bias, &c.mask, H,
                                      scale, flags);
  // GPU.
  DeviceBuffer<float> gout(out.size()), gdq(dq.size()), gdk(dk.size()),
      gdv(dv.size()), gdbias(std::vector<float>(dbias.size(), 5.f));
  Operands g =
      operands(qkv.get(), v.get(), bias.get(), mask.get(), gout.get(),
               gdq.get(), gdk.get(), gdv.get(), dout.get(), gdbias.get());
  _mlir_ciface_mgrt_cuda_attention_f32(&g.out, &g.q, &g.k, &g.v, &g.bias,
                                       &g.mask, H, scale, flags & 3);
  _mlir_ciface_mgrt_cuda_attention_bwd_f32(&g.dq, &g.dk, &g.dv, &g.dbias,
                                           &g.dout, &g.q, &g.k, &g.v, &g.bias,
                                           &g.mask, H, scale, flags);
  EXPECT_LE(maxAbsDiff(gout.host(), out), 1e-3f) << "out";
  EXPECT_LE(maxAbsDiff(gdq.host(), dq), 1e-3f) << "dq";
  EXPECT_LE(maxAbsDiff(gdk.host(), dk), 1e-3f) << "dk";
  EXPECT_LE(maxAbsDiff(gdv.host(), dv), 1e-3f) << "dv";
  EXPECT_LE(maxAbsDiff(gdbias.host(), dbias), 1e-3f) << "dbias";
}

/// Largest |a - b| relative to the largest |b|.
float relDiff(const std::vector<float> &a, const std::vector<float> &b) {
  float scale = 0;
  for (float x : b)
    scale = std::max(scale, std::fabs(x));
  return maxAbsDiff(a, b) / std::max(scale, 1e-30f);
}

// --precision bf16: the GPU's BF16 GEMM (tensor cores, float32 sums and
// result) against the CPU's (operands rounded to bf16, float32 GEMM):
// both are bf16 products summed in float32, so they agree to float32
// summation order; an FP32 GEMM of the unrounded operands differs by the
// rounding (checked too, so the test sees whether rounding happened).
TEST(CudaStepCalls, Bf16MatmulMatchesCpuBf16) {
  REQUIRE_GPU();
  const int64_t G = 2, M = 45, K = 300, N = 33;
  View va = layout(G, M, K, "transposed"), vb = layout(G, K, N, "broadcast"),
       vo = layout(G, M, N, "padded");
  std::vector<float> ha0 = randomFloats(va.storage, 21);
  std::vector<float> hb0 = randomFloats(vb.storage, 22);
  DeviceBuffer<float> a(ha0), b(hb0), out(std::vector<float>(vo.storage, 7.f));
  std::vector<float> want(vo.storage, 7.f), fp32(vo.storage, 7.f);
  auto ha =
      memref<mgrt_memref_f32_3>(ha0.data(), va.sizes, va.strides, va.offset);
  auto hb =
      memref<mgrt_memref_f32_3>(hb0.data(), vb.sizes, vb.strides, vb.offset);
  auto ho =
      memref<mgrt_memref_f32_3>(want.data(), vo.sizes, vo.strides, vo.offset);
  auto hf =
      memref<mgrt_memref_f32_3>(fp32.data(), vo.sizes, vo.strides, vo.offset);
  _mlir_ciface_mgrt_matmul_bf16_f32(&ho, &ha, &hb);
  _mlir_ciface_mgrt_matmul_f32(&hf, &ha, &hb);
  auto da = memref<mgrt_memref_f32_3>(a.get(), va.sizes, va.strides, va.offset);
  auto db = memref<mgrt_memref_f32_3>(b.get(), vb.sizes, vb.strides, vb.offset);
  auto dout =
      memref<mgrt_memref_f32_3>(out.get(), vo.sizes, vo.strides, vo.offset);
  _mlir_ciface_mgrt_cuda_matmul_bf16_f32(&dout, &da, &db);
  std::vector<float> got = out.host();
  EXPECT_LE(relDiff(got, want), 1e-5f);
  EXPECT_GE(relDiff(got, fp32), 1e-4f) << "the operands were not rounded";
}

// The BF16 attention (tensor-core kernels for head size 64) against the
// CPU's BF16 attention (rounded q, k, v, dout; float32 kernel): the GPU
// also rounds the probabilities before P.V and its outputs and gradients
// to bf16, so they agree to a few bf16 ulps (2^-8 relative).
TEST(CudaStepCalls, Bf16AttentionMatchesCpuBf16) {
  REQUIRE_GPU();
  const int64_t B = 2, S = 96, H = 2, D = 128;
  std::vector<float> q0 = randomFloats(B * S * D, 31),
                     k0 = randomFloats(B * S * D, 32),
                     v0 = randomFloats(B * S * D, 33),
                     bias0 = randomFloats(H * S * S, 34, -2, 2),
                     dout0 = randomFloats(B * S * D, 35);
  const float scale = 1.f / std::sqrt((float)(D / H));
  const int64_t flags = MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
  std::vector<float> out(B * S * D), dq(out.size()), dk(out.size()),
      dv(out.size()), dbias(H * S * S);
  auto m3 = [&](float *p) { return memref<mgrt_memref_f32_3>(p, {B, S, D}); };
  auto m4 = [&](float *p) {
    return memref<mgrt_memref_f32_4>(p, {1, H, S, S});
  };
  mgrt_memref_i8_4 noMask{};
  {
    auto q = m3(q0.data()), k = m3(k0.data()), v = m3(v0.data()),
         o = m3(out.data()), gq = m3(dq.data()), gk = m3(dk.data()),
         gv = m3(dv.data()), go = m3(dout0.data());
    auto bias = m4(bias0.data()), gb = m4(dbias.data());
    _mlir_ciface_mgrt_attention_bf16_f32(&o, &q, &k, &v, &bias, &noMask, H,
                                         scale, MGRT_ATTENTION_BIAS);
    _mlir_ciface_mgrt_attention_bwd_bf16_f32(
        &gq, &gk, &gv, &gb, &go, &q, &k, &v, &bias, &noMask, H, scale, flags);
  }
  DeviceBuffer<float> dq0(q0), dk0(k0), dv0(v0), dbias0(bias0), ddout(dout0),
      gout(out.size()), gdq(out.size()), gdk(out.size()), gdv(out.size()),
      gdbias(dbias.size());
  auto q = m3(dq0.get()), k = m3(dk0.get()), v = m3(dv0.get()),
       o = m3(gout.get()), gq = m3(gdq.get()), gk = m3(gdk.get()),
       gv = m3(gdv.get()), go = m3(ddout.get());
  auto bias = m4(dbias0.get()), gb = m4(gdbias.get());
  _mlir_ciface_mgrt_cuda_attention_bf16_f32(&o, &q, &k, &v, &bias, &noMask, H,
                                            scale, MGRT_ATTENTION_BIAS);
  _mlir_ciface_mgrt_cuda_attention_bwd_bf16_f32(
      &gq, &gk, &gv, &gb, &go, &q, &k, &v, &bias, &noMask, H, scale, flags);
  EXPECT_LE(relDiff(gout.host(), out), 2e-2f) << "out";
  EXPECT_LE(relDiff(gdq.host(), dq), 3e-2f) << "dq";
  EXPECT_LE(relDiff(gdk.host(), dk), 3e-2f) << "dk";
  EXPECT_LE(relDiff(gdv.host(), dv), 3e-2f) << "dv";
  EXPECT_LE(relDiff(gdbias.host(), dbias), 3e-2f) << "dbias";
}

TEST(CudaProgram, GlobalsAreCopiedOnceAndKept) {
  REQUIRE_GPU();
  static float weights[5] = {1, 2, 3, 4, 5};
  void *d = mgrt_cuda_global(weights, sizeof(weights));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(mgrt_cuda_global(weights, sizeof(weights)), d);
  float back[5] = {0};
  mgrt_cuda_copy_to_host(back, d, sizeof(back));
  EXPECT_EQ(std::memcmp(back, weights, sizeof(back)), 0);
  // An update on the device stays there: the host copy is not re-read.
  float updated[5] = {9, 9, 9, 9, 9};
  mgrt_cuda_copy_to_device(d, updated, sizeof(updated));
  weights[0] = -1;
  mgrt_cuda_copy_to_host(back, mgrt_cuda_global(weights, sizeof(weights)),
                         sizeof(back));
  EXPECT_EQ(back[0], 9.f);
}

/// A stand-in for a compiled entry: out[i] = 2 * x[i] + 1, on the device
/// buffers the staging passes (read through the descriptors).
void doubleEntry(void **d) {
  const int64_t *x = static_cast<const int64_t *>(d[0]);
  const int64_t *out = static_cast<const int64_t *>(d[1]);
  void *xd, *od;
  std::memcpy(&xd, &x[1], sizeof(void *));
  std::memcpy(&od, &out[1], sizeof(void *));
  const int64_t n = x[3] * x[4];
  std::vector<float> h(n);
  mgrt_cuda_copy_to_host(h.data(), xd, n * sizeof(float));
  for (float &v : h)
    v = 2 * v + 1;
  mgrt_cuda_copy_to_device(od, h.data(), n * sizeof(float));
}

TEST(CudaProgram, EntryStagesHostTensors) {
  REQUIRE_GPU();
  const mgrt_tensor_info in[] = {{"x", MGRT_F32, 2, {2, 3}}};
  const mgrt_tensor_info outInfo[] = {{"y", MGRT_F32, 2, {2, 3}}};
  for (float base : {0.f, 10.f}) {
    std::vector<float> x = {base, 1, 2, 3, 4, 5}, y(6, -1);
    auto xd = memref<mgrt_memref_f32_2>(x.data(), {2, 3});
    auto yd = memref<mgrt_memref_f32_2>(y.data(), {2, 3});
    void *descs[] = {&xd, &yd};
    mgrt_cuda_run_entry(doubleEntry, descs, 1, in, 1, outInfo);
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(y[i], 2 * x[i] + 1) << "element " << i;
  }
}

} // namespace
