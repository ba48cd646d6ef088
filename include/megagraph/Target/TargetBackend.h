//===- TargetBackend.h - What a compilation target provides -----*- C++ -*-===//
//
// Part of MegaGraph. One interface per target, in the manner of IREE's HAL
// target backends: the lowering to the LLVM dialect, what the entry shim
// adds to run an entry on the target, and the target's runtime libraries.
// Everything else (signature, object file, shim tables, link) is shared
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

namespace llvm {
class raw_ostream;
} // namespace llvm

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
  /// LLVM optimization level (0-3) of the host code.
  unsigned optLevel = 3;
  /// Where libmegagraph_rt.a, libmegagraph_driver.a, their link files and
  /// megagraph/Runtime.h are.
  std::string runtimeLibDir;
  std::string runtimeIncludeDir;
  /// The C++ compiler driver used to compile the entry shim and link.
  std::string cxx = "c++";
};

/// An entry of the shim as a staging backend wraps it: the wrapper `name`
/// calls `name_device` with the device copies of the `numIn` + `numOut`
/// descriptors, described by the tensor tables `ins` and `outs`.
struct StagedEntry {
  std::string name;
  size_t numIn, numOut;
  std::string ins, outs;
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

  /// Further #include lines of the entry shim.
  virtual void writeShimIncludes(llvm::raw_ostream &os) const {}

  /// Whether the runtime calls the compiled entries through a staging
  /// wrapper each (writeEntryStaging) rather than directly.
  virtual bool stagesEntries() const { return false; }

  /// Writes the staging wrapper of one entry (stagesEntries()).
  virtual void writeEntryStaging(llvm::raw_ostream &os,
                                 const StagedEntry &entry) const {}

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
