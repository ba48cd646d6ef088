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
} // namespace megagraph::gt

#define GET_ATTRDEF_CLASSES
#include "megagraph/Dialect/GT/GTAttrDefs.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTATTRS_H
