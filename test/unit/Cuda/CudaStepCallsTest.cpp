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
