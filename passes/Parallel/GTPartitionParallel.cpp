//===- GTPartitionParallel.cpp - Partition parallelism for GCNs -*- C++ -*-===//
//
// Part of MegaGraph. gt-partition-parallel: the N nodes of a full-graph
// model over P ranks as row blocks everywhere, the sparse aggregations
// exchanging the boundary rows of the blocks (#gt.halo; NodeSharding.h has
// the layouts and the rules). The baseline gt-mixture-parallel is measured
// against.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/NodeSharding.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

namespace megagraph {
#define GEN_PASS_DEF_GTPARTITIONPARALLEL
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-partition-parallel"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTPartitionParallelPass
    : megagraph::impl::GTPartitionParallelBase<GTPartitionParallelPass> {
  using GTPartitionParallelBase::GTPartitionParallelBase;

  void runOnOperation() override {
    // 1. Row blocks everywhere, the aggregations with a halo exchange.
    NodeShardingOptions options;
    options.ranks = ranks;
    options.aggregation = NodeLayout::Rows;
    options.grid = gt::kPartitionParallelGrid;
    options.pass = DEBUG_TYPE;
    // 2. Split and retype.
    NodeShardingCounts counts;
    if (failed(shardNodes(getOperation(), options, counts)))
      return signalPassFailure();
    numSharded += counts.sharded;
    numHalo += counts.halo;
    numSlices += counts.slices;
  }
};

} // namespace
