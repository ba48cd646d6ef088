//===- CpuCompiler.h - From gt/TOSA modules to CPU executables --*- C++ -*-===//
//
// Part of MegaGraph. The back half of megagraph-compile for --target cpu:
// lower a raised module to the LLVM dialect (gt-decompose, tosa-to-linalg,
// one-shot bufferization, buffer deallocation, LLVM conversion), translate
// and optimize it with LLVM, emit an object file, generate the entry shim
// that tells the runtime driver the model's inputs and outputs, and link
// everything with libmegagraph_rt into an executable.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TARGET_CPUCOMPILER_H
#define MEGAGRAPH_TARGET_CPUCOMPILER_H

#include "megagraph/Plan/ParallelPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class LLVMContext;
} // namespace llvm

namespace megagraph {

/// Options of the CPU back end.
/// Where the compiled step runs.
enum class Target { Cpu, Cuda };

struct CpuCompileOptions {
  /// --target: the host CPU, or an NVIDIA GPU (the host code only launches
  /// kernels; every buffer is device memory).
  Target target = Target::Cpu;
  /// --target cuda: the PTX target chip (the driver JIT-compiles the PTX
  /// for the GPU at hand, so any later chip runs it too) and the CUDA
  /// toolkit (for libdevice, when the kernels call into it).
  std::string cudaChip = "sm_80";
  std::string cudaPath = "/usr/local/cuda";
  /// Testing (--target cpu only): run the loop nests through
  /// gt-gpu-offload's kernels, emulated as host loops over blocks and
  /// threads, so the GPU indexing is checked on a machine without a GPU.
  bool emulateGpuOnHost = false;
  /// Decompose gt.attention into explicit scores instead of calling the
  /// fused runtime kernel (the reference path).
  bool referenceAttention = false;
  /// LLVM optimization level (0-3).
  unsigned optLevel = 3;
  /// Where libmegagraph_rt.a and megagraph/Runtime.h are.
  std::string runtimeLibDir;
  std::string runtimeIncludeDir;
  /// The C++ compiler driver used to compile the entry shim and link.
  std::string cxx = "c++";
};

/// One graph input or output: its name, runtime dtype enumerator (e.g.
/// "MGRT_F32"), static shape, and its mgrt_tensor_role and role index
/// (megagraph/ModelABI.h) for the driver.
struct TensorSignature {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  int role = 0, index = -1;
};

/// A further entry point (pipeline stages: `gt.pipeline_entry = "s0.fwd"`).
struct EntrySignature {
  std::string name, symbol;
  std::vector<TensorSignature> inputs, outputs;
};

/// The inputs and outputs of `@main`, in order.
struct ModelSignature {
  std::vector<TensorSignature> inputs, outputs;
  /// Functions marked `gt.pipeline_entry`, in module order
  /// (mgrt_model_info::entries).
  std::vector<EntrySignature> entries;
  /// The module's `gt.plan` (none without one); the driver reads it from
  /// `mgrt_model_info::plan`.
  std::optional<ParallelPlan> plan;
};

/// Reads the signature of `@main` (names from `gt.name`). Emits an error
/// for dynamic shapes or unsupported element types.
mlir::FailureOr<ModelSignature> getModelSignature(mlir::ModuleOp module);

/// Lowers a module of gt/TOSA/linalg/ml_program ops to the LLVM dialect.
mlir::LogicalResult lowerToLLVMDialect(mlir::ModuleOp module,
                                       const CpuCompileOptions &options);

/// Translates an LLVM-dialect module to LLVM IR and optimizes it for the
/// host CPU.
std::unique_ptr<llvm::Module>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                  const CpuCompileOptions &options);

/// Writes an object file for the host.
mlir::LogicalResult emitObjectFile(llvm::Module &module, llvm::StringRef path,
                                   std::string &error);

/// Writes the C++ entry shim: model signature tables (mgrt_model_info) and
/// `main()` calling `mgrt_main`, or `mgrt_infer_main` for a model without a
/// training step (needsTrainingDriver). For `Target::Cuda` every entry runs
/// through mgrt_cuda_run_entry (host tensors in and out).
mlir::LogicalResult writeEntryShim(const ModelSignature &signature,
                                   llvm::StringRef modelName,
                                   llvm::StringRef path, std::string &error,
                                   Target target = Target::Cpu);

/// Whether the executable runs the training driver (mgrt_main): the model
/// has a plan, pipeline stage entries or a `loss` output. Otherwise its shim
/// calls mgrt_infer_main and it links neither METIS, zlib nor MPI.
bool needsTrainingDriver(const ModelSignature &signature);

/// Compiles the shim and links it with `objectPath`, the runtime and its
/// driver; `training` (needsTrainingDriver) adds the training driver's
/// libraries.
mlir::LogicalResult linkExecutable(llvm::StringRef objectPath,
                                   llvm::StringRef shimPath,
                                   llvm::StringRef outputPath, bool training,
                                   const CpuCompileOptions &options,
                                   std::string &error);

} // namespace megagraph

#endif // MEGAGRAPH_TARGET_CPUCOMPILER_H
