//===- GTAttrs.h - gt dialect attributes ------------------------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTATTRS_H
#define MEGAGRAPH_DIALECT_GT_GTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

namespace megagraph::gt {
/// Parses `[i, j, ...]` (possibly empty) for attribute parameters.
mlir::FailureOr<llvm::SmallVector<int64_t>>
parseI64List(mlir::AsmParser &parser);
/// Prints `[i, j, ...]`.
void printI64List(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
/// Parses `["a", "b", ...]` (possibly empty).
mlir::FailureOr<llvm::SmallVector<mlir::StringAttr>>
parseStringList(mlir::AsmParser &parser);
/// Prints `["a", "b", ...]`.
void printStringList(mlir::AsmPrinter &printer,
                     llvm::ArrayRef<mlir::StringAttr> values);
/// Parses `[@a, @b, ...]` (possibly empty).
mlir::FailureOr<llvm::SmallVector<mlir::FlatSymbolRefAttr>>
parseSymbolList(mlir::AsmParser &parser);
/// Prints `[@a, @b, ...]`.
void printSymbolList(mlir::AsmPrinter &printer,
                     llvm::ArrayRef<mlir::FlatSymbolRefAttr> values);
/// Parses `allgather`, `ring` or `ulysses` into its mgrt_cp_mode.
mlir::FailureOr<int64_t> parseCpMode(mlir::AsmParser &parser);
/// Prints an mgrt_cp_mode as its keyword.
void printCpMode(mlir::AsmPrinter &printer, int64_t mode);
/// The keyword of an mgrt_cp_mode; empty when `mode` is none.
llvm::StringRef stringifyCpMode(int64_t mode);
} // namespace megagraph::gt

#define GET_ATTRDEF_CLASSES
#include "megagraph/Dialect/GT/GTAttrDefs.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTATTRS_H
