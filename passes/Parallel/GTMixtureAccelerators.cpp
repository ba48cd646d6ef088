//===- GTMixtureAccelerators.cpp - MixGCN's mixture of accelerators ------===//
//
// Part of MegaGraph. gt-mixture-accelerators (--plan ...,moa=1,chunks=K):
// every aggregation `gt.spmm` whose rows reach a dense transform through
// row-local ops only becomes one `gt.spmm_linear` that the runtime pipelines
// over K row chunks on two thread groups (runtime/kernels/MoaSpmmLinear.cpp).
// It runs after gt-autodiff, so the backward's `dH = (A^T G) W^T` is
// pipelined as well as GraphSAGE's forward `(A x / deg) W`. The matched
// forms are listed in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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
  tosa::MulOp scaleOp;  // null without a row scale
  Value scale;          // [N, 1]
  Value rows;           // the transform's input rows [N, D]
  Operation *transform; // gt.linear or tosa.matmul
  Value weight;         // [D, F] (matmul: the [1, D, F] operand)
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
    SmallVector<Match> matches;
    bool failed = false;
    module.walk([&](gt::SpmmOp spmm) {
      if (spmm->hasAttr(gt::kHaloAttr))
        return;
      RankedTensorType t = typeOf(spmm.getResult());
      if (!t || t.getRank() != 2 || !t.hasStaticShape())
        return;
      Match m{};
      m.spmm = spmm;
      Value rows = spmm.getResult();
      if (rows.hasOneUse())
        if (auto mul = dyn_cast<tosa::MulOp>(*rows.getUsers().begin()))
          if (Value s = rowScale(mul, rows, t.getDimSize(0))) {
            m.scaleOp = mul;
            m.scale = s;
            rows = mul.getResult();
          }
      m.rows = rows;
      if (!findTransform(rows, m))
        return;
      if (chunks > t.getDimSize(0)) {
        spmm.emitError() << "moa chunks=" << chunks << " exceeds the "
                         << t.getDimSize(0) << " rows of this aggregation";
        failed = true;
        return;
      }
      matches.push_back(m);
    });
    if (failed)
      return signalPassFailure();
    if (matches.empty()) {
      module.emitError() << "moa=1: no aggregation (gt.spmm) whose rows go "
                            "into a transform (gt.linear, matmul) to "
                            "pipeline";
      return signalPassFailure();
    }
    DominanceInfo dom(module);
    OpBuilder builder(module.getContext());
    for (Match &m : matches)
      rewrite(m, dom, builder);
  }

  void rewrite(Match &m, DominanceInfo &dom, OpBuilder &builder) {
    const int64_t chunks = this->chunks;
    // The new op replaces `rows` where it is defined; the transform's other
    // operands must be available there.
    Operation *point = m.rows.getDefiningOp()->getNextNode();
    Value weight = availableAt(m.weight, point, dom, builder);
    Value bias = m.bias ? availableAt(m.bias, point, dom, builder) : Value();
    if (!weight || (m.bias && !bias))
      return; // left sequential: the weight is computed after the rows
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
    auto fused = gt::SpmmLinearOp::create(
        builder, loc, m.spmm.getRowPtr(), m.spmm.getColIdx(),
        m.spmm.getValues(), m.spmm.getInput(), weight, m.scale, bias,
        builder.getI64IntegerAttr(chunks));
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
    if (m.scaleOp)
      m.scaleOp->erase();
    m.spmm->erase();
    ++numFused;
  }
};

} // namespace
