//===- TargetBackend.h - What a compilation target provides -----*- C++ -*-===//
//
// Part of MegaGraph. One interface per target, in the manner of IREE's HAL
// target backends: the lowering to the LLVM dialect, what the entry table
// calls to run an entry on the target, and the target's runtime libraries.
// Everything else (signature, entry table, object file, link) is shared
// (megagraph/Target/Executable.h). Backends: megagraph/Target/CpuTarget.h,
// megagraph/Target/CudaTarget.h.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TARGET_TARGETBACKEND_H
#define MEGAGRAPH_TARGET_TARGETBACKEND_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace megagraph {

/// Where the compiled step runs (--target).
enum class Target { Cpu, Cuda };

/// Options every target shares.
struct CompileOptions {
  /// Decompose gt.attention into explicit scores instead of calling the
  /// fused runtime kernel (the reference path).
  bool referenceAttention = false;
  /// Precision of the GEMMs and the fused attention: "fp32" or "bf16"
  /// (gt-precision; master weights and optimizer state stay float32).
  std::string precision = "fp32";
  /// LLVM optimization level (0-3) of the host code.
  unsigned optLevel = 3;
  /// Where libmegagraph_rt.a, libmegagraph_driver.a and their link files
  /// are.
  std::string runtimeLibDir;
  /// The C++ compiler driver that links the executable (the runtime is
  /// C++).
  std::string cxx = "c++";
};

/// A compilation target.
class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The --target spelling.
  virtual llvm::StringRef getName() const = 0;

  /// Adds the passes from gt/TOSA/linalg to the LLVM dialect (a registered
  /// lower-* pipeline, megagraph/Pipelines/Pipelines.h).
  virtual void buildLowerPipeline(mlir::OpPassManager &pm,
                                  const CompileOptions &options) const = 0;

  /// The runtime function every entry runs through on this target, as
  /// `void stage(void (*fn)(void **), void **descriptors, int num_inputs,
  /// const mgrt_tensor_info *inputs, int num_outputs,
  /// const mgrt_tensor_info *outputs)` (to stage host tensors on a device);
  /// empty when the runtime calls the compiled entries directly.
  virtual llvm::StringRef getEntryStagingFunction() const { return {}; }

  /// Link files (one library or flag per line) of the target's runtime,
  /// linked before the CPU runtime; fails with a message when they are
  /// missing.
  virtual mlir::LogicalResult
  getRuntimeLinkFiles(const CompileOptions &options,
                      std::vector<std::string> &files,
                      std::string &error) const;
};

} // namespace megagraph

#endif // MEGAGRAPH_TARGET_TARGETBACKEND_H
