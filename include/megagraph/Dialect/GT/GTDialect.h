//===- GTDialect.h - The gt dialect -----------------------------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTDIALECT_H
#define MEGAGRAPH_DIALECT_GT_GTDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "megagraph/Dialect/GT/GTDialect.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTDIALECT_H
