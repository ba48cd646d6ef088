//===- MatMul.h - Batched matmul backends -------------------------*- C++
//-*-===//
//
// Internal to the runtime (and its white-box tests).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_MATMUL_H
#define MEGAGRAPH_RUNTIME_KERNELS_MATMUL_H

#include "megagraph/Runtime.h"

namespace mgrt {

enum class GemmBackend {
  Blas,  ///< OpenBLAS cblas_sgemm, single-threaded per task
  Native ///< packedGemm on the runtime's micro GEMM
};

/// The backend _mlir_ciface_mgrt_matmul_f32 uses, chosen once:
/// MEGAGRAPH_GEMM=blas|native if set, else Native when OpenBLAS runs kernels
/// older than the CPU (support/Blas.h), else Blas.
GemmBackend defaultGemmBackend();

/// "blas" or "native".
const char *gemmBackendName(GemmBackend backend);

/// The matmul kernel with an explicit backend.
void matmul(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *a, mgrt_memref_f32_3 *b,
            GemmBackend backend);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_MATMUL_H
