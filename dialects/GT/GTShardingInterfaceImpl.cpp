//===- GTShardingInterfaceImpl.cpp - Sharding of gt ops ---------*- C++ -*-===//
//
// Part of MegaGraph. Upstream mlir::shard::ShardingInterface for
// gt.attention, the context-parallel (cp) form of issue 7 with upstream
// sharding-propagation + shard-partition:
//
//   loops  d0 = b (parallel), d1 = i query rows (parallel),
//          d2 = j key rows (reduction: the softmax), d3 = e hidden of q/k
//          (reduction), d4 = f hidden of v (parallel), d5 = h bias heads
//   q (d0, d1, d3)   k (d0, d2, d3)   v (d0, d2, d4)
//   bias / mask (d0, d5, d1, d2)      out (d0, d1, d4)
//
// getShardingOption takes the batch and query-row sharding from the query
// (or the result) and never shards j, e, f or h: keys and values are
// needed whole, so shard-partition all-gathers them when they arrive
// sharded; the bias / mask rows follow the queries and keep all key
// columns, so a bias sharded on its query dimension is used as it is (no
// collective). partition() clones the op on the local operands: local
// queries against all keys, i.e. the all-gather variant of RuntimeCp.h
// expressed with upstream collectives. (The end-to-end compiler uses
// gt-context-parallel instead, which keeps K / V sharded and calls the
// runtime's fused cp attention, all-gather or ring.)
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTSharding.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::shard;
using namespace megagraph;

namespace {

constexpr unsigned kLoops = 6;

struct AttentionShardingInterface
    : ShardingInterface::ExternalModel<AttentionShardingInterface,
                                       gt::AttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    using utils::IteratorType;
    return {IteratorType::parallel,  IteratorType::parallel,
            IteratorType::reduction, IteratorType::reduction,
            IteratorType::parallel,  IteratorType::parallel};
  }

  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *) const {
    return {ReductionKind::Sum, ReductionKind::Sum};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto attn = cast<gt::AttentionOp>(op);
    MLIRContext *ctx = op->getContext();
    auto map = [&](ArrayRef<unsigned> dims) {
      SmallVector<AffineExpr> exprs;
      for (unsigned d : dims)
        exprs.push_back(getAffineDimExpr(d, ctx));
      return AffineMap::get(kLoops, 0, exprs, ctx);
    };
    SmallVector<AffineMap> maps = {map({0, 1, 3}), map({0, 2, 3}),
                                   map({0, 2, 4})};
    for (Value m : {attn.getBias(), attn.getMask()}) {
      if (!m)
        continue;
      int64_t rank = cast<ShapedType>(m.getType()).getRank();
      // [H, S, S] or [B|1, H|1, S, S] (broadcast dims must stay whole).
      maps.push_back(rank == 3 ? map({5, 1, 2}) : map({0, 5, 1, 2}));
    }
    maps.push_back(map({0, 1, 4}));
    return maps;
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    // The query (operand 0) or, failing that, the result decides the batch
    // and query-row sharding; nothing else is sharded.
    Sharding from = operandShardings.empty() ? Sharding() : operandShardings[0];
    if (!from && !resultShardings.empty())
      from = resultShardings[0];
    if (!from)
      return ShardingOption::makeEmpty();
    ShardingArray loops(kLoops);
    ArrayRef<GridAxesAttr> split = from.getSplitAxes();
    for (unsigned d = 0; d < 2 && d < split.size(); ++d)
      llvm::append_range(loops[d], split[d].asArrayRef());
    if (split.size() > 2 && !split[2].empty())
      return op->emitOpError("cannot shard the hidden dimension of the "
                             "query; shard the batch or the query rows");
    removeTrailingEmptySubArray(loops);
    return ShardingOption(loops, from.getGridAttr());
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    partitionTriviallyShardableOperation(*op, partitionedOperands,
                                         operandShardings, resultShardings,
                                         partitionMap, symbolTable, builder);
    return success();
  }
};

} // namespace

void megagraph::gt::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gt::GTDialect *) {
    ctx->loadDialect<shard::ShardDialect>();
    gt::AttentionOp::attachInterface<AttentionShardingInterface>(*ctx);
  });
}
