//===- InitAllMegaGraph.h - Registration shared by the tools ----*- C++ -*-===//
//
// Part of MegaGraph. The one place that says which dialects, passes and
// external interface models the MegaGraph tools load: megagraph-opt and
// megagraph-compile both call these, so a pipeline that works in one works
// in the other.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_INITALLMEGAGRAPH_H
#define MEGAGRAPH_INITALLMEGAGRAPH_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace megagraph {

/// Inserts the gt dialect, the upstream dialects the pipeline produces or
/// parses, and their external models (sharding, bufferization, inlining).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every MegaGraph pass and pass pipeline (import-to-gt, train,
/// lower-cpu, lower-cuda) and the upstream passes they use.
void registerAllPasses();

} // namespace megagraph

#endif // MEGAGRAPH_INITALLMEGAGRAPH_H
