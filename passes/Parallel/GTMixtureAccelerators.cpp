//===- GTMixtureAccelerators.cpp - MixGCN's mixture of accelerators ------===//
//
// Part of MegaGraph. gt-mixture-accelerators (--plan ...,moa=1,chunks=K):
// every aggregation `gt.spmm` whose rows reach a dense transform through
// row-local ops only becomes one `gt.spmm_linear` that the runtime pipelines
// over K row chunks on two thread groups (runtime/kernels/MoaSpmmLinear.cpp);
// then every remaining aggregation of rows that come from a transform
// through row-local ops becomes one `gt.linear_spmm`, whose kernel
// (runtime/kernels/MoaLinearSpmm.cpp) aggregates each output row once the
// chunks holding its neighbours are transformed. It runs after gt-autodiff,
// so the backward's `dH = (A^T G) W^T` and GraphSAGE's `A^T ((G W^T) /
// deg)` are pipelined as well as GraphSAGE's forward `(A x / deg) W` and
// GCN's `A (X W)`. The matched forms are listed in Passes.td. Under
// partition parallelism (gt-partition-parallel before it) the aggregations
// are this rank's row block with a halo exchange (#gt.halo): the fused op
// keeps the attribute and its kernel exchanges the same rows. Under the
// mixture of parallelism (gt-mixture-parallel) an aggregation of all rows
// and D / P columns reaches its transform through the all-to-all that
// switches to row blocks, and a transform's block of rows reaches its
// aggregation through the all-to-all that switches to columns: either op
// takes the switch in (gt.mop_switch) and its kernel exchanges chunk by
// chunk.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTMoaOps.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace megagraph {
#define GEN_PASS_DEF_GTMIXTUREACCELERATORS
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-mixture-accelerators"

using namespace mlir;
using namespace megagraph;

namespace {

RankedTensorType typeOf(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// Whether `v` is a constant whose elements are all zero.
bool isZeroConstant(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  if (auto f = dyn_cast<DenseFPElementsAttr>(attr))
    return llvm::all_of(f.getValues<APFloat>(),
                        [](const APFloat &x) { return x.isZero(); });
  if (auto i = dyn_cast<DenseIntElementsAttr>(attr))
    return llvm::all_of(i.getValues<APInt>(),
                        [](const APInt &x) { return x.isZero(); });
  return false;
}

/// One aggregation and the transform of its rows.
struct Match {
  gt::SpmmOp spmm;
  SmallVector<Operation *> chain; // row-local ops from the spmm to rows
  Value scale;                    // [N, 1]
  shard::AllToAllOp layoutSwitch; // mop: columns to row blocks, or null
  Value rows;                     // the transform's input rows [N, D]
  Operation *transform;           // gt.linear or tosa.matmul
  Value weight;                   // [D, F] (matmul: the [1, D, F] operand)
  Value bias;
  tosa::ReshapeOp reshape; // matmul: rows -> [1, N, D]
};

/// The [N, 1] operand of a row-scaling tosa.mul of `v`, or null.
Value rowScale(tosa::MulOp mul, Value v, int64_t n) {
  if (!isZeroConstant(mul.getShift()))
    return {};
  Value other = mul.getInput1() == v ? mul.getInput2() : mul.getInput1();
  if (other == v)
    return {};
  RankedTensorType t = typeOf(other);
  if (!t || t.getRank() != 2 || t.getDimSize(0) != n || t.getDimSize(1) != 1)
    return {};
  if (mul.getType() != v.getType())
    return {};
  return other;
}

/// Whether `v` is all zeros: a zero constant, or a tile or reshape of one
/// (a scatter's zero base that is too large to fold).
bool isZeroTensor(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tosa::ReshapeOp, tosa::TileOp>(def))
      break;
    v = def->getOperand(0);
  }
  return isZeroConstant(v);
}

/// Follows the aggregation `a` [N, D] through row-local ops, each the only
/// use of the value before it: reshapes to [1, N, D] and back, the addition
/// of zeros, and one row scale. Returns the last [N, D] value reached (the
/// transform's input) and records the ops up to it in `m`.
Value chainEnd(Value a, Match &m) {
  RankedTensorType at = typeOf(a);
  const int64_t n = at.getDimSize(0), d = at.getDimSize(1);
  Value end = a, v = a;
  SmallVector<Operation *> ops;
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    RankedTensorType ut =
        user->getNumResults() == 1 ? typeOf(user->getResult(0)) : nullptr;
    if (!ut)
      break;
    if (isa<tosa::ReshapeOp>(user)) {
      if (ut.getShape() != ArrayRef<int64_t>{n, d} &&
          ut.getShape() != ArrayRef<int64_t>{1, n, d})
        break;
    } else if (auto add = dyn_cast<tosa::AddOp>(user)) {
      Value other = add.getInput1() == v ? add.getInput2() : add.getInput1();
      if (other == v || ut != typeOf(v) || !isZeroTensor(other))
        break;
    } else if (auto mul = dyn_cast<tosa::MulOp>(user)) {
      if (m.scale || typeOf(v).getRank() != 2)
        break;
      Value s = rowScale(mul, v, n);
      if (!s)
        break;
      m.scale = s;
    } else {
      break;
    }
    ops.push_back(user);
    v = user->getResult(0);
    if (ut.getRank() == 2) { // back at [N, D]: a candidate end
      end = v;
      m.chain.assign(ops.begin(), ops.end());
    }
  }
  // A scale past the end is not part of the match.
  if (m.scale && !llvm::any_of(m.chain, [](Operation *op) {
        return isa<tosa::MulOp>(op);
      }))
    m.scale = Value();
  return end;
}

/// Whether `a2a` is one of mixture of parallelism's layout switches over a
/// 1-D grid of P: columns to rows ([N, D / P] to the rank's [N / P, D],
/// split axis 0, concat axis 1) when `toRows`, else rows to columns.
bool isLayoutSwitch(shard::AllToAllOp a2a, bool toRows) {
  const int64_t split = toRows ? 0 : 1, concat = toRows ? 1 : 0;
  if (a2a.getSplitAxis().getSExtValue() != split ||
      a2a.getConcatAxis().getSExtValue() != concat ||
      a2a.getGridAxes().size() != 1 || a2a.getGridAxes()[0] != 0)
    return false;
  RankedTensorType in = typeOf(a2a.getInput()), out = typeOf(a2a.getResult());
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      a2a, a2a.getGridAttr());
  if (!in || !out || !grid || in.getRank() != 2 || out.getRank() != 2 ||
      !in.hasStaticShape() || !out.hasStaticShape() ||
      grid.getShape().size() != 1)
    return false;
  const int64_t parts = grid.getShape()[0];
  // The side with the whole rows has P times the other's row count and
  // 1/P of its columns.
  RankedTensorType cols = toRows ? in : out, rows = toRows ? out : in;
  return parts >= 1 && cols.getDimSize(0) == rows.getDimSize(0) * parts &&
         rows.getDimSize(1) == cols.getDimSize(1) * parts;
}

/// Mixture of parallelism (gt-mixture-parallel): the all-to-all that is
/// the only reader of the aggregated columns `v` [N, D / P] and switches
/// them to the rank's block of rows [N / P, D] over a 1-D grid of P, or
/// null.
shard::AllToAllOp layoutSwitchOf(Value v) {
  if (!v.hasOneUse())
    return {};
  auto a2a = dyn_cast<shard::AllToAllOp>(*v.getUsers().begin());
  return a2a && isLayoutSwitch(a2a, /*toRows=*/true) ? a2a
                                                     : shard::AllToAllOp();
}

/// Mixture of parallelism: the all-to-all that defines the aggregation's
/// input `v` [N, F / P], read by nothing else, from the rank's block of
/// transformed rows [N / P, F] over a 1-D grid of P, or null.
shard::AllToAllOp layoutSwitchInto(Value v) {
  auto a2a = v.getDefiningOp<shard::AllToAllOp>();
  return a2a && v.hasOneUse() && isLayoutSwitch(a2a, /*toRows=*/false)
             ? a2a
             : shard::AllToAllOp();
}

/// The transform reading the rows `v` [N, D], if any.
bool findTransform(Value v, Match &m) {
  RankedTensorType vt = typeOf(v);
  const int64_t n = vt.getDimSize(0), d = vt.getDimSize(1);
  for (Operation *user : v.getUsers()) {
    if (auto linear = dyn_cast<gt::LinearOp>(user)) {
      RankedTensorType w = typeOf(linear.getWeight());
      if (linear.getInput() != v || !w || w.getRank() != 2 ||
          w.getDimSize(0) != d || !w.hasStaticShape())
        continue;
      m.transform = linear;
      m.weight = linear.getWeight();
      m.bias = linear.getBias();
      return true;
    }
    auto reshape = dyn_cast<tosa::ReshapeOp>(user);
    if (!reshape)
      continue;
    RankedTensorType rt = typeOf(reshape.getResult());
    if (!rt || rt.getShape() != ArrayRef<int64_t>{1, n, d})
      continue;
    for (Operation *rUser : reshape.getResult().getUsers()) {
      auto mm = dyn_cast<tosa::MatMulOp>(rUser);
      if (!mm || mm.getA() != reshape.getResult() ||
          !isZeroConstant(mm.getAZp()) || !isZeroConstant(mm.getBZp()))
        continue;
      RankedTensorType b = typeOf(mm.getB());
      if (!b || b.getRank() != 3 || b.getDimSize(0) != 1 ||
          b.getDimSize(1) != d || !b.hasStaticShape())
        continue;
      m.transform = mm;
      m.weight = mm.getB();
      m.reshape = reshape;
      return true;
    }
  }
  return false;
}

/// A transform and the aggregation of its rows (GCN's `A (X W)`).
struct LinearFirstMatch {
  gt::SpmmOp spmm;
  SmallVector<Operation *> chain; // row-local ops from the transform on
  Value scale;                    // [M, 1]
  Operation *transform;           // gt.linear or tosa.matmul
  shard::AllToAllOp layoutSwitch; // mop: row blocks to columns, or null
  tosa::MulOp switchedScale;      // mop: the scale of the switched rows
  Value input;                    // gt.linear: [M, D]; matmul: [1, M, D]
  Value weight;                   // [D, F] (matmul: the [1, D, F] operand)
  Value bias;
};

/// Whether `v` [M, F] comes from a transform through row-local ops, each
/// value before `v` used only by the next: reshapes between [M, F] and
/// [1, M, F], the addition of zeros and one row scale by an [M, 1] column.
/// Records the transform and the ops in `m`.
bool chainStart(Value v, LinearFirstMatch &m) {
  RankedTensorType vt = typeOf(v);
  const int64_t rows = vt.getDimSize(0), f = vt.getDimSize(1);
  const Value end = v;
  for (;;) {
    Operation *def = v.getDefiningOp();
    RankedTensorType t = typeOf(v);
    if (!def || !t || (v != end && !v.hasOneUse()))
      return false;
    if (auto linear = dyn_cast<gt::LinearOp>(def)) {
      RankedTensorType x = typeOf(linear.getInput()),
                       w = typeOf(linear.getWeight());
      if (t.getRank() != 2 || !x || x.getRank() != 2 || !w ||
          w.getRank() != 2 || !w.hasStaticShape() ||
          x.getDimSize(1) != w.getDimSize(0))
        return false;
      m.transform = linear;
      m.input = linear.getInput();
      m.weight = linear.getWeight();
      m.bias = linear.getBias();
      return true;
    }
    if (auto mm = dyn_cast<tosa::MatMulOp>(def)) {
      RankedTensorType a = typeOf(mm.getA()), b = typeOf(mm.getB());
      if (t.getShape() != ArrayRef<int64_t>{1, rows, f} || !a ||
          a.getRank() != 3 || !b || b.getRank() != 3 || b.getDimSize(0) != 1 ||
          !b.hasStaticShape() || !isZeroConstant(mm.getAZp()) ||
          !isZeroConstant(mm.getBZp()))
        return false;
      m.transform = mm;
      m.input = mm.getA();
      m.weight = mm.getB();
      return true;
    }
    Value prev;
    if (auto reshape = dyn_cast<tosa::ReshapeOp>(def)) {
      RankedTensorType in = typeOf(reshape.getInput1());
      if (!in || (in.getShape() != ArrayRef<int64_t>{rows, f} &&
                  in.getShape() != ArrayRef<int64_t>{1, rows, f}))
        return false;
      prev = reshape.getInput1();
    } else if (auto add = dyn_cast<tosa::AddOp>(def)) {
      if (isZeroTensor(add.getInput2()) && typeOf(add.getInput1()) == t)
        prev = add.getInput1();
      else if (isZeroTensor(add.getInput1()) && typeOf(add.getInput2()) == t)
        prev = add.getInput2();
      else
        return false;
    } else if (auto mul = dyn_cast<tosa::MulOp>(def)) {
      if (m.scale || t.getRank() != 2)
        return false;
      for (Value operand : {mul.getInput1(), mul.getInput2()})
        if (Value s = rowScale(mul, operand, rows)) {
          m.scale = s;
          prev = operand;
          break;
        }
      if (!prev)
        return false;
    } else {
      return false;
    }
    m.chain.push_back(def);
    v = prev;
  }
}

/// `v` available before `point`: itself when it dominates `point`, else a
/// clone (before `point`) of its pure defining op, whose operands are made
/// available the same way; null when that is impossible.
Value availableAt(Value v, Operation *point, DominanceInfo &dom,
                  OpBuilder &builder, int depth = 0) {
  if (dom.properlyDominates(v, point))
    return v;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 4 || def->getNumResults() != 1 ||
      def->getNumRegions() != 0 || !isPure(def))
    return {};
  IRMapping map;
  for (Value operand : def->getOperands()) {
    Value a = availableAt(operand, point, dom, builder, depth + 1);
    if (!a)
      return {};
    map.map(operand, a);
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(point);
  return builder.clone(*def, map)->getResult(0);
}

/// Partition parallelism: the fused op aggregates this rank's row block
/// with the halo exchange of the aggregation it replaces.
void copyHalo(gt::SpmmOp spmm, Operation *fused) {
  if (Attribute halo = spmm->getAttr(gt::kHaloAttr))
    fused->setAttr(gt::kHaloAttr, halo);
}

struct GTMixtureAcceleratorsPass
    : megagraph::impl::GTMixtureAcceleratorsBase<GTMixtureAcceleratorsPass> {
  using GTMixtureAcceleratorsBase::GTMixtureAcceleratorsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const int64_t chunks = this->chunks;
    if (chunks < 1) {
      module.emitError() << "gt-mixture-accelerators: chunks must be at "
                            "least 1, got "
                         << chunks;
      return signalPassFailure();
    }
    // 1. Aggregations into transforms (gt.spmm_linear).
    SmallVector<Match> matches;
    if (failed(collectAggregationFirst(module, chunks, matches)))
      return signalPassFailure();
    OpBuilder builder(module.getContext());
    int64_t pipelined = 0;
    {
      DominanceInfo dom(module);
      for (Match &m : matches)
        pipelined += rewrite(m, dom, builder);
    }
    // 2. Transforms into the remaining aggregations (gt.linear_spmm); an
    //    aggregation input read by two aggregations goes with the first.
    SmallVector<LinearFirstMatch> linearFirst;
    if (failed(collectTransformFirst(module, chunks, linearFirst)))
      return signalPassFailure();
    {
      DominanceInfo dom(module);
      llvm::SmallPtrSet<Operation *, 8> claimed;
      for (LinearFirstMatch &m : linearFirst)
        if (claimed.insert(m.transform).second)
          pipelined += rewrite(m, dom, builder);
    }
    if (pipelined == 0) {
      module.emitError() << "moa=1: no aggregation (gt.spmm) whose rows go "
                            "into or come from a transform (gt.linear, "
                            "matmul) to pipeline";
      return signalPassFailure();
    }
  }

  /// Each aggregation whose rows reach a transform, if none is refused.
  LogicalResult collectAggregationFirst(ModuleOp module, int64_t chunks,
                                        SmallVectorImpl<Match> &matches) {
    bool failed = false;
    module.walk([&](gt::SpmmOp spmm) {
      RankedTensorType t = typeOf(spmm.getResult());
      if (!t || t.getRank() != 2 || !t.hasStaticShape())
        return;
      Match m{};
      m.spmm = spmm;
      Value rows = chainEnd(spmm.getResult(), m);
      // Under mop the aggregated columns reach the transform through the
      // switch to row blocks (the scale, if any, comes before it).
      if (shard::AllToAllOp a2a = layoutSwitchOf(rows)) {
        m.layoutSwitch = a2a;
        rows = a2a.getResult();
      }
      m.rows = rows;
      if (!findTransform(rows, m))
        return;
      // The chunks cut the rows the transform reads (the rank's block under
      // mop or gp).
      const int64_t blockRows = typeOf(rows).getDimSize(0);
      if (chunks > blockRows) {
        spmm.emitError() << "moa chunks=" << chunks << " exceeds the "
                         << blockRows << " rows of this aggregation";
        failed = true;
        return;
      }
      matches.push_back(m);
    });
    return success(!failed);
  }

  /// Each aggregation of rows that come from a transform, if none is
  /// refused.
  LogicalResult
  collectTransformFirst(ModuleOp module, int64_t chunks,
                        SmallVectorImpl<LinearFirstMatch> &matches) {
    bool failed = false;
    module.walk([&](gt::SpmmOp spmm) {
      RankedTensorType t = typeOf(spmm.getInput());
      if (!t || t.getRank() != 2 || !t.hasStaticShape())
        return;
      LinearFirstMatch m{};
      m.spmm = spmm;
      // Under mop the transformed rows reach the aggregation through the
      // switch from row blocks to columns.
      Value rows = spmm.getInput();
      // The switched rows may be scaled by an [N, 1] column on the way
      // (GraphSAGE's backward 1 / deg): the op scales them after the switch.
      if (auto mul = rows.getDefiningOp<tosa::MulOp>(); mul && rows.hasOneUse())
        for (Value operand : {mul.getInput1(), mul.getInput2()})
          if (Value s = rowScale(mul, operand, t.getDimSize(0));
              s && layoutSwitchInto(operand)) {
            m.scale = s;
            m.switchedScale = mul;
            rows = operand;
            break;
          }
      if (shard::AllToAllOp a2a = layoutSwitchInto(rows)) {
        m.layoutSwitch = a2a;
        rows = a2a.getInput();
      } else if (m.switchedScale) {
        return;
      }
      if (!chainStart(rows, m))
        return;
      const int64_t cutRows = typeOf(rows).getDimSize(0);
      if (chunks > cutRows) {
        m.transform->emitError() << "moa chunks=" << chunks << " exceeds the "
                                 << cutRows << " rows of this transform";
        failed = true;
        return;
      }
      matches.push_back(m);
    });
    return success(!failed);
  }

  /// Replaces the aggregation and its transform by one gt.spmm_linear;
  /// false when left sequential.
  bool rewrite(Match &m, DominanceInfo &dom, OpBuilder &builder) {
    const int64_t chunks = this->chunks;
    // The new op replaces `rows` where it is defined; the transform's other
    // operands must be available there.
    Operation *point = m.rows.getDefiningOp()->getNextNode();
    Value weight = availableAt(m.weight, point, dom, builder);
    Value bias = m.bias ? availableAt(m.bias, point, dom, builder) : Value();
    if (!weight || (m.bias && !bias))
      return false; // left sequential: the weight is computed after the rows
    builder.setInsertionPoint(point);
    Location loc = m.transform->getLoc();
    ImplicitLocOpBuilder ib(loc, builder);
    RankedTensorType wt = typeOf(weight);
    if (wt.getRank() == 3) { // matmul: [1, D, F] -> [D, F]
      auto flat = RankedTensorType::get({wt.getDimSize(1), wt.getDimSize(2)},
                                        wt.getElementType());
      weight =
          tosa::ReshapeOp::create(builder, loc, flat, weight,
                                  tosa::getTosaConstShape(ib, flat.getShape()));
    }
    // The result types follow the rows (this rank's block under #gt.halo).
    RankedTensorType rowsType = typeOf(m.rows);
    auto outType = RankedTensorType::get(
        {rowsType.getDimSize(0), typeOf(weight).getDimSize(1)},
        rowsType.getElementType());
    auto fused = gt::SpmmLinearOp::create(
        builder, loc, rowsType, outType, m.spmm.getRowPtr(), m.spmm.getColIdx(),
        m.spmm.getValues(), m.spmm.getInput(), weight, m.scale, bias,
        builder.getI64IntegerAttr(chunks));
    copyHalo(m.spmm, fused);
    if (m.layoutSwitch) {
      const int64_t nodes = typeOf(m.spmm.getResult()).getDimSize(0);
      fused->setAttr(gt::kMopSwitchAttr,
                     gt::HaloAttr::get(builder.getContext(),
                                       nodes / rowsType.getDimSize(0), nodes));
    }
    Value out = fused.getResult();
    if (m.reshape) { // back to the matmul's [1, N, F]
      auto t = cast<RankedTensorType>(m.transform->getResult(0).getType());
      out = tosa::ReshapeOp::create(builder, loc, t, out,
                                    tosa::getTosaConstShape(ib, t.getShape()));
    }
    m.transform->getResult(0).replaceAllUsesWith(out);
    m.transform->erase();
    m.rows.replaceAllUsesWith(fused.getAggregate());
    if (m.reshape && m.reshape->use_empty())
      m.reshape->erase();
    if (m.layoutSwitch)
      m.layoutSwitch->erase();
    for (Operation *op : llvm::reverse(m.chain))
      op->erase();
    m.spmm->erase();
    ++numFused;
    return true;
  }

  /// Replaces the aggregation by one gt.linear_spmm where it is; the
  /// transformed rows replace the aggregation's input for its other users,
  /// which must come after it (else false: left sequential).
  bool rewrite(LinearFirstMatch &m, DominanceInfo &dom, OpBuilder &builder) {
    const int64_t chunks = this->chunks;
    Value rows = m.layoutSwitch ? m.layoutSwitch.getInput() : m.spmm.getInput();
    for (Operation *user : rows.getUsers())
      if (user != m.spmm && user != m.layoutSwitch &&
          !dom.properlyDominates(m.spmm.getOperation(), user))
        return false; // the rows are read before the aggregation
    builder.setInsertionPoint(m.spmm);
    Location loc = m.transform->getLoc();
    ImplicitLocOpBuilder ib(loc, builder);
    auto flat = [&](Value v) -> Value { // [1, A, B] -> [A, B]
      RankedTensorType t = typeOf(v);
      if (t.getRank() == 2)
        return v;
      if (auto reshape = v.getDefiningOp<tosa::ReshapeOp>())
        if (RankedTensorType in = typeOf(reshape.getInput1());
            in && in.getShape() == t.getShape().drop_front())
          return reshape.getInput1();
      auto type =
          RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
      return tosa::ReshapeOp::create(
          builder, loc, type, v, tosa::getTosaConstShape(ib, type.getShape()));
    };
    Value input = flat(m.input), weight = flat(m.weight);
    auto fused = gt::LinearSpmmOp::create(
        builder, loc, typeOf(rows), typeOf(m.spmm.getResult()),
        m.spmm.getRowPtr(), m.spmm.getColIdx(), m.spmm.getValues(), input,
        weight, m.scale, m.bias, builder.getI64IntegerAttr(chunks));
    copyHalo(m.spmm, fused);
    if (m.layoutSwitch) {
      const int64_t nodes = typeOf(m.spmm.getResult()).getDimSize(0);
      fused->setAttr(gt::kMopSwitchAttr,
                     gt::HaloAttr::get(builder.getContext(),
                                       nodes / typeOf(rows).getDimSize(0),
                                       nodes));
    }
    m.spmm.getResult().replaceAllUsesWith(fused.getResult());
    m.spmm->erase();
    if (m.switchedScale)
      m.switchedScale->erase();
    if (m.layoutSwitch)
      m.layoutSwitch->erase();
    rows.replaceAllUsesWith(fused.getTransformed());
    for (Operation *op : m.chain) // from the aggregation's input back
      op->erase();
    Operation *inputDef = m.input.getDefiningOp();
    m.transform->erase();
    if (inputDef && isa<tosa::ReshapeOp>(inputDef) && inputDef->use_empty())
      inputDef->erase();
    ++numFused;
    return true;
  }
};

} // namespace
