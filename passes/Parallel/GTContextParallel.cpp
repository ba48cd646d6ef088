//===- GTContextParallel.cpp - Shard the node dimension over cp -*- C++ -*-===//
//
// Part of MegaGraph. Context parallelism on the forward @main,
// before gt-autodiff. Each of the cp ranks of a cp group holds S / cp rows
// (nodes) of every sequence: this pass finds the values that carry the node
// dimension, by propagation from gt.attention through the row-local ops,
// gives them S / cp rows (ceil(S / cp) when cp does not divide S: the
// blocks are uneven, and the last row of a shorter block is padding, which
// the cp kernels skip), and marks every gt.attention as context-parallel
// (`gt.cp`), so that bufferization calls the runtime's cp attention, which
// meets the other ranks' keys and values by all-gather or around a ring,
// or (mode=ulysses) moves q, k, v from rows to heads by all-to-all and the
// output back. The bias keeps its S key columns; it is computed locally,
// and only Ulysses sends it (to heads: each rank needs all query rows of
// its H / cp heads, so cp must divide the heads of every attention).
//
// tosa.transpose permutes the node dimension; tosa.reshape carries it when
// it stays a dimension of its own (the reshape splits or merges other dims,
// e.g. the heads). What is not row-local (a reshape that merges or splits
// the node dimension, a reduction over it) is rejected: the static-shape
// rewrite cannot express it.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/ContextParallel.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace megagraph {
#define GEN_PASS_DEF_GTCONTEXTPARALLEL
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-context-parallel"

using namespace mlir;
using namespace megagraph;

namespace {

/// One (value, dimension) pair of a row-local op: the dimension of the
/// value that is the node dimension whenever any pair of the op is.
using RowDim = std::pair<Value, int64_t>;

/// The elementwise TOSA ops that are row-local when their operands have the
/// result's shape (or broadcast over the node dimension).
bool isElementwise(Operation *op) {
  return isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp,
             tosa::MinimumOp, tosa::ExpOp, tosa::TanhOp, tosa::SigmoidOp,
             tosa::ClampOp, tosa::CastOp, tosa::NegateOp, tosa::AbsOp,
             tosa::ReciprocalOp, tosa::RsqrtOp, tosa::LogOp, tosa::PowOp,
             tosa::SelectOp, tosa::EqualOp, tosa::GreaterOp,
             tosa::GreaterEqualOp, tosa::LogicalAndOp, tosa::LogicalOrOp,
             tosa::LogicalNotOp, tosa::ErfOp>(op);
}

/// The pairs of a row-local op for the node dimension of `result` at `d`,
/// or failure if the op is not row-local. Elementwise operands broadcast
/// over the node dimension (size 1) are not part of it.
FailureOr<SmallVector<RowDim>>
rowPairs(Operation *op, int64_t S,
         const llvm::DenseMap<Value, int64_t> &known) {
  SmallVector<RowDim> pairs;
  auto dimOf = [](Value v, int64_t d) {
    return cast<ShapedType>(v.getType()).getDimSize(d);
  };
  if (auto a = dyn_cast<gt::AttentionOp>(op)) {
    pairs = {{a.getQuery(), 1},
             {a.getKey(), 1},
             {a.getValue(), 1},
             {a.getResult(), 1}};
    for (Value m : {a.getBias(), a.getMask()}) {
      if (!m)
        continue;
      auto t = cast<ShapedType>(m.getType());
      int64_t q = t.getRank() - 2;
      if (q >= 0 && t.getDimSize(q) == S)
        pairs.push_back({m, q});
    }
    return pairs;
  }
  if (isa<gt::LinearOp, gt::LayerNormOp, gt::GeluOp>(op)) {
    Value x = op->getOperand(0), y = op->getResult(0);
    auto t = cast<ShapedType>(x.getType());
    // Row-local on every dimension but the features: [B, S, D], sequence-
    // first [S, B, D] after a transpose, or the node dimension merged with
    // the batch as the major part of a leading dim ([S * B, D], as
    // nn.MultiheadAttention's out_proj sees it). Without a known node
    // dimension, [B, S, D] has it at 1 and a rank-2 input waits for one.
    if (t.getRank() < 2)
      return failure();
    int64_t d = -1;
    if (auto it = known.find(x); it != known.end())
      d = it->second;
    else if (auto it = known.find(y); it != known.end())
      d = it->second;
    else if (t.getRank() == 3)
      d = 1;
    if (d < 0)
      return pairs;
    if (d >= t.getRank() - 1)
      return failure();
    return SmallVector<RowDim>{{x, d}, {y, d}};
  }
  if (auto e = dyn_cast<gt::DegreeEmbeddingOp>(op))
    return SmallVector<RowDim>{
        {e.getInput(), 1}, {e.getDegree(), 1}, {e.getResult(), 1}};
  if (auto e = dyn_cast<gt::NodeEmbeddingOp>(op)) {
    if (cast<ShapedType>(e.getIds().getType()).getRank() < 2)
      return failure();
    return SmallVector<RowDim>{{e.getIds(), 1}, {e.getResult(), 1}};
  }
  if (auto sb = dyn_cast<gt::SpatialBiasOp>(op)) {
    // distance [B, S, S] -> bias [B, H, S, S]: query rows are dim 1 / 2.
    auto t = cast<ShapedType>(sb.getDistance().getType());
    if (t.getRank() != 3)
      return failure();
    return SmallVector<RowDim>{{sb.getDistance(), 1}, {sb.getResult(), 2}};
  }
  if (auto t = dyn_cast<tosa::TransposeOp>(op)) {
    // The node dimension follows the permutation.
    ArrayRef<int32_t> perms = t.getPerms();
    Value x = t.getInput1(), y = t.getResult();
    if (auto it = known.find(x); it != known.end()) {
      for (auto [i, p] : llvm::enumerate(perms))
        if (p == it->second)
          return SmallVector<RowDim>{{x, it->second}, {y, (int64_t)i}};
      return failure();
    }
    if (auto it = known.find(y); it != known.end()) {
      if (it->second >= (int64_t)perms.size())
        return failure();
      return SmallVector<RowDim>{{x, perms[it->second]}, {y, it->second}};
    }
    return pairs;
  }
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    // [N, M, K] x [N, K, P]: the rows M of A (the node dimension, possibly
    // merged with the batch: [1, S * B, K]) are the rows of the result.
    Value a = mm.getA(), c = mm.getResult();
    auto at1 = [&](Value v) {
      auto it = known.find(v);
      return it != known.end() && it->second == 1;
    };
    if (!known.contains(a) && !known.contains(c))
      return pairs;
    if (!at1(a) && !at1(c))
      return failure();
    return SmallVector<RowDim>{{a, 1}, {c, 1}};
  }
  if (auto sl = dyn_cast<tosa::SliceOp>(op)) {
    // Row-local when it keeps every row: start 0 and size S on the node
    // dimension (e.g. q / k / v out of a packed projection).
    Value x = sl.getInput1(), y = sl.getResult();
    int64_t d = -1;
    if (auto it = known.find(x); it != known.end())
      d = it->second;
    else if (auto it = known.find(y); it != known.end())
      d = it->second;
    if (d < 0)
      return pairs;
    SmallVector<int64_t> start, size;
    if (!tosa::getConstShapeValues(sl.getStart().getDefiningOp(), start) ||
        !tosa::getConstShapeValues(sl.getSize().getDefiningOp(), size) ||
        d >= (int64_t)start.size() || start[d] != 0 ||
        (size[d] != dimOf(x, d) && size[d] != -1) || dimOf(x, d) != dimOf(y, d))
      return failure();
    return SmallVector<RowDim>{{x, d}, {y, d}};
  }
  if (auto r = dyn_cast<tosa::ReshapeOp>(op)) {
    // Row-local when the node index stays the major part of one dimension:
    // the dims before it hold as many elements on both sides and the
    // dimension it lands in is a multiple of S (the reshape splits or merges
    // other dims, e.g. the heads, or merges the dims after the node
    // dimension into it: [S, B, ..] -> [S * B, ..], and back).
    Value x = r.getInput1(), y = r.getResult();
    auto xt = dyn_cast<RankedTensorType>(x.getType());
    auto yt = dyn_cast<RankedTensorType>(y.getType());
    if (!xt || !yt || !xt.hasStaticShape() || !yt.hasStaticShape())
      return failure();
    auto mapDim = [&](ArrayRef<int64_t> from, int64_t d,
                      ArrayRef<int64_t> to) -> int64_t {
      if (d >= (int64_t)from.size() || from[d] % S != 0)
        return -1;
      int64_t before = 1;
      for (int64_t i = 0; i < d; ++i)
        before *= from[i];
      int64_t prefix = 1;
      for (auto [e, size] : llvm::enumerate(to)) {
        if (prefix == before && size % S == 0)
          return e;
        prefix *= size;
      }
      return -1;
    };
    if (auto it = known.find(x); it != known.end()) {
      int64_t e = mapDim(xt.getShape(), it->second, yt.getShape());
      if (e < 0)
        return failure();
      return SmallVector<RowDim>{{x, it->second}, {y, e}};
    }
    if (auto it = known.find(y); it != known.end()) {
      int64_t d = mapDim(yt.getShape(), it->second, xt.getShape());
      if (d < 0)
        return failure();
      return SmallVector<RowDim>{{x, d}, {y, it->second}};
    }
    return pairs;
  }
  if (isElementwise(op) && op->getNumResults() == 1) {
    Value y = op->getResult(0);
    auto t = dyn_cast<RankedTensorType>(y.getType());
    if (!t)
      return failure();
    // The node dimension is the one a sharded operand or the result already
    // has (shapes such as [B, S, S] or [B, S, D = S] are ambiguous alone).
    int64_t d = -1;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
      if (auto it = known.find(v); it != known.end())
        d = it->second;
    if (d < 0)
      return pairs;
    if (d >= t.getRank() || t.getDimSize(d) % S != 0)
      return failure();
    pairs.push_back({y, d});
    for (Value x : op->getOperands()) {
      auto xt = dyn_cast<RankedTensorType>(x.getType());
      if (xt && xt.getRank() == t.getRank() && dimOf(x, d) == t.getDimSize(d))
        pairs.push_back({x, d});
    }
    return pairs;
  }
  return failure();
}

struct GTContextParallelPass
    : megagraph::impl::GTContextParallelBase<GTContextParallelPass> {
  using GTContextParallelBase::GTContextParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (cp < 1 || dp < 1 || pp < 1) {
      module.emitError() << "gt-context-parallel: cp, dp and pp must be at "
                            "least 1, got cp="
                         << static_cast<int64_t>(cp)
                         << " dp=" << static_cast<int64_t>(dp)
                         << " pp=" << static_cast<int64_t>(pp);
      return signalPassFailure();
    }
    int64_t modeValue;
    if (mode == "allgather")
      modeValue = MGRT_CP_ALLGATHER;
    else if (mode == "ring")
      modeValue = MGRT_CP_RING;
    else if (mode == "ulysses")
      modeValue = MGRT_CP_ULYSSES;
    else {
      module.emitError() << "gt-context-parallel: mode must be allgather, "
                            "ring or ulysses, got '"
                         << mode << "'";
      return signalPassFailure();
    }
    if (cp == 1)
      return;
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("gt-context-parallel needs the forward function @main "
                       "(run it before gt-autodiff)");
      return signalPassFailure();
    }
    if (module.lookupSymbol(kContextParallelGrid)) {
      module.emitError() << "gt-context-parallel: the module already has a "
                            "symbol @"
                         << kContextParallelGrid << " (the pass ran twice?)";
      return signalPassFailure();
    }

    // 1. The sequence length S, from the attentions.
    SmallVector<gt::AttentionOp> attentions;
    main.walk([&](gt::AttentionOp a) { attentions.push_back(a); });
    if (attentions.empty()) {
      main.emitError("gt-context-parallel: @main has no gt.attention; "
                     "context parallelism shards the attention's sequence");
      return signalPassFailure();
    }
    int64_t S = ShapedType::kDynamic;
    for (gt::AttentionOp a : attentions) {
      auto q = cast<ShapedType>(a.getQuery().getType());
      auto k = cast<ShapedType>(a.getKey().getType());
      if (!q.hasStaticShape() || !k.hasStaticShape() ||
          q.getDimSize(1) != k.getDimSize(1) ||
          (S != ShapedType::kDynamic && q.getDimSize(1) != S)) {
        a.emitOpError() << "gt-context-parallel: every attention must be a "
                           "self-attention over the same static sequence "
                           "length, got query "
                        << q << " and key " << k;
        return signalPassFailure();
      }
      S = q.getDimSize(1);
      // Ulysses moves whole heads: head group c of every attention to rank c.
      if (modeValue == MGRT_CP_ULYSSES && a.getNumHeads() % cp) {
        a.emitOpError() << "gt-context-parallel: mode=ulysses needs cp="
                        << static_cast<int64_t>(cp) << " to divide the "
                        << a.getNumHeads() << " heads";
        return signalPassFailure();
      }
    }
    if (S < cp) {
      attentions.front().emitOpError()
          << "gt-context-parallel: cp=" << static_cast<int64_t>(cp)
          << " exceeds the sequence length S=" << S
          << " (each rank holds at least one row)";
      return signalPassFailure();
    }
    // Rows per rank: S / cp, or with uneven blocks (cp does not divide S)
    // ceil(S / cp), of which block c fills mgrt_cp_block_rows(S, cp, c).
    const int64_t rows = (S + cp - 1) / cp;
    const int64_t seq = S % cp == 0 ? 0 : S;

    // 2. Propagate the node dimension to a fixed point.
    llvm::DenseMap<Value, int64_t> rowDim;
    bool conflict = false;
    auto mark = [&](Value v, int64_t d) -> bool {
      auto [it, inserted] = rowDim.try_emplace(v, d);
      if (!inserted && it->second != d) {
        conflict = true;
        if (Operation *def = v.getDefiningOp())
          def->emitOpError() << "gt-context-parallel: the node dimension of "
                                "this value is both "
                             << it->second << " and " << d;
        else
          main.emitError() << "gt-context-parallel: the node dimension of "
                              "argument "
                           << cast<BlockArgument>(v).getArgNumber()
                           << " is both " << it->second << " and " << d;
      }
      return inserted;
    };
    SmallVector<Operation *> ops;
    main.walk([&](Operation *op) {
      if (op != main)
        ops.push_back(op);
    });
    for (bool changed = true; changed && !conflict;) {
      changed = false;
      for (Operation *op : ops) {
        FailureOr<SmallVector<RowDim>> pairs = rowPairs(op, S, rowDim);
        if (failed(pairs))
          continue;
        bool any = isa<gt::AttentionOp>(op);
        for (auto [v, d] : *pairs)
          any |= rowDim.contains(v);
        if (!any)
          continue;
        for (auto [v, d] : *pairs)
          changed |= mark(v, d);
      }
    }
    if (conflict)
      return signalPassFailure();

    // 3. Every op touching a sharded value must be row-local.
    for (Operation *op : ops) {
      if (isa<func::ReturnOp>(op))
        continue;
      bool touches = false;
      for (Value v : op->getOperands())
        touches |= rowDim.contains(v);
      for (Value v : op->getResults())
        touches |= rowDim.contains(v);
      if (!touches)
        continue;
      FailureOr<SmallVector<RowDim>> pairs = rowPairs(op, S, rowDim);
      bool covered = succeeded(pairs);
      if (covered) {
        llvm::DenseSet<Value> inPairs;
        for (auto [v, d] : *pairs)
          inPairs.insert(v);
        for (Value v : op->getOperands())
          covered &= !rowDim.contains(v) || inPairs.contains(v);
        for (Value v : op->getResults())
          covered &= !rowDim.contains(v) || inPairs.contains(v);
      }
      if (!covered) {
        op->emitOpError() << "gt-context-parallel: cannot shard the node "
                             "dimension (S="
                          << S << ") through this op: it is not row-local";
        return signalPassFailure();
      }
    }

    // The driver fills each rank's rows of an input [B, S, ...] by cutting
    // dimension 1; an input sharded on another dimension (reachable through
    // transposes) would get the wrong rows.
    for (BlockArgument arg : main.getArguments()) {
      auto it = rowDim.find(arg);
      if (it == rowDim.end() || it->second == 1)
        continue;
      auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    gt::kTensorNameAttr);
      main.emitError() << "gt-context-parallel: input "
                       << (name ? ("'" + name.getValue() + "'").str()
                                : "#" + std::to_string(arg.getArgNumber()))
                       << " has the node dimension at position " << it->second
                       << "; inputs must be [B, S, ...] (the driver gives each "
                          "rank rows of dimension 1)";
      return signalPassFailure();
    }

    // 4. Retype: the node dimension gets `rows` rows (the node index is the
    //    major part of its dimension: S * k elements become rows * k).
    auto shrink = [&](Value v, int64_t d) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[d] = shape[d] / S * rows;
      v.setType(t.clone(shape));
      ++numSharded;
    };
    for (auto [v, d] : rowDim)
      shrink(v, d);
    // A sharded reshape's target shape follows its (shrunk) result.
    for (Operation *op : ops)
      if (auto r = dyn_cast<tosa::ReshapeOp>(op);
          r && rowDim.contains(r.getResult())) {
        ImplicitLocOpBuilder ib(r.getLoc(), r);
        r.getShapeMutable().assign(tosa::getTosaConstShape(
            ib, cast<RankedTensorType>(r.getType()).getShape()));
      }
    // A sharded slice takes the rank's rows (start 0 on the node dimension).
    for (Operation *op : ops)
      if (auto sl = dyn_cast<tosa::SliceOp>(op);
          sl && rowDim.contains(sl.getResult())) {
        ImplicitLocOpBuilder ib(sl.getLoc(), sl);
        sl.getSizeMutable().assign(tosa::getTosaConstShape(
            ib, cast<RankedTensorType>(sl.getType()).getShape()));
      }
    SmallVector<Type> results;
    main.walk([&](func::ReturnOp r) {
      results.assign(r.getOperandTypes().begin(), r.getOperandTypes().end());
    });
    main.setType(FunctionType::get(
        &getContext(), main.getBody().front().getArgumentTypes(), results));

    // 5. Mark the attentions; the grid.
    OpBuilder b(&getContext());
    // The cp group is axis 1 of the runtime's grid [dp, cp, 1, 1] (mask 2),
    // or with pipeline stages axis 2 of [dp, pp, cp, 1] (mask 4).
    auto cpAttr =
        pp == 1 ? gt::ContextParallelAttr::get(&getContext(), cp, modeValue,
                                               ArrayRef<int64_t>{dp, cp, 1, 1},
                                               /*axes=*/2, seq)
                : gt::ContextParallelAttr::get(&getContext(), cp, modeValue,
                                               ArrayRef<int64_t>{dp, pp, cp, 1},
                                               /*axes=*/4, seq);
    for (gt::AttentionOp a : attentions) {
      a->setAttr(gt::kContextParallelAttr, cpAttr);
      ++numAttention;
    }
    // A pipeline's last stage takes its loss seed from the driver
    // (gt-autodiff's seed-input), which weights each micro-batch.
    if (pp == 1)
      main->setAttr(kContextParallelSeedAttr, b.getUnitAttr());
    b.setInsertionPointToStart(module.getBody());
    shard::GridOp::create(b, main.getLoc(), kContextParallelGrid,
                          pp == 1 ? ArrayRef<int64_t>{dp, cp}
                                  : ArrayRef<int64_t>{dp, pp, cp});
  }
};

} // namespace

Value megagraph::buildContextParallelLossSeed(OpBuilder &b, Location loc,
                                              Value mask, Type lossType,
                                              StringRef grid,
                                              ArrayRef<int16_t> gridAxes) {
  ImplicitLocOpBuilder ib(loc, b);
  auto f32 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  };
  auto maskType = cast<RankedTensorType>(mask.getType());
  Value m = tosa::CastOp::create(b, loc, f32(maskType.getShape()), mask);
  const int64_t n = maskType.getNumElements();
  m = tosa::ReshapeOp::create(b, loc, f32({n}), m,
                              tosa::getTosaConstShape(ib, {n}));
  Value local =
      tosa::ReduceSumOp::create(b, loc, f32({1}), m, b.getI32IntegerAttr(0));
  Value total = shard::AllReduceOp::create(b, loc, f32({1}), grid, gridAxes,
                                           local, shard::ReductionKind::Sum);
  Value one = tosa::ConstOp::create(b, loc, f32({1}),
                                    DenseElementsAttr::get(f32({1}), 1.0f));
  total = tosa::MaximumOp::create(b, loc, f32({1}), total, one);
  Value inv = tosa::ReciprocalOp::create(b, loc, f32({1}), total);
  auto i8 = RankedTensorType::get({1}, b.getI8Type());
  Value shift = tosa::ConstOp::create(
      b, loc, i8, DenseElementsAttr::get(i8, b.getI8IntegerAttr(0)));
  Value seed = tosa::MulOp::create(b, loc, f32({1}), local, inv, shift);
  auto type = cast<RankedTensorType>(lossType);
  if (!type.getElementType().isF32())
    seed = tosa::CastOp::create(b, loc, type.clone(ArrayRef<int64_t>{1}), seed);
  return tosa::ReshapeOp::create(b, loc, type, seed,
                                 tosa::getTosaConstShape(ib, {}));
}
