//===- attention_bench.cu - Fused vs unfused attention on one GPU ---------===//
//
// megagraph-cuda-attention-bench: the runtime's fused attention
// (mgrt_cuda_attention_forward / _backward) against the unfused cuBLAS
// formulation a framework runs without a fused kernel (scores = Q K^T by
// strided-batched GEMM, a row softmax kernel, P V; the backward as five
// GEMMs and a softmax-gradient kernel, every [S,S] matrix in memory), side
// by side on the same inputs: B = 1, H heads of size 64, no bias by default,
// FP32 and BF16 (--bias adds a [1,H,S,S] float32 bias and its gradient to both,
// the Graphormer case). Reports milliseconds and TFLOP/s (forward 4 B H S^2 d,
// backward 2.5x that, the FlashAttention convention) and the max abs difference
// of the two outputs. The unfused path runs head by head when the [S,S]
// matrices of all heads would not fit.
//
//   megagraph-cuda-attention-bench [--seq 4096,16384,65536] [--heads 8]
//                                  [--dtype fp32,bf16] [--json FILE]
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeCuda.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define CB(x)                                                                  \
  do {                                                                         \
    cublasStatus_t s_ = (x);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "%s:%d: cublas status %d\n", __FILE__, __LINE__,    \
                   (int)s_);                                                   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

template <typename T> __device__ float ld(const T *p, int64_t i);
template <> __device__ float ld<float>(const float *p, int64_t i) {
  return p[i];
}
template <>
__device__ float ld<__nv_bfloat16>(const __nv_bfloat16 *p, int64_t i) {
  return __bfloat162float(p[i]);
}
template <typename T> __device__ void st(T *p, int64_t i, float x);
template <> __device__ void st<float>(float *p, int64_t i, float x) {
  p[i] = x;
}
template <>
__device__ void st<__nv_bfloat16>(__nv_bfloat16 *p, int64_t i, float x) {
  p[i] = __float2bfloat16_rn(x);
}

__device__ float blockSum(float v, float *buf) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    buf[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0;
  for (int w = 0; w < (int)blockDim.x / 32; ++w)
    s += buf[w];
  return s;
}
__device__ float blockMax(float v, float *buf) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    buf[threadIdx.x / 32] = v;
  __syncthreads();
  float s = -INFINITY;
  for (int w = 0; w < (int)blockDim.x / 32; ++w)
    s = fmaxf(s, buf[w]);
  return s;
}

/// In place: row <- softmax(scale * row + bias row), one block per row
/// (bias: float32 rows of the same length, or NULL).
template <typename T>
__global__ void softmaxRows(T *s, int64_t cols, float scale,
                            const float *bias) {
  __shared__ float buf[32];
  T *row = s + blockIdx.x * cols;
  const float *brow = bias ? bias + blockIdx.x * cols : nullptr;
  auto logit = [&](int64_t c) {
    return scale * ld(row, c) + (brow ? brow[c] : 0.f);
  };
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    m = fmaxf(m, logit(c));
  m = blockMax(m, buf);
  float sum = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    sum += __expf(logit(c) - m);
  float inv = 1.f / blockSum(sum, buf);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    st(row, c, __expf(logit(c) - m) * inv);
}

/// dbias rows (float32) = dS rows (the unfused path's bias gradient).
template <typename T>
__global__ void copyRows(float *dst, const T *src, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = ld(src, i);
}

/// In place on dP: dS = P * (dP - rowsum(P * dP)), one block per row.
template <typename T>
__global__ void softmaxGradRows(T *dp, const T *p, int64_t cols) {
  __shared__ float buf[32];
  T *drow = dp + blockIdx.x * cols;
  const T *prow = p + blockIdx.x * cols;
  float sum = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    sum += ld(prow, c) * ld(drow, c);
  sum = blockSum(sum, buf);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    st(drow, c, ld(prow, c) * (ld(drow, c) - sum));
}

struct Options {
  std::vector<int64_t> seqs = {4096, 16384, 65536};
  std::vector<std::string> dtypes = {"fp32", "bf16"};
  int64_t heads = 8, dh = 64;
  bool bias = false; // a [1,H,S,S] float32 bias with its gradient
  std::string json;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// Row-major GEMM on [rows, H*d] head-packed operands, heads [h0, h0+nh):
/// C_h = op(A_h) op(B_h) through cublasGemmStridedBatchedEx (column-major
/// C^T = op(B)^T op(A)^T).
struct Gemm {
  cublasHandle_t h;
  cudaDataType_t type;
  cublasComputeType_t compute;
  // out [M,N] (ldc), a [M,K] or [K,M] (lda), b [K,N] or [N,K] (ldb).
  void run(void *c, int64_t ldc, int64_t strideC, const void *a, int64_t lda,
           int64_t strideA, bool ta, const void *b, int64_t ldb,
           int64_t strideB, bool tb, int64_t M, int64_t N, int64_t K,
           int64_t batch, float alpha) {
    const float beta = 0.f;
    CB(cublasGemmStridedBatchedEx(
        h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
        (int)N, (int)M, (int)K, &alpha, b, type, (int)ldb, strideB, a, type,
        (int)lda, strideA, &beta, c, type, (int)ldc, strideC, (int)batch,
        compute, CUBLAS_GEMM_DEFAULT));
  }
};

struct Result {
  std::string dtype;
  int64_t S;
  bool bias;
  double fusedFwdMs, fusedBwdMs, unfusedFwdMs, unfusedBwdMs, maxDiff;
  size_t fusedPeak, unfusedPeak;
};

float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

Result runOne(const Options &o, const std::string &dtype, int64_t S,
              cublasHandle_t handle) {
  const bool bf16 = dtype == "bf16";
  const size_t elem = bf16 ? 2 : 4;
  const int64_t H = o.heads, d = o.dh, W = H * d;
  const float scale = 1.f / std::sqrt((float)d);
  Result r{dtype, S, o.bias, 0, 0, 0, 0, 0, 0, 0};

  // Inputs: uniform(-1, 1) on the host, converted on the device.
  std::vector<float> host(S * W);
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float *f32 = static_cast<float *>(mgrt_cuda_alloc(S * W * 4));
  void *q = mgrt_cuda_alloc(S * W * elem), *k = mgrt_cuda_alloc(S * W * elem),
       *v = mgrt_cuda_alloc(S * W * elem), *dO = mgrt_cuda_alloc(S * W * elem);
  for (void *dst : {q, k, v, dO}) {
    for (float &x : host)
      x = dist(gen);
    mgrt_cuda_copy_to_device(f32, host.data(), S * W * 4);
    if (bf16)
      mgrt_cuda_f32_to_bf16(dst, f32, S * W, nullptr);
    else
      CK(cudaMemcpy(dst, f32, S * W * 4, cudaMemcpyDeviceToDevice));
  }
  mgrt_cuda_free(f32);
  void *outF = mgrt_cuda_alloc(S * W * elem),
       *outU = mgrt_cuda_alloc(S * W * elem);
  void *dq = mgrt_cuda_alloc(S * W * elem), *dk = mgrt_cuda_alloc(S * W * elem),
       *dv = mgrt_cuda_alloc(S * W * elem);
  float *lse = static_cast<float *>(mgrt_cuda_alloc(H * S * 4));
  float *bias = nullptr, *dbias = nullptr;
  if (o.bias) {
    bias = static_cast<float *>(mgrt_cuda_alloc(H * S * S * 4));
    dbias = static_cast<float *>(mgrt_cuda_alloc(H * S * S * 4));
    if (!bias || !dbias) {
      std::fprintf(stderr, "bias of %lld x %lld^2 floats does not fit\n",
                   (long long)H, (long long)S);
      std::exit(1);
    }
    std::vector<float> row(S * S);
    for (int64_t h = 0; h < H; ++h) {
      for (float &x : row)
        x = dist(gen);
      mgrt_cuda_copy_to_device(bias + h * S * S, row.data(), S * S * 4);
    }
  }
  const size_t inputs = mgrt_cuda_current_bytes();

  const double flopsFwd = 4.0 * H * (double)S * S * d;
  const double flopsBwd = 2.5 * flopsFwd;
  const int reps = S >= 65536 ? 2 : (S >= 16384 ? 5 : 20);
  cudaEvent_t e0, e1, e2;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventCreate(&e2));

  // Fused.
  mgrt_cuda_attention a;
  std::memset(&a, 0, sizeof(a));
  a.dtype = bf16 ? MGRT_CUDA_BF16 : MGRT_CUDA_F32;
  a.B = 1, a.Sq = S, a.Sk = S, a.H = H, a.dh = d, a.dvh = d, a.scale = scale;
  a.q = q, a.k = k, a.v = v, a.out = outF, a.lse = lse;
  a.q_stride[0] = a.k_stride[0] = a.v_stride[0] = a.out_stride[0] = S * W;
  a.q_stride[1] = a.k_stride[1] = a.v_stride[1] = a.out_stride[1] = W;
  if (bias) {
    a.bias = bias;
    a.bias_stride[0] = 0, a.bias_stride[1] = S * S, a.bias_stride[2] = S;
    a.bias_stride[3] = 1;
  }
  mgrt_cuda_attention_grad g;
  std::memset(&g, 0, sizeof(g));
  g.dout = dO, g.dq = dq, g.dk = dk, g.dv = dv;
  if (dbias) {
    g.dbias = dbias;
    for (int i = 0; i < 4; ++i)
      g.dbias_stride[i] = a.bias_stride[i];
  }
  mgrt_cuda_reset_peak();
  mgrt_cuda_attention_forward(&a, nullptr); // warm-up
  mgrt_cuda_attention_backward(&a, &g, nullptr);
  CK(cudaDeviceSynchronize());
  double fwd = 0, bwd = 0;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0));
    mgrt_cuda_attention_forward(&a, nullptr);
    CK(cudaEventRecord(e1));
    mgrt_cuda_attention_backward(&a, &g, nullptr);
    CK(cudaEventRecord(e2));
    CK(cudaEventSynchronize(e2));
    fwd += elapsed(e0, e1);
    bwd += elapsed(e1, e2);
  }
  r.fusedFwdMs = fwd / reps, r.fusedBwdMs = bwd / reps;
  r.fusedPeak = mgrt_cuda_peak_bytes() - inputs;

  // Unfused: P [hc,S,S] and dP [hc,S,S] for a chunk of hc heads.
  size_t freeB = 0, totalB = 0;
  CK(cudaMemGetInfo(&freeB, &totalB));
  const size_t perHead = 2 * (size_t)S * S * elem;
  int64_t hc = std::max<int64_t>(
      1, std::min<int64_t>(H, (int64_t)((freeB * 0.8) / perHead)));
  void *P = mgrt_cuda_alloc(hc * S * S * elem);
  void *dP = mgrt_cuda_alloc(hc * S * S * elem);
  if (!P || !dP) {
    std::fprintf(stderr, "unfused: [S,S] scores do not fit; skipped\n");
    r.unfusedFwdMs = r.unfusedBwdMs = NAN;
  } else {
    Gemm gm{handle, bf16 ? CUDA_R_16BF : CUDA_R_32F,
            bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_PEDANTIC};
    auto col = [&](void *base, int64_t h0) {
      return static_cast<char *>(base) + h0 * d * elem;
    };
    const int64_t SS = S * S;
    auto forward = [&](int64_t h0, int64_t nh) {
      // P_h = Q_h K_h^T (raw scores); softmax(scale * P); O_h = P_h V_h.
      gm.run(P, S, SS, col(q, h0), W, d, false, col(k, h0), W, d, true, S, S, d,
             nh, 1.f);
      const float *b = bias ? bias + h0 * SS : nullptr;
      if (bf16)
        softmaxRows<__nv_bfloat16><<<(unsigned)(nh * S), 256>>>(
            static_cast<__nv_bfloat16 *>(P), S, scale, b);
      else
        softmaxRows<float>
            <<<(unsigned)(nh * S), 256>>>(static_cast<float *>(P), S, scale, b);
      gm.run(col(outU, h0), W, d, P, S, SS, false, col(v, h0), W, d, false, S,
             d, S, nh, 1.f);
    };
    auto backward = [&](int64_t h0, int64_t nh) {
      // dV = P^T dO; dP = dO V^T; dS = P (dP - rowsum); dQ = s dS K;
      // dK = s dS^T Q.
      gm.run(col(dv, h0), W, d, P, S, SS, true, col(dO, h0), W, d, false, S, d,
             S, nh, 1.f);
      gm.run(dP, S, SS, col(dO, h0), W, d, false, col(v, h0), W, d, true, S, S,
             d, nh, 1.f);
      if (bf16)
        softmaxGradRows<__nv_bfloat16><<<(unsigned)(nh * S), 256>>>(
            static_cast<__nv_bfloat16 *>(dP),
            static_cast<const __nv_bfloat16 *>(P), S);
      else
        softmaxGradRows<float><<<(unsigned)(nh * S), 256>>>(
            static_cast<float *>(dP), static_cast<const float *>(P), S);
      if (dbias) {
        if (bf16)
          copyRows<__nv_bfloat16><<<4096, 256>>>(
              dbias + h0 * SS, static_cast<const __nv_bfloat16 *>(dP), nh * SS);
        else
          copyRows<float><<<4096, 256>>>(
              dbias + h0 * SS, static_cast<const float *>(dP), nh * SS);
      }
      gm.run(col(dq, h0), W, d, dP, S, SS, false, col(k, h0), W, d, false, S, d,
             S, nh, scale);
      gm.run(col(dk, h0), W, d, dP, S, SS, true, col(q, h0), W, d, false, S, d,
             S, nh, scale);
    };
    // Warm-up, then time. With head chunks the forward of a chunk must be
    // followed by its backward (P is reused), so the two are timed per
    // chunk and summed.
    for (int64_t h0 = 0; h0 < H; h0 += hc) {
      forward(h0, std::min(hc, H - h0));
      backward(h0, std::min(hc, H - h0));
    }
    CK(cudaDeviceSynchronize());
    double ufwd = 0, ubwd = 0;
    for (int i = 0; i < reps; ++i)
      for (int64_t h0 = 0; h0 < H; h0 += hc) {
        CK(cudaEventRecord(e0));
        forward(h0, std::min(hc, H - h0));
        CK(cudaEventRecord(e1));
        backward(h0, std::min(hc, H - h0));
        CK(cudaEventRecord(e2));
        CK(cudaEventSynchronize(e2));
        ufwd += elapsed(e0, e1);
        ubwd += elapsed(e1, e2);
      }
    CK(cudaGetLastError());
    r.unfusedFwdMs = ufwd / reps, r.unfusedBwdMs = ubwd / reps;
    r.unfusedPeak = 2 * hc * SS * elem;

    // Same outputs? (max abs difference of the two forward results)
    std::vector<float> a32(S * W), b32(S * W);
    float *tmp = static_cast<float *>(mgrt_cuda_alloc(S * W * 4));
    for (int which = 0; which < 2; ++which) {
      void *src = which ? outU : outF;
      if (bf16)
        mgrt_cuda_bf16_to_f32(tmp, src, S * W, nullptr);
      else
        CK(cudaMemcpy(tmp, src, S * W * 4, cudaMemcpyDeviceToDevice));
      mgrt_cuda_copy_to_host(which ? b32.data() : a32.data(), tmp, S * W * 4);
    }
    mgrt_cuda_free(tmp);
    double m = 0;
    for (int64_t i = 0; i < S * W; ++i)
      m = std::max(m, (double)std::fabs(a32[i] - b32[i]));
    r.maxDiff = m;
  }
  mgrt_cuda_free(P);
  mgrt_cuda_free(dP);
  for (void *p : {q, k, v, dO, outF, outU, dq, dk, dv})
    mgrt_cuda_free(p);
  mgrt_cuda_free(lse);
  mgrt_cuda_free(bias);
  mgrt_cuda_free(dbias);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaEventDestroy(e2));

  auto tf = [](double flops, double ms) { return flops / (ms * 1e-3) / 1e12; };
  std::printf("%-5s%s S=%-6lld fused fwd %9.2f ms (%6.1f TFLOP/s) bwd %9.2f ms "
              "(%6.1f) | unfused fwd %9.2f ms (%6.1f) bwd %9.2f ms (%6.1f) | "
              "fwd+bwd speedup %.2fx | max|diff| %.2e | extra memory fused "
              "%.2f GB, unfused %.2f GB\n",
              dtype.c_str(), o.bias ? "+bias" : "", (long long)S, r.fusedFwdMs,
              tf(flopsFwd, r.fusedFwdMs), r.fusedBwdMs,
              tf(flopsBwd, r.fusedBwdMs), r.unfusedFwdMs,
              tf(flopsFwd, r.unfusedFwdMs), r.unfusedBwdMs,
              tf(flopsBwd, r.unfusedBwdMs),
              (r.unfusedFwdMs + r.unfusedBwdMs) / (r.fusedFwdMs + r.fusedBwdMs),
              r.maxDiff, r.fusedPeak / 1e9, r.unfusedPeak / 1e9);
  std::fflush(stdout);
  return r;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seq") {
      o.seqs.clear();
      for (const std::string &s : split(value()))
        o.seqs.push_back(std::atoll(s.c_str()));
    } else if (arg == "--heads") {
      o.heads = std::atoll(value().c_str());
    } else if (arg == "--dtype") {
      o.dtypes = split(value());
    } else if (arg == "--bias") {
      o.bias = true;
    } else if (arg == "--json") {
      o.json = value();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seq 4096,16384,65536] [--heads 8] "
                   "[--dtype fp32,bf16] [--bias] [--json FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (mgrt_cuda_device_count() == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 3;
  }
  std::printf("device: %s, heads %lld, head dim %lld, batch 1, %s\n",
              mgrt_cuda_device_name(), (long long)o.heads, (long long)o.dh,
              o.bias ? "[1,H,S,S] float32 bias and its gradient" : "no bias");
  cublasHandle_t handle;
  CB(cublasCreate(&handle));
  std::vector<Result> results;
  for (const std::string &dt : o.dtypes)
    for (int64_t S : o.seqs)
      results.push_back(runOne(o, dt, S, handle));
  cublasDestroy(handle);
  if (!o.json.empty()) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      std::perror(o.json.c_str());
      return 1;
    }
    std::fprintf(f, "[\n");
    for (size_t i = 0; i < results.size(); ++i) {
      const Result &r = results[i];
      std::fprintf(
          f,
          "  {\"dtype\": \"%s\", \"bias\": %s, \"S\": %lld, \"heads\": %lld, "
          "\"head_dim\": %lld, \"fused_fwd_ms\": %.4f, "
          "\"fused_bwd_ms\": %.4f, \"unfused_fwd_ms\": %.4f, "
          "\"unfused_bwd_ms\": %.4f, \"max_abs_diff\": %.3e, "
          "\"fused_extra_bytes\": %zu, \"unfused_extra_bytes\": "
          "%zu}%s\n",
          r.dtype.c_str(), r.bias ? "true" : "false", (long long)r.S,
          (long long)o.heads, (long long)o.dh, r.fusedFwdMs, r.fusedBwdMs,
          r.unfusedFwdMs, r.unfusedBwdMs, r.maxDiff, r.fusedPeak, r.unfusedPeak,
          i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
