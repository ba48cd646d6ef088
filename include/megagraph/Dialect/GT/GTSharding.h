//===- GTSharding.h - ShardingInterface of gt ops ---------------*- C++ -*-===//
//
// Part of MegaGraph. Attaches upstream mlir::shard::ShardingInterface to
// gt.attention (context parallelism, issue 7): queries, the output and the
// bias/mask query rows follow the query sharding, keys and values are
// needed whole (all-gathered by shard-partition), the bias keeps its key
// columns local and is never resharded.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTSHARDING_H
#define MEGAGRAPH_DIALECT_GT_GTSHARDING_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace megagraph::gt {

void registerShardingInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTSHARDING_H
