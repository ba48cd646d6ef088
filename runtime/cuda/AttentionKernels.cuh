//===- AttentionKernels.cuh - Fused attention on CUDA cores -----*- CUDA
//-*-===//
//
// Internal to runtime/cuda. The general fused attention (any element type,
// head sizes up to 128, any bias/mask broadcast): 64 queries x 64 keys per
// tile, 256 threads, each thread owning a 4 x (N/16) register tile whose
// rows are ty + 16 i and columns tx + 16 j. Shared tiles are padded by one
// float per row, so every inner-loop read is either a broadcast (the row
// operand: two addresses per warp) or conflict-free (the column operand:
// 16 consecutive words).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_CUDA_ATTENTIONKERNELS_CUH
#define MEGAGRAPH_RUNTIME_CUDA_ATTENTIONKERNELS_CUH

#include "CudaCommon.cuh"

#include <cmath>

namespace mgrt {
namespace cuda {

constexpr int kAttnBQ = 64;
constexpr int kAttnBK = 64;
constexpr int kAttnThreads = 256;

/// Shared-memory bytes of the forward / backward kernels for head sizes
/// padded to D and DV.
constexpr size_t attnForwardSmem(int D, int DV) {
  return sizeof(float) * (kAttnBQ * (D + 1) + kAttnBK * (D + 1) +
                          kAttnBK * (DV + 1) + kAttnBQ * (kAttnBK + 1));
}
constexpr size_t attnBackwardSmem(int D, int DV) {
  return sizeof(float) *
         (kAttnBQ * (D + 1) + kAttnBK * (D + 1) + kAttnBK * (DV + 1) +
          kAttnBQ * (DV + 1) + 2 * kAttnBQ * (kAttnBK + 1) + 2 * kAttnBQ);
}

__device__ __forceinline__ float halfWarpMax(float v) {
  for (int o = 8; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float halfWarpSum(float v) {
  for (int o = 8; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// The pre-softmax logit of (query qi, key kj) of head (b, h) given
/// scale * q.k, or -inf when masked or out of range.
__device__ __forceinline__ float attnLogit(const mgrt_cuda_attention &a,
                                           int64_t b, int64_t h, int64_t qi,
                                           int64_t kj, float scaledDot) {
  if (qi >= a.Sq || kj >= a.Sk)
    return -INFINITY;
  if (a.mask && !a.mask[b * a.mask_stride[0] + h * a.mask_stride[1] +
                        qi * a.mask_stride[2] + kj * a.mask_stride[3]])
    return -INFINITY;
  if (a.bias)
    scaledDot += a.bias[b * a.bias_stride[0] + h * a.bias_stride[1] +
                        qi * a.bias_stride[2] + kj * a.bias_stride[3]];
  return scaledDot;
}

/// Loads rows [r0, r0 + 64) of one head of a packed [rows, H*d] operand into
/// a [64][N+1] float tile, zero past `rows` and past `d`; `mul` scales.
template <typename T, int N>
__device__ __forceinline__ void loadTile(float *tile, const T *base,
                                         int64_t rowStride, int64_t r0,
                                         int64_t rows, int64_t d, float mul) {
  for (int idx = threadIdx.x; idx < 64 * N; idx += kAttnThreads) {
    int r = idx / N, c = idx % N;
    int64_t gr = r0 + r;
    float x = 0.f;
    if (gr < rows && c < d)
      x = toF32(base[gr * rowStride + c]) * mul;
    tile[r * (N + 1) + c] = x;
  }
}

/// acc[i][j] = sum_{d < N} A[ty + 16 i][d] * B[tx + 16 j][d] over two
/// [64][N+1] tiles: the thread's 4x4 block of A B^T (scores, or dout v^T).
template <int N>
__device__ __forceinline__ void tileDotT(const float *A, const float *B, int tx,
                                         int ty, float (&acc)[4][4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
      acc[i][j] = 0.f;
#pragma unroll 8
  for (int d = 0; d < N; ++d) {
    float a[4], b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      a[i] = A[(ty + 16 * i) * (N + 1) + d];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      b[j] = B[(tx + 16 * j) * (N + 1) + d];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

template <typename T, int D, int DV>
__global__ void __launch_bounds__(kAttnThreads)
    attentionForwardKernel(mgrt_cuda_attention a) {
  extern __shared__ float smem[];
  float *Qs = smem;                    // [BQ][D+1], pre-scaled
  float *Ks = Qs + kAttnBQ * (D + 1);  // [BK][D+1]
  float *Vs = Ks + kAttnBK * (D + 1);  // [BK][DV+1]
  float *Ps = Vs + kAttnBK * (DV + 1); // [BQ][BK+1]
  constexpr int CV = DV / 16;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t b = blockIdx.y / a.H, h = blockIdx.y % a.H;
  const int64_t q0 = (int64_t)blockIdx.x * kAttnBQ;
  const T *q = static_cast<const T *>(a.q) + b * a.q_stride[0] + h * a.dh;
  const T *k = static_cast<const T *>(a.k) + b * a.k_stride[0] + h * a.dh;
  const T *v = static_cast<const T *>(a.v) + b * a.v_stride[0] + h * a.dvh;

  loadTile<T, D>(Qs, q, a.q_stride[1], q0, a.Sq, a.dh, a.scale);
  float o[4][CV], m[4], l[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < CV; ++j)
      o[i][j] = 0.f;
  }

  for (int64_t k0 = 0; k0 < a.Sk; k0 += kAttnBK) {
    __syncthreads();
    loadTile<T, D>(Ks, k, a.k_stride[1], k0, a.Sk, a.dh, 1.f);
    loadTile<T, DV>(Vs, v, a.v_stride[1], k0, a.Sk, a.dvh, 1.f);
    __syncthreads();

    float s[4][4];
    tileDotT<D>(Qs, Ks, tx, ty, s);

#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t qi = q0 + ty + 16 * i;
      float rowMax = -INFINITY;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = attnLogit(a, b, h, qi, k0 + tx + 16 * j, s[i][j]);
        rowMax = fmaxf(rowMax, s[i][j]);
      }
      rowMax = halfWarpMax(rowMax);
      const float mNew = fmaxf(m[i], rowMax);
      const float mUse = mNew == -INFINITY ? 0.f : mNew;
      float rowSum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float p = __expf(s[i][j] - mUse);
        rowSum += p;
        Ps[(ty + 16 * i) * (kAttnBK + 1) + tx + 16 * j] = p;
      }
      rowSum = halfWarpSum(rowSum);
      const float alpha = __expf(m[i] - mUse);
      l[i] = l[i] * alpha + rowSum;
      m[i] = mNew;
#pragma unroll
      for (int j = 0; j < CV; ++j)
        o[i][j] *= alpha;
    }
    __syncthreads();

#pragma unroll 4
    for (int kk = 0; kk < kAttnBK; ++kk) {
      float pa[4], vb[CV];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        pa[i] = Ps[(ty + 16 * i) * (kAttnBK + 1) + kk];
#pragma unroll
      for (int j = 0; j < CV; ++j)
        vb[j] = Vs[kk * (DV + 1) + tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < CV; ++j)
          o[i][j] = fmaf(pa[i], vb[j], o[i][j]);
    }
  }

  T *out = static_cast<T *>(a.out) + b * a.out_stride[0] + h * a.dvh;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t qi = q0 + ty + 16 * i;
    if (qi >= a.Sq)
      continue;
    const float inv = l[i] > 0.f ? 1.f / l[i] : 0.f;
#pragma unroll
    for (int j = 0; j < CV; ++j) {
      const int c = tx + 16 * j;
      if (c < a.dvh)
        out[qi * a.out_stride[1] + c] = fromF32<T>(o[i][j] * inv);
    }
    if (a.lse && tx == 0)
      a.lse[blockIdx.y * a.Sq + qi] = l[i] > 0.f ? m[i] + logf(l[i]) : INFINITY;
  }
}

/// One block per (key block, batch * head); loops over the query blocks.
/// dqAcc is a zeroed float [B*H][Sq][dh] accumulator (atomics across key
/// blocks); dsum is rowsum(dout * out) [B*H][Sq].
template <typename T, int D, int DV>
__global__ void __launch_bounds__(kAttnThreads)
    attentionBackwardKernel(mgrt_cuda_attention a, mgrt_cuda_attention_grad g,
                            const float *dsum, float *dqAcc, bool dbiasAtomic) {
  extern __shared__ float smem[];
  float *Qs = smem;                            // [BQ][D+1]
  float *Ks = Qs + kAttnBQ * (D + 1);          // [BK][D+1]
  float *Vs = Ks + kAttnBK * (D + 1);          // [BK][DV+1]
  float *dOs = Vs + kAttnBK * (DV + 1);        // [BQ][DV+1]
  float *Ps = dOs + kAttnBQ * (DV + 1);        // [BQ][BK+1]
  float *dSs = Ps + kAttnBQ * (kAttnBK + 1);   // [BQ][BK+1]
  float *lseS = dSs + kAttnBQ * (kAttnBK + 1); // [BQ]
  float *dsumS = lseS + kAttnBQ;               // [BQ]
  constexpr int CD = D / 16, CV = DV / 16;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int64_t k0 = (int64_t)blockIdx.x * kAttnBK;
  const T *q = static_cast<const T *>(a.q) + b * a.q_stride[0] + h * a.dh;
  const T *k = static_cast<const T *>(a.k) + b * a.k_stride[0] + h * a.dh;
  const T *v = static_cast<const T *>(a.v) + b * a.v_stride[0] + h * a.dvh;
  const T *dout =
      static_cast<const T *>(g.dout) + b * a.out_stride[0] + h * a.dvh;

  loadTile<T, D>(Ks, k, a.k_stride[1], k0, a.Sk, a.dh, 1.f);
  loadTile<T, DV>(Vs, v, a.v_stride[1], k0, a.Sk, a.dvh, 1.f);
  float dk[4][CD], dv[4][CV];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < CD; ++j)
      dk[i][j] = 0.f;
#pragma unroll
    for (int j = 0; j < CV; ++j)
      dv[i][j] = 0.f;
  }

  for (int64_t q0 = 0; q0 < a.Sq; q0 += kAttnBQ) {
    __syncthreads();
    loadTile<T, D>(Qs, q, a.q_stride[1], q0, a.Sq, a.dh, 1.f);
    loadTile<T, DV>(dOs, dout, a.out_stride[1], q0, a.Sq, a.dvh, 1.f);
    if (threadIdx.x < kAttnBQ) {
      const int64_t qi = q0 + threadIdx.x;
      lseS[threadIdx.x] = qi < a.Sq ? a.lse[bh * a.Sq + qi] : INFINITY;
      dsumS[threadIdx.x] = qi < a.Sq ? dsum[bh * a.Sq + qi] : 0.f;
    }
    __syncthreads();

    float s[4][4], dp[4][4];
    tileDotT<D>(Qs, Ks, tx, ty, s);
    tileDotT<DV>(dOs, Vs, tx, ty, dp);

#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = ty + 16 * i;
      const int64_t qi = q0 + r;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int c = tx + 16 * j;
        const int64_t kj = k0 + c;
        const float logit = attnLogit(a, b, h, qi, kj, a.scale * s[i][j]);
        const float p = logit == -INFINITY ? 0.f : __expf(logit - lseS[r]);
        const float ds = p * (dp[i][j] - dsumS[r]);
        Ps[r * (kAttnBK + 1) + c] = p;
        dSs[r * (kAttnBK + 1) + c] = ds;
        if (g.dbias && qi < a.Sq && kj < a.Sk) {
          float *dst = g.dbias + b * g.dbias_stride[0] + h * g.dbias_stride[1] +
                       qi * g.dbias_stride[2] + kj * g.dbias_stride[3];
          if (!dbiasAtomic)
            *dst = ds;
          else if (ds != 0.f)
            atomicAdd(dst, ds);
        }
      }
    }
    __syncthreads();

    // dv[k][e] += sum_q P[q][k] dout[q][e];  dk[k][d] += sum_q dS[q][k] q[q][d]
#pragma unroll 4
    for (int r = 0; r < kAttnBQ; ++r) {
      float pa[4], sa[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        pa[i] = Ps[r * (kAttnBK + 1) + ty + 16 * i];
        sa[i] = dSs[r * (kAttnBK + 1) + ty + 16 * i];
      }
#pragma unroll
      for (int j = 0; j < CV; ++j) {
        const float ob = dOs[r * (DV + 1) + tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          dv[i][j] = fmaf(pa[i], ob, dv[i][j]);
      }
#pragma unroll
      for (int j = 0; j < CD; ++j) {
        const float qb = Qs[r * (D + 1) + tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          dk[i][j] = fmaf(sa[i], qb, dk[i][j]);
      }
    }

    // dq[q][d] += sum_k dS[q][k] k[k][d], accumulated across key blocks.
    float dq[4][CD];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < CD; ++j)
        dq[i][j] = 0.f;
#pragma unroll 4
    for (int c = 0; c < kAttnBK; ++c) {
      float sa[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        sa[i] = dSs[(ty + 16 * i) * (kAttnBK + 1) + c];
#pragma unroll
      for (int j = 0; j < CD; ++j) {
        const float kb = Ks[c * (D + 1) + tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          dq[i][j] = fmaf(sa[i], kb, dq[i][j]);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t qi = q0 + ty + 16 * i;
      if (qi >= a.Sq)
        continue;
#pragma unroll
      for (int j = 0; j < CD; ++j) {
        const int c = tx + 16 * j;
        if (c < a.dh && dq[i][j] != 0.f)
          atomicAdd(&dqAcc[(bh * a.Sq + qi) * a.dh + c], dq[i][j]);
      }
    }
  }

  T *dkOut = static_cast<T *>(g.dk) + b * a.k_stride[0] + h * a.dh;
  T *dvOut = static_cast<T *>(g.dv) + b * a.v_stride[0] + h * a.dvh;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t kj = k0 + ty + 16 * i;
    if (kj >= a.Sk)
      continue;
#pragma unroll
    for (int j = 0; j < CD; ++j) {
      const int c = tx + 16 * j;
      if (c < a.dh)
        dkOut[kj * a.k_stride[1] + c] = fromF32<T>(a.scale * dk[i][j]);
    }
#pragma unroll
    for (int j = 0; j < CV; ++j) {
      const int c = tx + 16 * j;
      if (c < a.dvh)
        dvOut[kj * a.v_stride[1] + c] = fromF32<T>(dv[i][j]);
    }
  }
}

} // namespace cuda
} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_CUDA_ATTENTIONKERNELS_CUH
