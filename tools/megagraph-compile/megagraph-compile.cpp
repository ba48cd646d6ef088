//===- megagraph-compile.cpp - The MegaGraph compiler driver ----*- C++ -*-===//
//
// Part of MegaGraph. Takes a model exported from PyTorch as ONNX (binary
// `.onnx`, or ONNX text `.onnxtxt`) or a `.mlir` module and runs the
// pipeline up to the stage named by --emit:
//
//   mlir  the imported module (TOSA + linalg.softmax + gt + ml_program)
//   gt    after gt-raise: attention, biases, embeddings as gt ops
//
// Later stages (plan, llvm, obj, exe) are reported as not yet available
// (exit code 2). Errors are one line each: `FILE:LINE:COL: error: ...` for
// problems of the model (node errors name the node, op type and opset), and
// `megagraph-compile: error: ...` for problems of the command line; the exit
// code is 1.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Import/OnnxImporter.h"
#include "megagraph/InitAllMegaGraph.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
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
               clEnumValN(Emit::Gt, "gt",
                          "after raising to the gt dialect (default)"),
               clEnumValN(Emit::Plan, "plan", "the parallel plan (planned)"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR (planned)"),
               clEnumValN(Emit::Obj, "obj", "an object file (planned)"),
               clEnumValN(Emit::Exe, "exe", "an executable (planned)")),
    cl::cat(category));
cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Static shape of a graph input with dynamic dims, "
                         "NAME=D0xD1x... (repeatable)"),
                cl::value_desc("NAME=D0xD1x..."), cl::cat(category));
cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX ops and exit"),
                      cl::cat(category));

/// Prints a command-line level error (no file involved).
int toolError(const Twine &message, int exitCode = 1) {
  errs() << "megagraph-compile: error: " << message << "\n";
  return exitCode;
}

/// Prints diagnostics as `FILE:LINE:COL: error: MESSAGE`, one line each.
/// Locations without a file (node names, unknown) use the input file at
/// 0:0, so every diagnostic of an ONNX import has the same form.
class OneLineDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  OneLineDiagnosticHandler(MLIRContext *context, std::string fallbackFile)
      : ScopedDiagnosticHandler(context),
        fallbackFile(std::move(fallbackFile)) {
    setHandler([this](Diagnostic &diag) {
      print(diag);
      for (Diagnostic &note : diag.getNotes())
        print(note);
      return success();
    });
  }

private:
  void print(Diagnostic &diag) {
    std::string file = fallbackFile;
    unsigned line = 0, column = 0;
    diag.getLocation()->walk([&](Location loc) {
      if (auto flc = dyn_cast<FileLineColRange>(loc)) {
        file = flc.getFilename().str();
        line = flc.getStartLine();
        column = flc.getStartColumn();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    const char *severity = "error";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Note:
      severity = "note";
      break;
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    case DiagnosticSeverity::Error:
      break;
    }
    errs() << file << ":" << line << ":" << column << ": " << severity << ": "
           << diag.str() << "\n";
  }

  std::string fallbackFile;
};

int run(MLIRContext &context) {
  StringRef path = inputFile;
  std::string displayName = path == "-" ? "<stdin>" : path.str();
  bool isMlir = path.ends_with(".mlir");
  if (isMlir && !inputShapes.empty())
    return toolError("--input-shape applies to ONNX models only, not to '" +
                     path + "'");
  // Parse the flags before reading anything, so that a typo is reported
  // as such.
  megagraph::OnnxImportOptions options;
  options.fileName = displayName;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(megagraph::parseInputShape(spec, options, error)))
      return toolError(error);
  }

  std::string error;
  std::unique_ptr<MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer)
    return toolError(error); // "cannot open input file 'X': REASON"

  OwningOpRef<ModuleOp> module;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> mlirDiagnostics;
  std::unique_ptr<OneLineDiagnosticHandler> onnxDiagnostics;
  if (isMlir) {
    sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
    mlirDiagnostics =
        std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context);
    context.loadAllAvailableDialects();
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    onnxDiagnostics =
        std::make_unique<OneLineDiagnosticHandler>(&context, displayName);
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
  }

  std::unique_ptr<ToolOutputFile> output = openOutputFile(outputFile, &error);
  if (!output)
    return toolError(error);
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
  // --help lists this tool's options only; the hundreds of LLVM/MLIR ones
  // (backends, --mlir-print-ir-after-all, --mlir-timing, ...) still work and
  // are listed by --help-hidden.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    StringRef name = entry.first;
    if (!llvm::is_contained(option->Categories, &category) && name != "help" &&
        name != "help-hidden" && name != "version" &&
        option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
  cl::ParseCommandLineOptions(
      argc, argv,
      "MegaGraph: compile a Graph Transformer exported from PyTorch (ONNX) "
      "into a parallel training program\n\n"
      "  megagraph-compile model.onnx --emit=gt [--input-shape x=2x16x8]\n\n"
      "  MLIR debugging flags (--mlir-print-ir-after-all, --mlir-timing, ...)\n"
      "  are accepted too; --help-hidden lists them.\n");

  if (listOps) {
    for (StringRef op : megagraph::getSupportedOnnxOps())
      outs() << op << "\n";
    return 0;
  }
  if (inputFile.empty())
    return toolError("no input file; usage: megagraph-compile "
                     "model.onnx|model.onnxtxt|model.mlir --emit=mlir|gt "
                     "[-o out] [--input-shape NAME=D0xD1x...] (see --help)");
  if (emit != Emit::Mlir && emit != Emit::Gt) {
    static const char *names[] = {"mlir", "gt", "plan", "llvm", "obj", "exe"};
    return toolError(Twine("--emit=") +
                         names[static_cast<int>(emit.getValue())] +
                         " is not implemented yet; available stages: "
                         "--emit=mlir, --emit=gt",
                     /*exitCode=*/2);
  }

  DialectRegistry registry;
  megagraph::registerAllDialects(registry);
  MLIRContext context(registry);
  return run(context);
}
