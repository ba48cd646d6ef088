//===- ObjectFile.cpp - From a lowered module to an object file -*- C++ -*-===//
//
// Part of MegaGraph. See megagraph/Target/Executable.h. The backend's
// lowering pipeline, then LLVM IR optimized for the host and a host object
// file (a --target cuda module holds its kernels as PTX in the same
// object).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/Executable.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace megagraph;

LogicalResult megagraph::lowerToLLVMDialect(ModuleOp module,
                                            const TargetBackend &backend,
                                            const CompileOptions &options) {
  PassManager pm(module.getContext());
  // The tools' --mlir-timing and --mlir-print-ir-* flags, when registered.
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  backend.buildLowerPipeline(pm, options);
  return pm.run(module);
}

std::unique_ptr<llvm::Module>
megagraph::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                             const CompileOptions &options) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "megagraph_model");
  if (!llvmModule)
    return nullptr;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  llvmModule->setTargetTriple(llvm::Triple(triple));
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target) {
    module.emitError() << "no LLVM target for " << triple << ": " << error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule->setDataLayout(machine->createDataLayout());
  auto optimize = makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                            machine.get());
  if (llvm::Error err = optimize(llvmModule.get())) {
    module.emitError() << "LLVM optimization failed: "
                       << llvm::toString(std::move(err));
    return nullptr;
  }
  return llvmModule;
}

LogicalResult megagraph::emitObjectFile(llvm::Module &module,
                                        llvm::StringRef path,
                                        std::string &error) {
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(module.getTargetTriple(), error);
  if (!target)
    return failure();
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      module.getTargetTriple(), llvm::sys::getHostCPUName(),
      features.getString(), llvm::TargetOptions(), llvm::Reloc::PIC_));
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  pm.run(module);
  out.keep();
  return success();
}
