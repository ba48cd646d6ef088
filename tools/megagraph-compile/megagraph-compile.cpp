//===- megagraph-compile.cpp - The MegaGraph compiler driver ----*- C++ -*-===//
//
// Part of MegaGraph. Takes a model exported from PyTorch as ONNX (binary
// `.onnx`, or ONNX text `.onnxtxt`) or a `.mlir` module and runs the
// pipeline up to the stage named by --emit:
//
//   mlir  the imported module (TOSA + linalg.softmax + gt + ml_program)
//   gt    after gt-raise: attention, biases, embeddings as gt ops
//
// Later stages (plan, llvm, obj, exe) are reported as not yet available.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Import/OnnxImporter.h"
#include "megagraph/InitAllMegaGraph.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace llvm;

namespace {

enum class Emit { Mlir, Gt, Plan, Llvm, Obj, Exe };

cl::OptionCategory category("megagraph-compile options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<model.onnx | model.onnxtxt | "
                                        "model.mlir>"),
                               cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("Stage to stop at and print"), cl::init(Emit::Gt),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "the imported module"),
               clEnumValN(Emit::Gt, "gt", "after raising to the gt dialect "
                                          "(default)"),
               clEnumValN(Emit::Plan, "plan", "the parallel plan (planned)"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR (planned)"),
               clEnumValN(Emit::Obj, "obj", "an object file (planned)"),
               clEnumValN(Emit::Exe, "exe", "an executable (planned)")),
    cl::cat(category));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input with dynamic dims, "
             "NAME=D0xD1x... (repeatable)"),
    cl::value_desc("NAME=D0xD1x..."), cl::cat(category));
cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX ops and exit"),
                      cl::cat(category));

/// Reads the whole input, with a clear error for a missing file.
std::unique_ptr<MemoryBuffer> readInput(StringRef path) {
  std::string error;
  std::unique_ptr<MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer)
    errs() << "megagraph-compile: error: cannot read '" << path
           << "': " << error << "\n";
  return buffer;
}

int run(MLIRContext &context) {
  std::unique_ptr<MemoryBuffer> buffer = readInput(inputFile);
  if (!buffer)
    return 1;
  StringRef path = inputFile;
  OwningOpRef<ModuleOp> module;
  if (path.ends_with(".mlir")) {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
    context.loadAllAvailableDialects();
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    megagraph::OnnxImportOptions options;
    options.fileName = path == "-" ? "<stdin>" : path.str();
    for (const std::string &spec : inputShapes) {
      std::string error;
      if (failed(megagraph::parseInputShape(spec, options, error))) {
        errs() << "megagraph-compile: error: " << error << "\n";
        return 1;
      }
    }
    if (path.ends_with(".onnxtxt") || path.ends_with(".onnxtext"))
      module = megagraph::importOnnxText(context, buffer->getBuffer(), options);
    else
      module =
          megagraph::importOnnxModel(context, buffer->getBuffer(), options);
  }
  if (!module)
    return 1;

  if (emit == Emit::Gt) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    pm.addPass(megagraph::createGTRaise());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (failed(pm.run(*module)))
      return 1;
  } else if (emit != Emit::Mlir) {
    static const char *names[] = {"mlir", "gt", "plan", "llvm", "obj", "exe"};
    errs() << "megagraph-compile: error: --emit="
           << names[static_cast<int>(emit.getValue())] << ": this stage is not implemented yet (available: mlir, gt)\n";
    return 2;
  }

  std::string error;
  std::unique_ptr<ToolOutputFile> output = openOutputFile(outputFile, &error);
  if (!output) {
    errs() << "megagraph-compile: error: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "megagraph-compile " MEGAGRAPH_VERSION " (MegaGraph, LLVM/MLIR "
       << LLVM_VERSION_STRING << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "MegaGraph: compile a Graph Transformer exported from PyTorch (ONNX) "
      "into a parallel training program\n\n"
      "  megagraph-compile model.onnx --emit=gt [--input-shape x=2x16x8]\n");

  if (listOps) {
    for (StringRef op : megagraph::getSupportedOnnxOps())
      outs() << op << "\n";
    return 0;
  }
  if (inputFile.empty()) {
    errs() << "megagraph-compile: error: no input file (see --help)\n";
    return 1;
  }

  DialectRegistry registry;
  megagraph::registerAllDialects(registry);
  MLIRContext context(registry);
  return run(context);
}
