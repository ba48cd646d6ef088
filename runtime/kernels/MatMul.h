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

/// The matmul kernel with an explicit backend. It cuts the rows into
/// blocks (a few per pool thread, none thinner than 32 rows) and runs one
/// GEMM per block; with `wholeRows` it runs one GEMM over all rows, for a
/// caller that chose its own row blocks (OpenBLAS may round a row
/// differently in differently sized calls).
void matmul(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *a, mgrt_memref_f32_3 *b,
            GemmBackend backend, bool wholeRows = false);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_MATMUL_H
