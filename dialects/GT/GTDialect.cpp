//===- GTDialect.cpp - The gt dialect ---------------------------*- C++ -*-===//
//
// Part of MegaGraph. Dialect registration.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTOps.h"

using namespace mlir;
using namespace megagraph::gt;

#include "megagraph/Dialect/GT/GTDialect.cpp.inc"

void GTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "megagraph/Dialect/GT/GTOps.cpp.inc"
      >();
  registerAttributes();
}
