//===- GTMixtureParallel.cpp - MixGCN's mixture of parallelism -*- C++ -*-===//
//
// Part of MegaGraph. gt-mixture-parallel: the N nodes of a full-graph model
// over P ranks, the dense transforms node-parallel and the sparse
// aggregations feature-parallel, with an all-to-all where they meet
// (NodeSharding.h has the layouts and the rules).
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
#define GEN_PASS_DEF_GTMIXTUREPARALLEL
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-mixture-parallel"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTMixtureParallelPass
    : megagraph::impl::GTMixtureParallelBase<GTMixtureParallelPass> {
  using GTMixtureParallelBase::GTMixtureParallelBase;

  void runOnOperation() override {
    // 1. Aggregations take columns: the whole CSR is on every rank.
    NodeShardingOptions options;
    options.ranks = ranks;
    options.aggregation = NodeLayout::Columns;
    options.grid = gt::kMixtureParallelGrid;
    options.pass = DEBUG_TYPE;
    // 2. Split, switch, retype.
    NodeShardingCounts counts;
    if (failed(shardNodes(getOperation(), options, counts)))
      return signalPassFailure();
    numSharded += counts.sharded;
    numSwitches += counts.switches;
    numSlices += counts.slices;
  }
};

} // namespace
