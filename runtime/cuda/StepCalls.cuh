//===- StepCalls.cuh - Helpers of the compiled step's CUDA calls -*- CUDA
//-*-===//
//
// Internal to runtime/cuda: what StepCalls.cu (single-GPU calls) and
// CpAttention.cu (context-parallel attention) share: strided copies and the
// attention problem of a call's memref operands.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_CUDA_STEPCALLS_CUH
#define MEGAGRAPH_RUNTIME_CUDA_STEPCALLS_CUH

#include "megagraph/Runtime.h"
#include "megagraph/RuntimeCuda.h"

#include <cstdint>

namespace mgrt::cuda {

/// A [G,R,C] float32 view: element (g,i,j) at g*s[0] + i*s[1] + j*s[2].
struct View3 {
  int64_t s[3];
};
constexpr View3 contiguous(int64_t R, int64_t C) { return {{R * C, C, 1}}; }
inline View3 viewOf(const mgrt_memref_f32_3 *m) {
  return {{m->strides[0], m->strides[1], m->strides[2]}};
}

/// dst(g,i,j) = src(g,i,j) over [G,R,C], each through its own strides, on
/// the default stream.
void copy(float *dst, View3 d, const float *src, View3 s, int64_t G, int64_t R,
          int64_t C, const char *name);

/// A bias or mask view [Bb,Hb,Sq|1,Sk|1] broadcast to [B,H,Sq,Sk]: size-1
/// dimensions get stride 0.
template <typename Memref>
void broadcastStrides(const Memref *m, int64_t out[4]) {
  for (int d = 0; d < 4; ++d)
    out[d] = m->sizes[d] == 1 ? 0 : m->strides[d];
}

/// The float32 attention problem of the operands of mgrt_attention_f32
/// (Runtime.h) on device memory, without out / lse (the caller's).
mgrt_cuda_attention attentionOf(const mgrt_memref_f32_3 *q,
                                const mgrt_memref_f32_3 *k,
                                const mgrt_memref_f32_3 *v,
                                const mgrt_memref_f32_4 *bias,
                                const mgrt_memref_i8_4 *mask, int64_t numHeads,
                                float scale, int64_t flags, const char *name);

} // namespace mgrt::cuda

extern "C" {
/// The single-GPU attention calls of compiled code (StepCalls.cu).
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

#endif // MEGAGRAPH_RUNTIME_CUDA_STEPCALLS_CUH
