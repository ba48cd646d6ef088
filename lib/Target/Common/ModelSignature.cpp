//===- ModelSignature.cpp - The inputs and outputs of a model ---*- C++ -*-===//
//
// Part of MegaGraph. See megagraph/Target/Executable.h. Reads @main, the
// pipeline stage entries and the plan into the tables the entry table
// (EntryTable.cpp) emits.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/Executable.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/ModelABI.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// The mgrt_dtype of element type `t`; 0 when the runtime has none.
int dtypeOf(Type t) {
  if (t.isF32())
    return MGRT_F32;
  if (t.isF64())
    return MGRT_F64;
  if (t.isInteger(64))
    return MGRT_I64;
  if (t.isInteger(32))
    return MGRT_I32;
  if (t.isInteger(8))
    return MGRT_I8;
  if (t.isInteger(1))
    return MGRT_BOOL;
  return 0;
}

/// The mutable globals into `sig.state`: kind from `gt.param` /
/// `gt.param_init` / `gt.optimizer_state`, and under ZeRO where each
/// parameter lies in its bucket (`gt.zero_shard`, `gt.zero_moment`). Globals of
/// element types the runtime has no dtype for are skipped.
LogicalResult readState(ModuleOp module, ModelSignature &sig) {
  llvm::StringMap<size_t> index;
  for (auto g : module.getOps<ml_program::GlobalOp>()) {
    auto type = dyn_cast<RankedTensorType>(g.getType());
    // ZeRO-3's parameter globals are immutable (gt.param_init): they keep
    // the initial weights, and name the parameters in the table.
    const bool init = g->hasAttr("gt.param_init");
    if ((!g.getIsMutable() && !init) || !type || !type.hasStaticShape() ||
        !dtypeOf(type.getElementType()) || type.getRank() > MGRT_MAX_RANK)
      continue;
    StateSignature s;
    s.tensor.name = g.getSymName().str();
    s.tensor.dtype = dtypeOf(type.getElementType());
    s.tensor.shape.assign(type.getShape().begin(), type.getShape().end());
    s.kind = g->hasAttr("gt.param") || init     ? MGRT_STATE_PARAMETER
             : g->hasAttr("gt.optimizer_state") ? MGRT_STATE_OPTIMIZER
                                                : MGRT_STATE_OTHER;
    index[s.tensor.name] = sig.state.size();
    sig.state.push_back(std::move(s));
  }
  // Where each parameter lies in its ZeRO bucket. ZeRO-3 keeps the
  // parameter globals for the initial weights; the trained values are in
  // the buckets. ZeRO-1/2 erased the buckets: each gets an entry without
  // storage (the shard's shape, taken from its moments `<bucket>.<moment>`,
  // which carry the packing as `gt.zero_moment`), so that the table says
  // where each parameter's moments lie in the shards.
  if (!sig.plan || sig.plan->zero < 1)
    return success();
  for (auto g : module.getOps<ml_program::GlobalOp>()) {
    auto shard = g->getAttrOfType<gt::ZeroShardAttr>(gt::kZeroShardAttr);
    auto bucket = index.find(g.getSymName());
    if (!shard) {
      shard = g->getAttrOfType<gt::ZeroShardAttr>(gt::kZeroMomentAttr);
      auto moment = index.find(g.getSymName());
      if (!shard || moment == index.end())
        continue;
      StringRef name = g.getSymName().rsplit('.').first;
      bucket = index.find(name);
      if (bucket == index.end()) {
        StateSignature s;
        s.tensor.name = name.str();
        s.tensor.dtype = MGRT_F32;
        s.tensor.shape = sig.state[moment->second].tensor.shape;
        s.kind = MGRT_STATE_OTHER;
        bucket = index.try_emplace(name, sig.state.size()).first;
        sig.state.push_back(std::move(s));
      }
    }
    if (bucket == index.end())
      continue;
    int64_t offset = 0;
    for (auto [param, size] : llvm::zip(shard.getParams(), shard.getSizes())) {
      auto p = index.find(param.getValue());
      if (p == index.end())
        return g.emitError()
                   << "ZeRO bucket names no parameter global " << param,
               failure();
      sig.state[p->second].bucket = static_cast<int>(bucket->second);
      sig.state[p->second].offset = offset;
      offset += size;
    }
  }
  return success();
}

/// The number of rows of the embedding tables each argument of `fn`
/// indexes (the ids of gt.node_embedding, gt.degree_embedding,
/// gt.spatial_bias and the attentions' spatial operands, seen through
/// reshapes, casts and slices), by argument
/// number; the smallest when an argument indexes several tables. The
/// driver range-checks these inputs against it (mgrt_index_bound).
llvm::DenseMap<unsigned, int64_t> indexBounds(func::FuncOp fn) {
  llvm::DenseMap<unsigned, int64_t> bounds;
  if (fn.isExternal())
    return bounds;
  auto record = [&](Value ids, Value table) {
    while (Operation *def = ids.getDefiningOp()) {
      if (!isa<tosa::ReshapeOp, tosa::CastOp, tosa::SliceOp,
               tensor::ExtractSliceOp>(def))
        return;
      ids = def->getOperand(0);
    }
    auto arg = dyn_cast<BlockArgument>(ids);
    auto type = dyn_cast<RankedTensorType>(table.getType());
    if (!arg || arg.getOwner() != &fn.front() || !type || type.getRank() < 1 ||
        type.isDynamicDim(0))
      return;
    auto [it, inserted] =
        bounds.try_emplace(arg.getArgNumber(), type.getDimSize(0));
    if (!inserted)
      it->second = std::min(it->second, type.getDimSize(0));
  };
  auto recordSpatial = [&](auto attention) {
    if (attention.getSpatialTable())
      record(attention.getSpatialDistance(), attention.getSpatialTable());
  };
  fn.walk([&](Operation *op) {
    if (auto e = dyn_cast<gt::NodeEmbeddingOp>(op))
      record(e.getIds(), e.getTable());
    else if (auto e = dyn_cast<gt::DegreeEmbeddingOp>(op))
      record(e.getDegree(), e.getTable());
    else if (auto e = dyn_cast<gt::SpatialBiasOp>(op))
      record(e.getDistance(), e.getTable());
    // The spatial bias read in place (gt-fuse-spatial-bias): the kernels
    // would clamp an out-of-range distance, so it is checked here too.
    else if (auto a = dyn_cast<gt::AttentionOp>(op))
      recordSpatial(a);
    else if (auto a = dyn_cast<gt::AttentionLseOp>(op))
      recordSpatial(a);
    else if (auto a = dyn_cast<gt::AttentionGradOp>(op))
      recordSpatial(a);
  });
  return bounds;
}

/// Whether input `t` may carry an embedding table's rows in its `index`.
bool indexesTable(const TensorSignature &t) {
  return (t.role == MGRT_ROLE_NODE_FEATURES || t.role == MGRT_ROLE_IN_DEGREE ||
          t.role == MGRT_ROLE_OUT_DEGREE || t.role == MGRT_ROLE_SPD) &&
         (t.dtype == MGRT_I64 || t.dtype == MGRT_I32);
}

} // namespace

FailureOr<ModelSignature> megagraph::getModelSignature(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("no func.func @main to compile"), failure();
  ModelSignature sig;
  auto describe = [&](Type type, StringAttr name, size_t index,
                      bool isInput) -> FailureOr<TensorSignature> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::string what =
        (isInput ? "input #" : "output #") + std::to_string(index);
    if (!tensor || !tensor.hasStaticShape())
      return main.emitError()
                 << what << " must be a statically shaped tensor, got " << type,
             failure();
    TensorSignature t;
    t.name = name ? name.str()
                  : (isInput ? "input" : "output") + std::to_string(index);
    t.dtype = dtypeOf(tensor.getElementType());
    if (!t.dtype)
      return main.emitError() << what << " has unsupported element type "
                              << tensor.getElementType(),
             failure();
    if (tensor.getRank() > MGRT_MAX_RANK)
      return main.emitError()
                 << what << " has rank " << tensor.getRank()
                 << "; the runtime takes at most " << MGRT_MAX_RANK,
             failure();
    t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    t.role = mgrt_role_of_name(t.name.c_str(), &t.index);
    return t;
  };
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getArgAttrOfType<StringAttr>(i, gt::kTensorNameAttr), i,
        true);
    if (failed(t))
      return failure();
    // Class labels: the number of classes, for the driver's range check.
    if (auto classes = main->getAttrOfType<IntegerAttr>(abi::kNumClassesAttr);
        classes && t->role == MGRT_ROLE_LABELS)
      t->index = static_cast<int>(classes.getInt());
    sig.inputs.push_back(*t);
  }
  for (auto [i, type] : llvm::enumerate(main.getResultTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr), i,
        false);
    if (failed(t))
      return failure();
    sig.outputs.push_back(*t);
  }
  if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan"))
    sig.plan = fromAttr(plan);
  module.walk([&](Operation *op) {
    if (auto cp = op->getAttrOfType<gt::ContextParallelAttr>(
            gt::kContextParallelAttr))
      sig.cpSeq = std::max(sig.cpSeq, cp.getSeq());
  });
  // Pipeline stage entries (gt-pipeline-train).
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>("gt.pipeline_entry");
    if (!entry)
      continue;
    EntrySignature e;
    e.name = entry.str();
    e.symbol = fn.getSymName().str();
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getArgAttrOfType<StringAttr>(i, gt::kTensorNameAttr), i,
          true);
      if (failed(t))
        return failure();
      e.inputs.push_back(*t);
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr), i,
          false);
      if (failed(t))
        return failure();
      e.outputs.push_back(*t);
    }
    sig.entries.push_back(std::move(e));
  }
  // Embedding table sizes of the inputs, from @main and, when the stages
  // hold the embeddings (pp), from the stage entries by input name.
  llvm::StringMap<int64_t> rows;
  auto collect = [&](func::FuncOp fn) {
    for (auto [arg, n] : indexBounds(fn))
      if (auto name =
              fn.getArgAttrOfType<StringAttr>(arg, gt::kTensorNameAttr)) {
        auto [it, inserted] = rows.try_emplace(name.getValue(), n);
        if (!inserted)
          it->second = std::min(it->second, n);
      }
  };
  collect(main);
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr("gt.pipeline_entry"))
      collect(fn);
  for (TensorSignature &t : sig.inputs)
    if (auto it = rows.find(t.name); it != rows.end() && indexesTable(t))
      t.index = static_cast<int>(std::min<int64_t>(it->second, INT32_MAX));
  if (failed(readState(module, sig)))
    return failure();
  return sig;
}
