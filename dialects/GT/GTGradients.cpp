//===- GTGradients.cpp - Reverse-mode gradient rules ------------*- C++ -*-===//
//
// Part of MegaGraph. GradientOpInterface rules: on the gt ops (linear,
// gelu with either form, layer_norm, cross_entropy, attention, the
// embeddings, spmm, sparse_attention, edge_bias) and, through external
// models, on every op the ONNX importer and gt-raise create around them:
// TOSA elementwise, reduction, data-movement, gather and matmul ops,
// linalg.softmax, and the importer's linalg.generic forms (elementwise
// bodies, row scatters with runtime indices). Comparisons, logical ops,
// argmax, integer division, floor and ceil carry an explicit NoGradient
// model. Each rule builds TOSA on static shapes; broadcasting in the
// forward becomes a sum over the broadcast dimensions here. Scatter-adds
// (gather, the embeddings, the CSR ops) are one-hot matmuls: O(rows x
// indices) work and memory. test/unit/Dialect/GradientCoverageTest.cpp
// checks that every op the importer creates has a rule.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTGradients.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>

using namespace mlir;
using namespace megagraph;
using namespace megagraph::gt;

namespace {

/// The shared TOSA builder plus the one-hot helpers of the embedding rules.
struct GradBuilder : megagraph::TosaBuilder {
  using TosaBuilder::TosaBuilder;

  Value oneHotT(Value ids, int64_t v) {
    Type ie = elem(ids);
    int64_t n = 1;
    for (int64_t d : shape(ids))
      n *= d;
    Value flat = reshape(ids, {1, n});
    auto intConst = [&](int64_t value) {
      auto t = type({1, 1}, ie);
      return tosa::ConstOp::create(
          r, loc, t, DenseElementsAttr::get(t, r.getIntegerAttr(ie, value)));
    };
    auto flatType = type({1, n}, ie);
    Value c = tosa::MaximumOp::create(r, loc, flatType, flat, intConst(0));
    c = tosa::MinimumOp::create(r, loc, flatType, c, intConst(v - 1));
    SmallVector<Attribute> iota;
    for (int64_t i = 0; i < v; ++i)
      iota.push_back(r.getIntegerAttr(ie, i));
    auto iotaType = type({v, 1}, ie);
    Value rows = tosa::ConstOp::create(r, loc, iotaType,
                                       DenseElementsAttr::get(iotaType, iota));
    Value hit =
        tosa::EqualOp::create(r, loc, type({v, n}, r.getI1Type()), rows, c);
    return hit;
  }
  /// dtable[V, D] = onehot(ids)^T @ dy with dy [N, D] (N = #ids): the
  /// gradient of a clamped table lookup. O(N * V) work and memory; a
  /// scatter-add runtime kernel is the planned replacement.
  Value embeddingGrad(Value ids, Value dy2, int64_t v, Type e) {
    int64_t n = shape(dy2)[0], d = shape(dy2)[1];
    Value hitT = oneHotT(ids, v);
    Value onehotT = tosa::CastOp::create(r, loc, type({v, n}, e), hitT);
    return reshape(matmul(reshape(onehotT, {1, v, n}), reshape(dy2, {1, n, d})),
                   {v, d});
  }
  /// A float splat of the full shape `s`.
  Value splatOf(ArrayRef<int64_t> s, Type e, double value) {
    auto t = type(s, e);
    return tosa::ConstOp::create(
        r, loc, t, DenseElementsAttr::get(t, r.getFloatAttr(e, value)));
  }
  Value zerosLike(Value v) { return splatOf(shape(v), elem(v), 0.0); }
  /// `pred ? a : b` (equal ranks; numpy broadcasting).
  Value select(Value pred, Value a, Value b) {
    SmallVector<int64_t> s = bshape(a, b);
    for (auto [i, d] : llvm::enumerate(shape(pred)))
      if (d != 1)
        s[i] = d;
    return tosa::SelectOp::create(r, loc, type(s, elem(a)), pred, a, b);
  }
  /// Zero padding of `v`: `lo[i]` before and `hi[i]` after along dim i.
  Value pad(Value v, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi) {
    SmallVector<int64_t> padding, s;
    for (auto [d, l, h] : llvm::zip(shape(v), lo, hi)) {
      padding.push_back(l);
      padding.push_back(h);
      s.push_back(d + l + h);
    }
    Type e = elem(v);
    Value zero = tosa::ConstOp::create(
        r, loc, type({1}, e),
        DenseElementsAttr::get(type({1}, e), r.getFloatAttr(e, 0.0)));
    return tosa::PadOp::create(r, loc, type(s, e), v, constShape(padding),
                               zero);
  }
  /// v[start : start + size] (static).
  Value slice(Value v, ArrayRef<int64_t> start, ArrayRef<int64_t> size) {
    return tosa::SliceOp::create(r, loc, type(size, elem(v)), v,
                                 constShape(start), constShape(size));
  }
  /// Batched transpose of the last two dims of a rank-3 tensor.
  Value transposeLast(Value v) { return transpose(v, {0, 2, 1}); }
  /// `v` as i32 (gather indices).
  Value toI32(Value v) {
    if (elem(v).isInteger(32))
      return v;
    return tosa::CastOp::create(r, loc, type(shape(v), r.getI32Type()), v);
  }
  /// The i32 constant 0, 1, ..., count - 1 of `s` (count elements).
  Value iota(int64_t count, ArrayRef<int64_t> s) {
    SmallVector<Attribute> ids;
    for (int64_t i = 0; i < count; ++i)
      ids.push_back(r.getI32IntegerAttr(i));
    auto t = type(s, r.getI32Type());
    return tosa::ConstOp::create(r, loc, t, DenseElementsAttr::get(t, ids));
  }
  /// The CSR row of every edge, [1, E] i32: row(e) = #{i in 1..N :
  /// row_ptr[i] <= e} (counted in float, exact below 2^24 rows).
  Value edgeRows(Value rowPtr, int64_t n, int64_t edges, Type e) {
    Value ends = reshape(slice(toI32(rowPtr), {1}, {n}), {n, 1});
    Value passed = tosa::GreaterEqualOp::create(
        r, loc, type({n, edges}, r.getI1Type()), iota(edges, {1, edges}), ends);
    Value rows =
        reduceSum(tosa::CastOp::create(r, loc, type({n, edges}, e), passed), 0);
    return tosa::CastOp::create(r, loc, type({1, edges}, r.getI32Type()), rows);
  }
  /// onehot[1, K, E] = (ids[e] == k) as floats, for the [1, E] i32 `ids`.
  Value oneHotRows(Value ids, int64_t k, Type e) {
    int64_t edges = shape(ids)[1];
    Value hit =
        tosa::EqualOp::create(r, loc, type({1, k, edges}, r.getI1Type()),
                              iota(k, {1, k, 1}), reshape(ids, {1, 1, edges}));
    return tosa::CastOp::create(r, loc, type({1, k, edges}, e), hit);
  }
  /// table[1, K, C] rows at the [1, E] i32 `ids`: [1, E, C].
  Value gatherRows(Value table, Value ids) {
    ArrayRef<int64_t> s = shape(table);
    return tosa::GatherOp::create(
        r, loc, type({1, shape(ids)[1], s[2]}, elem(table)), table, ids);
  }
};

/// Constant !tosa.shape operand values, or failure.
FailureOr<SmallVector<int64_t>> constShapeOf(Value shapeValue) {
  SmallVector<int64_t> values;
  Operation *def = shapeValue.getDefiningOp();
  if (!def || !tosa::getConstShapeValues(def, values))
    return failure();
  return values;
}

/// Float value of a clamp bound attribute.
double boundOf(Attribute a) {
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  return static_cast<double>(cast<IntegerAttr>(a).getInt());
}

//===----------------------------------------------------------------------===//
// External models for TOSA ops
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct BinaryGradient
    : GradientOpInterface::ExternalModel<BinaryGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value dy = resultGrads[0];
    Value a = op->getOperand(0), c = op->getOperand(1);
    operandGrads.assign(op->getNumOperands(), Value());
    Value da = dy, dc = dy;
    if constexpr (std::is_same_v<OpTy, tosa::SubOp>) {
      dc = g.mul(dy, g.scalar(GradBuilder::elem(dy), -1.0,
                              GradBuilder::shape(dy).size()));
    } else if constexpr (std::is_same_v<OpTy, tosa::MulOp>) {
      da = g.mul(dy, c);
      dc = g.mul(dy, a);
    }
    operandGrads[0] = g.sumToShape(da, GradBuilder::shape(a));
    operandGrads[1] = g.sumToShape(dc, GradBuilder::shape(c));
    return success();
  }
};

struct ReshapeGradient
    : GradientOpInterface::ExternalModel<ReshapeGradient, tosa::ReshapeOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] =
        g.reshape(resultGrads[0], GradBuilder::shape(op->getOperand(0)));
    return success();
  }
};

struct TransposeGradient
    : GradientOpInterface::ExternalModel<TransposeGradient, tosa::TransposeOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    ArrayRef<int32_t> perm = cast<tosa::TransposeOp>(op).getPerms();
    SmallVector<int32_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.transpose(resultGrads[0], inverse);
    return success();
  }
};

/// y = f(x) elementwise; dx = dy * f'(x), written with y where that is
/// cheaper: rsqrt -0.5 y^3, reciprocal -y^2, exp y, tanh 1 - y^2, sigmoid
/// y (1 - y), log 1 / x.
template <typename OpTy>
struct UnaryGradient
    : GradientOpInterface::ExternalModel<UnaryGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value x = op->getOperand(0), y = op->getResult(0), dy = resultGrads[0];
    Type e = GradBuilder::elem(x);
    int64_t rank = GradBuilder::shape(x).size();
    auto c = [&](double v) { return g.scalar(e, v, rank); };
    Value d;
    if constexpr (std::is_same_v<OpTy, tosa::RsqrtOp>)
      d = g.mul(g.mul(g.mul(y, y), y), c(-0.5));
    else if constexpr (std::is_same_v<OpTy, tosa::ReciprocalOp>)
      d = g.mul(g.mul(y, y), c(-1.0));
    else if constexpr (std::is_same_v<OpTy, tosa::ExpOp>)
      d = y;
    else if constexpr (std::is_same_v<OpTy, tosa::TanhOp>)
      d = g.sub(c(1.0), g.mul(y, y));
    else if constexpr (std::is_same_v<OpTy, tosa::SigmoidOp>)
      d = g.mul(y, g.sub(c(1.0), y));
    else
      d = g.recip(x); // log
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(dy, d);
    return success();
  }
};

/// clamp (ReLU when min = 0, max = inf): the gradient passes where
/// min < x < max (PyTorch's ReLU convention at the kink: 0).
struct ClampGradient
    : GradientOpInterface::ExternalModel<ClampGradient, tosa::ClampOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto clamp = cast<tosa::ClampOp>(op);
    GradBuilder g{builder, op->getLoc()};
    Value x = clamp.getInput(), dy = resultGrads[0];
    Type e = GradBuilder::elem(x);
    if (!isa<FloatType>(e))
      return op->emitOpError("has no gradient rule for integer clamps");
    int64_t rank = GradBuilder::shape(x).size();
    auto bools = g.type(GradBuilder::shape(x), builder.getI1Type());
    Value lo = g.scalar(e, boundOf(clamp.getMinValAttr()), rank);
    Value hi = g.scalar(e, boundOf(clamp.getMaxValAttr()), rank);
    Value above = tosa::GreaterOp::create(builder, op->getLoc(), bools, x, lo);
    Value below = tosa::GreaterOp::create(builder, op->getLoc(), bools, hi, x);
    Value inside =
        tosa::LogicalAndOp::create(builder, op->getLoc(), bools, above, below);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.select(inside, dy, g.zerosLike(dy));
    return success();
  }
};

/// Batched matmul c[n] = a[n] @ b[n]: da = dc b^T, db = a^T dc (summed over
/// the batch when an operand has batch 1 and the other does not). The zero
/// points get no gradient.
struct MatMulGradient
    : GradientOpInterface::ExternalModel<MatMulGradient, tosa::MatMulOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value a = op->getOperand(0), b = op->getOperand(1), dc = resultGrads[0];
    if (!isa<FloatType>(GradBuilder::elem(a)))
      return op->emitOpError("has no gradient rule for integer matmuls");
    operandGrads.assign(op->getNumOperands(), Value());
    int64_t n = GradBuilder::shape(dc)[0];
    auto batched = [&](Value v) {
      ArrayRef<int64_t> s = GradBuilder::shape(v);
      if (s[0] == n)
        return v;
      // A batch-1 operand of a batch-n product: tile it for the product.
      return g.add(g.splatOf({n, s[1], s[2]}, GradBuilder::elem(v), 0.0), v);
    };
    operandGrads[0] = g.sumToShape(g.matmul(dc, g.transposeLast(batched(b))),
                                   GradBuilder::shape(a));
    operandGrads[1] = g.sumToShape(g.matmul(g.transposeLast(batched(a)), dc),
                                   GradBuilder::shape(b));
    return success();
  }
};

/// negate (float; the zero points get no gradient): dx = -dy.
struct NegateGradient
    : GradientOpInterface::ExternalModel<NegateGradient, tosa::NegateOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value dy = resultGrads[0];
    if (!isa<FloatType>(GradBuilder::elem(dy)))
      return op->emitOpError("has no gradient rule for integer negation");
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(dy, g.scalar(GradBuilder::elem(dy), -1.0,
                                         GradBuilder::shape(dy).size()));
    return success();
  }
};

/// maximum / minimum (ONNX Max, Min, and the importer's max(x, 0) forms of
/// Softplus, Celu and HardSigmoid): dy goes to the operand that was chosen,
/// half to each on ties, like torch.maximum / minimum. That is the
/// derivative wherever the max of two smooth terms is smooth itself, as
/// softplus(x) = max(x, 0) + log(1 + exp(-|x|)) at x = 0.
template <typename OpTy>
struct MinMaxGradient
    : GradientOpInterface::ExternalModel<MinMaxGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value a = op->getOperand(0), b = op->getOperand(1), dy = resultGrads[0];
    if (!isa<FloatType>(GradBuilder::elem(dy)))
      return op->emitOpError("has no gradient rule for integer operands");
    auto bools = g.type(GradBuilder::shape(dy), builder.getI1Type());
    // maximum: a chosen where a > b; minimum: where b > a.
    Value first =
        std::is_same_v<OpTy, tosa::MaximumOp>
            ? tosa::GreaterOp::create(builder, op->getLoc(), bools, a, b)
            : tosa::GreaterOp::create(builder, op->getLoc(), bools, b, a);
    Value tie = tosa::EqualOp::create(builder, op->getLoc(), bools, a, b);
    Value zero = g.zerosLike(dy);
    Value half = g.mul(dy, g.scalar(GradBuilder::elem(dy), 0.5,
                                    GradBuilder::shape(dy).size()));
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.sumToShape(
        g.select(tie, half, g.select(first, dy, zero)), GradBuilder::shape(a));
    operandGrads[1] = g.sumToShape(
        g.select(tie, half, g.select(first, zero, dy)), GradBuilder::shape(b));
    return success();
  }
};

/// slice: the gradient is dy zero-padded back to the input's shape.
struct SliceGradient
    : GradientOpInterface::ExternalModel<SliceGradient, tosa::SliceOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto slice = cast<tosa::SliceOp>(op);
    GradBuilder g{builder, op->getLoc()};
    FailureOr<SmallVector<int64_t>> start = constShapeOf(slice.getStart());
    if (failed(start))
      return op->emitOpError("has no gradient rule for a non-constant start");
    ArrayRef<int64_t> in = GradBuilder::shape(slice.getInput1());
    ArrayRef<int64_t> out = GradBuilder::shape(slice.getResult());
    SmallVector<int64_t> lo, hi;
    for (auto [s, i, o] : llvm::zip(*start, in, out)) {
      lo.push_back(s);
      hi.push_back(i - s - o);
    }
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.pad(resultGrads[0], lo, hi);
    return success();
  }
};

/// concat: each input's gradient is its slice of dy along the axis.
struct ConcatGradient
    : GradientOpInterface::ExternalModel<ConcatGradient, tosa::ConcatOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto concat = cast<tosa::ConcatOp>(op);
    GradBuilder g{builder, op->getLoc()};
    int64_t axis = concat.getAxis();
    Value dy = resultGrads[0];
    operandGrads.assign(op->getNumOperands(), Value());
    int64_t offset = 0;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      ArrayRef<int64_t> s = GradBuilder::shape(v);
      SmallVector<int64_t> start(s.size(), 0);
      start[axis] = offset;
      operandGrads[i] = g.slice(dy, start, s);
      offset += s[axis];
    }
    return success();
  }
};

/// select(pred, a, b): dy goes to a where pred holds, to b elsewhere (summed
/// over broadcast dims); the predicate gets none.
struct SelectGradient
    : GradientOpInterface::ExternalModel<SelectGradient, tosa::SelectOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value pred = op->getOperand(0), a = op->getOperand(1),
          b = op->getOperand(2), dy = resultGrads[0];
    Value zero = g.zerosLike(dy);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[1] =
        g.sumToShape(g.select(pred, dy, zero), GradBuilder::shape(a));
    operandGrads[2] =
        g.sumToShape(g.select(pred, zero, dy), GradBuilder::shape(b));
    return success();
  }
};

/// cast: float to float casts the gradient back; from an integer (or to
/// one) there is no gradient.
struct CastGradient
    : GradientOpInterface::ExternalModel<CastGradient, tosa::CastOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    Value x = op->getOperand(0);
    operandGrads.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(GradBuilder::elem(x)) ||
        !isa<FloatType>(GradBuilder::elem(op->getResult(0))))
      return success();
    Value dy = resultGrads[0];
    operandGrads[0] =
        x.getType() == dy.getType()
            ? dy
            : tosa::CastOp::create(builder, op->getLoc(), x.getType(), dy)
                  .getResult();
    return success();
  }
};

/// reduce_sum over one axis: dy (size 1 on the axis) broadcast back.
struct ReduceSumGradient
    : GradientOpInterface::ExternalModel<ReduceSumGradient, tosa::ReduceSumOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Value x = op->getOperand(0);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.add(g.zerosLike(x), resultGrads[0]);
    return success();
  }
};

/// Operands and results of an op whose result is a boolean or an integer
/// (comparisons, logical ops, argmax, integer division) or piecewise
/// constant (floor, ceil): no gradient flows through it.
template <typename OpTy>
struct NoGradient : GradientOpInterface::ExternalModel<NoGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &, ValueRange,
                              SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), Value());
    return success();
  }
  bool isDifferentiableOperand(Operation *, unsigned) const { return false; }
};

/// More elementwise rules: erf 2/sqrt(pi) exp(-x^2), sin cos(x), cos
/// -sin(x), abs sign(x) (0 at 0, like PyTorch).
template <typename OpTy>
struct UnaryMathGradient
    : GradientOpInterface::ExternalModel<UnaryMathGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    Value x = op->getOperand(0), dy = resultGrads[0];
    Type e = GradBuilder::elem(x);
    if (!isa<FloatType>(e))
      return op->emitOpError("has no gradient rule for integer operands");
    int64_t rank = GradBuilder::shape(x).size();
    auto c = [&](double v) { return g.scalar(e, v, rank); };
    Value d;
    if constexpr (std::is_same_v<OpTy, tosa::ErfOp>) {
      d = g.mul(g.exp(g.mul(g.mul(x, x), c(-1.0))), c(2.0 / std::sqrt(M_PI)));
    } else if constexpr (std::is_same_v<OpTy, tosa::SinOp>) {
      d = tosa::CosOp::create(builder, loc, x.getType(), x);
    } else if constexpr (std::is_same_v<OpTy, tosa::CosOp>) {
      d = g.mul(tosa::SinOp::create(builder, loc, x.getType(), x), c(-1.0));
    } else { // abs
      auto bools = g.type(GradBuilder::shape(x), builder.getI1Type());
      Value pos = tosa::GreaterOp::create(builder, loc, bools, x, c(0.0));
      Value neg = tosa::GreaterOp::create(builder, loc, bools, c(0.0), x);
      d = g.select(pos, c(1.0), g.select(neg, c(-1.0), c(0.0)));
    }
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(dy, d);
    return success();
  }
};

/// pow(a, b) = z: da = dy b a^(b-1) (0 where b = 0), db = dy z log(a) (0
/// where a = 0 and b >= 0), PyTorch's conventions; summed over broadcast
/// dimensions.
struct PowGradient
    : GradientOpInterface::ExternalModel<PowGradient, tosa::PowOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    Value a = op->getOperand(0), b = op->getOperand(1), z = op->getResult(0);
    Value dy = resultGrads[0];
    Type e = GradBuilder::elem(dy);
    if (!isa<FloatType>(e))
      return op->emitOpError("has no gradient rule for integer operands");
    ArrayRef<int64_t> s = GradBuilder::shape(dy);
    int64_t rank = s.size();
    auto c = [&](double v) { return g.scalar(e, v, rank); };
    auto bools = g.type(s, builder.getI1Type());
    Value zero = g.zerosLike(dy);
    // a^(b-1) with the result's (broadcast) shape.
    Value bm1 = g.sub(b, c(1.0));
    Value powm1 = tosa::PowOp::create(builder, loc, g.type(s, e), a, bm1);
    Value bZero = tosa::EqualOp::create(
        builder, loc, g.type(GradBuilder::shape(b), builder.getI1Type()), b,
        c(0.0));
    Value da = g.select(bZero, zero, g.mul(g.mul(dy, b), powm1));
    Value logA = tosa::LogOp::create(builder, loc, a.getType(), a);
    Value aZero = tosa::EqualOp::create(
        builder, loc, g.type(GradBuilder::shape(a), builder.getI1Type()), a,
        c(0.0));
    Value bNonNeg = tosa::GreaterEqualOp::create(
        builder, loc, g.type(GradBuilder::shape(b), builder.getI1Type()), b,
        c(0.0));
    Value skip =
        tosa::LogicalAndOp::create(builder, loc, bools, aZero, bNonNeg);
    Value db = g.select(skip, zero, g.mul(g.mul(dy, z), logA));
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.sumToShape(da, GradBuilder::shape(a));
    operandGrads[1] = g.sumToShape(db, GradBuilder::shape(b));
    return success();
  }
};

/// reduce_max / reduce_min over one axis: dy goes to the positions equal to
/// the extreme, split evenly among ties (torch.amax / amin).
template <typename OpTy>
struct ReduceExtremeGradient
    : GradientOpInterface::ExternalModel<ReduceExtremeGradient<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    Value x = op->getOperand(0), y = op->getResult(0), dy = resultGrads[0];
    Type e = GradBuilder::elem(x);
    if (!isa<FloatType>(e))
      return op->emitOpError("has no gradient rule for integer operands");
    int32_t axis = cast<OpTy>(op).getAxis();
    Value hit = tosa::EqualOp::create(
        builder, loc, g.type(GradBuilder::shape(x), builder.getI1Type()), x, y);
    Value ones = tosa::CastOp::create(builder, loc, x.getType(), hit);
    // At least one: where no entry equals the result (a NaN among them) the
    // row gets no gradient rather than 0 * inf.
    Value count = tosa::MaximumOp::create(
        builder, loc, g.type(GradBuilder::shape(y), e), g.reduceSum(ones, axis),
        g.scalar(e, 1.0, GradBuilder::shape(y).size()));
    Value share = g.mul(dy, g.recip(count));
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(ones, share);
    return success();
  }
};

/// reduce_product over one axis: dx_i = dy prod_{j != i} x_j, written as
/// y / x_i where x_i != 0; at a zero, the product of the other (non-zero)
/// entries if it is the only zero along the axis, else 0.
struct ReduceProductGradient
    : GradientOpInterface::ExternalModel<ReduceProductGradient,
                                         tosa::ReduceProductOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    auto prod = cast<tosa::ReduceProductOp>(op);
    Value x = prod.getInput(), y = prod.getResult(), dy = resultGrads[0];
    Type e = GradBuilder::elem(x);
    if (!isa<FloatType>(e))
      return op->emitOpError("has no gradient rule for integer operands");
    int32_t axis = prod.getAxis();
    ArrayRef<int64_t> xs = GradBuilder::shape(x);
    int64_t rank = xs.size();
    auto c = [&](double v) { return g.scalar(e, v, rank); };
    Value isZero = tosa::EqualOp::create(
        builder, loc, g.type(xs, builder.getI1Type()), x, c(0.0));
    Value safe = g.select(isZero, c(1.0), x);
    Value nonZeroProd = tosa::ReduceProductOp::create(
        builder, loc, y.getType(), safe, builder.getI32IntegerAttr(axis));
    Value zeros = g.reduceSum(
        tosa::CastOp::create(builder, loc, x.getType(), isZero), axis);
    Value single = tosa::EqualOp::create(
        builder, loc, g.type(GradBuilder::shape(y), builder.getI1Type()), zeros,
        c(1.0));
    Value atZero = g.select(single, nonZeroProd, g.zerosLike(y));
    Value d = g.select(isZero, atZero, g.mul(y, g.recip(safe)));
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(dy, d);
    return success();
  }
};

/// gather(values [N, K, C], indices [N, W]) = out [N, W, C]: the values'
/// gradient is the scatter-add of dy into the gathered rows, one batched
/// one-hot matmul onehot[N, K, W] @ dy[N, W, C] (repeated indices add up).
/// O(N K W) work and memory.
struct GatherGradient
    : GradientOpInterface::ExternalModel<GatherGradient, tosa::GatherOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto gather = cast<tosa::GatherOp>(op);
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    Value values = gather.getValues(), indices = gather.getIndices();
    Type e = GradBuilder::elem(values);
    operandGrads.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(e))
      return success();
    ArrayRef<int64_t> vs = GradBuilder::shape(values);
    int64_t n = vs[0], k = vs[1], w = GradBuilder::shape(indices)[1];
    Type ie = GradBuilder::elem(indices);
    SmallVector<Attribute> iota;
    for (int64_t i = 0; i < k; ++i)
      iota.push_back(builder.getIntegerAttr(ie, i));
    auto iotaType = g.type({1, k, 1}, ie);
    Value rows = tosa::ConstOp::create(builder, loc, iotaType,
                                       DenseElementsAttr::get(iotaType, iota));
    Value hit = tosa::EqualOp::create(builder, loc,
                                      g.type({n, k, w}, builder.getI1Type()),
                                      rows, g.reshape(indices, {n, 1, w}));
    Value onehot =
        tosa::CastOp::create(builder, loc, g.type({n, k, w}, e), hit);
    operandGrads[0] = g.matmul(onehot, resultGrads[0]);
    return success();
  }
};

/// tile: y repeats x `multiples[i]` times along dim i; dx sums dy over the
/// copies (dy viewed as [m0, d0, m1, d1, ...]).
struct TileGradient
    : GradientOpInterface::ExternalModel<TileGradient, tosa::TileOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto tile = cast<tosa::TileOp>(op);
    GradBuilder g{builder, op->getLoc()};
    Value x = tile.getInput1();
    operandGrads.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(GradBuilder::elem(x)))
      return success();
    FailureOr<SmallVector<int64_t>> multiples =
        constShapeOf(tile.getMultiples());
    if (failed(multiples))
      return op->emitOpError("has no gradient rule for non-constant multiples");
    ArrayRef<int64_t> xs = GradBuilder::shape(x);
    SmallVector<int64_t> split;
    for (auto [m, d] : llvm::zip(*multiples, xs)) {
      split.push_back(m);
      split.push_back(d);
    }
    Value dy = g.reshape(resultGrads[0], split);
    for (auto [i, m] : llvm::enumerate(*multiples))
      if (m != 1)
        dy = g.reduceSum(dy, 2 * i);
    operandGrads[0] = g.reshape(dy, xs);
    return success();
  }
};

/// pad: dx is the interior slice of dy; the pad value receives the sum of
/// dy over the padding.
struct PadGradient
    : GradientOpInterface::ExternalModel<PadGradient, tosa::PadOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto pad = cast<tosa::PadOp>(op);
    GradBuilder g{builder, op->getLoc()};
    Value x = pad.getInput1(), dy = resultGrads[0];
    operandGrads.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(GradBuilder::elem(x)))
      return success();
    FailureOr<SmallVector<int64_t>> padding = constShapeOf(pad.getPadding());
    if (failed(padding))
      return op->emitOpError("has no gradient rule for non-constant padding");
    ArrayRef<int64_t> xs = GradBuilder::shape(x);
    SmallVector<int64_t> start;
    for (size_t i = 0; i < xs.size(); ++i)
      start.push_back((*padding)[2 * i]);
    Value dx = g.slice(dy, start, xs);
    operandGrads[0] = dx;
    // d pad_const = sum(dy) - sum(dx), as a [1] tensor.
    auto total = [&](Value v) {
      for (size_t i = 0; i < xs.size(); ++i)
        v = g.reduceSum(v, i);
      return g.reshape(v, GradBuilder::shape(pad.getPadConst()));
    };
    operandGrads[pad.getPadConstMutable().getOperandNumber()] =
        g.sub(total(dy), total(dx));
    return success();
  }
};

/// reverse: dx is dy reversed along the same axis.
struct ReverseGradient
    : GradientOpInterface::ExternalModel<ReverseGradient, tosa::ReverseOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto reverse = cast<tosa::ReverseOp>(op);
    operandGrads.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(GradBuilder::elem(reverse.getInput1())))
      return success();
    operandGrads[0] =
        tosa::ReverseOp::create(builder, op->getLoc(), resultGrads[0].getType(),
                                resultGrads[0], reverse.getAxisAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// External models for linalg and tensor ops
//===----------------------------------------------------------------------===//

/// linalg.softmax along `dimension`: dx = y (dy - sum(dy y)); the init
/// operand gets none.
struct SoftmaxGradient
    : GradientOpInterface::ExternalModel<SoftmaxGradient, linalg::SoftmaxOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    GradBuilder g{builder, op->getLoc()};
    Value y = softmax.getResult()[0], dy = resultGrads[0];
    int32_t axis = softmax.getDimension();
    Value dot = g.reduceSum(g.mul(dy, y), axis);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = g.mul(y, g.sub(dy, dot));
    return success();
  }
  bool isDifferentiableOperand(Operation *, unsigned index) const {
    return index == 0;
  }
};

/// Forward-mode derivative, inside a linalg.generic body, of the scalar op
/// `op` (already cloned) from the tangents of its operands (`tangents`,
/// null = zero); sets the tangent of its result. Fails on a float op
/// without a rule.
LogicalResult scalarTangent(OpBuilder &b, Operation *op,
                            DenseMap<Value, Value> &tangents) {
  Location loc = op->getLoc();
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return success(); // integer, index and boolean values carry none
  Value result = op->getResult(0);
  Type t = result.getType();
  auto tangentOf = [&](unsigned i) {
    return tangents.lookup(op->getOperand(i));
  };
  auto zero = [&]() {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.0))
        .getResult();
  };
  auto orZero = [&](Value v) { return v ? v : zero(); };
  auto add = [&](Value x, Value y) -> Value {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return x ? arith::MulFOp::create(b, loc, x, y).getResult() : Value();
  };
  auto neg = [&](Value x) -> Value {
    return x ? arith::NegFOp::create(b, loc, x).getResult() : Value();
  };
  if (isa<arith::ConstantOp>(op))
    return success();
  Value ta = op->getNumOperands() > 0 ? tangentOf(0) : Value();
  Value tb = op->getNumOperands() > 1 ? tangentOf(1) : Value();
  Value a = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
  Value c = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
  Value out;
  if (isa<arith::AddFOp>(op)) {
    out = add(ta, tb);
  } else if (isa<arith::SubFOp>(op)) {
    out = add(ta, neg(tb));
  } else if (isa<arith::MulFOp>(op)) {
    out = add(mul(ta, c), mul(tb, a));
  } else if (isa<arith::DivFOp>(op)) {
    // d(a / c) = ta / c - tb a / c^2 = (ta - tb * result) / c.
    Value num = add(ta, neg(mul(tb, result)));
    out = num ? arith::DivFOp::create(b, loc, num, c).getResult() : Value();
  } else if (isa<arith::NegFOp>(op)) {
    out = neg(ta);
  } else if (isa<arith::RemFOp>(op)) {
    // fmod(a, c) = a - trunc(a / c) c, with trunc(q) = q - fmod(q, 1).
    Value q = arith::DivFOp::create(b, loc, a, c);
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 1.0));
    Value trunc =
        arith::SubFOp::create(b, loc, q, arith::RemFOp::create(b, loc, q, one));
    out = add(ta, neg(mul(tb, trunc)));
  } else if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
    // Half to each operand on ties, like tosa.maximum / minimum's rule.
    auto pred = isa<arith::MaximumFOp>(op) ? arith::CmpFPredicate::OGT
                                           : arith::CmpFPredicate::OLT;
    if (ta || tb) {
      Value first = arith::CmpFOp::create(b, loc, pred, a, c);
      Value tie =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a, c);
      Value half = arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.5));
      Value mean = arith::MulFOp::create(
          b, loc, arith::AddFOp::create(b, loc, orZero(ta), orZero(tb)), half);
      out = arith::SelectOp::create(
          b, loc, tie, mean,
          arith::SelectOp::create(b, loc, first, orZero(ta), orZero(tb)));
    }
  } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
    Value tx = tangents.lookup(select.getTrueValue());
    Value ty = tangents.lookup(select.getFalseValue());
    if (tx || ty)
      out = arith::SelectOp::create(b, loc, select.getCondition(), orZero(tx),
                                    orZero(ty));
  } else if (llvm::any_of(op->getOperands(),
                          [&](Value v) { return tangents.lookup(v); })) {
    return op->emitOpError(
        "has no derivative rule inside a linalg.generic body");
  }
  if (out)
    tangents[result] = out;
  return success();
}

/// Whether `map` (on `rank` loops) reads each dimension d at loop d or at 0
/// (a numpy broadcast of an operand of the same rank).
bool isBroadcastMap(AffineMap map, unsigned rank) {
  if (map.getNumDims() != rank || map.getNumResults() != rank)
    return false;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == i)
      continue;
    if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
      continue;
    return false;
  }
  return true;
}

/// The gradient of an elementwise linalg.generic (all loops parallel, an
/// identity output map, broadcast input maps, a body that does not read its
/// output) with respect to float input `index`: a second generic over the
/// same inputs and dy that yields dy * d(body)/d(input), summed over the
/// input's broadcast dimensions.
FailureOr<Value> elementwiseGenericGradient(OpBuilder &builder,
                                            linalg::GenericOp generic,
                                            unsigned index, Value dy) {
  GradBuilder g{builder, generic.getLoc()};
  Location loc = generic.getLoc();
  Block &body = generic.getRegion().front();
  SmallVector<Value> ins(generic.getDpsInputs());
  ins.push_back(dy);
  SmallVector<AffineMap> maps;
  for (OpOperand *in : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(in));
  maps.push_back(generic.getIndexingMapsArray().back());
  maps.push_back(generic.getIndexingMapsArray().back());
  ArrayRef<int64_t> shape = GradBuilder::shape(dy);
  Type e = GradBuilder::elem(dy);
  Value init = tensor::EmptyOp::create(builder, loc, shape, e);
  LogicalResult status = success();
  auto grad = linalg::GenericOp::create(
      builder, loc, TypeRange{dy.getType()}, ins, ValueRange{init}, maps,
      generic.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i + 1 < body.getNumArguments(); ++i)
          mapping.map(body.getArgument(i), args[i]);
        DenseMap<Value, Value> tangents;
        tangents[args[index]] =
            arith::ConstantOp::create(b, l, b.getFloatAttr(e, 1.0));
        Value yielded;
        for (Operation &op : body.without_terminator()) {
          Operation *copy = b.clone(op, mapping);
          if (failed(scalarTangent(b, copy, tangents)))
            status = failure();
        }
        yielded = mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
        Value t = tangents.lookup(yielded);
        Value dyArg = args[args.size() - 2];
        linalg::YieldOp::create(
            b, l,
            t ? arith::MulFOp::create(b, l, t, dyArg).getResult()
              : arith::ConstantOp::create(b, l, b.getFloatAttr(e, 0.0))
                    .getResult());
      });
  if (failed(status))
    return failure();
  return g.sumToShape(grad.getResult(0),
                      GradBuilder::shape(generic.getDpsInputs()[index]));
}

/// How a row scatter (below) folds an update into its row.
enum class RowScatterKind { Replace, Add };

/// The importer's scatter with runtime row numbers: loops (n, k, c, w), w
/// the reduction; ins rows [N, W] (integer) and updates [N, W, C]; init data
/// [N, K, C]; body `select(rows[n, w] == k, combine(acc, update), acc)` with
/// combine `update` (Replace) or `acc + update` (Add).
std::optional<RowScatterKind> matchRowScatter(linalg::GenericOp generic) {
  auto iterators = generic.getIteratorTypesArray();
  using utils::IteratorType;
  if (iterators.size() != 4 || generic.getNumDpsInputs() != 2 ||
      iterators[3] != IteratorType::reduction ||
      llvm::any_of(ArrayRef(iterators).take_front(3),
                   [](IteratorType t) { return t != IteratorType::parallel; }))
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto select = dyn_cast_or_null<arith::SelectOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!select || select.getFalseValue() != body.getArgument(2))
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Value next = select.getTrueValue();
  if (next == body.getArgument(1))
    return RowScatterKind::Replace;
  if (auto sum = next.getDefiningOp<arith::AddFOp>();
      sum && ((sum.getLhs() == body.getArgument(2) &&
               sum.getRhs() == body.getArgument(1)) ||
              (sum.getLhs() == body.getArgument(1) &&
               sum.getRhs() == body.getArgument(2))))
    return RowScatterKind::Add;
  return std::nullopt;
}

/// linalg.generic, in the two forms the ONNX importer creates: elementwise
/// bodies (Mod) and row scatters with runtime indices (ScatterND /
/// ScatterElements without a constant index map). For a scatter, dupdates
/// is dy gathered at the update's row (for Replace: only for the last
/// update of each row, the one that is kept) and ddata is dy (for Replace:
/// zero on the rows that were written).
struct GenericGradient
    : GradientOpInterface::ExternalModel<GenericGradient, linalg::GenericOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto generic = cast<linalg::GenericOp>(op);
    operandGrads.assign(op->getNumOperands(), Value());
    if (op->getNumResults() != 1 || generic.getNumDpsInits() != 1 ||
        !generic.hasPureTensorSemantics())
      return op->emitOpError("has no gradient rule for a linalg.generic with "
                             "other than one tensor result");
    Value dy = resultGrads[0];
    if (!isa<FloatType>(GradBuilder::elem(dy)))
      return success();
    unsigned rank = generic.getNumLoops();
    Block &body = generic.getRegion().front();
    bool elementwise =
        generic.getNumParallelLoops() == rank &&
        generic.getIndexingMapsArray().back().isIdentity() &&
        llvm::all_of(generic.getDpsInputOperands(),
                     [&](OpOperand *in) {
                       return isBroadcastMap(generic.getMatchingIndexingMap(in),
                                             rank);
                     }) &&
        body.getArguments().back().use_empty();
    if (elementwise) {
      for (auto [i, in] : llvm::enumerate(generic.getDpsInputs())) {
        if (!isa<FloatType>(GradBuilder::elem(in)))
          continue;
        FailureOr<Value> d =
            elementwiseGenericGradient(builder, generic, i, dy);
        if (failed(d))
          return failure();
        operandGrads[i] = *d;
      }
      return success();
    }
    std::optional<RowScatterKind> kind = matchRowScatter(generic);
    if (!kind)
      return op->emitOpError(
          "has no gradient rule for this linalg.generic (rules exist for "
          "elementwise bodies and the importer's row scatters)");
    GradBuilder g{builder, op->getLoc()};
    Location loc = op->getLoc();
    Value rows = generic.getDpsInputs()[0];
    ArrayRef<int64_t> ds = GradBuilder::shape(dy);
    int64_t n = ds[0], k = ds[1], w = GradBuilder::shape(rows)[1];
    Type i32 = builder.getI32Type(), i1 = builder.getI1Type();
    Type e = GradBuilder::elem(dy);
    if (!GradBuilder::elem(rows).isInteger(32))
      rows = tosa::CastOp::create(builder, loc, g.type({n, w}, i32), rows);
    Value gathered = tosa::GatherOp::create(builder, loc,
                                            g.type({n, w, ds[2]}, e), dy, rows);
    if (*kind == RowScatterKind::Add) {
      operandGrads[1] = gathered;
      operandGrads[2] = dy;
      return success();
    }
    // Rows that some update writes: their data is overwritten.
    SmallVector<Attribute> iota;
    for (int64_t i = 0; i < k; ++i)
      iota.push_back(builder.getI32IntegerAttr(i));
    auto iotaType = g.type({1, k, 1}, i32);
    Value rowIds = tosa::ConstOp::create(
        builder, loc, iotaType, DenseElementsAttr::get(iotaType, iota));
    Value hit = tosa::EqualOp::create(builder, loc, g.type({n, k, w}, i1),
                                      rowIds, g.reshape(rows, {n, 1, w}));
    Value written = g.reduceSum(
        tosa::CastOp::create(builder, loc, g.type({n, k, w}, e), hit), 2);
    Value isWritten = tosa::GreaterOp::create(
        builder, loc, g.type({n, k, 1}, i1), written, g.scalar(e, 0.0, 3));
    operandGrads[2] = g.select(isWritten, g.zerosLike(dy), dy);
    // Update w is kept when no later update w' > w names the same row.
    SmallVector<bool> laterBits;
    for (int64_t a = 0; a < w; ++a)
      for (int64_t c = 0; c < w; ++c)
        laterBits.push_back(c > a);
    auto laterType = g.type({1, w, w}, i1);
    Value later = tosa::ConstOp::create(
        builder, loc, laterType,
        DenseElementsAttr::get(laterType, ArrayRef<bool>(laterBits)));
    Value same = tosa::EqualOp::create(builder, loc, g.type({n, w, w}, i1),
                                       g.reshape(rows, {n, w, 1}),
                                       g.reshape(rows, {n, 1, w}));
    Value overwritten = tosa::LogicalAndOp::create(
        builder, loc, g.type({n, w, w}, i1), same, later);
    Value count = g.reduceSum(
        tosa::CastOp::create(builder, loc, g.type({n, w, w}, e), overwritten),
        2);
    Value kept = tosa::EqualOp::create(builder, loc, g.type({n, w, 1}, i1),
                                       count, g.scalar(e, 0.0, 3));
    operandGrads[1] = g.select(kept, gathered, g.zerosLike(gathered));
    return success();
  }
  bool isDifferentiableOperand(Operation *op, unsigned index) const {
    auto type = dyn_cast<ShapedType>(op->getOperand(index).getType());
    return type && isa<FloatType>(type.getElementType());
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// gt ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::buildGradient(OpBuilder &builder,
                                      ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Value x = getInput(), w = getWeight(), dy = resultGrads[0];
  ArrayRef<int64_t> xs = GradBuilder::shape(x);
  int64_t k = xs.back(), n = GradBuilder::shape(w)[1], rows = 1;
  for (int64_t d : xs.drop_back())
    rows *= d;
  Value dy3 = g.reshape(dy, {1, rows, n});
  Value x3 = g.reshape(x, {1, rows, k});
  Value wt = g.reshape(g.transpose(w, {1, 0}), {1, n, k});
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = g.reshape(g.matmul(dy3, wt), xs);
  operandGrads[1] =
      g.reshape(g.matmul(g.transpose(x3, {0, 2, 1}), dy3), {k, n});
  if (getBias())
    operandGrads[2] = g.reshape(g.reduceSum(g.reshape(dy, {rows, n}), 0), {n});
  return success();
}

LogicalResult GeluOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Value x = getInput();
  Type e = GradBuilder::elem(x);
  int64_t rank = GradBuilder::shape(x).size();
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  if (getTanh()) {
    // y = 0.5 x (1 + t), t = tanh(u), u = k (x + a x^3):
    // dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2).
    constexpr double a = 0.044715;
    Value k = g.scalar(e, std::sqrt(2.0 / M_PI), rank);
    Value one = g.scalar(e, 1.0, rank), half = g.scalar(e, 0.5, rank);
    Value x2 = g.mul(x, x);
    Value t = g.unary(
        "tanh", g.mul(k, g.add(x, g.mul(g.mul(x2, x), g.scalar(e, a, rank)))));
    Value du = g.mul(k, g.add(one, g.mul(x2, g.scalar(e, 3.0 * a, rank))));
    Value d = g.add(g.mul(half, g.add(one, t)),
                    g.mul(g.mul(g.mul(half, x), g.sub(one, g.mul(t, t))), du));
    operandGrads[0] = g.mul(resultGrads[0], d);
    return success();
  }
  // d/dx [x Phi(x)] = Phi(x) + x phi(x).
  Value cdf = g.mul(g.add(g.erf(g.mul(x, g.scalar(e, M_SQRT1_2, rank))),
                          g.scalar(e, 1.0, rank)),
                    g.scalar(e, 0.5, rank));
  Value pdf = g.mul(g.exp(g.mul(g.mul(x, x), g.scalar(e, -0.5, rank))),
                    g.scalar(e, 1.0 / std::sqrt(2.0 * M_PI), rank));
  operandGrads[0] = g.mul(resultGrads[0], g.add(cdf, g.mul(x, pdf)));
  return success();
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &builder,
                                         ValueRange resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Value x = getInput(), gamma = getScale(), dy = resultGrads[0];
  ArrayRef<int64_t> xs = GradBuilder::shape(x);
  int64_t rank = xs.size();
  int64_t normRank = GradBuilder::shape(gamma).size();
  Type e = GradBuilder::elem(x);
  int64_t count = 1;
  for (int64_t d : xs.take_back(normRank))
    count *= d;
  auto [xhat, inv] = g.normalize(x, normRank, getEpsilon().convertToDouble());
  SmallVector<int64_t> ps(rank - normRank, 1);
  llvm::append_range(ps, xs.take_back(normRank));
  auto meanOf = [&](Value v) {
    for (int64_t a = rank - normRank; a < rank; ++a)
      v = g.reduceSum(v, a);
    return g.mul(v, g.scalar(e, 1.0 / count, rank));
  };
  // dx = inv * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
  Value dxhat = g.mul(dy, g.reshape(gamma, ps));
  Value inner = g.sub(g.sub(dxhat, meanOf(dxhat)),
                      g.mul(xhat, meanOf(g.mul(dxhat, xhat))));
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = g.mul(inv, inner);
  operandGrads[1] = g.sumToShape(g.mul(dy, xhat), GradBuilder::shape(gamma));
  if (Value beta = getBias())
    operandGrads[2] = g.sumToShape(dy, GradBuilder::shape(beta));
  return success();
}

LogicalResult
CrossEntropyOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Location loc = getLoc();
  Value logits = getLogits(), labels = getLabels();
  ArrayRef<int64_t> ls = GradBuilder::shape(logits);
  int64_t c = ls.back(), n = 1;
  for (int64_t d : ls.drop_back())
    n *= d;
  Type e = GradBuilder::elem(logits), li = GradBuilder::elem(labels);
  Value x = g.reshape(logits, {n, c});
  Value p = g.exp(g.sub(x, g.reduceMax(x, 1)));
  p = g.mul(p, g.recip(g.reduceSum(p, 1)));
  SmallVector<Attribute> iota;
  for (int64_t i = 0; i < c; ++i)
    iota.push_back(builder.getIntegerAttr(li, i));
  auto iotaType = g.type({1, c}, li);
  Value classes = tosa::ConstOp::create(builder, loc, iotaType,
                                        DenseElementsAttr::get(iotaType, iota));
  Value hit =
      tosa::EqualOp::create(builder, loc, g.type({n, c}, builder.getI1Type()),
                            classes, g.reshape(labels, {n, 1}));
  Value onehot = tosa::CastOp::create(builder, loc, g.type({n, c}, e), hit);
  auto column = g.type({n, 1}, e);
  Value weight =
      getMask()
          ? tosa::CastOp::create(builder, loc, column,
                                 g.reshape(getMask(), {n, 1}))
                .getResult()
          : tosa::ConstOp::create(
                builder, loc, column,
                DenseElementsAttr::get(column, builder.getFloatAttr(e, 1.0)))
                .getResult();
  Value count =
      tosa::MaximumOp::create(builder, loc, g.type({1, 1}, e),
                              g.reduceSum(weight, 0), g.scalar(e, 1.0, 2));
  Value scale =
      g.mul(g.mul(weight, g.recip(count)), g.reshape(resultGrads[0], {1, 1}));
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = g.reshape(g.mul(g.sub(p, onehot), scale), ls);
  return success();
}

LogicalResult AttentionOp::buildGradient(OpBuilder &builder,
                                         ValueRange resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  // One fused backward op; it recomputes the probabilities (the forward
  // keeps nothing until gt-attention-keep-lse gives it the row log-sum-exp),
  // its dbias already has the bias's own shape (summed over the broadcast
  // batch/head dimensions), and a spatial table's gradient is its dtable
  // (the integer distances have none).
  SmallVector<Type> types = {getQuery().getType(), getKey().getType(),
                             getValue().getType()};
  if (Value bias = getBias())
    types.push_back(bias.getType());
  if (Value table = getSpatialTable())
    types.push_back(table.getType());
  auto grad = AttentionGradOp::create(
      builder, getLoc(), types, resultGrads[0], getQuery(), getKey(),
      getValue(), getBias(), getMask(), getSpatialDistance(), getSpatialTable(),
      /*out=*/Value(), /*lse=*/Value(), getNumHeadsAttr(), getScaleAttr());
  if (Attribute cp = (*this)->getAttr("gt.cp")) // context parallel
    grad->setAttr("gt.cp", cp);
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = grad.getDq();
  operandGrads[1] = grad.getDk();
  operandGrads[2] = grad.getDv();
  if (getBias())
    operandGrads[getBiasMutable()[0].getOperandNumber()] = grad.getDbias();
  if (getSpatialTable())
    operandGrads[getSpatialTableMutable()[0].getOperandNumber()] =
        grad.getDtable();
  return success();
}

LogicalResult AttentionGradOp::buildGradient(OpBuilder &, ValueRange,
                                             SmallVectorImpl<Value> &) {
  return emitOpError("is not differentiable (no second-order gradients)");
}

// Embedding tables: dtable = onehot(clamp(ids))^T @ dy, a dense [N, V]
// one-hot matmul in TOSA. This costs O(N * V) time and memory (fine for
// Graphormer-sized vocabularies); a scatter-add runtime kernel is the planned
// replacement.

LogicalResult
NodeEmbeddingOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Value ids = getIds(), table = getTable(), dy = resultGrads[0];
  ArrayRef<int64_t> ts = GradBuilder::shape(table);
  int64_t v = ts[0], d = ts[1];
  Type e = GradBuilder::elem(table);
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  ArrayRef<int64_t> is = GradBuilder::shape(ids);
  int64_t n = 1;
  for (int64_t s : is)
    n *= s;
  if (getSumFeatures()) {
    // Every feature of a node receives the node's gradient: sum the one-hot
    // rows over the features, then one [V, N/F] x [N/F, D] matmul.
    int64_t f = is.back(), nodes = n / f;
    Value hitT = g.oneHotT(ids, v); // [V, nodes * F]
    Value counts =
        tosa::CastOp::create(builder, getLoc(), g.type({v, n}, e), hitT);
    counts = g.reshape(g.reduceSum(g.reshape(counts, {v, nodes, f}), 2),
                       {1, v, nodes});
    operandGrads[1] =
        g.reshape(g.matmul(counts, g.reshape(dy, {1, nodes, d})), {v, d});
    return success();
  }
  operandGrads[1] = g.embeddingGrad(ids, g.reshape(dy, {n, d}), v, e);
  return success();
}

LogicalResult
DegreeEmbeddingOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  GradBuilder g{builder, getLoc()};
  Value table = getTable(), dy = resultGrads[0];
  ArrayRef<int64_t> ts = GradBuilder::shape(table);
  int64_t n = 1;
  for (int64_t s : GradBuilder::shape(getDegree()))
    n *= s;
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = dy;
  operandGrads[2] = g.embeddingGrad(getDegree(), g.reshape(dy, {n, ts[1]}),
                                    ts[0], GradBuilder::elem(table));
  return success();
}

LogicalResult
SpatialBiasOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                             SmallVectorImpl<Value> &operandGrads) {
  // result[.., h, i, j] = table[clamp(spd[.., i, j]), h]: move the head dim
  // last ([.., Sq, Sk, H]) so dy lines up with the flattened distances.
  GradBuilder g{builder, getLoc()};
  Value table = getTable(), dy = resultGrads[0];
  ArrayRef<int64_t> ts = GradBuilder::shape(table);
  int64_t rank = GradBuilder::shape(dy).size();
  SmallVector<int32_t> perm;
  for (int32_t i = 0; i < rank; ++i)
    if (i != rank - 3)
      perm.push_back(i);
  perm.push_back(rank - 3);
  int64_t n = 1;
  for (int64_t s : GradBuilder::shape(getDistance()))
    n *= s;
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[1] = g.embeddingGrad(
      getDistance(), g.reshape(g.transpose(dy, perm), {n, ts[1]}), ts[0],
      GradBuilder::elem(table));
  return success();
}

LogicalResult SpmmOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  // result[i] = sum_{e in row i} values[e] x[col[e]]: with row(e) the row
  // of edge e, dx = A^T dy, an SpMM over the transposed pattern (the
  // values permuted with it), and dvalues[e] = dy[row(e)] . x[col[e]].
  //
  // Under partition parallelism (#gt.halo) x and dy are this rank's row
  // blocks of the N x N product: dx is the same kind of SpMM over the
  // transposed CSR (every rank has the whole graph), with the halo of dy;
  // edge weights have no gradient there (gt-partition-parallel refuses
  // weights computed from parameters).
  GradBuilder g{builder, getLoc()};
  Value x = getInput(), values = getValues(), dy = resultGrads[0];
  ArrayRef<int64_t> xs = GradBuilder::shape(x);
  auto halo = (*this)->getAttrOfType<HaloAttr>(kHaloAttr);
  int64_t m = halo ? halo.getNodes() : xs[0], d = xs[1],
          n = GradBuilder::shape(dy)[0];
  int64_t edges = GradBuilder::shape(values)[0];
  Type e = GradBuilder::elem(x);
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  auto t = CsrTransposeOp::create(builder, getLoc(), getColIdx(), getRowPtr(),
                                  builder.getI64IntegerAttr(m));
  Value perm = g.reshape(g.toI32(t.getPerm()), {1, edges});
  Value valuesT =
      g.reshape(g.gatherRows(g.reshape(values, {1, edges, 1}), perm), {edges});
  auto dx = SpmmOp::create(builder, getLoc(), x.getType(), t.getRowPtrT(),
                           t.getColIdxT(), valuesT, dy);
  operandGrads[3] = dx;
  if (halo) {
    dx->setAttr(kHaloAttr, halo);
    return success();
  }
  Value rows = g.edgeRows(getRowPtr(), n, edges, e);
  Value cols = g.reshape(g.toI32(getColIdx()), {1, edges});
  Value dyRows = g.gatherRows(g.reshape(dy, {1, n, d}), rows);
  Value xRows = g.gatherRows(g.reshape(x, {1, m, d}), cols);
  operandGrads[2] = g.reshape(g.reduceSum(g.mul(dyRows, xRows), 2), {edges});
  return success();
}

LogicalResult CsrTransposeOp::buildGradient(OpBuilder &, ValueRange,
                                            SmallVectorImpl<Value> &grads) {
  // Integer operands and results: nothing to propagate.
  grads.assign(getOperation()->getNumOperands(), Value());
  return success();
}

LogicalResult
SparseAttentionOp::buildGradient(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  // Per edge e = (i, j) and head h: s = scale q_h[i].k_h[j] (+ bias[e, h]),
  // p = softmax of s over the edges of row i, out_h[i] = sum_e p v_h[j].
  // With do_e = dout_h[i]: dv_h[j] = sum_{e: col = j} p do_e, dp = do_e .
  // v_h[j], ds = p (dp - sum_{e' in row i} p dp), dbias = ds, dq_h[i] =
  // scale sum_{e in row i} ds k_h[j], dk_h[j] = scale sum_{e: col = j} ds
  // q_h[i]. Everything is per edge (gathers, and one-hot [N, E] / [M, E]
  // matmuls for the segment sums): O((N + M) E) work.
  GradBuilder g{builder, getLoc()};
  Location loc = getLoc();
  Value q = getQuery(), k = getKey(), v = getValue(), dout = resultGrads[0];
  ArrayRef<int64_t> qs = GradBuilder::shape(q);
  int64_t n = qs[0], dq = qs[1], m = GradBuilder::shape(k)[0];
  int64_t dvTotal = GradBuilder::shape(v)[1];
  int64_t heads = getNumHeads(), dh = dq / heads, dvh = dvTotal / heads;
  int64_t edges = GradBuilder::shape(getColIdx())[0];
  Type e = GradBuilder::elem(q);
  double scale = getScale() ? getScale()->convertToDouble()
                            : 1.0 / std::sqrt(static_cast<double>(dh));
  Value rows = g.edgeRows(getRowPtr(), n, edges, e);
  Value cols = g.reshape(g.toI32(getColIdx()), {1, edges});
  auto perEdge = [&](Value t, Value ids, int64_t count, int64_t headDim) {
    Value picked = g.gatherRows(g.reshape(t, {1, count, heads * headDim}), ids);
    return g.reshape(picked, {edges, heads, headDim});
  };
  Value qe = perEdge(q, rows, n, dh), ke = perEdge(k, cols, m, dh);
  Value ve = perEdge(v, cols, m, dvh), doe = perEdge(dout, rows, n, dvh);
  Value s = g.mul(g.reduceSum(g.mul(qe, ke), 2), g.scalar(e, scale, 3));
  if (Value bias = getEdgeBias())
    s = g.add(s, g.reshape(bias, {edges, heads, 1}));
  Value rowHot = g.oneHotRows(rows, n, e); // [1, N, E]
  Value colHot = g.oneHotRows(cols, m, e); // [1, M, E]
  // Segment sums over the edges of each row, gathered back to the edges.
  auto rowSum = [&](Value perEdgeHeads) { // [E, H, 1] -> [E, H, 1]
    Value sums = g.matmul(rowHot, g.reshape(perEdgeHeads, {1, edges, heads}));
    return g.reshape(g.gatherRows(sums, rows), {edges, heads, 1});
  };
  // The row maximum for a stable exponent: over the [N, E, H] scores with
  // the other rows' edges at the lowest float.
  Value inRow = tosa::EqualOp::create(
      builder, loc, g.type({n, edges, 1}, builder.getI1Type()),
      g.iota(n, {n, 1, 1}), g.reshape(rows, {1, edges, 1}));
  Value lowest = g.scalar(e, -3.0e38, 3);
  Value masked = g.select(inRow, g.reshape(s, {1, edges, heads}), lowest);
  Value rowMax = g.reshape(g.reduceMax(masked, 1), {1, n, heads});
  Value sMax = g.reshape(g.gatherRows(rowMax, rows), {edges, heads, 1});
  Value ex = g.exp(g.sub(s, sMax));
  Value p = g.mul(ex, g.recip(rowSum(ex)));
  Value dp = g.reduceSum(g.mul(doe, ve), 2); // [E, H, 1]
  Value ds = g.mul(p, g.sub(dp, rowSum(g.mul(p, dp))));
  Value dsScaled = g.mul(ds, g.scalar(e, scale, 3));
  auto scatterTo = [&](Value hot, Value perEdgeValues, int64_t count,
                       int64_t width) {
    Value flat = g.reshape(perEdgeValues, {1, edges, width});
    return g.reshape(g.matmul(hot, flat), {count, width});
  };
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = scatterTo(rowHot, g.mul(dsScaled, ke), n, dq);
  operandGrads[1] = scatterTo(colHot, g.mul(dsScaled, qe), m, dq);
  operandGrads[2] = scatterTo(colHot, g.mul(p, doe), m, dvTotal);
  if (getEdgeBias())
    operandGrads[5] = g.reshape(ds, {edges, heads});
  return success();
}

LogicalResult EdgeBiasOp::buildGradient(OpBuilder &builder,
                                        ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  // out[.., h, i, j] = sum_{l, g : path >= 0} table[path[.., i, j, l], g]
  // W[l, g, h] / clamp(dist, 1, L). With the M = #(.., i, j) pairs
  // flattened, G[m, h] = dy[m, h] / clamp(dist[m]) and the one-hot
  // O[m, l, E] of the valid path entries, emb = O @ table:
  //   dW[l] = emb[:, l]^T G,  demb[:, l] = G W[l]^T,  dtable = O^T demb.
  GradBuilder g{builder, getLoc()};
  Location loc = getLoc();
  Value path = getPath(), dist = getDistance(), table = getTable(),
        weights = getHopWeights(), dy = resultGrads[0];
  ArrayRef<int64_t> ps = GradBuilder::shape(path);
  int64_t hops = ps.back();
  int64_t types = GradBuilder::shape(table)[0];
  int64_t heads = GradBuilder::shape(table)[1];
  int64_t outHeads = GradBuilder::shape(weights)[2];
  int64_t pairs = 1;
  for (int64_t s : ps.drop_back())
    pairs *= s;
  Type e = GradBuilder::elem(table), i1 = builder.getI1Type();
  Type ie = GradBuilder::elem(path);
  // dy [.., H, Sq, Sk] -> [M, H].
  int64_t rank = GradBuilder::shape(dy).size();
  SmallVector<int32_t> perm;
  for (int32_t i = 0; i < rank; ++i)
    if (i != rank - 3)
      perm.push_back(i);
  perm.push_back(rank - 3);
  Value gm = g.reshape(g.transpose(dy, perm), {pairs, outHeads});
  // 1 / clamp(dist, 1, L) per pair.
  Type de = GradBuilder::elem(dist);
  Value dflat = g.reshape(dist, {pairs, 1});
  dflat = tosa::MaximumOp::create(builder, loc, dflat.getType(), dflat,
                                  g.scalar(de, 1.0, 2));
  dflat = tosa::MinimumOp::create(builder, loc, dflat.getType(), dflat,
                                  g.scalar(de, static_cast<double>(hops), 2));
  Value df = tosa::CastOp::create(builder, loc, g.type({pairs, 1}, e), dflat);
  gm = g.mul(gm, g.recip(df));
  // O[1, M * L, E]: the (clamped) edge type of valid path entries.
  Value flat = g.reshape(path, {pairs * hops, 1});
  SmallVector<Attribute> ids;
  for (int64_t i = 0; i < types; ++i)
    ids.push_back(builder.getIntegerAttr(ie, i));
  auto idsType = g.type({1, types}, ie);
  Value typeIds = tosa::ConstOp::create(builder, loc, idsType,
                                        DenseElementsAttr::get(idsType, ids));
  Value clamped = tosa::MinimumOp::create(builder, loc, flat.getType(), flat,
                                          g.scalar(ie, types - 1, 2));
  Value hit = tosa::EqualOp::create(
      builder, loc, g.type({pairs * hops, types}, i1), clamped, typeIds);
  Value valid = tosa::GreaterEqualOp::create(
      builder, loc, g.type({pairs * hops, 1}, i1), flat, g.scalar(ie, 0, 2));
  hit = tosa::LogicalAndOp::create(
      builder, loc, g.type({pairs * hops, types}, i1), hit, valid);
  Value onehot = g.reshape(
      tosa::CastOp::create(builder, loc, g.type({pairs * hops, types}, e), hit),
      {1, pairs * hops, types});
  // emb [M, L, H] -> [L, H, M] for dW = emb^T G per hop.
  Value emb = g.reshape(g.matmul(onehot, g.reshape(table, {1, types, heads})),
                        {pairs, hops, heads});
  Value gl = g.add(g.splatOf({hops, pairs, outHeads}, e, 0.0),
                   g.reshape(gm, {1, pairs, outHeads}));
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[3] = g.matmul(g.transpose(emb, {1, 2, 0}), gl);
  // demb [L, M, H] = G W[l]^T, then [1, M * L, H] for dtable = O^T demb.
  Value demb = g.matmul(gl, g.transpose(weights, {0, 2, 1}));
  demb = g.reshape(g.transpose(demb, {1, 0, 2}), {1, pairs * hops, heads});
  operandGrads[2] =
      g.reshape(g.matmul(g.transpose(onehot, {0, 2, 1}), demb), {types, heads});
  return success();
}

/// shard.all_to_all: the inverse exchange (split and concat axes swapped).
struct AllToAllGradient
    : GradientOpInterface::ExternalModel<AllToAllGradient, shard::AllToAllOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto a = cast<shard::AllToAllOp>(op);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = shard::AllToAllOp::create(
        builder, op->getLoc(), a.getInput().getType(), a.getGridAttr(),
        a.getGridAxesAttr(), resultGrads[0], a.getConcatAxisAttr(),
        a.getSplitAxisAttr());
    return success();
  }
};

/// shard.all_slice (this rank's slice of a value every rank holds whole):
/// dx is dy at this rank's place in zeros. It is a partial gradient: the
/// other slices are the other ranks' and the gradient sum over the ranks
/// (gt-data-parallel) adds them, as it adds every replicated value's
/// gradient. The slice must be over the whole grid (its linear index is the
/// rank in the group).
struct AllSliceGradient
    : GradientOpInterface::ExternalModel<AllSliceGradient, shard::AllSliceOp> {
  LogicalResult buildGradient(Operation *op, OpBuilder &builder,
                              ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    auto s = cast<shard::AllSliceOp>(op);
    Location loc = op->getLoc();
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, s.getGridAttr());
    if (!grid || static_cast<int64_t>(s.getGridAxes().size()) != grid.getRank())
      return op->emitOpError("has no gradient rule for a slice over part of "
                             "its grid");
    auto full = cast<RankedTensorType>(s.getInput().getType());
    auto part = cast<RankedTensorType>(s.getResult().getType());
    const int64_t axis = s.getSliceAxis().getSExtValue();
    Value rank = shard::ProcessLinearIndexOp::create(
        builder, loc, builder.getIndexType(), s.getGridAttr());
    Value offset = arith::MulIOp::create(
        builder, loc, rank,
        arith::ConstantIndexOp::create(builder, loc, part.getDimSize(axis)));
    Value zeros = arith::ConstantOp::create(
        builder, loc, full,
        DenseElementsAttr::get(full,
                               builder.getZeroAttr(full.getElementType())));
    SmallVector<OpFoldResult> offsets(full.getRank(), builder.getIndexAttr(0)),
        sizes, strides(full.getRank(), builder.getIndexAttr(1));
    offsets[axis] = offset;
    for (int64_t d : part.getShape())
      sizes.push_back(builder.getIndexAttr(d));
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = tensor::InsertSliceOp::create(
        builder, loc, resultGrads[0], zeros, offsets, sizes, strides);
    return success();
  }
};

/// Attaches NoGradient to each of `OpTys`.
template <typename... OpTys> static void attachNoGradient(MLIRContext &ctx) {
  (OpTys::template attachInterface<NoGradient<OpTys>>(ctx), ...);
}

void megagraph::gt::registerGradientExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    tosa::AddOp::attachInterface<BinaryGradient<tosa::AddOp>>(*ctx);
    tosa::SubOp::attachInterface<BinaryGradient<tosa::SubOp>>(*ctx);
    tosa::MulOp::attachInterface<BinaryGradient<tosa::MulOp>>(*ctx);
    tosa::ReshapeOp::attachInterface<ReshapeGradient>(*ctx);
    tosa::TransposeOp::attachInterface<TransposeGradient>(*ctx);
    tosa::RsqrtOp::attachInterface<UnaryGradient<tosa::RsqrtOp>>(*ctx);
    tosa::ReciprocalOp::attachInterface<UnaryGradient<tosa::ReciprocalOp>>(
        *ctx);
    tosa::ExpOp::attachInterface<UnaryGradient<tosa::ExpOp>>(*ctx);
    tosa::LogOp::attachInterface<UnaryGradient<tosa::LogOp>>(*ctx);
    tosa::TanhOp::attachInterface<UnaryGradient<tosa::TanhOp>>(*ctx);
    tosa::SigmoidOp::attachInterface<UnaryGradient<tosa::SigmoidOp>>(*ctx);
    tosa::ClampOp::attachInterface<ClampGradient>(*ctx);
    tosa::NegateOp::attachInterface<NegateGradient>(*ctx);
    tosa::MaximumOp::attachInterface<MinMaxGradient<tosa::MaximumOp>>(*ctx);
    tosa::MinimumOp::attachInterface<MinMaxGradient<tosa::MinimumOp>>(*ctx);
    tosa::MatMulOp::attachInterface<MatMulGradient>(*ctx);
    tosa::SliceOp::attachInterface<SliceGradient>(*ctx);
    tosa::ConcatOp::attachInterface<ConcatGradient>(*ctx);
    tosa::SelectOp::attachInterface<SelectGradient>(*ctx);
    tosa::CastOp::attachInterface<CastGradient>(*ctx);
    tosa::ReduceSumOp::attachInterface<ReduceSumGradient>(*ctx);
    tosa::ReduceMaxOp::attachInterface<
        ReduceExtremeGradient<tosa::ReduceMaxOp>>(*ctx);
    tosa::ReduceMinOp::attachInterface<
        ReduceExtremeGradient<tosa::ReduceMinOp>>(*ctx);
    tosa::ReduceProductOp::attachInterface<ReduceProductGradient>(*ctx);
    tosa::PowOp::attachInterface<PowGradient>(*ctx);
    tosa::ErfOp::attachInterface<UnaryMathGradient<tosa::ErfOp>>(*ctx);
    tosa::SinOp::attachInterface<UnaryMathGradient<tosa::SinOp>>(*ctx);
    tosa::CosOp::attachInterface<UnaryMathGradient<tosa::CosOp>>(*ctx);
    tosa::AbsOp::attachInterface<UnaryMathGradient<tosa::AbsOp>>(*ctx);
    tosa::GatherOp::attachInterface<GatherGradient>(*ctx);
    tosa::TileOp::attachInterface<TileGradient>(*ctx);
    tosa::PadOp::attachInterface<PadGradient>(*ctx);
    tosa::ReverseOp::attachInterface<ReverseGradient>(*ctx);
    attachNoGradient<tosa::FloorOp, tosa::CeilOp, tosa::ArgMaxOp, tosa::EqualOp,
                     tosa::GreaterOp, tosa::GreaterEqualOp, tosa::LogicalAndOp,
                     tosa::LogicalOrOp, tosa::LogicalXorOp, tosa::LogicalNotOp,
                     tosa::IntDivOp, tosa::ConstOp, tosa::ConstShapeOp>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::SoftmaxOp::attachInterface<SoftmaxGradient>(*ctx);
    linalg::GenericOp::attachInterface<GenericGradient>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachNoGradient<tensor::EmptyOp>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, shard::ShardDialect *) {
    shard::AllToAllOp::attachInterface<AllToAllGradient>(*ctx);
    shard::AllSliceOp::attachInterface<AllSliceGradient>(*ctx);
  });
}
