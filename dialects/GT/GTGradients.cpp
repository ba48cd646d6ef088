//===- GTGradients.cpp - Reverse-mode gradient rules ------------*- C++ -*-===//
//
// Part of MegaGraph. GradientOpInterface rules: on the gt ops that implement
// them (linear, gelu, layer_norm, cross_entropy, attention, the embeddings)
// and, through external
// models, on the TOSA ops the importer produces around them (add, sub, mul,
// reshape, transpose, matmul, slice, concat, select, clamp, maximum,
// minimum, negate, cast, reduce_sum, rsqrt, reciprocal, exp, log, tanh,
// sigmoid: enough for the
// BatchNorm decomposition, ReLU and nn.MultiheadAttention's packed
// projections). Each rule builds TOSA on static shapes; broadcasting
// in the forward becomes a sum over the broadcast dimensions here.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTGradients.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/DialectRegistry.h"
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

/// maximum / minimum (ONNX Max, Min and Clip with bounds): dy goes to the
/// operand that was chosen, to the first one on ties.
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
    // maximum: a chosen where a >= b; minimum: where b >= a.
    Value first =
        std::is_same_v<OpTy, tosa::MaximumOp>
            ? tosa::GreaterEqualOp::create(builder, op->getLoc(), bools, a, b)
            : tosa::GreaterEqualOp::create(builder, op->getLoc(), bools, b, a);
    Value zero = g.zerosLike(dy);
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] =
        g.sumToShape(g.select(first, dy, zero), GradBuilder::shape(a));
    operandGrads[1] =
        g.sumToShape(g.select(first, zero, dy), GradBuilder::shape(b));
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
  if (getTanh())
    return emitOpError("has no gradient rule for the tanh approximation yet");
  GradBuilder g{builder, getLoc()};
  Value x = getInput();
  Type e = GradBuilder::elem(x);
  int64_t rank = GradBuilder::shape(x).size();
  // d/dx [x Phi(x)] = Phi(x) + x phi(x).
  Value cdf = g.mul(g.add(g.erf(g.mul(x, g.scalar(e, M_SQRT1_2, rank))),
                          g.scalar(e, 1.0, rank)),
                    g.scalar(e, 0.5, rank));
  Value pdf = g.mul(g.exp(g.mul(g.mul(x, x), g.scalar(e, -0.5, rank))),
                    g.scalar(e, 1.0 / std::sqrt(2.0 * M_PI), rank));
  operandGrads.assign(getOperation()->getNumOperands(), Value());
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
  // kernel keeps nothing), and its dbias already has the bias's own shape
  // (summed over the broadcast batch/head dimensions).
  SmallVector<Type> types = {getQuery().getType(), getKey().getType(),
                             getValue().getType()};
  if (Value bias = getBias())
    types.push_back(bias.getType());
  auto grad = AttentionGradOp::create(
      builder, getLoc(), types, resultGrads[0], getQuery(), getKey(),
      getValue(), getBias(), getMask(), getNumHeadsAttr(), getScaleAttr());
  if (Attribute cp = (*this)->getAttr("gt.cp")) // context parallel
    grad->setAttr("gt.cp", cp);
  operandGrads.assign(getOperation()->getNumOperands(), Value());
  operandGrads[0] = grad.getDq();
  operandGrads[1] = grad.getDk();
  operandGrads[2] = grad.getDv();
  if (getBias())
    operandGrads[3] = grad.getDbias();
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
  });
}
