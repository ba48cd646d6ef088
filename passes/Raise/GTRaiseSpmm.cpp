//===- GTRaiseSpmm.cpp - Scatter-add message passing to gt.spmm -*- C++ -*-===//
//
// Part of MegaGraph. PyG-style message passing exports as
// `zeros.scatter_add(0, dst, w * x[src])` (or `index_add_`): a Gather of
// E rows, a per-edge weight and a ScatterElements / ScatterND with
// reduction add, which the importer turns into a tosa.gather and a
// linalg.generic comparing every edge with every row (O(N E C) work and an
// E x C gathered tensor). This pattern replaces the pair with the CSR form
// of the same sum: gt.csr_transpose sorts the edges by destination at run
// time (O(E)), and gt.spmm aggregates straight from x, so neither the
// N x E comparison nor the gathered messages remain; the backward is the
// SpMM over the transposed pattern (A^T G).
//
//===----------------------------------------------------------------------===//

#include "GTRaisePatterns.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace megagraph;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// `v` with any tosa.reshape chain in front of it removed.
Value stripReshapes(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>())
    v = r.getInput1();
  return v;
}

/// True if `v` is a splat constant of 0.
bool isZeroSplat(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return false;
  if (isa<FloatType>(attr.getElementType()))
    return attr.getSplatValue<APFloat>().isZero();
  return false;
}

/// Whether `g` is the importer's row scatter with reduction add:
/// out[0, k, c] += updates[0, w, c] for every w with rows[0, w] == k, over
/// rows [1, W] (i32), updates [1, W, C] and out [1, K, C] (f32: the CPU
/// SpMM kernel's type).
bool isRowScatterAdd(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      g.getNumResults() != 1)
    return false;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  if (g.getIndexingMapsArray() != ArrayRef<AffineMap>(maps))
    return false;
  SmallVector<utils::IteratorType> it = g.getIteratorTypesArray();
  if (it.size() != 4 || it[3] != utils::IteratorType::reduction ||
      llvm::any_of(ArrayRef(it).take_front(3), [](utils::IteratorType t) {
        return t != utils::IteratorType::parallel;
      }))
    return false;
  auto rows = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  auto out = dyn_cast<RankedTensorType>(g.getResult(0).getType());
  if (!rows || !out || !rows.getElementType().isInteger(32) ||
      !out.getElementType().isF32() || !out.hasStaticShape() ||
      !rows.hasStaticShape() || out.getDimSize(0) != 1)
    return false;
  // The body: select(index_cast(row) == index(1), out + update, out).
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto sel = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
  if (!sel || sel.getFalseValue() != body.getArgument(2))
    return false;
  auto add = sel.getTrueValue().getDefiningOp<arith::AddFOp>();
  auto cmp = sel.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!add || !cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return false;
  Value a0 = body.getArgument(0), a1 = body.getArgument(1),
        a2 = body.getArgument(2);
  if (!((add.getLhs() == a2 && add.getRhs() == a1) ||
        (add.getLhs() == a1 && add.getRhs() == a2)))
    return false;
  auto cast = cmp.getLhs().getDefiningOp<arith::IndexCastOp>();
  auto index = cmp.getRhs().getDefiningOp<linalg::IndexOp>();
  return cast && index && cast.getIn() == a0 && index.getDim() == 1 &&
         body.getOperations().size() == 6;
}

/// The messages of a scatter: `table` rows gathered at `ids` ([1, W]),
/// each scaled by `weight` (W elements, null for 1), or else the updates
/// themselves as the table with the identity gather.
struct Messages {
  Value table, ids, weight;
};

/// Takes apart updates [1, W, C] = gather(T, ids) (* weight [W, 1]).
Messages matchMessages(Value updates, int64_t w, int64_t c) {
  Value v = stripReshapes(updates);
  auto asGather = [&](Value x) -> tosa::GatherOp {
    auto g = stripReshapes(x).getDefiningOp<tosa::GatherOp>();
    if (!g || shapeOf(g.getResult()) != ArrayRef<int64_t>{1, w, c})
      return nullptr;
    return g;
  };
  if (tosa::GatherOp g = asGather(v))
    return {g.getValues(), g.getIndices(), Value()};
  if (auto mul = v.getDefiningOp<tosa::MulOp>()) {
    for (auto [x, y] : {std::pair(mul.getInput1(), mul.getInput2()),
                        std::pair(mul.getInput2(), mul.getInput1())}) {
      tosa::GatherOp g = asGather(x);
      auto yt = cast<RankedTensorType>(y.getType());
      ArrayRef<int64_t> ys = yt.getShape();
      // The weight broadcasts over the C columns: [W, 1] or [1, W, 1].
      bool perRow = yt.getNumElements() == w && !ys.empty() &&
                    (ys.back() == 1 || c == 1) &&
                    (ys.size() == 2 || ys.size() == 3);
      if (g && perRow && shapeOf(stripReshapes(x)).size() == 3 &&
          shapeOf(x)[shapeOf(x).size() - 2] == w)
        return {g.getValues(), g.getIndices(), y};
    }
  }
  return {};
}

/// Row scatter-add of (gathered, weighted) messages -> gt.spmm over the
/// CSR of the destination rows.
struct RaiseScatterAddToSpmm : OpRewritePattern<linalg::GenericOp> {
  RaiseScatterAddToSpmm(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!isRowScatterAdd(g))
      return failure();
    Value rows = g.getDpsInputs()[0], updates = g.getDpsInputs()[1],
          init = g.getDpsInits()[0];
    ArrayRef<int64_t> os = shapeOf(init);
    int64_t k = os[1], c = os[2], w = shapeOf(rows)[1];
    Location loc = g.getLoc();
    TosaBuilder b(rewriter, loc);
    Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
    Type elem = cast<RankedTensorType>(init.getType()).getElementType();
    // 1. The CSR of the destinations: row_ptr, and per CSR entry the edge.
    Value dst = tosa::CastOp::create(rewriter, loc, b.type({w}, i64),
                                     b.reshape(rows, {w}));
    auto csr = gt::CsrTransposeOp::create(rewriter, loc, dst, Value(),
                                          rewriter.getI64IntegerAttr(k));
    Value perm = b.reshape(
        tosa::CastOp::create(rewriter, loc, b.type({w}, i32), csr.getPerm()),
        {1, w});
    // Per-edge values of `v` (W elements) in CSR order.
    auto permuted = [&](Value v, Type e) {
      Value g3 = tosa::GatherOp::create(rewriter, loc, b.type({1, w, 1}, e),
                                        b.reshape(v, {1, w, 1}), perm);
      return b.reshape(g3, {w});
    };
    // 2. Columns, values and the dense operand.
    Messages m = matchMessages(updates, w, c);
    Value colIdx, values, x;
    if (m.table) {
      colIdx = permuted(m.ids, i32);
      values = m.weight ? permuted(m.weight, elem) : Value();
      x = b.reshape(m.table, {shapeOf(m.table)[1], c});
    } else {
      colIdx = csr.getColIdxT();
      x = b.reshape(updates, {w, c});
    }
    if (!values) {
      auto t = b.type({w}, elem);
      values = tosa::ConstOp::create(
          rewriter, loc, t,
          DenseElementsAttr::get(t, rewriter.getFloatAttr(elem, 1.0)));
    }
    // 3. The aggregation, added to a non-zero initial value.
    Value y = b.reshape(
        gt::SpmmOp::create(rewriter, loc, csr.getRowPtrT(), colIdx, values, x),
        {1, k, c});
    if (!isZeroSplat(init))
      y = b.add(init, y);
    rewriter.replaceOp(g, y);
    ++count;
    return success();
  }

  llvm::Statistic &count;
};

} // namespace

void megagraph::populateRaiseSpmmPatterns(RewritePatternSet &patterns,
                                          llvm::Statistic &count) {
  patterns.add<RaiseScatterAddToSpmm>(patterns.getContext(), count);
}
