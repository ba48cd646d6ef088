//===- StepCalls.cu - The runtime calls of a --target cuda step -----------===//
//
// The CUDA versions of the runtime kernels that compiled code calls through
// memref descriptors (gt-gpu-offload renames mgrt_X to mgrt_cuda_X): the
// same operands, layouts and semantics as the CPU kernels documented in
// megagraph/Runtime.h, on device memory, on the default stream.
//
//===----------------------------------------------------------------------===//

#include "StepCalls.cuh"

#include "CudaCommon.cuh"

#include "megagraph/Runtime.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using namespace mgrt::cuda;

/// dst(g,i,j) = src(g,i,j) over [G,R,C], each through its own strides.
__global__ void copyKernel(float *dst, View3 d, const float *src, View3 s,
                           int64_t G, int64_t R, int64_t C) {
  const int64_t n = G * R * C;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = t % C, i = (t / C) % R, g = t / (R * C);
    dst[g * d.s[0] + i * d.s[1] + j * d.s[2]] =
        src[g * s.s[0] + i * s.s[1] + j * s.s[2]];
  }
}

} // namespace

void mgrt::cuda::copy(float *dst, View3 d, const float *src, View3 s, int64_t G,
                      int64_t R, int64_t C, const char *name) {
  if (G * R * C == 0)
    return;
  copyKernel<<<gridFor(G * R * C), 256>>>(dst, d, src, s, G, R, C);
  MGRT_CUDA_LAUNCHED(name);
}

namespace {
/// A [G,R,C] operand as mgrt_cuda_matmul reads it: contiguous as stored
/// ([G,R,C]) or transposed ([G,C,R]); other layouts are packed into
/// `scratch` (freed by the caller).
struct GemmOperand {
  const float *data = nullptr;
  int trans = 0;
  int64_t batchStride = 0;
};

bool batchOk(int64_t G, int64_t stride, int64_t want) {
  return G == 1 || stride == want;
}

GemmOperand gemmOperand(const mgrt_memref_f32_3 *m, float **scratch) {
  const int64_t G = m->sizes[0], R = m->sizes[1], C = m->sizes[2];
  const int64_t *s = m->strides;
  const float *base = m->aligned + m->offset;
  GemmOperand op;
  op.batchStride = G == 1 ? 0 : R * C;
  if ((s[2] == 1 || C == 1) && (s[1] == C || R == 1) &&
      batchOk(G, s[0], R * C)) {
    op.data = base;
    return op;
  }
  if ((s[1] == 1 || R == 1) && (s[2] == R || C == 1) &&
      batchOk(G, s[0], R * C)) {
    op.data = base, op.trans = 1;
    return op;
  }
  *scratch = static_cast<float *>(mgrt_cuda_alloc(sizeof(float) * G * R * C));
  MGRT_CUDA_CHECK(*scratch, "mgrt_cuda_matmul_f32",
                  "out of device memory packing an operand");
  copy(*scratch, contiguous(R, C), base, {{s[0], s[1], s[2]}}, G, R, C,
       "mgrt_cuda_matmul_f32");
  op.data = *scratch;
  return op;
}

/// GEMM precision of compiled steps: FP32 unless MEGAGRAPH_CUDA_MATMUL=tf32
/// asks for TF32 tensor cores (float32 data either way).
int matmulMath() {
  static const int math = [] {
    const char *v = std::getenv("MEGAGRAPH_CUDA_MATMUL");
    if (!v || !*v || std::strcmp(v, "fp32") == 0)
      return (int)MGRT_CUDA_MATH_FP32;
    if (std::strcmp(v, "tf32") == 0)
      return (int)MGRT_CUDA_MATH_TF32;
    mgrt::kernelFail("mgrt_cuda_matmul_f32",
                     "MEGAGRAPH_CUDA_MATMUL=%s: use fp32 or tf32", v);
  }();
  return math;
}

} // namespace

namespace mgrt::cuda {

mgrt_cuda_attention attentionOf(const mgrt_memref_f32_3 *q,
                                const mgrt_memref_f32_3 *k,
                                const mgrt_memref_f32_3 *v,
                                const mgrt_memref_f32_4 *bias,
                                const mgrt_memref_i8_4 *mask, int64_t numHeads,
                                float scale, int64_t flags, const char *name) {
  MGRT_CUDA_CHECK(q->strides[2] == 1 && k->strides[2] == 1 &&
                      v->strides[2] == 1,
                  name, "innermost strides of q, k, v must be 1");
  mgrt_cuda_attention a;
  std::memset(&a, 0, sizeof(a));
  a.dtype = MGRT_CUDA_F32;
  a.B = q->sizes[0], a.Sq = q->sizes[1], a.Sk = k->sizes[1], a.H = numHeads;
  MGRT_CUDA_CHECK(numHeads > 0 && q->sizes[2] % numHeads == 0 &&
                      v->sizes[2] % numHeads == 0,
                  name, "%lld heads do not divide D=%lld and Dv=%lld",
                  (long long)numHeads, (long long)q->sizes[2],
                  (long long)v->sizes[2]);
  a.dh = q->sizes[2] / numHeads, a.dvh = v->sizes[2] / numHeads;
  a.scale = scale;
  a.q = q->aligned + q->offset, a.k = k->aligned + k->offset;
  a.v = v->aligned + v->offset;
  a.q_stride[0] = q->strides[0], a.q_stride[1] = q->strides[1];
  a.k_stride[0] = k->strides[0], a.k_stride[1] = k->strides[1];
  a.v_stride[0] = v->strides[0], a.v_stride[1] = v->strides[1];
  if (flags & MGRT_ATTENTION_BIAS) {
    MGRT_CUDA_CHECK(bias, name, "bias flag set but bias is null");
    a.bias = bias->aligned + bias->offset;
    broadcastStrides(bias, a.bias_stride);
  }
  if (flags & MGRT_ATTENTION_MASK) {
    MGRT_CUDA_CHECK(mask, name, "mask flag set but mask is null");
    a.mask = reinterpret_cast<const uint8_t *>(mask->aligned + mask->offset);
    broadcastStrides(mask, a.mask_stride);
  }
  return a;
}

} // namespace mgrt::cuda

using namespace mgrt::cuda;

extern "C" void _mlir_ciface_mgrt_cuda_matmul_f32(mgrt_memref_f32_3 *out,
                                                  mgrt_memref_f32_3 *a,
                                                  mgrt_memref_f32_3 *b) {
  constexpr const char *kName = "mgrt_cuda_matmul_f32";
  const int64_t G = a->sizes[0], M = a->sizes[1], K = a->sizes[2];
  const int64_t N = b->sizes[2];
  MGRT_CUDA_CHECK(
      (b->sizes[0] == G || b->sizes[0] == 1) && b->sizes[1] == K &&
          out->sizes[0] == G && out->sizes[1] == M && out->sizes[2] == N,
      kName, "shape mismatch: a [%lld,%lld,%lld] b [%lld,%lld,%lld]",
      (long long)G, (long long)M, (long long)K, (long long)b->sizes[0],
      (long long)b->sizes[1], (long long)N);
  if (G == 0 || M == 0 || N == 0)
    return;
  float *o = out->aligned + out->offset;
  const bool outContiguous = (out->strides[2] == 1 || N == 1) &&
                             (out->strides[1] == N || M == 1) &&
                             batchOk(G, out->strides[0], M * N);
  float *target = o;
  if (!outContiguous) {
    target = static_cast<float *>(mgrt_cuda_alloc(sizeof(float) * G * M * N));
    MGRT_CUDA_CHECK(target, kName, "out of device memory");
  }
  if (K == 0) {
    check(cudaMemsetAsync(target, 0, sizeof(float) * G * M * N), kName,
          "cudaMemsetAsync");
  } else {
    float *scratchA = nullptr, *scratchB = nullptr;
    GemmOperand ga = gemmOperand(a, &scratchA);
    GemmOperand gb = gemmOperand(b, &scratchB);
    mgrt_cuda_matmul(target, ga.data, gb.data, G, M, N, K, ga.trans, gb.trans,
                     b->sizes[0] == 1 ? 0 : K * N, matmulMath(), nullptr);
    mgrt_cuda_free(scratchA);
    mgrt_cuda_free(scratchB);
  }
  if (!outContiguous) {
    copy(o, {{out->strides[0], out->strides[1], out->strides[2]}}, target,
         contiguous(M, N), G, M, N, kName);
    mgrt_cuda_free(target);
  }
}

extern "C" void _mlir_ciface_mgrt_cuda_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *kName = "mgrt_cuda_attention_f32";
  mgrt_cuda_attention a =
      attentionOf(q, k, v, bias, mask, numHeads, scale, flags, kName);
  MGRT_CUDA_CHECK(out->strides[2] == 1, kName,
                  "innermost stride of out must be 1");
  a.out = out->aligned + out->offset;
  a.out_stride[0] = out->strides[0], a.out_stride[1] = out->strides[1];
  if (a.B == 0 || a.Sq == 0)
    return;
  mgrt_cuda_attention_forward(&a, nullptr);
}

extern "C" void _mlir_ciface_mgrt_cuda_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *kName = "mgrt_cuda_attention_bwd_f32";
  mgrt_cuda_attention a =
      attentionOf(q, k, v, bias, mask, numHeads, scale, flags, kName);
  if (a.B == 0 || a.Sq == 0)
    return;
  // The CUDA kernels read dq, dk, dv with q, k, v's strides and dout with
  // out's: operands whose layout differs from their gradient's are packed
  // (gradients are fresh contiguous buffers in compiled code).
  std::vector<float *> scratch;
  auto matchLayout = [&](const void *&data, int64_t stride[2],
                         const mgrt_memref_f32_3 *grad) {
    MGRT_CUDA_CHECK(grad->strides[2] == 1, kName,
                    "innermost strides of the gradients must be 1");
    if (stride[0] == grad->strides[0] && stride[1] == grad->strides[1])
      return;
    const int64_t B = grad->sizes[0], R = grad->sizes[1], C = grad->sizes[2];
    MGRT_CUDA_CHECK(grad->strides[1] == C && grad->strides[0] == R * C, kName,
                    "a strided gradient needs its operand in the same layout");
    float *packed =
        static_cast<float *>(mgrt_cuda_alloc(sizeof(float) * B * R * C));
    MGRT_CUDA_CHECK(packed, kName, "out of device memory");
    copy(packed, contiguous(R, C), static_cast<const float *>(data),
         {{stride[0], stride[1], 1}}, B, R, C, kName);
    scratch.push_back(packed);
    data = packed;
    stride[0] = R * C, stride[1] = C;
  };
  matchLayout(a.q, a.q_stride, dq);
  matchLayout(a.k, a.k_stride, dk);
  matchLayout(a.v, a.v_stride, dv);
  // The backward needs the forward's output and row statistics, which the
  // CPU contract does not pass: the forward runs again here, its output in
  // dout's layout.
  MGRT_CUDA_CHECK(dout->strides[2] == 1, kName,
                  "innermost stride of dout must be 1");
  const int64_t Dv = v->sizes[2];
  const int64_t outBytes = sizeof(float) * ((a.B - 1) * dout->strides[0] +
                                            (a.Sq - 1) * dout->strides[1] + Dv);
  float *out = static_cast<float *>(mgrt_cuda_alloc(outBytes));
  float *lse =
      static_cast<float *>(mgrt_cuda_alloc(sizeof(float) * a.B * a.H * a.Sq));
  MGRT_CUDA_CHECK(out && lse, kName, "out of device memory");
  scratch.push_back(out);
  scratch.push_back(lse);
  a.out = out;
  a.out_stride[0] = dout->strides[0], a.out_stride[1] = dout->strides[1];
  a.lse = lse;
  mgrt_cuda_attention_forward(&a, nullptr);
  mgrt_cuda_attention_grad g;
  std::memset(&g, 0, sizeof(g));
  g.dout = dout->aligned + dout->offset;
  g.dq = dq->aligned + dq->offset;
  g.dk = dk->aligned + dk->offset;
  g.dv = dv->aligned + dv->offset;
  if (flags & MGRT_ATTENTION_DBIAS) {
    MGRT_CUDA_CHECK(dbias, kName, "dbias flag set but dbias is null");
    g.dbias = dbias->aligned + dbias->offset;
    broadcastStrides(dbias, g.dbias_stride);
  }
  mgrt_cuda_attention_backward(&a, &g, nullptr);
  for (float *p : scratch)
    mgrt_cuda_free(p);
}

//===-- BF16 (--precision bf16) -------------------------------------------===//
//
// The float32 operands are converted to contiguous bfloat16 buffers (round
// to nearest even), the GEMMs run on BF16 tensor cores with float32
// accumulation and a float32 result, the attention on the BF16 kernels
// (float32 softmax statistics); attention outputs and gradients come back
// to float32 through the callers' strides.

namespace {

__global__ void toBf16Kernel(__nv_bfloat16 *dst, const float *src, View3 s,
                             int64_t G, int64_t R, int64_t C) {
  const int64_t n = G * R * C;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = t % C, i = (t / C) % R, g = t / (R * C);
    dst[t] = __float2bfloat16_rn(src[g * s.s[0] + i * s.s[1] + j * s.s[2]]);
  }
}

__global__ void fromBf16Kernel(float *dst, View3 d, const __nv_bfloat16 *src,
                               int64_t G, int64_t R, int64_t C) {
  const int64_t n = G * R * C;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = t % C, i = (t / C) % R, g = t / (R * C);
    dst[g * d.s[0] + i * d.s[1] + j * d.s[2]] = __bfloat162float(src[t]);
  }
}

/// A contiguous bfloat16 copy of a float32 [G,R,C] operand (device
/// memory, freed with the object).
class Bf16Copy {
public:
  Bf16Copy(const mgrt_memref_f32_3 *m, const char *name)
      : G(m->sizes[0]), R(m->sizes[1]), C(m->sizes[2]) {
    data = static_cast<__nv_bfloat16 *>(
        mgrt_cuda_alloc(sizeof(__nv_bfloat16) * (G * R * C + 1)));
    MGRT_CUDA_CHECK(data, name, "out of device memory");
    if (G * R * C == 0)
      return;
    toBf16Kernel<<<gridFor(G * R * C), 256>>>(data, m->aligned + m->offset,
                                              viewOf(m), G, R, C);
    MGRT_CUDA_LAUNCHED(name);
  }
  /// A buffer for a [G,R,C] result.
  Bf16Copy(int64_t G, int64_t R, int64_t C, const char *name)
      : G(G), R(R), C(C) {
    data = static_cast<__nv_bfloat16 *>(
        mgrt_cuda_alloc(sizeof(__nv_bfloat16) * (G * R * C + 1)));
    MGRT_CUDA_CHECK(data, name, "out of device memory");
  }
  Bf16Copy(const Bf16Copy &) = delete;
  Bf16Copy &operator=(const Bf16Copy &) = delete;
  ~Bf16Copy() { mgrt_cuda_free(data); }

  /// Writes the values to the float32 `m` through its strides.
  void toFloat(mgrt_memref_f32_3 *m, const char *name) const {
    if (G * R * C == 0)
      return;
    fromBf16Kernel<<<gridFor(G * R * C), 256>>>(m->aligned + m->offset,
                                                viewOf(m), data, G, R, C);
    MGRT_CUDA_LAUNCHED(name);
  }
  /// A contiguous descriptor of the shape (its data pointer is the
  /// bfloat16 buffer: only sizes, strides and the address are read).
  mgrt_memref_f32_3 desc() const {
    mgrt_memref_f32_3 d{};
    d.allocated = d.aligned = reinterpret_cast<float *>(data);
    d.sizes[0] = G, d.sizes[1] = R, d.sizes[2] = C;
    d.strides[0] = R * C, d.strides[1] = C, d.strides[2] = 1;
    return d;
  }

  int64_t G, R, C;
  __nv_bfloat16 *data = nullptr;
};

} // namespace

extern "C" void _mlir_ciface_mgrt_cuda_matmul_bf16_f32(mgrt_memref_f32_3 *out,
                                                       mgrt_memref_f32_3 *a,
                                                       mgrt_memref_f32_3 *b) {
  constexpr const char *kName = "mgrt_cuda_matmul_bf16_f32";
  const int64_t G = a->sizes[0], M = a->sizes[1], K = a->sizes[2];
  const int64_t N = b->sizes[2];
  MGRT_CUDA_CHECK(
      (b->sizes[0] == G || b->sizes[0] == 1) && b->sizes[1] == K &&
          out->sizes[0] == G && out->sizes[1] == M && out->sizes[2] == N,
      kName, "shape mismatch: a [%lld,%lld,%lld] b [%lld,%lld,%lld]",
      (long long)G, (long long)M, (long long)K, (long long)b->sizes[0],
      (long long)b->sizes[1], (long long)N);
  if (G == 0 || M == 0 || N == 0)
    return;
  float *o = out->aligned + out->offset;
  const bool outContiguous = (out->strides[2] == 1 || N == 1) &&
                             (out->strides[1] == N || M == 1) &&
                             batchOk(G, out->strides[0], M * N);
  float *target = o;
  if (!outContiguous) {
    target = static_cast<float *>(mgrt_cuda_alloc(sizeof(float) * G * M * N));
    MGRT_CUDA_CHECK(target, kName, "out of device memory");
  }
  if (K == 0) {
    check(cudaMemsetAsync(target, 0, sizeof(float) * G * M * N), kName,
          "cudaMemsetAsync");
  } else {
    Bf16Copy ab(a, kName), bb(b, kName);
    mgrt_cuda_matmul(target, ab.data, bb.data, G, M, N, K, 0, 0,
                     b->sizes[0] == 1 ? 0 : K * N, MGRT_CUDA_MATH_BF16_F32,
                     nullptr);
  }
  if (!outContiguous) {
    copy(o, viewOf(out), target, contiguous(M, N), G, M, N, kName);
    mgrt_cuda_free(target);
  }
}

extern "C" void _mlir_ciface_mgrt_cuda_attention_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *kName = "mgrt_cuda_attention_bf16_f32";
  if (q->sizes[0] == 0 || q->sizes[1] == 0)
    return;
  Bf16Copy qb(q, kName), kb(k, kName), vb(v, kName);
  Bf16Copy ob(out->sizes[0], out->sizes[1], out->sizes[2], kName);
  const mgrt_memref_f32_3 qd = qb.desc(), kd = kb.desc(), vd = vb.desc();
  mgrt_cuda_attention a =
      attentionOf(&qd, &kd, &vd, bias, mask, numHeads, scale, flags, kName);
  a.dtype = MGRT_CUDA_BF16;
  a.out = ob.data;
  a.out_stride[0] = ob.R * ob.C, a.out_stride[1] = ob.C;
  mgrt_cuda_attention_forward(&a, nullptr);
  ob.toFloat(out, kName);
}

extern "C" void _mlir_ciface_mgrt_cuda_attention_bwd_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  constexpr const char *kName = "mgrt_cuda_attention_bwd_bf16_f32";
  if (q->sizes[0] == 0 || q->sizes[1] == 0)
    return;
  // Contiguous bfloat16 operands and gradients, so every gradient has its
  // operand's layout and dout the (recomputed) output's.
  Bf16Copy qb(q, kName), kb(k, kName), vb(v, kName), db(dout, kName);
  Bf16Copy dqb(q->sizes[0], q->sizes[1], q->sizes[2], kName),
      dkb(k->sizes[0], k->sizes[1], k->sizes[2], kName),
      dvb(v->sizes[0], v->sizes[1], v->sizes[2], kName);
  const mgrt_memref_f32_3 qd = qb.desc(), kd = kb.desc(), vd = vb.desc();
  mgrt_cuda_attention a =
      attentionOf(&qd, &kd, &vd, bias, mask, numHeads, scale, flags, kName);
  a.dtype = MGRT_CUDA_BF16;
  a.out_stride[0] = db.R * db.C, a.out_stride[1] = db.C;
  // a.out and a.lse NULL: the backward runs the BF16 forward for the row
  // statistics (float32) and the output.
  mgrt_cuda_attention_grad g;
  std::memset(&g, 0, sizeof(g));
  g.dout = db.data;
  g.dq = dqb.data, g.dk = dkb.data, g.dv = dvb.data;
  if (flags & MGRT_ATTENTION_DBIAS) {
    MGRT_CUDA_CHECK(dbias, kName, "dbias flag set but dbias is null");
    g.dbias = dbias->aligned + dbias->offset;
    broadcastStrides(dbias, g.dbias_stride);
  }
  mgrt_cuda_attention_backward(&a, &g, nullptr);
  dqb.toFloat(dq, kName);
  dkb.toFloat(dk, kName);
  dvb.toFloat(dv, kName);
}
