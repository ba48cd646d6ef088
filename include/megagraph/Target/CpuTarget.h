//===- CpuTarget.h - The host CPU target ------------------------*- C++ -*-===//
//
// Part of MegaGraph. --target cpu: the lower-cpu pipeline (loops on the
// host, kernels of libmegagraph_rt); entries run directly.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TARGET_CPUTARGET_H
#define MEGAGRAPH_TARGET_CPUTARGET_H

#include "megagraph/Target/TargetBackend.h"

namespace megagraph {

/// Options of the CPU target.
struct CpuTargetOptions {
  /// Testing: run the loop nests through gt-gpu-offload's kernels, emulated
  /// as host loops over blocks and threads, so the GPU indexing is checked
  /// on a machine without a GPU.
  bool emulateGpuOnHost = false;
};

std::unique_ptr<TargetBackend>
createCpuTargetBackend(const CpuTargetOptions &options);

} // namespace megagraph

#endif // MEGAGRAPH_TARGET_CPUTARGET_H
