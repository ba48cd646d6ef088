//===- GTNames.h - Symbol and attribute names of the gt passes --*- C++ -*-===//
//
// Part of MegaGraph. The names that several passes spell: the grids the
// parallelism passes create and the discardable attributes one pass leaves
// for another. Declared once here, beside the dialect whose prefix they
// carry.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTNAMES_H
#define MEGAGRAPH_DIALECT_GT_GTNAMES_H

#include "llvm/ADT/StringRef.h"

namespace megagraph::gt {

/// The grid gt-data-parallel creates and gt-zero-gather gathers over:
/// shape [dp x cp], every rank whose gradients are summed.
constexpr llvm::StringLiteral kDataParallelGrid = "gt_dp";
/// The grid of gt-context-parallel: shape [dp, cp].
constexpr llvm::StringLiteral kContextParallelGrid = "gt_cp";
/// Unit attribute that gt-context-parallel puts on @main; gt-autodiff then
/// seeds the loss gradient with the rank's share of the labelled rows.
constexpr llvm::StringLiteral kContextParallelSeedAttr = "gt.cp_seed";

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTNAMES_H
