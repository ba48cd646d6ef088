//===- Norm.cu - Layer norm, softmax and embedding kernels ----------------===//
//
// The row-wise kernels a compiled training step needs besides GEMM and
// attention: layer norm forward and backward (biased variance, statistics
// kept for the backward), row softmax, and the embedding gather and its
// scatter-add backward. One block per row for the row kernels (any width);
// float32 throughout.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.cuh"

#include <algorithm>

namespace mgrt {
namespace cuda {
namespace {

constexpr int kRowThreads = 256;

/// Block-wide sum (or max) of one value per thread; every thread gets it.
template <bool Max> __device__ float blockReduce(float v) {
  __shared__ float partial[kRowThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = Max ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // partial[] may still be read by a previous call
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kRowThreads / 32; ++w)
    v = Max ? fmaxf(v, partial[w]) : v + partial[w];
  return v;
}

__global__ void layerNormForwardKernel(float *out, float *meanOut,
                                       float *rstdOut, const float *x,
                                       const float *gamma, const float *beta,
                                       int64_t C, float eps) {
  const float *row = x + blockIdx.x * C;
  float sum = 0.f;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads)
    sum += row[c];
  const float mean = blockReduce<false>(sum) / C;
  float sq = 0.f;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads) {
    float d = row[c] - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(blockReduce<false>(sq) / C + eps);
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads)
    out[blockIdx.x * C + c] =
        (row[c] - mean) * rstd * gamma[c] + (beta ? beta[c] : 0.f);
  if (threadIdx.x == 0) {
    if (meanOut)
      meanOut[blockIdx.x] = mean;
    if (rstdOut)
      rstdOut[blockIdx.x] = rstd;
  }
}

// dx = rstd * (g dy - mean(g dy) - xhat * mean(g dy xhat)).
__global__ void layerNormBackwardKernel(float *dx, const float *dout,
                                        const float *x, const float *gamma,
                                        const float *mean, const float *rstd,
                                        int64_t C) {
  const int64_t r = blockIdx.x;
  const float mu = mean[r], rs = rstd[r];
  float s1 = 0.f, s2 = 0.f;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads) {
    const float gdy = gamma[c] * dout[r * C + c];
    s1 += gdy;
    s2 += gdy * (x[r * C + c] - mu) * rs;
  }
  const float m1 = blockReduce<false>(s1) / C;
  const float m2 = blockReduce<false>(s2) / C;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads) {
    const float xhat = (x[r * C + c] - mu) * rs;
    dx[r * C + c] = rs * (gamma[c] * dout[r * C + c] - m1 - xhat * m2);
  }
}

// Column sums over a chunk of rows, accumulated with atomics:
// dgamma[c] += sum dy * xhat, dbeta[c] += sum dy.
__global__ void layerNormParamGradKernel(float *dgamma, float *dbeta,
                                         const float *dout, const float *x,
                                         const float *mean, const float *rstd,
                                         int64_t R, int64_t C,
                                         int64_t rowsPerChunk) {
  const int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (c >= C)
    return;
  const int64_t r0 = blockIdx.y * rowsPerChunk;
  const int64_t r1 = R < r0 + rowsPerChunk ? R : r0 + rowsPerChunk;
  float g = 0.f, bsum = 0.f;
  for (int64_t r = r0; r < r1; ++r) {
    const float dy = dout[r * C + c];
    g += dy * (x[r * C + c] - mean[r]) * rstd[r];
    bsum += dy;
  }
  atomicAdd(&dgamma[c], g);
  if (dbeta)
    atomicAdd(&dbeta[c], bsum);
}

__global__ void softmaxKernel(float *out, const float *x, int64_t C) {
  const float *row = x + blockIdx.x * C;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads)
    m = fmaxf(m, row[c]);
  m = blockReduce<true>(m);
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads)
    s += __expf(row[c] - m);
  const float inv = 1.f / blockReduce<false>(s);
  for (int64_t c = threadIdx.x; c < C; c += kRowThreads)
    out[blockIdx.x * C + c] = __expf(row[c] - m) * inv;
}

__global__ void embeddingForwardKernel(float *out, const float *table,
                                       const int64_t *index, int64_t N,
                                       int64_t V, int64_t C) {
  const int64_t n = N * C;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / C, c = i % C, t = index[r];
    out[i] = (t >= 0 && t < V) ? table[t * C + c] : 0.f;
  }
}

__global__ void embeddingBackwardKernel(float *dtable, const float *dout,
                                        const int64_t *index, int64_t N,
                                        int64_t V, int64_t C) {
  const int64_t n = N * C;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / C, c = i % C, t = index[r];
    if (t >= 0 && t < V)
      atomicAdd(&dtable[t * C + c], dout[i]);
  }
}

void checkRows(int64_t R, int64_t C, const char *kernel) {
  MGRT_CUDA_CHECK(R > 0 && C > 0 && R <= INT32_MAX, kernel,
                  "bad shape [%lld, %lld]", (long long)R, (long long)C);
}

} // namespace
} // namespace cuda
} // namespace mgrt

using namespace mgrt::cuda;

extern "C" void mgrt_cuda_layer_norm_forward(
    float *out, float *mean, float *rstd, const float *x, const float *gamma,
    const float *beta, int64_t R, int64_t C, float eps, void *stream) {
  checkRows(R, C, "mgrt_cuda_layer_norm_forward");
  layerNormForwardKernel<<<(unsigned)R, kRowThreads, 0, asStream(stream)>>>(
      out, mean, rstd, x, gamma, beta, C, eps);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_layer_norm_forward");
}

extern "C" void mgrt_cuda_layer_norm_backward(
    float *dx, float *dgamma, float *dbeta, const float *dout, const float *x,
    const float *gamma, const float *mean, const float *rstd, int64_t R,
    int64_t C, void *stream) {
  constexpr const char *kName = "mgrt_cuda_layer_norm_backward";
  checkRows(R, C, kName);
  cudaStream_t s = asStream(stream);
  layerNormBackwardKernel<<<(unsigned)R, kRowThreads, 0, s>>>(
      dx, dout, x, gamma, mean, rstd, C);
  MGRT_CUDA_LAUNCHED(kName);
  check(cudaMemsetAsync(dgamma, 0, C * sizeof(float), s), kName, "memset");
  if (dbeta)
    check(cudaMemsetAsync(dbeta, 0, C * sizeof(float), s), kName, "memset");
  const int64_t chunks = std::min<int64_t>(R, 256);
  const int64_t rowsPerChunk = ceilDiv(R, chunks);
  dim3 grid((unsigned)ceilDiv(C, 128), (unsigned)ceilDiv(R, rowsPerChunk));
  layerNormParamGradKernel<<<grid, 128, 0, s>>>(dgamma, dbeta, dout, x, mean,
                                                rstd, R, C, rowsPerChunk);
  MGRT_CUDA_LAUNCHED(kName);
}

extern "C" void mgrt_cuda_softmax(float *out, const float *x, int64_t R,
                                  int64_t C, void *stream) {
  checkRows(R, C, "mgrt_cuda_softmax");
  softmaxKernel<<<(unsigned)R, kRowThreads, 0, asStream(stream)>>>(out, x, C);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_softmax");
}

extern "C" void mgrt_cuda_embedding_forward(float *out, const float *table,
                                            const int64_t *index, int64_t N,
                                            int64_t V, int64_t C,
                                            void *stream) {
  if (N <= 0 || C <= 0)
    return;
  embeddingForwardKernel<<<gridFor(N * C), 256, 0, asStream(stream)>>>(
      out, table, index, N, V, C);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_embedding_forward");
}

extern "C" void mgrt_cuda_embedding_backward(float *dtable, const float *dout,
                                             const int64_t *index, int64_t N,
                                             int64_t V, int64_t C,
                                             void *stream) {
  if (N <= 0 || C <= 0)
    return;
  embeddingBackwardKernel<<<gridFor(N * C), 256, 0, asStream(stream)>>>(
      dtable, dout, index, N, V, C);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_embedding_backward");
}
