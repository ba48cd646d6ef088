//===- Bf16.cpp - BF16 GEMM and attention on the CPU ----------------------===//
//
// The kernels of --precision bf16 (Runtime.h): the operands are rounded to
// bfloat16 into float32 copies, then the float32 kernels run on them. A
// product of two bfloat16 values (8-bit significands) is exact in float32
// (24 bits), so this computes exactly what a BF16 tensor core or AVX-512
// BF16's VDPBF16PS computes - bfloat16 products, float32 sums - up to the
// order of the sums, at float32 GEMM speed. The rounding runs on AVX-512
// BF16 (VCVTNEPS2BF16) where the CPU has it.
//
//===----------------------------------------------------------------------===//

#include "megagraph/ModelABI.h"
#include "megagraph/Runtime.h"

#include "kernels/Bf16.h"
#include "kernels/MatMul.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

/// Round to nearest even on the bits; NaN stays (a quiet) NaN.
inline float roundScalar(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    u |= 0x00400000u; // quiet NaN, kept NaN by the truncation below
  else
    u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

void roundRowScalar(const float *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundScalar(src[i]);
}

#if defined(__x86_64__)
/// 16 floats at a time through VCVTNEPS2BF16 (round to nearest even;
/// denormals become zero, as the instruction flushes them) and back.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void
roundRowAvx512(const float *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    // Masked forms: the unmasked ones trip GCC 12's -Wmaybe-uninitialized.
    const __m512i wide = _mm512_maskz_cvtepu16_epi32(0xffff, (__m256i)h);
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(
                                  _mm512_maskz_slli_epi32(0xffff, wide, 16)));
  }
  roundRowScalar(src + i, dst + i, n - i);
}
#endif

using RoundRow = void (*)(const float *, float *, int64_t);

/// The rounding of this CPU: AVX-512 BF16 when it has it, unless
/// MEGAGRAPH_BF16_ROUNDING=scalar.
RoundRow roundRow() {
  static const RoundRow fn = [] {
    const char *env = std::getenv("MEGAGRAPH_BF16_ROUNDING");
    if (env && std::strcmp(env, "scalar") == 0)
      return &roundRowScalar;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bf16"))
      return &roundRowAvx512;
#endif
    return &roundRowScalar;
  }();
  return fn;
}

/// A contiguous float32 copy of a [G,R,C] memref with every element
/// rounded to bfloat16; freed with the object.
class Rounded {
public:
  Rounded(const mgrt_memref_f32_3 *m, const char *kernel) {
    MGRT_CHECK(m, kernel, "null operand descriptor");
    const int64_t G = m->sizes[0], R = m->sizes[1], C = m->sizes[2];
    data_ = static_cast<float *>(mgrt_alloc(sizeof(float) * G * R * C + 1));
    MGRT_CHECK(data_, kernel, "out of memory rounding an operand to bf16");
    desc_ = *m;
    desc_.allocated = desc_.aligned = data_;
    desc_.offset = 0;
    desc_.strides[0] = R * C, desc_.strides[1] = C, desc_.strides[2] = 1;
    const float *src = m->aligned + m->offset;
    const RoundRow roundFn = roundRow();
    float *dst = data_;
    mgrt::parallelFor(G * R, [&](int64_t row, int) {
      const int64_t g = row / std::max<int64_t>(R, 1), r = row % R;
      const float *s = src + g * m->strides[0] + r * m->strides[1];
      float *d = dst + row * C;
      if (m->strides[2] == 1 || C <= 1) {
        roundFn(s, d, C);
        return;
      }
      for (int64_t c = 0; c < C; ++c)
        d[c] = roundScalar(s[c * m->strides[2]]);
    });
  }
  Rounded(const Rounded &) = delete;
  Rounded &operator=(const Rounded &) = delete;
  ~Rounded() { mgrt_free(data_); }
  mgrt_memref_f32_3 *get() { return &desc_; }

private:
  float *data_ = nullptr;
  mgrt_memref_f32_3 desc_;
};

} // namespace

void mgrt::roundBf16Scalar(const float *src, float *dst, int64_t n) {
  roundRowScalar(src, dst, n);
}

bool mgrt::roundBf16Avx512(const float *src, float *dst, int64_t n) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) {
    roundRowAvx512(src, dst, n);
    return true;
  }
#endif
  return false;
}

extern "C" float mgrt_round_bf16(float x) {
  float y;
  roundRow()(&x, &y, 1);
  return y;
}

extern "C" void _mlir_ciface_mgrt_matmul_bf16_f32(mgrt_memref_f32_3 *out,
                                                  mgrt_memref_f32_3 *a,
                                                  mgrt_memref_f32_3 *b) {
  Rounded ra(a, MGRT_KERNEL_MATMUL_BF16), rb(b, MGRT_KERNEL_MATMUL_BF16);
  mgrt::matmul(out, ra.get(), rb.get(), mgrt::defaultGemmBackend());
}

extern "C" void _mlir_ciface_mgrt_attention_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags) {
  const char *name = MGRT_KERNEL_ATTENTION_BF16;
  Rounded rq(q, name), rk(k, name), rv(v, name);
  _mlir_ciface_mgrt_attention_f32(out, rq.get(), rk.get(), rv.get(), bias, mask,
                                  numHeads, scale, flags);
}

extern "C" void _mlir_ciface_mgrt_attention_bwd_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  const char *name = MGRT_KERNEL_ATTENTION_BWD_BF16;
  Rounded rq(q, name), rk(k, name), rv(v, name), rd(dout, name);
  _mlir_ciface_mgrt_attention_bwd_f32(dq, dk, dv, dbias, rd.get(), rq.get(),
                                      rk.get(), rv.get(), bias, mask, numHeads,
                                      scale, flags);
}

extern "C" void _mlir_ciface_mgrt_attention_lse_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags) {
  const char *name = MGRT_KERNEL_ATTENTION_LSE_BF16;
  Rounded rq(q, name), rk(k, name), rv(v, name);
  _mlir_ciface_mgrt_attention_lse_f32(out, lse, rq.get(), rk.get(), rv.get(),
                                      bias, mask, numHeads, scale, flags);
}

extern "C" void _mlir_ciface_mgrt_attention_bwd_lse_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse,
    int64_t numHeads, float scale, int64_t flags) {
  const char *name = MGRT_KERNEL_ATTENTION_BWD_LSE_BF16;
  Rounded rq(q, name), rk(k, name), rv(v, name), rd(dout, name);
  _mlir_ciface_mgrt_attention_bwd_lse_f32(dq, dk, dv, dbias, rd.get(), rq.get(),
                                          rk.get(), rv.get(), bias, mask, out,
                                          lse, numHeads, scale, flags);
}
