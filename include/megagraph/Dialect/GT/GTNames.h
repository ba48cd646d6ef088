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

/// The argument and result attribute naming a function's tensor: the ONNX
/// graph's input / output name the importer gives it, and the names the
/// training passes give what they add (the entry tables' names, the
/// driver's roles by name: megagraph/ModelABI.h).
constexpr llvm::StringLiteral kTensorNameAttr = "gt.name";

/// The grid gt-data-parallel creates and gt-zero-gather gathers over:
/// shape [dp x cp], every rank whose gradients are summed.
constexpr llvm::StringLiteral kDataParallelGrid = "gt_dp";
/// The grid of gt-context-parallel: shape [dp, cp].
constexpr llvm::StringLiteral kContextParallelGrid = "gt_cp";
/// Unit attribute that gt-context-parallel puts on @main; gt-autodiff then
/// seeds the loss gradient with the rank's share of the labelled rows.
constexpr llvm::StringLiteral kContextParallelSeedAttr = "gt.cp_seed";

/// The grids of gt-mixture-parallel and gt-partition-parallel: shape [P].
constexpr llvm::StringLiteral kMixtureParallelGrid = "gt_mop";
constexpr llvm::StringLiteral kPartitionParallelGrid = "gt_gp";
/// String attribute that the node-splitting passes (mop, gp) put on @main:
/// the name of the grid whose ranks hold disjoint rows of the loss;
/// gt-autodiff then seeds the loss gradient with the rank's share of the
/// labelled rows. (A name, not a symbol use: the grid goes once its
/// collectives are lowered.)
constexpr llvm::StringLiteral kRowShardGridAttr = "gt.row_shard_grid";

/// String attribute naming a pipeline stage entry (`"s0.fwd"`) on its
/// function: gt-pipeline-train -> gt-zero-gather, the entry table.
constexpr llvm::StringLiteral kPipelineEntryAttr = "gt.pipeline_entry";

/// The typed attributes one pass leaves for another (GTAttrDefs.td); the
/// dialect verifies that each holds its attribute (GTDialect.cpp).
/// `#gt.pipeline` on the module: gt-pipeline-split -> gt-pipeline-train.
constexpr llvm::StringLiteral kPipelineAttr = "gt.pipeline";
/// `#gt.zero_shard` on a ZeRO bucket global: gt-data-parallel ->
/// gt-zero-gather.
constexpr llvm::StringLiteral kZeroShardAttr = "gt.zero_shard";
/// `#gt.zero_shard` on a ZeRO-1/2 moment global `<bucket>.<moment>` (the
/// bucket itself is gone): gt-zero-gather -> the state table, which says
/// where each parameter's moments lie in the shards.
constexpr llvm::StringLiteral kZeroMomentAttr = "gt.zero_moment";
/// `#gt.device_globals` on the module: gt-gpu-offload ->
/// gt-gpu-device-memory.
constexpr llvm::StringLiteral kDeviceGlobalsAttr = "gt.device_globals";
/// `#gt.cp` on gt.attention / gt.attention_grad: gt-context-parallel -> the
/// op verifiers and the bufferization.
constexpr llvm::StringLiteral kContextParallelAttr = "gt.cp";
/// `#gt.halo` on gt.spmm: gt-partition-parallel -> the spmm verifier, its
/// gradient and its bufferization.
constexpr llvm::StringLiteral kHaloAttr = "gt.halo";
/// A unit attribute on a shard.reduce_scatter, shard.all_reduce or
/// shard.all_gather that may run while the ops after it compute:
/// gt-data-parallel (the gradient buckets of zero=0 and zero>=2) and
/// gt-zero-gather (zero=3's prefetched parameter gathers) ->
/// gt-shard-to-runtime, which starts it and waits before its first user or
/// the next such collective of its kind (gathers apart from the others).
constexpr llvm::StringLiteral kOverlapAttr = "gt.overlap";

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTNAMES_H
