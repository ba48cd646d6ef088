//===- GTBufferization.h - Bufferization of gt ops --------------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTBUFFERIZATION_H
#define MEGAGRAPH_DIALECT_GT_GTBUFFERIZATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace megagraph::gt {

/// Attaches BufferizableOpInterface to the gt ops that bufferize into
/// runtime kernel calls (gt.attention).
void registerBufferizableOpInterfaceExternalModels(
    mlir::DialectRegistry &registry);

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTBUFFERIZATION_H
