//===- CpuCompiler.cpp - From gt/TOSA modules to CPU executables -*- C++ -*-//
//
// Part of MegaGraph. See CpuCompiler.h. The lowering is a fixed upstream
// pipeline around one MegaGraph pass (gt-decompose); gt.attention bufferizes
// into the runtime's fused kernel (GTBufferizableOpInterfaceImpl.cpp).
// Allocations go through `_mlir_memref_to_llvm_alloc/free`, which the runtime
// routes to its tracked allocator, so peak memory covers every buffer.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/CpuCompiler.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/ModelABI.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Pipelines/Pipelines.h"
#include "megagraph/Plan/ParallelPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// Symbol of the model function in the object file (C interface:
/// `_mlir_ciface_megagraph_model`; gt-export-entries renames @main).
constexpr const char *kModelSymbol = MGRT_MODEL_SYMBOL;

std::string dtypeOf(Type t) {
  if (t.isF32())
    return "MGRT_F32";
  if (t.isF64())
    return "MGRT_F64";
  if (t.isInteger(64))
    return "MGRT_I64";
  if (t.isInteger(32))
    return "MGRT_I32";
  if (t.isInteger(8))
    return "MGRT_I8";
  if (t.isInteger(1))
    return "MGRT_BOOL";
  return "";
}

} // namespace

FailureOr<ModelSignature> megagraph::getModelSignature(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("no func.func @main to compile"), failure();
  ModelSignature sig;
  auto describe = [&](Type type, StringAttr name, size_t index,
                      bool isInput) -> FailureOr<TensorSignature> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::string what =
        (isInput ? "input #" : "output #") + std::to_string(index);
    if (!tensor || !tensor.hasStaticShape())
      return main.emitError()
                 << what << " must be a statically shaped tensor, got " << type,
             failure();
    TensorSignature t;
    t.name = name ? name.str()
                  : (isInput ? "input" : "output") + std::to_string(index);
    t.dtype = dtypeOf(tensor.getElementType());
    if (t.dtype.empty())
      return main.emitError() << what << " has unsupported element type "
                              << tensor.getElementType(),
             failure();
    t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    t.role = mgrt_role_of_name(t.name.c_str(), &t.index);
    return t;
  };
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getArgAttrOfType<StringAttr>(i, "gt.name"), i, true);
    if (failed(t))
      return failure();
    sig.inputs.push_back(*t);
  }
  for (auto [i, type] : llvm::enumerate(main.getResultTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getResultAttrOfType<StringAttr>(i, "gt.name"), i, false);
    if (failed(t))
      return failure();
    sig.outputs.push_back(*t);
  }
  if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan"))
    sig.plan = fromAttr(plan);
  // Pipeline stage entries (gt-pipeline-train).
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>("gt.pipeline_entry");
    if (!entry)
      continue;
    EntrySignature e;
    e.name = entry.str();
    e.symbol = fn.getSymName().str();
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getArgAttrOfType<StringAttr>(i, "gt.name"), i, true);
      if (failed(t))
        return failure();
      e.inputs.push_back(*t);
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getResultAttrOfType<StringAttr>(i, "gt.name"), i, false);
      if (failed(t))
        return failure();
      e.outputs.push_back(*t);
    }
    sig.entries.push_back(std::move(e));
  }
  return sig;
}

LogicalResult megagraph::lowerToLLVMDialect(ModuleOp module,
                                            const CpuCompileOptions &options) {
  // The lower-cpu / lower-cuda pipeline (megagraph/Pipelines/Pipelines.h).
  PassManager pm(module.getContext());
  LowerPipelineOptions lower;
  lower.referenceAttention = options.referenceAttention;
  lower.emulateGpu = options.emulateGpuOnHost;
  lower.chip = options.cudaChip;
  lower.cudaPath = options.cudaPath;
  buildLowerPassPipeline(pm, lower, options.target == Target::Cuda);
  return pm.run(module);
}

std::unique_ptr<llvm::Module>
megagraph::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                             const CpuCompileOptions &options) {
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

LogicalResult megagraph::writeEntryShim(const ModelSignature &sig,
                                        llvm::StringRef modelName,
                                        llvm::StringRef path,
                                        std::string &error, Target target) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return failure();
  }
  const bool cuda = target == Target::Cuda;
  struct DeviceEntry {
    std::string name;
    size_t numIn, numOut;
    std::string ins, outs;
  };
  std::vector<DeviceEntry> deviceEntries;
  os << "// Generated by megagraph-compile: the model's entry point.\n"
     << "#include \"megagraph/Runtime.h\"\n";
  if (cuda)
    os << "#include \"megagraph/RuntimeCuda.h\"\n";
  os << "\n";
  // `name(d)` calls `symbol` with the n descriptors of d; with --target
  // cuda through mgrt_cuda_run_entry, which stages host tensors on the
  // device (the tables named `ins` / `outs` are defined below).
  auto wrapper = [&](StringRef name, StringRef symbol, size_t numIn,
                     size_t numOut, StringRef ins, StringRef outs) {
    size_t m = numIn + numOut;
    os << "extern \"C\" void _mlir_ciface_" << symbol << "(";
    for (size_t i = 0; i < m; ++i)
      os << (i ? ", " : "") << "void *";
    os << ");\nstatic void " << name << (cuda ? "_device" : "")
       << "(void **d) {\n  _mlir_ciface_" << symbol << "(";
    for (size_t i = 0; i < m; ++i)
      os << (i ? ", " : "") << "d[" << i << "]";
    os << ");\n}\n";
    if (cuda)
      os << "static void " << name << "(void **d);\n";
    os << "\n";
    if (cuda)
      deviceEntries.push_back(
          {name.str(), numIn, numOut, ins.str(), outs.str()});
  };
  wrapper("entry", kModelSymbol, sig.inputs.size(), sig.outputs.size(),
          "inputs", "outputs");
  auto table = [&](const char *name, const std::vector<TensorSignature> &ts) {
    os << "static const mgrt_tensor_info " << name << "[] = {\n";
    for (const TensorSignature &t : ts) {
      os << "  {\"";
      os.write_escaped(t.name);
      os << "\", " << t.dtype << ", " << t.shape.size() << ", {";
      for (size_t i = 0; i < t.shape.size(); ++i)
        os << (i ? ", " : "") << t.shape[i];
      os << "}, " << t.role << ", " << t.index << "},\n";
    }
    if (ts.empty())
      os << "  {\"\", MGRT_F32, 0, {0}},\n";
    os << "};\n";
  };
  table("inputs", sig.inputs);
  table("outputs", sig.outputs);
  // Pipeline stage entries: a wrapper and tables per entry.
  for (auto [k, e] : llvm::enumerate(sig.entries)) {
    std::string name = "entry" + std::to_string(k);
    wrapper(name, e.symbol, e.inputs.size(), e.outputs.size(), name + "_inputs",
            name + "_outputs");
    table((name + "_inputs").c_str(), e.inputs);
    table((name + "_outputs").c_str(), e.outputs);
  }
  // --target cuda: each entry stages its tensors on the device.
  for (const DeviceEntry &e : deviceEntries)
    os << "\nstatic void " << e.name << "(void **d) {\n  mgrt_cuda_run_entry("
       << e.name << "_device, d, " << e.numIn << ", " << e.ins << ", "
       << e.numOut << ", " << e.outs << ");\n}\n";
  if (!sig.entries.empty()) {
    os << "\nstatic const mgrt_entry_info entries[] = {\n";
    for (auto [k, e] : llvm::enumerate(sig.entries)) {
      os << "  {\"";
      os.write_escaped(e.name);
      os << "\", " << e.inputs.size() << ", entry" << k << "_inputs, "
         << e.outputs.size() << ", entry" << k << "_outputs, entry" << k
         << "},\n";
    }
    os << "};\n";
  }
  if (sig.plan) {
    const ParallelPlan &p = *sig.plan;
    const char *mode = p.cpMode == "ring"      ? "MGRT_CP_RING"
                       : p.cpMode == "ulysses" ? "MGRT_CP_ULYSSES"
                                               : "MGRT_CP_ALLGATHER";
    os << "\nstatic const mgrt_plan plan = {" << p.dp << ", " << p.pp << ", "
       << p.cp << ", " << p.microBatches << ", " << p.zero << ", "
       << (p.recompute ? 1 : 0) << ", " << mode << ", \"";
    os.write_escaped(toString(p));
    os << "\"};\n";
  }
  os << "\nstatic const mgrt_model_info model = {\"";
  os.write_escaped(modelName);
  os << "\", " << sig.inputs.size() << ", inputs, " << sig.outputs.size()
     << ", outputs, entry, " << (sig.plan ? "&plan" : "NULL");
  if (!sig.entries.empty())
    os << ", " << sig.entries.size() << ", entries";
  os << "};\n\n"
     << "int main(int argc, char **argv) { return "
     << (needsTrainingDriver(sig) ? "mgrt_main" : "mgrt_infer_main")
     << "(argc, argv, &model); }\n";
  return success();
}

bool megagraph::needsTrainingDriver(const ModelSignature &signature) {
  return signature.plan || !signature.entries.empty() ||
         llvm::any_of(signature.outputs, [](const TensorSignature &t) {
           return t.role == MGRT_ROLE_LOSS;
         });
}

LogicalResult megagraph::linkExecutable(llvm::StringRef objectPath,
                                        llvm::StringRef shimPath,
                                        llvm::StringRef outputPath,
                                        bool training,
                                        const CpuCompileOptions &options,
                                        std::string &error) {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(options.cxx);
  if (!cxx) {
    error = "cannot find the C++ compiler '" + options.cxx +
            "' to link the executable (install g++)";
    return failure();
  }
  std::string driverLib = options.runtimeLibDir + "/libmegagraph_driver.a";
  std::string lib = options.runtimeLibDir + "/libmegagraph_rt.a";
  for (const std::string &path : {driverLib, lib}) {
    if (!llvm::sys::fs::exists(path)) {
      error = "runtime library not found at " + path +
              "; build the megagraph_rt and megagraph_driver targets or pass "
              "--runtime-dir";
      return failure();
    }
  }
  // The driver archive first: an inference shim calls mgrt_infer_main,
  // which pulls only the driver's command line, so the data layer (METIS,
  // zlib) and the communication runtime (MPI) stay out of the executable.
  std::vector<std::string> args = {*cxx,
                                   "-O2",
                                   "-I" + options.runtimeIncludeDir,
                                   shimPath.str(),
                                   objectPath.str(),
                                   driverLib,
                                   lib,
                                   "-lopenblas",
                                   "-lpthread",
                                   "-lm",
                                   "-o",
                                   outputPath.str()};
  // Further libraries, one per line, written next to the archives: with
  // --target cuda first the CUDA runtime's (runtime/cuda/CMakeLists.txt);
  // for training the data layer's (runtime/CMakeLists.txt) and MPI
  // (runtime/comm/CMakeLists.txt).
  auto addLinkFile = [&](const std::string &path) {
    auto extra = llvm::MemoryBuffer::getFile(path);
    if (!extra)
      return false;
    SmallVector<StringRef> lines;
    (*extra)->getBuffer().split(lines, '\n', -1, false);
    auto at = args.end() - 2; // before "-o OUT"
    for (StringRef line : lines)
      if (!line.trim().empty())
        at = args.insert(at, line.trim().str()) + 1;
    return true;
  };
  if (options.target == Target::Cuda &&
      !addLinkFile(options.runtimeLibDir + "/megagraph_cuda.link")) {
    error = "--target cuda needs the CUDA runtime (megagraph_cuda.link in " +
            options.runtimeLibDir +
            "); build MegaGraph with CUDA (MEGAGRAPH_ENABLE_CUDA=ON, nvcc "
            "found) or pass --runtime-dir";
    return failure();
  }
  if (training) {
    addLinkFile(options.runtimeLibDir + "/megagraph_driver.link");
    addLinkFile(options.runtimeLibDir + "/megagraph_rt.link");
  }
  SmallVector<StringRef> refs(args.begin(), args.end());
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cxx, refs, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "linking failed (" + options.cxx + " exited with " +
            std::to_string(rc) + ")" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
