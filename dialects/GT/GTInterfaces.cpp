//===- GTInterfaces.cpp - MegaGraph op interfaces ---------------*- C++ -*-===//
//
// Part of MegaGraph. Generated interface definitions and the size helpers
// shared by the cost rules.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTInterfaces.h"

using namespace mlir;

namespace megagraph::gt {

#include "megagraph/Dialect/GT/GTInterfaces.cpp.inc"

int64_t getNumElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return kUnknownCost;
  return shaped.getNumElements();
}

int64_t getTypeBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return kUnknownCost;
  Type elem = shaped.getElementType();
  if (!elem.isIntOrFloat())
    return kUnknownCost;
  // i1 masks are stored as bytes.
  int64_t elemBytes = std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
  return shaped.getNumElements() * elemBytes;
}

int64_t addCosts(int64_t a, int64_t b) {
  if (a == kUnknownCost || b == kUnknownCost)
    return kUnknownCost;
  return a + b;
}

namespace detail {

int64_t defaultFlops(Operation *op) {
  int64_t flops = 0;
  for (Type type : op->getResultTypes())
    flops = addCosts(flops, getNumElements(type));
  return flops;
}

int64_t defaultBytesMoved(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getOperandTypes())
    bytes = addCosts(bytes, getTypeBytes(type));
  for (Type type : op->getResultTypes())
    bytes = addCosts(bytes, getTypeBytes(type));
  return bytes;
}

int64_t defaultActivationBytes(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getOperandTypes()) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (shaped && isa<FloatType>(shaped.getElementType()))
      bytes = addCosts(bytes, getTypeBytes(type));
  }
  return bytes;
}

} // namespace detail
} // namespace megagraph::gt
