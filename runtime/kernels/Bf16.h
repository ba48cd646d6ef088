//===- Bf16.h - Rounding to bfloat16 ----------------------------*- C++ -*-===//
//
// Internal to the runtime (and its white-box tests): the rounding of the
// BF16 kernels (Bf16.cpp), each implementation on its own.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_BF16_H
#define MEGAGRAPH_RUNTIME_KERNELS_BF16_H

#include <cstdint>

namespace mgrt {

/// dst[i] = src[i] rounded to the nearest bfloat16 (ties to even; NaN
/// stays NaN), as float32; in scalar code.
void roundBf16Scalar(const float *src, float *dst, int64_t n);

/// The same with AVX-512 BF16 (VCVTNEPS2BF16, which flushes denormals to
/// zero); false (and nothing written) when the CPU lacks it.
bool roundBf16Avx512(const float *src, float *dst, int64_t n);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_BF16_H
