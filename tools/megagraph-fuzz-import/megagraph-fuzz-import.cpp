//===- megagraph-fuzz-import.cpp - libFuzzer target over the importer -----===//
//
// Part of MegaGraph. Feeds arbitrary bytes to the binary ONNX importer
// (megagraph::importOnnxModel), as a model file given to megagraph-compile:
// whatever the bytes, the importer must return a module or fail with a
// diagnostic, never crash, hang or trip a sanitizer. Built with
// -DMEGAGRAPH_FUZZ=ON and clang (see README.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#include "megagraph/Import/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace {

/// Inputs one context serves before it is replaced: a context keeps every
/// attribute and type it interned, so a long run starts a fresh one now
/// and then; in between, inputs share its loaded dialects, which are most
/// of the cost of a small input.
constexpr int kInputsPerContext = 1000;

mlir::MLIRContext &contextForNextInput() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static int served = 0;
  if (!context || served++ == kInputsPerContext) {
    context.reset(); // the old one first: two at once double the peak
    context = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
    context->printOpOnDiagnostic(false);
    megagraph::loadOnnxImportDialects(*context);
    served = 1;
  }
  return *context;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = contextForNextInput();
  mlir::ScopedDiagnosticHandler ignore(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  megagraph::OnnxImportOptions options;
  // A name in angle brackets, as for standard input: the model has no
  // directory, so external data is refused rather than read from disk.
  options.fileName = "<fuzz>";
  mlir::OwningOpRef<mlir::ModuleOp> module = megagraph::importOnnxModel(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size),
      options);
  return 0;
}
