//===- DataParallel.h - The data-parallel grid's reduction axes -*- C++ -*-===//
//
// Part of MegaGraph. What gt-data-parallel and gt-zero-gather agree on: the
// grid @gt_dp holds every rank, and the gradients are summed (and the ZeRO
// shards spread) over the ranks that hold the same parameters. Its shape
// says which axes those are:
//
//   [n]            no pipeline: all n = dp x cp ranks;
//   [dp, pp]       a pipeline stage's dp replicas (axis 0);
//   [dp, pp, cp]   a pipeline stage's replicas and their cp ranks (axes 0
//                  and 2), dp x cp ranks sharing the stage's parameters.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_DATAPARALLEL_H
#define MEGAGRAPH_PASSES_DATAPARALLEL_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace megagraph {

/// The axes of `grid` (@gt_dp) over which gradients are summed and ZeRO
/// shards spread.
inline llvm::SmallVector<int16_t> dataParallelAxes(mlir::shard::GridOp grid) {
  if (grid.getRank() == 3)
    return {0, 2};
  return {0};
}

/// The number of ranks over those axes (the ZeRO shard count).
inline int64_t dataParallelShards(mlir::shard::GridOp grid) {
  int64_t n = 1;
  for (int16_t axis : dataParallelAxes(grid))
    n *= grid.getShape()[axis];
  return n;
}

/// The shape of @gt_dp for `dp` replicas (of the whole program, or with
/// `pp` > 1 of each stage) and `cp` context-parallel ranks per replica.
inline llvm::SmallVector<int64_t> dataParallelGridShape(int64_t dp, int64_t pp,
                                                        int64_t cp) {
  if (pp == 1)
    return {dp * cp};
  if (cp == 1)
    return {dp, pp};
  return {dp, pp, cp};
}

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_DATAPARALLEL_H
