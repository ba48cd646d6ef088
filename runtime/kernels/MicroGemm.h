//===- MicroGemm.h - Register-tiled GEMM for small packed blocks -*- C++
//-*-===//
//
// Internal to the runtime. C[M, 16*vectors] (+)= A[M, K] B[K, 16*vectors] for
// the blocks of the attention kernel, whose sizes are small and known. A
// tile of C (6 rows by up to 64 columns) lives in registers while k runs; A
// is broadcast one element at a time (row stride lda), B rows are read as
// vectors (row stride ldb). Every row of B and C holds whole 16-float
// vectors and M is a multiple of kTileRows: callers pad their buffers.
//
// Why not sgemm: on these block sizes OpenBLAS 0.3.21 spends much of its
// time packing both operands on every call, and on CPUs newer than its
// tables (Sapphire Rapids) its DYNAMIC_ARCH build falls back to SSE3
// kernels, 4x slower than the AVX-512 code here.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_MICROGEMM_H
#define MEGAGRAPH_RUNTIME_KERNELS_MICROGEMM_H

#include <cstdint>

namespace mgrt {

constexpr int kTileRows = 6;

typedef void (*MicroGemmFn)(bool accumulate, int64_t M, int64_t vectors,
                            int64_t K, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c, int64_t ldc);

/// The best implementation for this CPU (AVX-512, AVX2+FMA or portable),
/// chosen once.
MicroGemmFn microGemm();

/// Name of the implementation microGemm() returns ("avx512", "avx2",
/// "generic"), for benchmarks and logs.
const char *microGemmName();

/// The implementation called `name`, or null if unknown or this CPU lacks
/// its instructions (for tests).
MicroGemmFn microGemmFor(const char *name);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_MICROGEMM_H
