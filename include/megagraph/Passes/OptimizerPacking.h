//===- OptimizerPacking.h - Which parameters update together ---*- C++ -*-===//
//
// Part of MegaGraph. What gt-optimizer (its `pack-below` default) and the
// plan search's cost model (the update's transient memory) agree on.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_OPTIMIZERPACKING_H
#define MEGAGRAPH_PASSES_OPTIMIZERPACKING_H

#include <cstdint>

namespace megagraph {

/// gt-optimizer updates the parameters of fewer elements than this in
/// groups of up to this many elements, each group as one flat tensor (its
/// weights, gradients and states concatenated, the new values sliced back).
inline constexpr int64_t kOptimizerPackElements = 65536;

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_OPTIMIZERPACKING_H
