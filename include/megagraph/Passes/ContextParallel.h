//===- ContextParallel.h - Context parallelism helpers ----------*- C++ -*-===//
//
// Part of MegaGraph. What gt-autodiff needs from gt-context-parallel: with
// the node dimension sharded over cp ranks, the loss of rank r is the mean
// over its own n_r labelled rows, but the attention backward sums every
// rank's output gradient into each rank's keys and values. The ranks must
// therefore seed their loss gradients with their share n_r / N of the
// global count N (over dp x cp), so that the gradients summed over all
// ranks are those of the global masked mean (gt-data-parallel then sums
// them without weighting, its `presummed` option).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_CONTEXTPARALLEL_H
#define MEGAGRAPH_PASSES_CONTEXTPARALLEL_H

#include "megagraph/Dialect/GT/GTNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace megagraph {

using gt::kContextParallelGrid;
using gt::kContextParallelSeedAttr;

/// The loss-gradient seed of this rank, n_r / max(1, N) of type `lossType`
/// (a 0-d float tensor), where n_r counts the true entries of `mask` and N
/// is their sum over all ranks of `grid` (a shard.all_reduce over
/// `gridAxes`): @gt_cp's two axes under context parallelism, the grid of
/// gt.row_shard_grid when mop or gp split a full graph's nodes.
mlir::Value
buildContextParallelLossSeed(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value mask, mlir::Type lossType,
                             llvm::StringRef grid = kContextParallelGrid,
                             llvm::ArrayRef<int16_t> gridAxes = {0, 1});

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_CONTEXTPARALLEL_H
