//===- CudaTarget.h - The NVIDIA GPU target ---------------------*- C++ -*-===//
//
// Part of MegaGraph. --target cuda: the lower-cuda pipeline (one kernel per
// loop nest as PTX, cuBLAS GEMMs, every buffer in device memory); the host
// code only launches kernels, and each entry stages its tensors on the
// device (mgrt_cuda_run_entry of libmegagraph_cuda).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TARGET_CUDATARGET_H
#define MEGAGRAPH_TARGET_CUDATARGET_H

#include "megagraph/Target/TargetBackend.h"

namespace megagraph {

/// Options of the CUDA target.
struct CudaTargetOptions {
  /// The PTX target chip (the driver JIT-compiles the PTX for the GPU at
  /// hand, so any later chip runs it too).
  std::string chip = "sm_80";
  /// The CUDA toolkit (for libdevice, when the kernels call into it).
  std::string cudaPath = "/usr/local/cuda";
  /// The program runs a plan of several devices (one process per GPU):
  /// linking needs the NCCL backend (megagraph_cuda_nccl.link).
  bool multiDevice = false;
};

std::unique_ptr<TargetBackend>
createCudaTargetBackend(const CudaTargetOptions &options);

} // namespace megagraph

#endif // MEGAGRAPH_TARGET_CUDATARGET_H
