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

#define GET_ATTRDEF_CLASSES
#include "megagraph/Dialect/GT/GTAttrDefs.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTATTRS_H
