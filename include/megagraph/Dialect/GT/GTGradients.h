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

/// Attaches GradientOpInterface to the upstream ops the importer and
/// gt-raise produce: TOSA (rules, or NoGradient for boolean, integer and
/// piecewise-constant results), linalg.softmax, linalg.generic (the
/// importer's elementwise and row-scatter forms) and tensor.empty.
void registerGradientExternalModels(mlir::DialectRegistry &registry);

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTGRADIENTS_H
