//===- GTOps.h - gt dialect operations --------------------------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTOPS_H
#define MEGAGRAPH_DIALECT_GT_GTOPS_H

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTInterfaces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "megagraph/Dialect/GT/GTOps.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTOPS_H
