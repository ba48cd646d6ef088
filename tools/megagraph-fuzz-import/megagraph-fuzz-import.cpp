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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context per input: a shared one would keep every input's
  // attributes and types interned, growing without bound.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  megagraph::loadOnnxImportDialects(context);
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
