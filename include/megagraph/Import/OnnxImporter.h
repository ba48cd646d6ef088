//===- OnnxImporter.h - ONNX to MLIR import ---------------------*- C++ -*-===//
//
// Part of MegaGraph. Reads an ONNX model (binary protobuf, or the ONNX text
// format) and builds a module with one `func.func @main`: graph inputs are
// its arguments, graph outputs its results, float initializers become
// trainable `ml_program.global` parameters, and every node maps to TOSA ops
// (plus `linalg.softmax` and gt ops where ONNX has a fused op). Shape
// arithmetic is evaluated at import time, so the module is fully static.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_IMPORT_ONNXIMPORTER_H
#define MEGAGRAPH_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace megagraph {

/// Options of the ONNX import.
struct OnnxImportOptions {
  /// Static shapes for graph inputs, overriding symbolic (dynamic) dims.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Name used for the source file in locations and diagnostics; its
  /// directory is where external tensor data is looked up.
  std::string fileName = "<onnx>";
  /// Directory of external tensor data, when not the model file's.
  std::string externalDataDir;
  /// Float initializers to import as constants / as trainable parameters,
  /// whatever the importer would decide (whole-name regular expressions;
  /// --trainable wins).
  std::vector<std::string> freezePatterns, trainablePatterns;
  /// Train a float initializer that several nodes use as one parameter.
  /// By default each consuming node gets its own copy: the TorchScript
  /// exporter stores equal parameters (LayerNorm weights of ones, zero
  /// biases) as one initializer, and training them as one diverges from the
  /// PyTorch module.
  bool keepTiedInitializers = false;
};

/// Checks a --freeze / --trainable regular expression; returns an error
/// message when it is malformed.
llvm::LogicalResult checkInitializerPattern(llvm::StringRef flag,
                                            llvm::StringRef pattern,
                                            std::string &error);

/// Parses `--input-shape` values of the form `NAME=D0xD1x...` into `options`.
/// Returns an error message on malformed input.
llvm::LogicalResult parseInputShape(llvm::StringRef spec,
                                    OnnxImportOptions &options,
                                    std::string &error);

/// Imports a binary ONNX model. Diagnostics go to the context's handler; on
/// failure returns a null module.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext &context, llvm::StringRef bytes,
                const OnnxImportOptions &options);

/// Imports a model written in the ONNX text format (`<ir_version: 8, ...>
/// graph (...) => (...) { ... }`), used by tests.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxText(mlir::MLIRContext &context, llvm::StringRef text,
               const OnnxImportOptions &options);

/// Loads the dialects the importer produces into `context`.
void loadOnnxImportDialects(mlir::MLIRContext &context);

/// The ONNX op types the importer supports (sorted), for --help and docs.
llvm::SmallVector<llvm::StringRef> getSupportedOnnxOps();

} // namespace megagraph

#endif // MEGAGRAPH_IMPORT_ONNXIMPORTER_H
