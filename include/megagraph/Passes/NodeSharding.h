//===- NodeSharding.h - Splitting one graph's nodes over ranks --*- C++ -*-===//
//
// Part of MegaGraph. What gt-mixture-parallel (mop) and gt-partition-parallel
// (gp) share: both split the N nodes of a full-graph model (B = 1, S = N,
// node features `x [N, F]`) over P ranks, on the forward @main before
// gt-autodiff, and differ only in where the sparse aggregations run.
//
// Every value that depends on the node features carries a node dimension
// (found by propagation from x, dimension 0). It gets one of two layouts:
//   rows     N / P rows of every column (the node-parallel layout)
//   columns  all N rows of F' / P columns, F' the feature count rounded up
//            to a multiple of P (zero columns pad it; they never mix with
//            the real ones and are cut off again)
// Values that do not depend on the features (the graph's CSR, degrees,
// normalization, parameters) stay whole on every rank ("replicated").
// Each op gets the layout it needs: the dense transforms (gt.linear,
// tosa.matmul), reductions, concats, slices and the results take rows;
// gt.spmm takes `aggregation`'s layout (columns for mop: no communication,
// the whole CSR is on every rank; rows for gp: the op gets `#gt.halo` and
// its kernel exchanges the boundary rows); elementwise ops take their
// operands' layout. A value that reaches an op in the other layout is
// switched with one shard.all_to_all (rows <-> columns), a replicated one
// is cut with shard.all_slice (local). The loss of rank r is the mean over
// its rows, seeded with its share of the global labelled count
// (`gt.row_shard_grid`, read by gt-autodiff), and gt-data-parallel sums the
// gradients over the P ranks.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_NODESHARDING_H
#define MEGAGRAPH_PASSES_NODESHARDING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace megagraph {

/// Where a value that carries the node dimension lives on each rank.
enum class NodeLayout { Rows, Columns };

struct NodeShardingOptions {
  /// P, the number of ranks (>= 1).
  int64_t ranks = 1;
  /// The layout of the gt.spmm aggregations over node values.
  NodeLayout aggregation = NodeLayout::Columns;
  /// The grid this pass creates (shape [P]).
  llvm::StringRef grid;
  /// The pass's flag, for messages.
  llvm::StringRef pass;
};

struct NodeShardingCounts {
  int64_t sharded = 0;  ///< values with a node dimension
  int64_t switches = 0; ///< shard.all_to_all (rows <-> columns)
  int64_t slices = 0;   ///< shard.all_slice of replicated values
  int64_t halo = 0;     ///< gt.spmm with #gt.halo
};

/// Splits the nodes of @main over options.ranks ranks as described above.
/// Errors (not a full-graph model, N not divisible by P, an op that cannot
/// take a node dimension) are emitted on the op or function concerned.
mlir::LogicalResult shardNodes(mlir::ModuleOp module,
                               const NodeShardingOptions &options,
                               NodeShardingCounts &counts);

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_NODESHARDING_H
