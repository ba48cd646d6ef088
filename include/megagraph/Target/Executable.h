//===- Executable.h - From a raised module to an executable -----*- C++ -*-===//
//
// Part of MegaGraph. The back half of megagraph-compile, shared by every
// target (lib/Target/Common): lower a raised module to the LLVM dialect
// with the backend's pipeline (megagraph/Target/TargetBackend.h), add the
// entry table that tells the runtime driver the model's inputs and outputs
// and main(), translate and optimize it with LLVM, emit an object file, and
// link it with the runtime into an executable.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TARGET_EXECUTABLE_H
#define MEGAGRAPH_TARGET_EXECUTABLE_H

#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Target/TargetBackend.h"

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

/// One graph input or output: its name, mgrt_dtype, static shape, and its
/// mgrt_tensor_role and role index (megagraph/ModelABI.h) for the driver.
struct TensorSignature {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> shape;
  int role = 0, index = -1;
};

/// A further entry point (pipeline stages: `gt.pipeline_entry = "s0.fwd"`).
struct EntrySignature {
  std::string name, symbol;
  std::vector<TensorSignature> inputs, outputs;
};

/// One mutable global of the model (mgrt_state_info): a parameter, an
/// optimizer moment or other state, the shape as stored, and for a
/// parameter held in a ZeRO-3 bucket the bucket's index in
/// ModelSignature::state and the parameter's first element in it.
struct StateSignature {
  TensorSignature tensor;
  int kind = 0;
  int bucket = -1;
  int64_t offset = 0;
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
  /// The sequence length of uneven context-parallel blocks (`seq` of the
  /// attentions' `gt.cp`; mgrt_plan::cp_seq), 0 for even blocks.
  int64_t cpSeq = 0;
  /// The module's mutable `ml_program.global`s, in module order
  /// (mgrt_model_info::state).
  std::vector<StateSignature> state;
};

/// Reads the signature of `@main` (names from `gt.name`). Emits an error
/// for dynamic shapes or unsupported element types.
mlir::FailureOr<ModelSignature> getModelSignature(mlir::ModuleOp module);

/// Lowers a module of gt/TOSA/linalg/ml_program ops to the LLVM dialect
/// with the backend's pipeline.
mlir::LogicalResult lowerToLLVMDialect(mlir::ModuleOp module,
                                       const TargetBackend &backend,
                                       const CompileOptions &options);

/// Translates an LLVM-dialect module to LLVM IR and optimizes it for the
/// host CPU.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module,
                                                llvm::LLVMContext &context,
                                                const CompileOptions &options);

/// Writes an object file for the host.
mlir::LogicalResult emitObjectFile(llvm::Module &module, llvm::StringRef path,
                                   std::string &error);

/// Adds the executable's entry point to a module lowered to the LLVM
/// dialect (lib/Target/Common/EntryTable.cpp): the tables of
/// megagraph/ModelABI.h as LLVM globals (tensor tables with roles, stage
/// entries, the plan, the mgrt_model_info `mgrt_model`), a wrapper per entry
/// (through the backend's staging call, if any) and `main()` calling
/// `mgrt_main`, or `mgrt_infer_main` for a model without a training step
/// (needsTrainingDriver).
mlir::LogicalResult addEntryTable(mlir::ModuleOp module,
                                  const ModelSignature &signature,
                                  llvm::StringRef modelName,
                                  const TargetBackend &backend);

/// Whether the executable runs the training driver (mgrt_main): the model
/// has a plan, pipeline stage entries or a `loss` output. Otherwise its
/// main() calls mgrt_infer_main and it links neither METIS, zlib nor MPI.
bool needsTrainingDriver(const ModelSignature &signature);

/// Links `objectPath` (with its entry table, addEntryTable) with the
/// backend's runtime, the runtime and its driver; `training`
/// (needsTrainingDriver) adds the training driver's libraries.
mlir::LogicalResult linkExecutable(llvm::StringRef objectPath,
                                   llvm::StringRef outputPath, bool training,
                                   const TargetBackend &backend,
                                   const CompileOptions &options,
                                   std::string &error);

} // namespace megagraph

#endif // MEGAGRAPH_TARGET_EXECUTABLE_H
