//===- NodeSharding.cpp - Splitting one graph's nodes over ranks ----------===//
//
// Part of MegaGraph. See NodeSharding.h. One walk over @main in program
// order: each op that touches a node value is classified (the layout it
// needs and the node dimension of its results), its node operands are
// switched into that layout (conversions are made once per value and
// layout, right after the value's definition, so every later use shares
// them), its replicated operands that span the nodes or the features are
// cut to this rank's part, and its results are retyped in place to their
// local shapes.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/NodeSharding.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/ModelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// Where a node value lives: one of the two split layouts, or whole on
/// every rank (the function arguments the driver fills entirely).
enum class Place { Whole, Rows, Columns };

Place placeOf(NodeLayout l) {
  return l == NodeLayout::Rows ? Place::Rows : Place::Columns;
}

/// What an op needs of its node operands.
enum class Need { Rows, Aggregation, Same };

/// A value that carries the node dimension.
struct NodeValue {
  int64_t dim;                // the node dimension
  RankedTensorType full;      // its one-process type
  Place place = Place::Whole; // where it lives now
};

/// The elementwise ops through which a node value keeps its layout.
bool isElementwise(Operation *op) {
  return isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp,
             tosa::MinimumOp, tosa::ExpOp, tosa::TanhOp, tosa::SigmoidOp,
             tosa::ClampOp, tosa::CastOp, tosa::NegateOp, tosa::AbsOp,
             tosa::ReciprocalOp, tosa::RsqrtOp, tosa::LogOp, tosa::PowOp,
             tosa::SelectOp, tosa::EqualOp, tosa::GreaterOp,
             tosa::GreaterEqualOp, tosa::LogicalAndOp, tosa::LogicalOrOp,
             tosa::LogicalNotOp, tosa::ErfOp, gt::GeluOp>(op);
}

bool isReduction(Operation *op) {
  return isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
             tosa::ReduceProductOp, tosa::ArgMaxOp>(op);
}

/// True when `v` is computed from a trained parameter.
bool dependsOnParameter(Value v) {
  SmallVector<Value> work = {v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    Operation *def = x.getDefiningOp();
    if (!def)
      continue;
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<ml_program::GlobalOp>(
          def, load.getGlobalAttr());
      if (global && global->hasAttr("gt.param"))
        return true;
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

class NodeSharder {
public:
  NodeSharder(ModuleOp module, const NodeShardingOptions &options,
              NodeShardingCounts &counts)
      : module(module), opt(options), counts(counts), P(options.ranks) {}

  LogicalResult run();

private:
  LogicalResult findNodes();
  LogicalResult visit(Operation *op);
  /// The layout `op` needs and the node dimension of each result (-1: none).
  FailureOr<Need> classify(Operation *op, SmallVectorImpl<int64_t> &dims);

  /// The local type of a node value of full type `t` in `p`.
  RankedTensorType localType(RankedTensorType t, int64_t dim, Place p) const;
  /// The feature count of `t` rounded up to a multiple of P.
  int64_t padded(RankedTensorType t) const {
    int64_t f = t.getShape().back();
    return (f + P - 1) / P * P;
  }
  /// Node value `v` in place `to` (made once, after v's definition).
  Value convert(Value v, Place to);
  /// A replicated operand `r` of an op whose result (node dimension `dim`,
  /// full type `full`) is in `to`: cut along the nodes (rows) or the
  /// features (columns) when it spans them, else `r` itself.
  Value conform(Value r, Place to, int64_t dim, RankedTensorType full,
                Location loc);

  OpBuilder builderAfter(Value v);
  Value allSlice(OpBuilder &b, Location loc, Value v, int64_t axis);
  Value padColumns(OpBuilder &b, Location loc, Value v);

  ModuleOp module;
  func::FuncOp main;
  const NodeShardingOptions &opt;
  NodeShardingCounts &counts;
  int64_t P, N = -1;
  llvm::MapVector<Value, NodeValue> nodes;
  DenseMap<std::pair<Value, int>, Value> converted;
  DenseMap<std::tuple<Value, int, int64_t>, Value> conformed;
};

OpBuilder NodeSharder::builderAfter(Value v) {
  OpBuilder b(v.getContext());
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  return b;
}

RankedTensorType NodeSharder::localType(RankedTensorType t, int64_t dim,
                                        Place p) const {
  SmallVector<int64_t> shape(t.getShape());
  if (p == Place::Rows)
    shape[dim] /= P;
  else if (p == Place::Columns)
    shape.back() = padded(t) / P;
  return t.clone(shape);
}

Value NodeSharder::allSlice(OpBuilder &b, Location loc, Value v, int64_t axis) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] /= P;
  ++counts.slices;
  return shard::AllSliceOp::create(b, loc, t.clone(shape), opt.grid,
                                   ArrayRef<int16_t>{0}, v, APInt(64, axis))
      .getResult();
}

Value NodeSharder::padColumns(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  const int64_t f = t.getShape().back(), fp = (f + P - 1) / P * P;
  if (f == fp)
    return v;
  SmallVector<int64_t> pads(2 * t.getRank(), 0), shape(t.getShape());
  pads.back() = fp - f;
  shape.back() = fp;
  ImplicitLocOpBuilder ib(loc, b);
  return tosa::PadOp::create(b, loc, t.clone(shape), v,
                             tosa::getTosaConstShape(ib, pads))
      .getResult();
}

Value NodeSharder::convert(Value v, Place to) {
  NodeValue &nv = nodes.find(v)->second;
  if (nv.place == to)
    return v;
  auto key = std::make_pair(v, static_cast<int>(to));
  if (auto it = converted.find(key); it != converted.end())
    return it->second;
  OpBuilder b = builderAfter(v);
  Location loc = v.getLoc();
  const int64_t last = nv.full.getRank() - 1;
  Value out;
  if (nv.place == Place::Whole) {
    out = to == Place::Rows ? allSlice(b, loc, v, nv.dim)
                            : allSlice(b, loc, padColumns(b, loc, v), last);
  } else if (to == Place::Columns) {
    // [.., N / P, .., F] -> pad -> [.., N, .., F' / P]
    Value x = padColumns(b, loc, v);
    auto local = localType(nv.full, nv.dim, Place::Columns);
    out =
        shard::AllToAllOp::create(b, loc, local, opt.grid, ArrayRef<int16_t>{0},
                                  x, APInt(64, last), APInt(64, nv.dim))
            .getResult();
    ++counts.switches;
  } else {
    // [.., N, .., F' / P] -> [.., N / P, .., F'] -> cut the padding
    SmallVector<int64_t> shape(nv.full.getShape());
    shape[nv.dim] /= P;
    shape.back() = padded(nv.full);
    out = shard::AllToAllOp::create(b, loc, nv.full.clone(shape), opt.grid,
                                    ArrayRef<int16_t>{0}, v, APInt(64, nv.dim),
                                    APInt(64, last))
              .getResult();
    ++counts.switches;
    if (shape.back() != nv.full.getShape().back()) {
      ImplicitLocOpBuilder ib(loc, b);
      SmallVector<int64_t> start(shape.size(), 0), size(shape);
      size.back() = nv.full.getShape().back();
      out = tosa::SliceOp::create(b, loc, nv.full.clone(size), out,
                                  tosa::getTosaConstShape(ib, start),
                                  tosa::getTosaConstShape(ib, size))
                .getResult();
    }
  }
  converted[key] = out;
  return out;
}

Value NodeSharder::conform(Value r, Place to, int64_t dim,
                           RankedTensorType full, Location loc) {
  auto t = dyn_cast<RankedTensorType>(r.getType());
  if (!t || t.getRank() != full.getRank())
    return r;
  const int64_t last = t.getRank() - 1;
  int64_t axis = -1;
  if (to == Place::Rows && t.getDimSize(dim) == N && N > 1)
    axis = dim;
  if (to == Place::Columns && t.getDimSize(last) > 1 &&
      t.getDimSize(last) == full.getDimSize(last))
    axis = last;
  if (axis < 0)
    return r;
  auto key = std::make_tuple(r, static_cast<int>(to), axis);
  if (auto it = conformed.find(key); it != conformed.end())
    return it->second;
  OpBuilder b = builderAfter(r);
  Value out = to == Place::Rows ? allSlice(b, loc, r, axis)
                                : allSlice(b, loc, padColumns(b, loc, r), axis);
  conformed[key] = out;
  return out;
}

LogicalResult NodeSharder::findNodes() {
  for (BlockArgument arg : main.getArguments()) {
    auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  gt::kTensorNameAttr);
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!name || !t || t.getRank() != 2 || !t.hasStaticShape() ||
        mgrt_role_of_name(name.getValue().str().c_str(), nullptr) !=
            MGRT_ROLE_NODE_FEATURES)
      continue;
    if (N >= 0 && t.getDimSize(0) != N)
      return main.emitError() << opt.pass
                              << ": the node feature inputs disagree on "
                                 "the node count ("
                              << N << " and " << t.getDimSize(0) << ")";
    N = t.getDimSize(0);
    nodes[arg] = NodeValue{0, t, Place::Whole};
  }
  if (N < 0)
    return main.emitError()
           << opt.pass
           << " needs a full-graph model: an input x [N, F] (named x, "
              "features or node_feat) whose N nodes it splits";
  if (N % P != 0)
    return main.emitError()
           << opt.pass << ": " << P << " ranks do not divide the N = " << N
           << " nodes (each rank holds N / P rows)";
  return success();
}

FailureOr<Need> NodeSharder::classify(Operation *op,
                                      SmallVectorImpl<int64_t> &dims) {
  auto nodeDim = [&](Value v) {
    auto it = nodes.find(v);
    return it == nodes.end() ? int64_t(-1) : it->second.dim;
  };
  auto fail = [&](const Twine &why) -> FailureOr<Need> {
    op->emitOpError() << opt.pass << ": cannot split the " << N
                      << " nodes through this op: " << why;
    return failure();
  };
  dims.assign(op->getNumResults(), -1);
  // The one-process type: node values are retyped once visited.
  auto full = [&](Value v) {
    auto it = nodes.find(v);
    return it != nodes.end() ? it->second.full
                             : cast<RankedTensorType>(v.getType());
  };
  if (isa<func::ReturnOp>(op))
    return Need::Rows;
  if (auto spmm = dyn_cast<gt::SpmmOp>(op)) {
    for (Value v : {spmm.getRowPtr(), spmm.getColIdx(), spmm.getValues()})
      if (nodes.contains(v))
        return fail("its sparse matrix depends on the node features");
    if (nodeDim(spmm.getInput()) != 0)
      return fail("the dense operand's rows must be the nodes");
    if (full(spmm.getResult()).getDimSize(0) != N)
      return fail("the sparse matrix must be N x N");
    if (opt.aggregation == NodeLayout::Rows &&
        dependsOnParameter(spmm.getValues()))
      return fail("edge weights computed from parameters have no "
                  "partition-parallel gradient yet");
    dims[0] = 0;
    return Need::Aggregation;
  }
  if (auto lin = dyn_cast<gt::LinearOp>(op)) {
    for (Value v : op->getOperands().drop_front())
      if (nodes.contains(v))
        return fail("its weight depends on the node features");
    int64_t d = nodeDim(lin.getInput());
    if (d == full(lin.getInput()).getRank() - 1)
      return fail("the node dimension is the contracted one");
    dims[0] = d;
    return Need::Rows;
  }
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    if (nodes.contains(mm.getB()) || nodeDim(mm.getA()) != 1)
      return fail("only the rows of its first operand may be the nodes");
    dims[0] = 1;
    return Need::Rows;
  }
  // The node dimension of the first node operand; the others must agree.
  int64_t d = -1;
  for (Value v : op->getOperands())
    if (int64_t e = nodeDim(v); e >= 0) {
      if (d >= 0 && e != d)
        return fail("its operands have the nodes in different dimensions");
      d = e;
    }
  if (isElementwise(op)) {
    auto t = full(op->getResult(0));
    if (d >= t.getRank() || t.getDimSize(d) != N)
      return fail("the result does not keep the node dimension");
    dims[0] = d;
    // Columns only when every node operand spans the result's features.
    for (Value v : op->getOperands())
      if (nodes.contains(v) && full(v).getShape().back() != t.getShape().back())
        return Need::Rows;
    return d == t.getRank() - 1 ? Need::Rows : Need::Same;
  }
  if (auto r = dyn_cast<tosa::ReshapeOp>(op)) {
    // The node index must stay the major part of one dimension.
    auto xt = full(r.getInput1()), yt = full(r.getResult());
    int64_t before = 1;
    for (int64_t i = 0; i < d; ++i)
      before *= xt.getDimSize(i);
    int64_t prefix = 1, e = -1;
    for (auto [i, size] : llvm::enumerate(yt.getShape())) {
      if (prefix == before && size % N == 0) {
        e = i;
        break;
      }
      prefix *= size;
    }
    if (e < 0 || xt.getDimSize(d) % N != 0)
      return fail("the reshape moves the nodes into another dimension");
    if (xt.getDimSize(d) != N || yt.getDimSize(e) != N)
      return fail("the reshape merges the nodes with another dimension");
    dims[0] = e;
    bool columns = e != yt.getRank() - 1 && d != xt.getRank() - 1 &&
                   xt.getShape().back() == yt.getShape().back();
    return columns ? Need::Same : Need::Rows;
  }
  if (auto t = dyn_cast<tosa::TransposeOp>(op)) {
    for (auto [i, p] : llvm::enumerate(t.getPerms()))
      if (p == d)
        dims[0] = i;
    return Need::Rows;
  }
  if (isReduction(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (!axis || axis.getInt() == d)
      return fail("it reduces over the nodes");
    dims[0] = d;
    return Need::Rows;
  }
  if (auto c = dyn_cast<tosa::ConcatOp>(op)) {
    if (c.getAxis() == d)
      return fail("it concatenates along the nodes");
    dims[0] = d;
    return Need::Rows;
  }
  if (auto sl = dyn_cast<tosa::SliceOp>(op)) {
    if (full(sl.getResult()).getDimSize(d) != N)
      return fail("it drops nodes");
    dims[0] = d;
    return Need::Rows;
  }
  if (isa<gt::LayerNormOp>(op)) {
    if (d == full(op->getResult(0)).getRank() - 1)
      return fail("it normalizes over the nodes");
    dims[0] = d;
    return Need::Rows;
  }
  return fail("it is not row-local (no node-split rule)");
}

LogicalResult NodeSharder::visit(Operation *op) {
  bool touches = false;
  for (Value v : op->getOperands())
    touches |= nodes.contains(v);
  if (!touches)
    return success();
  SmallVector<int64_t> dims;
  FailureOr<Need> need = classify(op, dims);
  if (failed(need))
    return failure();
  Place place = Place::Rows;
  if (*need == Need::Aggregation)
    place = placeOf(opt.aggregation);
  if (*need == Need::Same)
    for (Value v : op->getOperands())
      if (auto it = nodes.find(v); it != nodes.end()) {
        place =
            it->second.place == Place::Columns ? Place::Columns : Place::Rows;
        break;
      }
  // Operands: node values into `place`; for the elementwise ops (and
  // concats), replicated operands that span the nodes or features cut.
  const bool conformOthers = isElementwise(op) || isa<tosa::ConcatOp>(op);
  auto resultFull = op->getNumResults()
                        ? cast<RankedTensorType>(op->getResult(0).getType())
                        : RankedTensorType();
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    if (nodes.contains(v))
      use.set(convert(v, place));
    else if (conformOthers && dims[0] >= 0)
      use.set(conform(v, place, dims[0], resultFull, op->getLoc()));
  }
  if (isa<func::ReturnOp>(op))
    return success();
  // Results: retyped to their local shapes.
  for (auto [r, d] : llvm::zip(op->getResults(), dims)) {
    if (d < 0)
      continue;
    auto t = cast<RankedTensorType>(r.getType());
    nodes[r] = NodeValue{d, t, place};
    r.setType(localType(t, d, place));
    ++counts.sharded;
  }
  // Shape operands follow the local result.
  ImplicitLocOpBuilder ib(op->getLoc(), op);
  if (auto r = dyn_cast<tosa::ReshapeOp>(op))
    r.getShapeMutable().assign(tosa::getTosaConstShape(
        ib, cast<RankedTensorType>(r.getType()).getShape()));
  if (auto sl = dyn_cast<tosa::SliceOp>(op))
    sl.getSizeMutable().assign(tosa::getTosaConstShape(
        ib, cast<RankedTensorType>(sl.getType()).getShape()));
  if (auto spmm = dyn_cast<gt::SpmmOp>(op); spmm && place == Place::Rows) {
    spmm->setAttr(gt::kHaloAttr, gt::HaloAttr::get(op->getContext(), P, N));
    ++counts.halo;
  }
  return success();
}

LogicalResult NodeSharder::run() {
  main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError() << opt.pass
                              << " needs the forward function @main (run it "
                                 "before gt-autodiff)";
  if (module.lookupSymbol(opt.grid))
    return module.emitError()
           << opt.pass << ": the module already has a symbol @" << opt.grid
           << " (the pass ran twice?)";
  if (main->hasAttr(gt::kContextParallelSeedAttr) ||
      main->hasAttr(gt::kRowShardGridAttr))
    return main.emitError() << opt.pass
                            << ": @main's rows are already split (cp, mop or "
                               "gp ran before)";
  if (failed(findNodes()))
    return failure();
  // 1. Every op in program order (conversions go after their value's
  //    definition, so they never move past an op still to be visited).
  SmallVector<Operation *> ops;
  for (Operation &op : main.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (op->getNumRegions() && llvm::any_of(op->getOperands(), [&](Value v) {
          return nodes.contains(v);
        }))
      return op->emitOpError()
             << opt.pass << ": ops with regions cannot take node values";
    if (failed(visit(op)))
      return failure();
  }
  // 2. The signature: the results are row blocks.
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  main.setType(FunctionType::get(module.getContext(),
                                 main.getBody().front().getArgumentTypes(),
                                 ret.getOperandTypes()));
  // 3. The grid, and the loss seed of a rank's rows.
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  shard::GridOp::create(b, main.getLoc(), opt.grid, ArrayRef<int64_t>{P});
  main->setAttr(gt::kRowShardGridAttr,
                StringAttr::get(module.getContext(), opt.grid));
  return success();
}

} // namespace

LogicalResult megagraph::shardNodes(ModuleOp module,
                                    const NodeShardingOptions &options,
                                    NodeShardingCounts &counts) {
  if (options.ranks < 1)
    return module.emitError() << options.pass
                              << ": the number of ranks must be at least 1, "
                                 "got "
                              << options.ranks;
  if (options.ranks == 1)
    return success();
  return NodeSharder(module, options, counts).run();
}
