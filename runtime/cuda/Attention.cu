//===- Attention.cu - Fused attention forward and backward on the GPU -----===//
//
// mgrt_cuda_attention_forward / _backward: operand checks, kernel choice
// (the BF16 tensor-core kernels for head size 64, else the general kernel
// instantiated for head sizes padded to 16, 32, 64 or 128) and the small
// helper kernels of the backward (rowsum(dout * out), zeroing a broadcast
// bias gradient, writing dq from its float32 accumulator).
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.cuh"
#include "AttentionWmma.cuh"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace mgrt {
namespace cuda {
namespace {

constexpr const char *kFwd = "mgrt_cuda_attention_forward";
constexpr const char *kBwd = "mgrt_cuda_attention_backward";

int paddedHead(int64_t d) {
  for (int p : {16, 32, 64, 128})
    if (d <= p)
      return p;
  return 0;
}

void checkProblem(const mgrt_cuda_attention *a, const char *kernel) {
  MGRT_CUDA_CHECK(a, kernel, "null problem");
  MGRT_CUDA_CHECK(a->dtype == MGRT_CUDA_F32 || a->dtype == MGRT_CUDA_BF16,
                  kernel, "unknown dtype %d", a->dtype);
  MGRT_CUDA_CHECK(a->B > 0 && a->Sq > 0 && a->Sk > 0 && a->H > 0, kernel,
                  "empty problem B=%lld Sq=%lld Sk=%lld H=%lld",
                  (long long)a->B, (long long)a->Sq, (long long)a->Sk,
                  (long long)a->H);
  MGRT_CUDA_CHECK(a->dh > 0 && a->dvh > 0 && paddedHead(a->dh) &&
                      paddedHead(a->dvh),
                  kernel, "head sizes dh=%lld dvh=%lld: 1..128 supported",
                  (long long)a->dh, (long long)a->dvh);
  MGRT_CUDA_CHECK(a->q && a->k && a->v, kernel, "null q, k or v");
  MGRT_CUDA_CHECK(a->B * a->H <= 65535, kernel,
                  "B*H = %lld exceeds the grid limit 65535",
                  (long long)(a->B * a->H));
}

template <typename T, int D, int DV>
void launchForward(const mgrt_cuda_attention &a, cudaStream_t s) {
  constexpr size_t smem = attnForwardSmem(D, DV);
  static bool configured = false;
  if (!configured) {
    check(cudaFuncSetAttribute(attentionForwardKernel<T, D, DV>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)smem),
          kFwd, "cudaFuncSetAttribute");
    configured = true;
  }
  dim3 grid((unsigned)ceilDiv(a.Sq, kAttnBQ), (unsigned)(a.B * a.H));
  attentionForwardKernel<T, D, DV><<<grid, kAttnThreads, smem, s>>>(a);
  MGRT_CUDA_LAUNCHED(kFwd);
}

template <typename T, int D, int DV>
void launchBackward(const mgrt_cuda_attention &a,
                    const mgrt_cuda_attention_grad &g, const float *dsum,
                    float *dqAcc, bool dbiasAtomic, cudaStream_t s) {
  constexpr size_t smem = attnBackwardSmem(D, DV);
  static bool configured = false;
  if (!configured) {
    check(cudaFuncSetAttribute(attentionBackwardKernel<T, D, DV>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)smem),
          kBwd, "cudaFuncSetAttribute");
    configured = true;
  }
  dim3 grid((unsigned)ceilDiv(a.Sk, kAttnBK), (unsigned)(a.B * a.H));
  attentionBackwardKernel<T, D, DV>
      <<<grid, kAttnThreads, smem, s>>>(a, g, dsum, dqAcc, dbiasAtomic);
  MGRT_CUDA_LAUNCHED(kBwd);
}

// Head sizes padded to one size P in {16, 32, 64, 128} for both q/k and v.
template <typename T, template <typename, int, int> class Fn, typename... Args>
void dispatchHead(int P, Args &&...args) {
  switch (P) {
  case 16:
    Fn<T, 16, 16>::run(args...);
    break;
  case 32:
    Fn<T, 32, 32>::run(args...);
    break;
  case 64:
    Fn<T, 64, 64>::run(args...);
    break;
  default:
    Fn<T, 128, 128>::run(args...);
    break;
  }
}
template <typename T, int D, int DV> struct ForwardFn {
  static void run(const mgrt_cuda_attention &a, cudaStream_t s) {
    launchForward<T, D, DV>(a, s);
  }
};
template <typename T, int D, int DV> struct BackwardFn {
  static void run(const mgrt_cuda_attention &a,
                  const mgrt_cuda_attention_grad &g, const float *dsum,
                  float *dqAcc, bool atomic, cudaStream_t s) {
    launchBackward<T, D, DV>(a, g, dsum, dqAcc, atomic, s);
  }
};

bool aligned16(const void *p, int64_t stride0, int64_t stride1) {
  return (reinterpret_cast<uintptr_t>(p) % 16 == 0) && stride0 % 8 == 0 &&
         stride1 % 8 == 0;
}

/// Whether the register-resident BF16 forward may run: the accumulator
/// layout it assumes, checked once on the device (MGRT_CUDA_WMMA_REG=0
/// forces the shared-memory kernel).
bool registerLayoutOk() {
  static int ok = -1;
  if (ok >= 0)
    return ok;
  const char *env = std::getenv("MGRT_CUDA_WMMA_REG");
  if (env && env[0] == '0')
    return ok = 0;
  int *d = static_cast<int *>(mgrt_cuda_alloc(sizeof(int)));
  MGRT_CUDA_CHECK(d, kFwd, "out of device memory");
  wmmaLayoutProbe<<<1, 32>>>(d);
  MGRT_CUDA_LAUNCHED(kFwd);
  int host = 0;
  mgrt_cuda_copy_to_host(&host, d, sizeof(int));
  mgrt_cuda_free(d);
  for (auto kernel : {attentionForwardWmmaRegKernel<true>,
                      attentionForwardWmmaRegKernel<false>})
    check(cudaFuncSetAttribute(kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)attnWmmaRegSmem()),
          kFwd, "cudaFuncSetAttribute");
  return ok = host;
}

void forward(const mgrt_cuda_attention &a, cudaStream_t s) {
  const int P = std::max(paddedHead(a.dh), paddedHead(a.dvh));
  if (a.dtype == MGRT_CUDA_BF16 && a.dh == kWmmaD && a.dvh == kWmmaD) {
    static bool configured = false;
    if (!configured) {
      check(cudaFuncSetAttribute(attentionForwardWmmaKernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)attnWmmaSmem()),
            kFwd, "cudaFuncSetAttribute");
      configured = true;
    }
    const bool vec = aligned16(a.q, a.q_stride[0], a.q_stride[1]) &&
                     aligned16(a.k, a.k_stride[0], a.k_stride[1]) &&
                     aligned16(a.v, a.v_stride[0], a.v_stride[1]);
    dim3 grid((unsigned)ceilDiv(a.Sq, kWmmaBQ), (unsigned)(a.B * a.H));
    if (registerLayoutOk()) {
      if (a.bias || a.mask)
        attentionForwardWmmaRegKernel<true>
            <<<grid, kWmmaThreads, attnWmmaRegSmem(), s>>>(a, vec);
      else
        attentionForwardWmmaRegKernel<false>
            <<<grid, kWmmaThreads, attnWmmaRegSmem(), s>>>(a, vec);
    } else {
      attentionForwardWmmaKernel<<<grid, kWmmaThreads, attnWmmaSmem(), s>>>(
          a, vec);
    }
    MGRT_CUDA_LAUNCHED(kFwd);
    return;
  }
  if (a.dtype == MGRT_CUDA_F32)
    dispatchHead<float, ForwardFn>(P, a, s);
  else
    dispatchHead<__nv_bfloat16, ForwardFn>(P, a, s);
}

/// dsum[bh][i] = sum_e dout[b,i,h*dvh+e] * out[b,i,h*dvh+e]: one warp a row.
template <typename T>
__global__ void rowDotKernel(mgrt_cuda_attention a, const T *dout,
                             float *dsum) {
  const int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= a.B * a.H * a.Sq)
    return;
  const int64_t bh = row / a.Sq, i = row % a.Sq, b = bh / a.H, h = bh % a.H;
  const int64_t off = b * a.out_stride[0] + i * a.out_stride[1] + h * a.dvh;
  const T *o = static_cast<const T *>(a.out) + off;
  const T *d = dout + off;
  float acc = 0.f;
  for (int64_t e = lane; e < a.dvh; e += 32)
    acc += toF32(o[e]) * toF32(d[e]);
  for (int w = 16; w > 0; w >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, w);
  if (lane == 0)
    dsum[row] = acc;
}

/// dq[b,i,h*dh+c] = scale * acc[bh][i][c].
template <typename T>
__global__ void writeDqKernel(mgrt_cuda_attention a, T *dq, const float *acc) {
  const int64_t n = a.B * a.H * a.Sq * a.dh;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < n;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = idx % a.dh, row = idx / a.dh;
    const int64_t bh = row / a.Sq, i = row % a.Sq, b = bh / a.H, h = bh % a.H;
    dq[b * a.q_stride[0] + i * a.q_stride[1] + h * a.dh + c] =
        fromF32<T>(a.scale * acc[idx]);
  }
}

/// Zeroes the distinct elements of a [B,H,Sq,Sk] view with zero strides.
__global__ void zeroViewKernel(float *base, int64_t n0, int64_t n1, int64_t n2,
                               int64_t n3, int64_t s0, int64_t s1, int64_t s2,
                               int64_t s3) {
  const int64_t n = n0 * n1 * n2 * n3;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < n;
       idx += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = idx;
    const int64_t i3 = r % n3;
    r /= n3;
    const int64_t i2 = r % n2;
    r /= n2;
    const int64_t i1 = r % n1, i0 = r / n1;
    base[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3] = 0.f;
  }
}

/// Device scratch freed at scope exit (after the stream drains).
struct Scratch {
  std::vector<void *> blocks;
  cudaStream_t stream;
  explicit Scratch(cudaStream_t s) : stream(s) {}
  template <typename T> T *get(size_t n, const char *kernel) {
    void *p = mgrt_cuda_alloc(n * sizeof(T));
    MGRT_CUDA_CHECK(p, kernel, "out of device memory for %zu bytes of scratch",
                    n * sizeof(T));
    blocks.push_back(p);
    return static_cast<T *>(p);
  }
  ~Scratch() {
    if (blocks.empty())
      return;
    check(cudaStreamSynchronize(stream), "mgrt_cuda_attention", "sync");
    for (void *p : blocks)
      mgrt_cuda_free(p);
  }
};

} // namespace
} // namespace cuda
} // namespace mgrt

using namespace mgrt::cuda;

extern "C" void mgrt_cuda_attention_forward(const mgrt_cuda_attention *a,
                                            void *stream) {
  checkProblem(a, kFwd);
  MGRT_CUDA_CHECK(a->out, kFwd, "null out");
  forward(*a, asStream(stream));
}

extern "C" void mgrt_cuda_attention_backward(const mgrt_cuda_attention *a,
                                             const mgrt_cuda_attention_grad *g,
                                             void *stream) {
  checkProblem(a, kBwd);
  MGRT_CUDA_CHECK(g && g->dout && g->dq && g->dk && g->dv, kBwd,
                  "null dout, dq, dk or dv");
  cudaStream_t s = asStream(stream);
  Scratch scratch(s);
  mgrt_cuda_attention p = *a;
  const size_t rows = (size_t)(a->B * a->H * a->Sq);
  const size_t elem = a->dtype == MGRT_CUDA_F32 ? 4 : 2;
  if (!p.lse || !p.out) { // recompute the forward's statistics (and output)
    p.lse = scratch.get<float>(rows, kBwd);
    if (!p.out) {
      p.out = scratch.get<unsigned char>(
          (size_t)(a->B * a->Sq * a->H * a->dvh) * elem, kBwd);
      p.out_stride[0] = a->Sq * a->H * a->dvh;
      p.out_stride[1] = a->H * a->dvh;
    }
    forward(p, s);
  }
  float *dsum = scratch.get<float>(rows, kBwd);
  float *dqAcc = scratch.get<float>(rows * a->dh, kBwd);
  check(cudaMemsetAsync(dqAcc, 0, rows * a->dh * sizeof(float), s), kBwd,
        "cudaMemsetAsync");
  const int rowBlocks = (int)ceilDiv((int64_t)rows * 32, 256);
  if (a->dtype == MGRT_CUDA_F32)
    rowDotKernel<float><<<rowBlocks, 256, 0, s>>>(
        p, static_cast<const float *>(g->dout), dsum);
  else
    rowDotKernel<__nv_bfloat16><<<rowBlocks, 256, 0, s>>>(
        p, static_cast<const __nv_bfloat16 *>(g->dout), dsum);
  MGRT_CUDA_LAUNCHED(kBwd);

  bool atomic = false;
  if (g->dbias) {
    const int64_t n[4] = {a->B, a->H, a->Sq, a->Sk};
    int64_t m[4];
    for (int i = 0; i < 4; ++i) {
      atomic |= g->dbias_stride[i] == 0 && n[i] > 1;
      m[i] = g->dbias_stride[i] == 0 ? 1 : n[i];
    }
    if (atomic) {
      zeroViewKernel<<<gridFor(m[0] * m[1] * m[2] * m[3]), 256, 0, s>>>(
          g->dbias, m[0], m[1], m[2], m[3], g->dbias_stride[0],
          g->dbias_stride[1], g->dbias_stride[2], g->dbias_stride[3]);
      MGRT_CUDA_LAUNCHED(kBwd);
    }
  }
  const int P = std::max(paddedHead(a->dh), paddedHead(a->dvh));
  if (a->dtype == MGRT_CUDA_BF16 && a->dh == kWmmaD && a->dvh == kWmmaD) {
    static bool configured = false;
    if (!configured) {
      check(cudaFuncSetAttribute(attentionBackwardWmmaKernel<false>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)attnWmmaBackwardSmem(false)),
            kBwd, "cudaFuncSetAttribute");
      check(cudaFuncSetAttribute(attentionBackwardWmmaKernel<true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)attnWmmaBackwardSmem(true)),
            kBwd, "cudaFuncSetAttribute");
      configured = true;
    }
    const bool vec = aligned16(a->q, a->q_stride[0], a->q_stride[1]) &&
                     aligned16(a->k, a->k_stride[0], a->k_stride[1]) &&
                     aligned16(a->v, a->v_stride[0], a->v_stride[1]);
    const bool vecO = aligned16(g->dout, a->out_stride[0], a->out_stride[1]);
    dim3 grid((unsigned)ceilDiv(a->Sk, 64), (unsigned)(a->B * a->H));
    if (registerLayoutOk())
      attentionBackwardWmmaKernel<true>
          <<<grid, kWmmaThreads, attnWmmaBackwardSmem(true), s>>>(
              p, *g, dsum, dqAcc, atomic, vec, vecO);
    else
      attentionBackwardWmmaKernel<false>
          <<<grid, kWmmaThreads, attnWmmaBackwardSmem(false), s>>>(
              p, *g, dsum, dqAcc, atomic, vec, vecO);
    MGRT_CUDA_LAUNCHED(kBwd);
  } else if (a->dtype == MGRT_CUDA_F32)
    dispatchHead<float, BackwardFn>(P, p, *g, dsum, dqAcc, atomic, s);
  else
    dispatchHead<__nv_bfloat16, BackwardFn>(P, p, *g, dsum, dqAcc, atomic, s);
  const int64_t n = (int64_t)rows * a->dh;
  if (a->dtype == MGRT_CUDA_F32)
    writeDqKernel<float>
        <<<gridFor(n), 256, 0, s>>>(p, static_cast<float *>(g->dq), dqAcc);
  else
    writeDqKernel<__nv_bfloat16><<<gridFor(n), 256, 0, s>>>(
        p, static_cast<__nv_bfloat16 *>(g->dq), dqAcc);
  MGRT_CUDA_LAUNCHED(kBwd);
}
