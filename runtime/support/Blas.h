//===- Blas.h - OpenBLAS set-up -----------------------------------*- C++
//-*-===//
//
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_BLAS_H
#define MEGAGRAPH_RUNTIME_SUPPORT_BLAS_H

namespace mgrt {

/// Makes OpenBLAS single-threaded (once): the kernels call it from every
/// worker of the pool, which owns the parallelism.
void initBlas();

/// A one-line hint when OpenBLAS runs kernels far older than the CPU (its
/// DYNAMIC_ARCH detection predates the CPU: 0.3.21 takes Sapphire Rapids for
/// a Prescott: 4-6x slower sgemm), or null. The cure, OPENBLAS_CORETYPE, is
/// read when the library loads, before any code of ours runs, so the matmul
/// kernel switches to its own GEMM instead (kernels/MatMul.h).
const char *blasCoreHint();

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_BLAS_H
