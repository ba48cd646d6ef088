//===- GTGradients.h - Gradient rules of upstream ops -----------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTGRADIENTS_H
#define MEGAGRAPH_DIALECT_GT_GTGRADIENTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace megagraph::gt {

/// Attaches GradientOpInterface to the TOSA ops the importer produces
/// (add, sub, mul, reshape, transpose).
void registerGradientExternalModels(mlir::DialectRegistry &registry);

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTGRADIENTS_H
