//===- GTDecompose.cpp - Lower gt ops to TOSA -------------------*- C++ -*-===//
//
// Part of MegaGraph. Rewrites gt ops into TOSA so that the upstream
// tosa-to-linalg path generates their code, and decomposes linalg.softmax.
// gt.attention is kept by default: it bufferizes into a call to the fused
// runtime kernel, which never materializes the [H, Sq, Sk] scores. With
// `keep-attention=false` it is decomposed too (scores materialized), which is
// the reference path the kernel is tested against.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace megagraph {
#define GEN_PASS_DEF_GTDECOMPOSE
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-decompose"

using namespace mlir;
using namespace megagraph;

namespace {

//===----------------------------------------------------------------------===//
// TOSA building helpers (static shapes)
//===----------------------------------------------------------------------===//

/// Builds TOSA ops at one location; every helper returns a static type.
class TosaBuilder {
public:
  TosaBuilder(PatternRewriter &rewriter, Location loc)
      : r(rewriter), loc(loc) {}

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
    return tosa::ReshapeOp::create(r, loc, type(s, elem(v)), v,
                                   tosa::getTosaConstShape(r, loc, s));
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

  PatternRewriter &r;
  Location loc;
};

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct DecomposeGelu : OpRewritePattern<gt::GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::GeluOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    Value x = op.getInput();
    Type e = TosaBuilder::elem(x);
    int64_t rank = TosaBuilder::shape(x).size();
    Value inner;
    if (op.getTanh()) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      Value x3 = b.mul(b.mul(x, x), x);
      Value poly = b.add(x, b.mul(x3, b.scalar(e, 0.044715, rank)));
      inner = b.unary("tanh",
                      b.mul(poly, b.scalar(e, std::sqrt(2.0 / M_PI), rank)));
    } else {
      inner = b.unary("erf", b.mul(x, b.scalar(e, M_SQRT1_2, rank)));
    }
    Value onePlus = b.add(inner, b.scalar(e, 1.0, rank));
    rewriter.replaceOp(op, b.mul(b.mul(x, onePlus), b.scalar(e, 0.5, rank)));
    return success();
  }
};

struct DecomposeLinear : OpRewritePattern<gt::LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::LinearOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    Value x = op.getInput(), w = op.getWeight();
    ArrayRef<int64_t> xs = TosaBuilder::shape(x);
    int64_t k = xs.back(), n = TosaBuilder::shape(w)[1], rows = 1;
    for (int64_t d : xs.drop_back())
      rows *= d;
    Value y = b.matmul(b.reshape(x, {1, rows, k}), b.reshape(w, {1, k, n}));
    SmallVector<int64_t> out(xs);
    out.back() = n;
    y = b.reshape(y, out);
    if (Value bias = op.getBias()) {
      SmallVector<int64_t> bs(out.size(), 1);
      bs.back() = n;
      y = b.add(y, b.reshape(bias, bs));
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DecomposeLayerNorm : OpRewritePattern<gt::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    Value x = op.getInput();
    ArrayRef<int64_t> xs = TosaBuilder::shape(x);
    int64_t rank = xs.size();
    int64_t normRank = TosaBuilder::shape(op.getScale()).size();
    Type e = TosaBuilder::elem(x);
    int64_t count = 1;
    for (int64_t d : xs.take_back(normRank))
      count *= d;
    auto meanOf = [&](Value v) {
      for (int64_t a = rank - normRank; a < rank; ++a)
        v = b.reduceSum(v, a);
      return b.mul(v, b.scalar(e, 1.0 / count, rank));
    };
    Value centered = b.sub(x, meanOf(x));
    Value var = meanOf(b.mul(centered, centered));
    Value inv = b.unary(
        "rsqrt",
        b.add(var, b.scalar(e, op.getEpsilon().convertToDouble(), rank)));
    SmallVector<int64_t> ps(rank - normRank, 1);
    llvm::append_range(ps, xs.take_back(normRank));
    Value y = b.mul(b.mul(centered, inv), b.reshape(op.getScale(), ps));
    if (Value beta = op.getBias())
      y = b.add(y, b.reshape(beta, ps));
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DecomposeNodeEmbedding : OpRewritePattern<gt::NodeEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::NodeEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    Value g = b.gather(op.getTable(), op.getIds());
    if (op.getSumFeatures()) {
      int64_t axis = TosaBuilder::shape(op.getIds()).size() - 1;
      g = b.reshape(b.reduceSum(g, axis), op.getType().getShape());
    }
    rewriter.replaceOp(op, g);
    return success();
  }
};

struct DecomposeDegreeEmbedding : OpRewritePattern<gt::DegreeEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::DegreeEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    rewriter.replaceOp(
        op, b.add(op.getInput(), b.gather(op.getTable(), op.getDegree())));
    return success();
  }
};

/// One fused loop nest writes result[.., h, i, j] = table[clamp(d[.., i, j]),
/// h] straight into the [.., H, Sq, Sk] layout: no gathered [.., Sq, Sk, H]
/// intermediate, no transpose, no separate clamp and cast passes.
struct DecomposeSpatialBias : OpRewritePattern<gt::SpatialBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::SpatialBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dist = op.getDistance(), table = op.getTable();
    auto distType = cast<RankedTensorType>(dist.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank(),
            numRows = cast<RankedTensorType>(table.getType()).getDimSize(0);
    MLIRContext *ctx = rewriter.getContext();
    // (.., h, i, j) -> (.., i, j) for the distance.
    SmallVector<AffineExpr> distExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != rank - 3)
        distExprs.push_back(getAffineDimExpr(d, ctx));
    AffineMap distMap = AffineMap::get(rank, 0, distExprs, ctx);
    AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Type idxElem = distType.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{dist},
        ValueRange{init}, ArrayRef<AffineMap>{distMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value lo = arith::ConstantIntOp::create(b, l, idxElem, 0);
          Value hi = arith::ConstantIntOp::create(b, l, idxElem, numRows - 1);
          Value c = arith::MaxSIOp::create(b, l, args[0], lo);
          c = arith::MinSIOp::create(b, l, c, hi);
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), c);
          Value head = linalg::IndexOp::create(b, l, rank - 3);
          Value v =
              tensor::ExtractOp::create(b, l, table, ValueRange{row, head});
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Reference attention: materializes the scores per head.
struct DecomposeAttention : OpRewritePattern<gt::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::AttentionOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    ArrayRef<int64_t> qs = TosaBuilder::shape(op.getQuery());
    int64_t batch = qs[0], sq = qs[1], d = qs[2];
    int64_t sk = TosaBuilder::shape(op.getKey())[1];
    int64_t dv = TosaBuilder::shape(op.getValue())[2];
    int64_t h = op.getNumHeads(), dh = d / h, dvh = dv / h;
    if (ShapedType::isDynamicShape(qs))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    Type e = TosaBuilder::elem(op.getQuery());
    auto heads = [&](Value v, int64_t s, int64_t hd, ArrayRef<int32_t> perm,
                     ArrayRef<int64_t> out) {
      return b.reshape(b.transpose(b.reshape(v, {batch, s, h, hd}), perm), out);
    };
    Value q = heads(op.getQuery(), sq, dh, {0, 2, 1, 3}, {batch * h, sq, dh});
    Value kt = heads(op.getKey(), sk, dh, {0, 2, 3, 1}, {batch * h, dh, sk});
    Value v = heads(op.getValue(), sk, dvh, {0, 2, 1, 3}, {batch * h, sk, dvh});
    Value s = b.reshape(b.matmul(q, kt), {batch, h, sq, sk});
    s = b.mul(s, b.scalar(e, op.getScaleOrDefault(), 4));
    if (Value bias = op.getBias())
      s = b.add(s, bias.getType() == s.getType() ||
                           TosaBuilder::shape(bias).size() == 4
                       ? bias
                       : b.reshape(bias, {1, h, sq, sk}));
    Value p;
    if (Value mask = op.getMask()) {
      SmallVector<int64_t> ms(4 - TosaBuilder::shape(mask).size(), 1);
      llvm::append_range(ms, TosaBuilder::shape(mask));
      Value m = b.reshape(mask, ms);
      Value negInf = b.scalar(e, -INFINITY, 4);
      auto full = b.type({batch, h, sq, sk}, e);
      Value masked =
          tosa::SelectOp::create(rewriter, op.getLoc(), full, m, s, negInf);
      Value mx = b.reduceMax(masked, 3);
      auto rowType = b.type({batch, h, sq, 1}, e);
      auto rowBool = b.type({batch, h, sq, 1}, rewriter.getI1Type());
      Value empty =
          tosa::EqualOp::create(rewriter, op.getLoc(), rowBool, mx, negInf);
      mx = tosa::SelectOp::create(rewriter, op.getLoc(), rowType, empty,
                                  b.scalar(e, 0, 4), mx);
      Value ex = b.unary("exp", b.sub(masked, mx));
      Value sum = b.reduceSum(ex, 3);
      Value zero = tosa::EqualOp::create(rewriter, op.getLoc(), rowBool, sum,
                                         b.scalar(e, 0, 4));
      sum = tosa::SelectOp::create(rewriter, op.getLoc(), rowType, zero,
                                   b.scalar(e, 1, 4), sum);
      p = b.mul(ex, b.unary("reciprocal", sum));
    } else {
      Value mx = b.reduceMax(s, 3);
      Value ex = b.unary("exp", b.sub(s, mx));
      p = b.mul(ex, b.unary("reciprocal", b.reduceSum(ex, 3)));
    }
    Value o = b.matmul(b.reshape(p, {batch * h, sq, sk}), v);
    o = b.reshape(b.transpose(b.reshape(o, {batch, h, sq, dvh}), {0, 2, 1, 3}),
                  {batch, sq, dv});
    rewriter.replaceOp(op, o);
    return success();
  }
};

/// Masked mean cross-entropy over rows of [N, C] logits:
/// sum(mask * (logsumexp(x) - x[label])) / max(sum(mask), 1). The label's
/// logit is picked with a one-hot comparison against an iota (labels out of
/// range pick nothing).
struct DecomposeCrossEntropy : OpRewritePattern<gt::CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Value logits = op.getLogits(), labels = op.getLabels();
    ArrayRef<int64_t> ls = TosaBuilder::shape(logits);
    int64_t c = ls.back(), n = 1;
    for (int64_t d : ls.drop_back())
      n *= d;
    Type e = TosaBuilder::elem(logits), li = TosaBuilder::elem(labels);
    Value x = b.reshape(logits, {n, c});
    Value lab = b.reshape(labels, {n, 1});
    // logsumexp per row, stabilized by the row max.
    Value mx = b.reduceMax(x, 1);
    Value lse =
        b.add(tosa::LogOp::create(rewriter, loc, b.type({n, 1}, e),
                                  b.reduceSum(b.unary("exp", b.sub(x, mx)), 1)),
              mx);
    // x[label] through a one-hot mask.
    SmallVector<Attribute> iota;
    for (int64_t i = 0; i < c; ++i)
      iota.push_back(rewriter.getIntegerAttr(li, i));
    auto iotaType = b.type({1, c}, li);
    Value classes = tosa::ConstOp::create(
        rewriter, loc, iotaType, DenseElementsAttr::get(iotaType, iota));
    Value hit = tosa::EqualOp::create(
        rewriter, loc, b.type({n, c}, rewriter.getI1Type()), classes, lab);
    Value picked =
        b.reduceSum(tosa::SelectOp::create(rewriter, loc, b.type({n, c}, e),
                                           hit, x, b.scalar(e, 0.0, 2)),
                    1);
    Value nll = b.sub(lse, picked); // [n, 1]
    auto column = b.type({n, 1}, e);
    Value weight =
        op.getMask()
            ? tosa::CastOp::create(rewriter, loc, column,
                                   b.reshape(op.getMask(), {n, 1}))
                  .getResult()
            : tosa::ConstOp::create(
                  rewriter, loc, column,
                  DenseElementsAttr::get(column, rewriter.getFloatAttr(e, 1.0)))
                  .getResult();
    Value total = b.reduceSum(b.mul(nll, weight), 0); // [1, 1]
    Value count = b.reduceSum(weight, 0);             // [1, 1]
    count = tosa::MaximumOp::create(rewriter, loc, count.getType(), count,
                                    b.scalar(e, 1.0, 2));
    Value loss = b.mul(total, b.unary("reciprocal", count));
    rewriter.replaceOp(op, b.reshape(loss, {}));
    return success();
  }
};

/// Graphormer's edge encoding as one linalg.generic reducing over hops and
/// input heads, then a division by the clamped path length:
///   out[.., h, i, j] = sum_{l, g : path >= 0} table[path[.., i, j, l], g] *
///                      W[l, g, h] / clamp(dist[.., i, j], 1, L)
struct DecomposeEdgeBias : OpRewritePattern<gt::EdgeBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::EdgeBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = cast<RankedTensorType>(op.getType());
    Value path = op.getPath(), dist = op.getDistance(), table = op.getTable(),
          weights = op.getHopWeights();
    int64_t rank = resultType.getRank(); // [.., H, Sq, Sk]
    int64_t batchDims = rank - 3;
    int64_t hops = TosaBuilder::shape(path).back();
    int64_t numTypes = TosaBuilder::shape(table)[0];
    Type f = resultType.getElementType();
    Type idxElem = TosaBuilder::elem(path);
    // Loop dims: batch.., h, i, j, l, g.
    int64_t loops = rank + 2;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> pathExprs, wExprs, outExprs;
    for (int64_t i = 0; i < batchDims; ++i)
      pathExprs.push_back(d(i));
    pathExprs.append({d(batchDims + 1), d(batchDims + 2), d(rank)});
    wExprs = {d(rank), d(rank + 1), d(batchDims)};
    for (int64_t i = 0; i < rank; ++i)
      outExprs.push_back(d(i));
    SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, pathExprs, ctx),
                                   AffineMap::get(loops, 0, wExprs, ctx),
                                   AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value zero = arith::ConstantOp::create(rewriter, loc, f,
                                           rewriter.getFloatAttr(f, 0.0));
    Value init =
        linalg::FillOp::create(
            rewriter, loc, zero,
            tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), f)
                .getResult())
            .getResult(0);
    auto sum = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{path, weights},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &bb, Location l, ValueRange args) {
          Value lo = arith::ConstantIntOp::create(bb, l, idxElem, 0);
          Value hi = arith::ConstantIntOp::create(bb, l, idxElem, numTypes - 1);
          Value valid = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::sge,
                                              args[0], lo);
          Value row = arith::MinSIOp::create(
              bb, l, arith::MaxSIOp::create(bb, l, args[0], lo), hi);
          row = arith::IndexCastOp::create(bb, l, bb.getIndexType(), row);
          Value g = linalg::IndexOp::create(bb, l, rank + 1);
          Value t = tensor::ExtractOp::create(bb, l, table, ValueRange{row, g});
          Value prod = arith::MulFOp::create(bb, l, t, args[1]);
          Value zeroF =
              arith::ConstantOp::create(bb, l, f, bb.getFloatAttr(f, 0.0));
          prod = arith::SelectOp::create(bb, l, valid, prod, zeroF);
          linalg::YieldOp::create(
              bb, l, arith::AddFOp::create(bb, l, args[2], prod).getResult());
        });
    // Divide by clamp(dist, 1, L), broadcast over heads.
    SmallVector<AffineExpr> distExprs;
    for (int64_t i = 0; i < rank; ++i)
      if (i != batchDims)
        distExprs.push_back(d(i));
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineMap> divMaps = {AffineMap::get(rank, 0, distExprs, ctx),
                                      id, id};
    SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
    Type distElem = TosaBuilder::elem(dist);
    auto div = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{dist, sum.getResult(0)},
        ValueRange{
            tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), f)},
        divMaps, par, [&](OpBuilder &bb, Location l, ValueRange args) {
          Value one = arith::ConstantIntOp::create(bb, l, distElem, 1);
          Value maxL = arith::ConstantIntOp::create(bb, l, distElem, hops);
          Value c = arith::MinSIOp::create(
              bb, l, arith::MaxSIOp::create(bb, l, args[0], one), maxL);
          Value cf = arith::SIToFPOp::create(bb, l, f, c);
          linalg::YieldOp::create(
              bb, l, arith::DivFOp::create(bb, l, args[1], cf).getResult());
        });
    rewriter.replaceOp(op, div.getResult(0));
    return success();
  }
};

/// linalg.softmax -> its generic decomposition (max, sub, exp, sum, div).
struct DecomposeSoftmax : OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results =
        cast<linalg::AggregatedOpInterface>(op.getOperation())
            .decomposeOperation(rewriter);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct GTDecomposePass : megagraph::impl::GTDecomposeBase<GTDecomposePass> {
  using GTDecomposeBase::GTDecomposeBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // 1. The TOSA forms need static shapes.
    WalkResult dynamic = getOperation()->walk([&](Operation *op) {
      if (!isa<gt::GTDialect>(op->getDialect()))
        return WalkResult::advance();
      auto isStatic = [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return !shaped || shaped.hasStaticShape();
      };
      if (llvm::all_of(op->getOperandTypes(), isStatic) &&
          llvm::all_of(op->getResultTypes(), isStatic))
        return WalkResult::advance();
      op->emitOpError("needs static shapes for the CPU lowering (pass "
                      "--input-shape for dynamic model inputs)");
      return WalkResult::interrupt();
    });
    if (dynamic.wasInterrupted())
      return signalPassFailure();
    // 2. One pattern per gt op with a TOSA form.
    RewritePatternSet patterns(ctx);
    patterns.add<DecomposeGelu, DecomposeLinear, DecomposeLayerNorm,
                 DecomposeNodeEmbedding, DecomposeDegreeEmbedding,
                 DecomposeSpatialBias, DecomposeCrossEntropy, DecomposeEdgeBias,
                 DecomposeSoftmax>(ctx);
    if (!keepAttention)
      patterns.add<DecomposeAttention>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // 3. Whatever gt op remains has no CPU lowering yet (pre-order, so a
    //    gt.layer is reported rather than its terminator).
    WalkResult result =
        getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!isa<gt::GTDialect>(op->getDialect()))
            return WalkResult::advance();
          // Ops that bufferize into runtime kernel calls stay.
          if (isa<bufferization::BufferizableOpInterface>(op))
            return WalkResult::advance();
          op->emitOpError("has no CPU lowering yet");
          return WalkResult::interrupt();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
