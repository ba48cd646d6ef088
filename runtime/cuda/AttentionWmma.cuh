//===- AttentionWmma.cuh - BF16 fused attention forward on tensor cores -===//
//
// Internal to runtime/cuda. The BF16 forward for head size 64 (Ampere and
// Hopper tensor cores through WMMA, float32 accumulation): 4 warps per
// block, 16 query rows per warp, 64 keys per step. Per step each warp
// computes its 16x64 score tile with 16 MMAs into shared memory, applies
// scale, bias, mask and the online softmax there (two lanes per row),
// rescales its float32 output tile and adds P V with 16 more MMAs. No
// [Sq,Sk] matrix exists anywhere.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_CUDA_ATTENTIONWMMA_CUH
#define MEGAGRAPH_RUNTIME_CUDA_ATTENTIONWMMA_CUH

#include "AttentionKernels.cuh"

#include <mma.h>

namespace mgrt {
namespace cuda {

constexpr int kWmmaThreads = 128;
constexpr int kWmmaBQ = 64, kWmmaBK = 64, kWmmaD = 64;
constexpr int kLdH = kWmmaD + 8;  // bf16 tiles: row pitch in elements
constexpr int kLdF = kWmmaBK + 4; // float tiles

constexpr size_t attnWmmaSmem() {
  return sizeof(__nv_bfloat16) * (3 * 64 * kLdH + 4 * 16 * kLdH) +
         sizeof(float) * (2 * 4 * 16 * kLdF);
}

/// Copies rows [r0, r0+64) x 64 columns of a bf16 head into a [64][kLdH]
/// tile, zero past `rows`.
__device__ __forceinline__ void loadTileBf16(__nv_bfloat16 *tile,
                                             const __nv_bfloat16 *base,
                                             int64_t rowStride, int64_t r0,
                                             int64_t rows, bool vec) {
  if (vec) { // 8 bf16 (16 bytes) per load
    for (int idx = threadIdx.x; idx < 64 * 8; idx += kWmmaThreads) {
      int r = idx / 8, c = (idx % 8) * 8;
      int64_t gr = r0 + r;
      uint4 x = make_uint4(0, 0, 0, 0);
      if (gr < rows)
        x = *reinterpret_cast<const uint4 *>(base + gr * rowStride + c);
      *reinterpret_cast<uint4 *>(tile + r * kLdH + c) = x;
    }
    return;
  }
  for (int idx = threadIdx.x; idx < 64 * 64; idx += kWmmaThreads) {
    int r = idx / 64, c = idx % 64;
    int64_t gr = r0 + r;
    tile[r * kLdH + c] =
        gr < rows ? base[gr * rowStride + c] : __float2bfloat16_rn(0.f);
  }
}

__global__ void __launch_bounds__(kWmmaThreads)
    attentionForwardWmmaKernel(mgrt_cuda_attention a, bool vec) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  extern __shared__ __align__(32) unsigned char smemRaw[];
  __nv_bfloat16 *Qs = reinterpret_cast<__nv_bfloat16 *>(smemRaw);
  __nv_bfloat16 *Ks = Qs + 64 * kLdH;
  __nv_bfloat16 *Vs = Ks + 64 * kLdH;
  __nv_bfloat16 *Pall = Vs + 64 * kLdH; // 4 warps x [16][kLdH]
  float *Sall = reinterpret_cast<float *>(Pall + 4 * 16 * kLdH);
  float *Oall = Sall + 4 * 16 * kLdF;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __nv_bfloat16 *Pw = Pall + warp * 16 * kLdH;
  float *Sw = Sall + warp * 16 * kLdF;
  float *Ow = Oall + warp * 16 * kLdF;

  const int64_t b = blockIdx.y / a.H, h = blockIdx.y % a.H;
  const int64_t q0 = (int64_t)blockIdx.x * kWmmaBQ;
  const auto *q =
      static_cast<const __nv_bfloat16 *>(a.q) + b * a.q_stride[0] + h * kWmmaD;
  const auto *k =
      static_cast<const __nv_bfloat16 *>(a.k) + b * a.k_stride[0] + h * kWmmaD;
  const auto *v =
      static_cast<const __nv_bfloat16 *>(a.v) + b * a.v_stride[0] + h * kWmmaD;
  loadTileBf16(Qs, q, a.q_stride[1], q0, a.Sq, vec);
  for (int idx = lane; idx < 16 * kLdF; idx += 32)
    Ow[idx] = 0.f;

  // Two lanes per row: row = lane / 2, columns [half*32, half*32+32).
  const int row = lane / 2, half = lane % 2;
  const int64_t qi = q0 + warp * 16 + row;
  float m = -INFINITY, l = 0.f;

  for (int64_t k0 = 0; k0 < a.Sk; k0 += kWmmaBK) {
    __syncthreads();
    loadTileBf16(Ks, k, a.k_stride[1], k0, a.Sk, vec);
    loadTileBf16(Vs, v, a.v_stride[1], k0, a.Sk, vec);
    __syncthreads();

    // S = Q_w K^T (16 x 64).
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>
        qf[4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wmma::load_matrix_sync(qf[kk], Qs + warp * 16 * kLdH + kk * 16, kLdH);
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
      wmma::fill_fragment(sf, 0.f);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
                       wmma::col_major>
            kf;
        wmma::load_matrix_sync(kf, Ks + n * 16 * kLdH + kk * 16, kLdH);
        wmma::mma_sync(sf, qf[kk], kf, sf);
      }
      wmma::store_matrix_sync(Sw + n * 16, sf, kLdF, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of row `row`, this lane's 32 columns.
    float *srow = Sw + row * kLdF + half * 32;
    float rowMax = -INFINITY;
#pragma unroll 8
    for (int c = 0; c < 32; ++c) {
      float x = attnLogit(a, b, h, qi, k0 + half * 32 + c, a.scale * srow[c]);
      srow[c] = x;
      rowMax = fmaxf(rowMax, x);
    }
    rowMax = fmaxf(rowMax, __shfl_xor_sync(0xffffffffu, rowMax, 1));
    const float mNew = fmaxf(m, rowMax);
    const float mUse = mNew == -INFINITY ? 0.f : mNew;
    float rowSum = 0.f;
    __nv_bfloat16 *prow = Pw + row * kLdH + half * 32;
#pragma unroll 8
    for (int c = 0; c < 32; ++c) {
      float p = __expf(srow[c] - mUse);
      __nv_bfloat16 pb = __float2bfloat16_rn(p);
      rowSum += __bfloat162float(pb); // normalise by what P V really sums
      prow[c] = pb;
    }
    rowSum += __shfl_xor_sync(0xffffffffu, rowSum, 1);
    const float alpha = __expf(m - mUse);
    l = l * alpha + rowSum;
    m = mNew;
    float *orow = Ow + row * kLdF + half * 32;
#pragma unroll 8
    for (int c = 0; c < 32; ++c)
      orow[c] *= alpha;
    __syncwarp();

    // O_w += P_w V (16 x 64).
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
      wmma::load_matrix_sync(of, Ow + n * 16, kLdF, wmma::mem_row_major);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
                       wmma::row_major>
            pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
                       wmma::row_major>
            vf;
        wmma::load_matrix_sync(pf, Pw + kk * 16, kLdH);
        wmma::load_matrix_sync(vf, Vs + kk * 16 * kLdH + n * 16, kLdH);
        wmma::mma_sync(of, pf, vf, of);
      }
      wmma::store_matrix_sync(Ow + n * 16, of, kLdF, wmma::mem_row_major);
    }
    __syncwarp();
  }

  if (qi < a.Sq) {
    auto *out = static_cast<__nv_bfloat16 *>(a.out) + b * a.out_stride[0] +
                h * kWmmaD + qi * a.out_stride[1];
    const float inv = l > 0.f ? 1.f / l : 0.f;
    const float *orow = Ow + row * kLdF + half * 32;
    for (int c = 0; c < 32; ++c)
      out[half * 32 + c] = __float2bfloat16_rn(orow[c] * inv);
    if (a.lse && half == 0)
      a.lse[blockIdx.y * a.Sq + qi] = l > 0.f ? m + logf(l) : INFINITY;
  }
#endif
}

/// Whether an m16n16k16 float accumulator fragment holds, in lane l,
/// element i at row (l/4) + 8 ((i/2) % 2) and column 2 (l%4) + (i%2) +
/// 8 (i/4): the layout of the sm_80+ mma.sync instructions WMMA compiles
/// to. The register-resident forward relies on it; the runtime checks it
/// once on the device (wmmaLayoutProbe) and falls back otherwise.
__device__ __forceinline__ int accRow(int lane, int i) {
  return (lane >> 2) + 8 * ((i >> 1) & 1);
}
__device__ __forceinline__ int accCol(int lane, int i) {
  return 2 * (lane & 3) + (i & 1) + 8 * (i >> 2);
}

__global__ void wmmaLayoutProbe(int *ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  __shared__ __align__(32) float c[16 * 16];
  for (int i = threadIdx.x; i < 256; i += 32)
    c[i] = (float)i;
  __syncwarp();
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> f;
  wmma::load_matrix_sync(f, c, 16, wmma::mem_row_major);
  int good = f.num_elements == 8;
  for (int i = 0; i < f.num_elements && i < 8; ++i)
    good &=
        f.x[i] == (float)(accRow(threadIdx.x, i) * 16 + accCol(threadIdx.x, i));
  good = __all_sync(0xffffffffu, good);
  if (threadIdx.x == 0)
    *ok = good;
#else
  if (threadIdx.x == 0)
    *ok = 0;
#endif
}

constexpr size_t attnWmmaRegSmem() {
  return sizeof(__nv_bfloat16) * (3 * 64 * kLdH + 4 * 16 * kLdH);
}

/// The BF16 head-size-64 forward with the scores and the output kept in
/// accumulator registers (layout checked by wmmaLayoutProbe): only P goes
/// through shared memory, as the A operand of P V. Bias and mask handling
/// are compiled in or out.
template <bool HasBiasOrMask>
__global__ void __launch_bounds__(kWmmaThreads)
    attentionForwardWmmaRegKernel(mgrt_cuda_attention a, bool vec) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  using bf = __nv_bfloat16;
  extern __shared__ __align__(32) unsigned char smemRaw[];
  bf *Qs = reinterpret_cast<bf *>(smemRaw);
  bf *Ks = Qs + 64 * kLdH;
  bf *Vs = Ks + 64 * kLdH;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  bf *Pw = Vs + 64 * kLdH + warp * 16 * kLdH;

  const int64_t b = blockIdx.y / a.H, h = blockIdx.y % a.H;
  const int64_t q0 = (int64_t)blockIdx.x * kWmmaBQ + warp * 16;
  const bf *q = static_cast<const bf *>(a.q) + b * a.q_stride[0] + h * 64;
  const bf *k = static_cast<const bf *>(a.k) + b * a.k_stride[0] + h * 64;
  const bf *v = static_cast<const bf *>(a.v) + b * a.v_stride[0] + h * 64;
  loadTileBf16(Qs, q, a.q_stride[1], (int64_t)blockIdx.x * kWmmaBQ, a.Sq, vec);
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, bf, wmma::row_major> qf[4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
    wmma::load_matrix_sync(qf[kk], Qs + warp * 16 * kLdH + kk * 16, kLdH);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> of[4];
#pragma unroll
  for (int n = 0; n < 4; ++n)
    wmma::fill_fragment(of[n], 0.f);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}; // rows g, g + 8

  for (int64_t k0 = 0; k0 < a.Sk; k0 += kWmmaBK) {
    __syncthreads();
    loadTileBf16(Ks, k, a.k_stride[1], k0, a.Sk, vec);
    loadTileBf16(Vs, v, a.v_stride[1], k0, a.Sk, vec);
    __syncthreads();

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf[4];
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      wmma::fill_fragment(sf[n], 0.f);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, Ks + n * 16 * kLdH + kk * 16, kLdH);
        wmma::mma_sync(sf[n], qf[kk], kf, sf[n]);
      }
    }

    float rowMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t kj = k0 + n * 16 + accCol(lane, i);
        float x = a.scale * sf[n].x[i];
        if (HasBiasOrMask)
          x = attnLogit(a, b, h, q0 + accRow(lane, i), kj, x);
        else if (kj >= a.Sk)
          x = -INFINITY;
        sf[n].x[i] = x;
        rowMax[(i >> 1) & 1] = fmaxf(rowMax[(i >> 1) & 1], x);
      }
    float mUse[2], alpha[2], rowSum[2] = {0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      rowMax[r] = fmaxf(rowMax[r], __shfl_xor_sync(0xffffffffu, rowMax[r], 1));
      rowMax[r] = fmaxf(rowMax[r], __shfl_xor_sync(0xffffffffu, rowMax[r], 2));
      const float mNew = fmaxf(m[r], rowMax[r]);
      mUse[r] = mNew == -INFINITY ? 0.f : mNew;
      alpha[r] = __expf(m[r] - mUse[r]);
      m[r] = mNew;
    }
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int i = 0; i < 8; i += 2) {
        const int r = (i >> 1) & 1;
        __nv_bfloat162 pb = __floats2bfloat162_rn(
            __expf(sf[n].x[i] - mUse[r]), __expf(sf[n].x[i + 1] - mUse[r]));
        rowSum[r] += __bfloat162float(pb.x) + __bfloat162float(pb.y);
        *reinterpret_cast<__nv_bfloat162 *>(Pw + accRow(lane, i) * kLdH +
                                            n * 16 + accCol(lane, i)) = pb;
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 1);
      rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 2);
      l[r] = l[r] * alpha[r] + rowSum[r];
    }
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i)
        of[n].x[i] *= alpha[(i >> 1) & 1];
    __syncwarp();

#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf, wmma::row_major> pf;
      wmma::load_matrix_sync(pf, Pw + kk * 16, kLdH);
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf, wmma::row_major> vf;
        wmma::load_matrix_sync(vf, Vs + kk * 16 * kLdH + n * 16, kLdH);
        wmma::mma_sync(of[n], pf, vf, of[n]);
      }
    }
    __syncwarp();
  }

  bf *out = static_cast<bf *>(a.out) + b * a.out_stride[0] + h * 64;
  const float inv[2] = {l[0] > 0.f ? 1.f / l[0] : 0.f,
                        l[1] > 0.f ? 1.f / l[1] : 0.f};
#pragma unroll
  for (int n = 0; n < 4; ++n)
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int64_t qi = q0 + accRow(lane, i);
      if (qi < a.Sq)
        out[qi * a.out_stride[1] + n * 16 + accCol(lane, i)] =
            __float2bfloat16_rn(of[n].x[i] * inv[(i >> 1) & 1]);
    }
  if (a.lse && (lane & 3) == 0)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t qi = q0 + (lane >> 2) + 8 * r;
      if (qi < a.Sq)
        a.lse[blockIdx.y * a.Sq + qi] =
            l[r] > 0.f ? m[r] + logf(l[r]) : INFINITY;
    }
#endif
}

constexpr size_t attnWmmaBackwardSmem(bool reg) {
  // Q, dout, K, V tiles and the block's P^T and dS^T (bf16), then per warp
  // one float [16][kLdF] tile for the dq staging (and one more for dP^T
  // unless the scores stay in registers), then lse and rowsum(dout * out).
  return sizeof(__nv_bfloat16) * (6 * 64 * kLdH) +
         sizeof(float) * ((reg ? 1 : 2) * 4 * 16 * kLdF + 2 * 64);
}

/// BF16 backward for head size 64 on tensor cores (flash-attention-2
/// order): one block per (64-key block, batch * head), warp w owning keys
/// [16w, 16w+16). Per 64-query block each warp forms S^T and dP^T for its
/// keys (16 MMAs each), turns them into P^T and dS^T (bf16, two lanes per
/// key row), accumulates dV += P^T dout and dK += dS^T q in persistent
/// fragments (16 MMAs each), and, once every warp's dS^T is in shared
/// memory, computes dq for 16 of the queries over all 64 keys (16 MMAs)
/// and adds it to the float32 accumulator with atomics. With Reg, S^T,
/// dP^T and the final dK, dV are read straight from the accumulator
/// registers (layout checked by wmmaLayoutProbe) instead of being staged
/// through shared memory.
template <bool Reg>
__global__ void __launch_bounds__(kWmmaThreads)
    attentionBackwardWmmaKernel(mgrt_cuda_attention a,
                                mgrt_cuda_attention_grad g, const float *dsum,
                                float *dqAcc, bool dbiasAtomic, bool vec,
                                bool vecO) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  extern __shared__ __align__(32) unsigned char smemRaw[];
  __nv_bfloat16 *Qs = reinterpret_cast<__nv_bfloat16 *>(smemRaw);
  __nv_bfloat16 *dOs = Qs + 64 * kLdH;
  __nv_bfloat16 *Ks = dOs + 64 * kLdH;
  __nv_bfloat16 *Vs = Ks + 64 * kLdH;
  __nv_bfloat16 *Pt = Vs + 64 * kLdH;  // [64 keys][64 queries]
  __nv_bfloat16 *dSt = Pt + 64 * kLdH; // [64 keys][64 queries]
  float *F = reinterpret_cast<float *>(dSt + 64 * kLdH);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int tiles = Reg ? 1 : 2;
  float *Sw = F + warp * tiles * 16 * kLdF; // S^T, later the dq staging
  float *dPw = Sw + 16 * kLdF;              // dP^T (shared-memory path)
  float *lseS = F + 4 * tiles * 16 * kLdF;
  float *dsumS = lseS + 64;

  const int64_t bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int64_t k0 = (int64_t)blockIdx.x * 64;
  using bf = __nv_bfloat16;
  const bf *q = static_cast<const bf *>(a.q) + b * a.q_stride[0] + h * 64;
  const bf *k = static_cast<const bf *>(a.k) + b * a.k_stride[0] + h * 64;
  const bf *v = static_cast<const bf *>(a.v) + b * a.v_stride[0] + h * 64;
  const bf *dout =
      static_cast<const bf *>(g.dout) + b * a.out_stride[0] + h * 64;
  loadTileBf16(Ks, k, a.k_stride[1], k0, a.Sk, vec);
  loadTileBf16(Vs, v, a.v_stride[1], k0, a.Sk, vec);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> dK[4], dV[4];
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    wmma::fill_fragment(dK[n], 0.f);
    wmma::fill_fragment(dV[n], 0.f);
  }
  const int row = lane / 2, half = lane % 2; // key row of this warp
  const int64_t kj = k0 + warp * 16 + row;

  for (int64_t q0 = 0; q0 < a.Sq; q0 += 64) {
    __syncthreads();
    loadTileBf16(Qs, q, a.q_stride[1], q0, a.Sq, vec);
    loadTileBf16(dOs, dout, a.out_stride[1], q0, a.Sq, vecO);
    if (threadIdx.x < 64) {
      const int64_t qi = q0 + threadIdx.x;
      lseS[threadIdx.x] = qi < a.Sq ? a.lse[bh * a.Sq + qi] : INFINITY;
      dsumS[threadIdx.x] = qi < a.Sq ? dsum[bh * a.Sq + qi] : 0.f;
    }
    __syncthreads();

    // S^T = K_w Q^T and dP^T = V_w dout^T (16 keys x 64 queries).
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> sfA[4], pfA[4];
    {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf, wmma::row_major> kf[4],
          vf[4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        wmma::load_matrix_sync(kf[kk], Ks + warp * 16 * kLdH + kk * 16, kLdH);
        wmma::load_matrix_sync(vf[kk], Vs + warp * 16 * kLdH + kk * 16, kLdH);
      }
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        auto &sf = sfA[n];
        auto &pf = pfA[n];
        wmma::fill_fragment(sf, 0.f);
        wmma::fill_fragment(pf, 0.f);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, bf, wmma::col_major> qf,
              of;
          wmma::load_matrix_sync(qf, Qs + n * 16 * kLdH + kk * 16, kLdH);
          wmma::load_matrix_sync(of, dOs + n * 16 * kLdH + kk * 16, kLdH);
          wmma::mma_sync(sf, kf[kk], qf, sf);
          wmma::mma_sync(pf, vf[kk], of, pf);
        }
        if constexpr (!Reg) {
          wmma::store_matrix_sync(Sw + n * 16, sf, kLdF, wmma::mem_row_major);
          wmma::store_matrix_sync(dPw + n * 16, pf, kLdF, wmma::mem_row_major);
        }
      }
    }
    __syncwarp();

    if constexpr (Reg) {
      // P^T, dS^T from the registers: element i of tile n is key row
      // accRow, query n*16 + accCol; (i, i+1) are adjacent queries.
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
          const int r = accRow(lane, i), qc = n * 16 + accCol(lane, i);
          const int64_t kr = k0 + warp * 16 + r;
          float pv[2], dsv[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int64_t qi = q0 + qc + e;
            const float logit =
                attnLogit(a, b, h, qi, kr, a.scale * sfA[n].x[i + e]);
            pv[e] = logit == -INFINITY ? 0.f : __expf(logit - lseS[qc + e]);
            dsv[e] = pv[e] * (pfA[n].x[i + e] - dsumS[qc + e]);
            if (g.dbias && qi < a.Sq && kr < a.Sk) {
              float *dst = g.dbias + b * g.dbias_stride[0] +
                           h * g.dbias_stride[1] + qi * g.dbias_stride[2] +
                           kr * g.dbias_stride[3];
              if (!dbiasAtomic)
                *dst = dsv[e];
              else if (dsv[e] != 0.f)
                atomicAdd(dst, dsv[e]);
            }
          }
          *reinterpret_cast<__nv_bfloat162 *>(Pt + (warp * 16 + r) * kLdH +
                                              qc) =
              __floats2bfloat162_rn(pv[0], pv[1]);
          *reinterpret_cast<__nv_bfloat162 *>(dSt + (warp * 16 + r) * kLdH +
                                              qc) =
              __floats2bfloat162_rn(dsv[0], dsv[1]);
        }
    } else {

      // P^T, dS^T for key kj and this lane's 32 queries; the bias gradient.
#pragma unroll 4
      for (int c = 0; c < 32; ++c) {
        const int qc = half * 32 + c;
        const int64_t qi = q0 + qc;
        const float logit =
            attnLogit(a, b, h, qi, kj, a.scale * Sw[row * kLdF + qc]);
        const float p = logit == -INFINITY ? 0.f : __expf(logit - lseS[qc]);
        const float ds = p * (dPw[row * kLdF + qc] - dsumS[qc]);
        Pt[(warp * 16 + row) * kLdH + qc] = __float2bfloat16_rn(p);
        dSt[(warp * 16 + row) * kLdH + qc] = __float2bfloat16_rn(ds);
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
    __syncwarp();

    // dV_w += P^T_w dout, dK_w += dS^T_w Q (16 keys x 64 dims).
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf, wmma::row_major> pa, sa;
      wmma::load_matrix_sync(pa, Pt + warp * 16 * kLdH + kk * 16, kLdH);
      wmma::load_matrix_sync(sa, dSt + warp * 16 * kLdH + kk * 16, kLdH);
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf, wmma::row_major> ob, qb;
        wmma::load_matrix_sync(ob, dOs + kk * 16 * kLdH + n * 16, kLdH);
        wmma::load_matrix_sync(qb, Qs + kk * 16 * kLdH + n * 16, kLdH);
        wmma::mma_sync(dV[n], pa, ob, dV[n]);
        wmma::mma_sync(dK[n], sa, qb, dK[n]);
      }
    }
    __syncthreads(); // every warp's dS^T rows are in place

    // dq for queries [16w, 16w+16) over the block's 64 keys:
    // dq = dS K, dS (query x key) read column-major from dS^T.
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> qacc;
      wmma::fill_fragment(qacc, 0.f);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, bf, wmma::col_major> sa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf, wmma::row_major> kb;
        wmma::load_matrix_sync(sa, dSt + kk * 16 * kLdH + warp * 16, kLdH);
        wmma::load_matrix_sync(kb, Ks + kk * 16 * kLdH + n * 16, kLdH);
        wmma::mma_sync(qacc, sa, kb, qacc);
      }
      // Staged so that the atomics of a warp hit consecutive addresses.
      wmma::store_matrix_sync(Sw + n * 16, qacc, kLdF, wmma::mem_row_major);
    }
    __syncwarp();
    for (int idx = lane; idx < 16 * 64; idx += 32) {
      const int r = idx / 64, c = idx % 64;
      const int64_t qi = q0 + warp * 16 + r;
      const float x = Sw[r * kLdF + c];
      if (qi < a.Sq && x != 0.f)
        atomicAdd(&dqAcc[(bh * a.Sq + qi) * 64 + c], x);
    }
  }

  // dK (times scale) and dV of this warp's 16 keys.
  bf *dkOut = static_cast<bf *>(g.dk) + b * a.k_stride[0] + h * 64;
  bf *dvOut = static_cast<bf *>(g.dv) + b * a.v_stride[0] + h * 64;
  if constexpr (Reg) {
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t kr = k0 + warp * 16 + accRow(lane, i);
        const int c = n * 16 + accCol(lane, i);
        if (kr < a.Sk) {
          dkOut[kr * a.k_stride[1] + c] =
              __float2bfloat16_rn(a.scale * dK[n].x[i]);
          dvOut[kr * a.v_stride[1] + c] = __float2bfloat16_rn(dV[n].x[i]);
        }
      }
    return;
  }
  __syncwarp();
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    wmma::store_matrix_sync(Sw + n * 16, dK[n], kLdF, wmma::mem_row_major);
    wmma::store_matrix_sync(dPw + n * 16, dV[n], kLdF, wmma::mem_row_major);
  }
  __syncwarp();
  for (int idx = lane; idx < 16 * 64; idx += 32) {
    const int r = idx / 64, c = idx % 64;
    const int64_t kr = k0 + warp * 16 + r;
    if (kr < a.Sk) {
      dkOut[kr * a.k_stride[1] + c] =
          __float2bfloat16_rn(a.scale * Sw[r * kLdF + c]);
      dvOut[kr * a.v_stride[1] + c] = __float2bfloat16_rn(dPw[r * kLdF + c]);
    }
  }
#endif
}

} // namespace cuda
} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_CUDA_ATTENTIONWMMA_CUH
