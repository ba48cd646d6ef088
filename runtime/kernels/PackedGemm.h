//===- PackedGemm.h - Single-threaded SGEMM on the micro GEMM ---*- C++ -*-===//
//
// Internal to the runtime. C = A B for any strided A and B, packing blocks
// of both (BLIS style) and running the register-tiled micro GEMM on them.
// The matmul kernel uses it instead of OpenBLAS when OpenBLAS runs kernels
// older than the CPU (see support/Blas.h), or when MEGAGRAPH_GEMM=native.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_PACKEDGEMM_H
#define MEGAGRAPH_RUNTIME_KERNELS_PACKEDGEMM_H

#include <cstddef>
#include <cstdint>

namespace mgrt {

/// A strided 2-D view: element (i, j) is data[i * rowStride + j * colStride].
struct MatrixView {
  const float *data;
  int64_t rowStride, colStride;
};

/// Scratch bytes packedGemm needs (per concurrent call).
size_t packedGemmScratchBytes();

/// C[M,N] = A[M,K] B[K,N], C row-major with row stride ldc. Single-threaded;
/// `scratch` holds packedGemmScratchBytes() bytes.
void packedGemm(int64_t M, int64_t N, int64_t K, MatrixView a, MatrixView b,
                float *c, int64_t ldc, void *scratch);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_PACKEDGEMM_H
