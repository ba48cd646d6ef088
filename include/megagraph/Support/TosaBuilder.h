//===- TosaBuilder.h - Static-shape TOSA construction -----------*- C++ -*-===//
//
// Part of MegaGraph. The builder for the TOSA that MegaGraph's own rewrites
// emit (gt-decompose's lowerings and the gradient rules): every helper
// computes its static result type, numpy broadcasting works on equal-rank
// operands with unit dims, and constants are splats of unit dims.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_SUPPORT_TOSABUILDER_H
#define MEGAGRAPH_SUPPORT_TOSABUILDER_H

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace megagraph {
namespace tosa_builder_detail {
// mlir names are used unqualified inside this namespace only.
using namespace mlir;

/// Builds TOSA ops at one location; every helper returns a static type.
class TosaBuilder {
public:
  TosaBuilder(OpBuilder &builder, Location loc) : r(builder), loc(loc) {}

  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static Type elem(Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  }
  RankedTensorType type(ArrayRef<int64_t> s, Type e) {
    return RankedTensorType::get(s, e);
  }

  /// A splat constant of `rank` unit dims.
  Value scalar(Type e, double value, int64_t rank) {
    SmallVector<int64_t> s(rank, 1);
    auto t = type(s, e);
    Attribute a = isa<FloatType>(e)
                      ? Attribute(r.getFloatAttr(e, value))
                      : Attribute(r.getIntegerAttr(e, (int64_t)value));
    return tosa::ConstOp::create(r, loc, t, DenseElementsAttr::get(t, a));
  }
  Value reshape(Value v, ArrayRef<int64_t> s) {
    if (shape(v) == s)
      return v;
    return tosa::ReshapeOp::create(r, loc, type(s, elem(v)), v, constShape(s));
  }
  Value transpose(Value v, ArrayRef<int32_t> perm) {
    SmallVector<int64_t> s;
    for (int32_t p : perm)
      s.push_back(shape(v)[p]);
    return tosa::TransposeOp::create(r, loc, type(s, elem(v)), v,
                                     r.getDenseI32ArrayAttr(perm));
  }
  /// Broadcast shape of two equal-rank shapes.
  SmallVector<int64_t> bshape(Value a, Value b) {
    SmallVector<int64_t> s;
    for (auto [x, y] : llvm::zip(shape(a), shape(b)))
      s.push_back(x == 1 ? y : x);
    return s;
  }
  Value add(Value a, Value b) {
    return tosa::AddOp::create(r, loc, type(bshape(a, b), elem(a)), a, b);
  }
  Value sub(Value a, Value b) {
    return tosa::SubOp::create(r, loc, type(bshape(a, b), elem(a)), a, b);
  }
  Value mul(Value a, Value b) {
    Value shift =
        tosa::ConstOp::create(r, loc, type({1}, r.getI8Type()),
                              DenseElementsAttr::get(type({1}, r.getI8Type()),
                                                     r.getI8IntegerAttr(0)));
    return tosa::MulOp::create(r, loc, type(bshape(a, b), elem(a)), a, b,
                               shift);
  }
  Value reduceSum(Value v, int32_t axis) {
    SmallVector<int64_t> s(shape(v));
    s[axis] = 1;
    return tosa::ReduceSumOp::create(r, loc, type(s, elem(v)), v,
                                     r.getI32IntegerAttr(axis));
  }
  Value reduceMax(Value v, int32_t axis) {
    SmallVector<int64_t> s(shape(v));
    s[axis] = 1;
    return tosa::ReduceMaxOp::create(r, loc, type(s, elem(v)), v,
                                     r.getI32IntegerAttr(axis));
  }
  Value unary(StringRef kind, Value v) {
    Type t = v.getType();
    if (kind == "exp")
      return tosa::ExpOp::create(r, loc, t, v);
    if (kind == "erf")
      return tosa::ErfOp::create(r, loc, t, v);
    if (kind == "tanh")
      return tosa::TanhOp::create(r, loc, t, v);
    if (kind == "rsqrt")
      return tosa::RsqrtOp::create(r, loc, t, v);
    return tosa::ReciprocalOp::create(r, loc, t, v);
  }
  Value matmul(Value a, Value b) {
    Type e = elem(a);
    Value zp = tosa::ConstOp::create(
        r, loc, type({1}, e),
        DenseElementsAttr::get(type({1}, e), r.getFloatAttr(e, 0.0)));
    return tosa::MatMulOp::create(
        r, loc, type({shape(a)[0], shape(a)[1], shape(b)[2]}, e), a, b, zp, zp);
  }
  /// Clamps integer indices into [0, size - 1] and casts them to i32.
  Value clampIndices(Value ids, int64_t size) {
    Type e = elem(ids);
    int64_t rank = shape(ids).size();
    Value lo = scalar(e, 0, rank), hi = scalar(e, size - 1, rank);
    Value c = tosa::MaximumOp::create(r, loc, ids.getType(), ids, lo);
    c = tosa::MinimumOp::create(r, loc, ids.getType(), c, hi);
    if (e.isInteger(32))
      return c;
    return tosa::CastOp::create(r, loc, type(shape(ids), r.getI32Type()), c);
  }
  /// table[ids]: result shape ids.shape + [D].
  Value gather(Value table, Value ids) {
    int64_t v = shape(table)[0], d = shape(table)[1];
    int64_t n = 1;
    for (int64_t s : shape(ids))
      n *= s;
    Value idx = reshape(clampIndices(ids, v), {1, n});
    Value values = reshape(table, {1, v, d});
    Value g = tosa::GatherOp::create(r, loc, type({1, n, d}, elem(table)),
                                     values, idx);
    SmallVector<int64_t> out(shape(ids));
    out.push_back(d);
    return reshape(g, out);
  }

  Value exp(Value v) { return unary("exp", v); }
  Value erf(Value v) { return unary("erf", v); }
  Value rsqrt(Value v) { return unary("rsqrt", v); }
  Value recip(Value v) { return unary("reciprocal", v); }
  /// Sums `grad` over the dimensions along which a value of `target` shape
  /// was broadcast (numpy rules), giving `target`'s shape.
  Value sumToShape(Value grad, ArrayRef<int64_t> target) {
    ArrayRef<int64_t> gs = shape(grad);
    if (gs == target)
      return grad;
    int64_t lead = gs.size() - target.size();
    for (int64_t i = 0; i < static_cast<int64_t>(gs.size()); ++i) {
      int64_t t = i < lead ? 1 : target[i - lead];
      if (t == 1 && shape(grad)[i] != 1)
        grad = reduceSum(grad, i);
    }
    return reshape(grad, target);
  }
  /// Layer-norm statistics over the trailing `normRank` dims of `x`:
  /// xhat = (x - mean) * inv and inv = 1 / sqrt(var + eps) (biased var).
  /// Shared by the forward lowering and the gradient rule.
  std::pair<Value, Value> normalize(Value x, int64_t normRank, double eps) {
    ArrayRef<int64_t> xs = shape(x);
    int64_t rank = xs.size();
    Type e = elem(x);
    int64_t count = 1;
    for (int64_t d : xs.take_back(normRank))
      count *= d;
    auto meanOf = [&](Value v) {
      for (int64_t a = rank - normRank; a < rank; ++a)
        v = reduceSum(v, a);
      return mul(v, scalar(e, 1.0 / count, rank));
    };
    Value centered = sub(x, meanOf(x));
    Value var = meanOf(mul(centered, centered));
    Value inv = rsqrt(add(var, scalar(e, eps, rank)));
    return {mul(centered, inv), inv};
  }
  /// A !tosa.shape constant.
  Value constShape(ArrayRef<int64_t> s) {
    ImplicitLocOpBuilder ib(loc, r);
    return tosa::getTosaConstShape(ib, s);
  }

  OpBuilder &r;
  Location loc;
};

} // namespace tosa_builder_detail

using tosa_builder_detail::TosaBuilder;

} // namespace megagraph

#endif // MEGAGRAPH_SUPPORT_TOSABUILDER_H
