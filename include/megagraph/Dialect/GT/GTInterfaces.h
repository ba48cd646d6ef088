//===- GTInterfaces.h - MegaGraph op interfaces -----------------*- C++ -*-===//
//
// Part of MegaGraph. Declares GradientOpInterface and CostOpInterface and the
// shared helpers behind their default implementations.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTINTERFACES_H
#define MEGAGRAPH_DIALECT_GT_GTINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace megagraph::gt {

/// Returned by cost queries when a shape is not static.
constexpr int64_t kUnknownCost = -1;

/// Bytes of a statically shaped tensor or memref type, kUnknownCost otherwise.
int64_t getTypeBytes(mlir::Type type);

/// Number of elements of a statically shaped type, kUnknownCost otherwise.
int64_t getNumElements(mlir::Type type);

/// Adds cost terms, propagating kUnknownCost.
int64_t addCosts(int64_t a, int64_t b);

namespace detail {
/// One FLOP per result element: the default for elementwise-like ops.
int64_t defaultFlops(mlir::Operation *op);
/// Sum of operand and result bytes.
int64_t defaultBytesMoved(mlir::Operation *op);
/// Bytes of the floating-point operands (what a generic backward reads).
int64_t defaultActivationBytes(mlir::Operation *op);
} // namespace detail

} // namespace megagraph::gt

#include "megagraph/Dialect/GT/GTInterfaces.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTINTERFACES_H
