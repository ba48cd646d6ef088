//===- GTDecompose.cpp - Lower gt ops to TOSA -------------------*- C++ -*-===//
//
// Part of MegaGraph. Rewrites gt ops into TOSA so that the upstream
// tosa-to-linalg path generates their code, and decomposes linalg.softmax.
// gt.attention is kept by default: it bufferizes into a call to the fused
// runtime kernel, which never materializes the [H, Sq, Sk] scores. With
// `keep-attention=false` it is decomposed too (scores materialized), which is
// the reference path the kernel is tested against; likewise gt.attention_grad
// (kept: the fused backward kernel; decomposed: P recomputed in TOSA).
// Attentions with a spatial bias (`spatial(%distance, %table)`) keep it for
// the CPU kernels, their distances narrowed once to i16; otherwise (the
// reference path, CUDA, tables beyond i16) they get back the dense bias,
// one gt.spatial_bias per (distance, table), and the gradient's dtable comes
// from the spatial bias's own gradient rule.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Dominance.h"
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
    auto [xhat, inv] =
        b.normalize(x, normRank, op.getEpsilon().convertToDouble());
    SmallVector<int64_t> ps(rank - normRank, 1);
    llvm::append_range(ps, xs.take_back(normRank));
    Value y = b.mul(xhat, b.reshape(op.getScale(), ps));
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
          // Rows beyond the index type's range cannot be reached anyway.
          unsigned width = idxElem.getIntOrFloatBitWidth();
          int64_t top =
              width >= 64 ? INT64_MAX : (int64_t{1} << (width - 1)) - 1;
          Value lo = arith::ConstantIntOp::create(b, l, idxElem, 0);
          Value hi = arith::ConstantIntOp::create(b, l, idxElem,
                                                  std::min(numRows - 1, top));
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

/// Static shapes of an attention (forward or backward) and the TOSA pieces
/// the reference lowerings share.
struct AttentionShapes {
  int64_t batch, sq, sk, d, dv, h, dh, dvh;
  Type e;

  AttentionShapes(Value query, Value key, Value value, int64_t heads) {
    ArrayRef<int64_t> qs = TosaBuilder::shape(query);
    batch = qs[0];
    sq = qs[1];
    d = qs[2];
    sk = TosaBuilder::shape(key)[1];
    dv = TosaBuilder::shape(value)[2];
    h = heads;
    dh = d / h;
    dvh = dv / h;
    e = TosaBuilder::elem(query);
  }

  /// [B, S, H*hd] -> [B*H, S, hd] (or [B*H, hd, S] with `transposed`).
  Value split(TosaBuilder &b, Value v, int64_t s, int64_t hd,
              bool transposed = false) const {
    SmallVector<int32_t> perm = transposed ? SmallVector<int32_t>{0, 2, 3, 1}
                                           : SmallVector<int32_t>{0, 2, 1, 3};
    SmallVector<int64_t> out = {batch * h, transposed ? hd : s,
                                transposed ? s : hd};
    return b.reshape(b.transpose(b.reshape(v, {batch, s, h, hd}), perm), out);
  }
  /// [B*H, S, hd] -> [B, S, H*hd].
  Value merge(TosaBuilder &b, Value v, int64_t s, int64_t hd) const {
    return b.reshape(b.transpose(b.reshape(v, {batch, h, s, hd}), {0, 2, 1, 3}),
                     {batch, s, h * hd});
  }

  /// The attention probabilities P [B, H, Sq, Sk]: softmax of the scaled,
  /// biased scores over the kept keys (rows that keep none are zero).
  Value probabilities(TosaBuilder &b, Value q, Value kt, Value bias, Value mask,
                      double scale) const {
    OpBuilder &rewriter = b.r;
    Location loc = b.loc;
    Value s = b.reshape(b.matmul(q, kt), {batch, h, sq, sk});
    s = b.mul(s, b.scalar(e, scale, 4));
    if (bias)
      s = b.add(s, bias.getType() == s.getType() ||
                           TosaBuilder::shape(bias).size() == 4
                       ? bias
                       : b.reshape(bias, {1, h, sq, sk}));
    if (!mask) {
      Value mx = b.reduceMax(s, 3);
      Value ex = b.unary("exp", b.sub(s, mx));
      return b.mul(ex, b.unary("reciprocal", b.reduceSum(ex, 3)));
    }
    SmallVector<int64_t> ms(4 - TosaBuilder::shape(mask).size(), 1);
    llvm::append_range(ms, TosaBuilder::shape(mask));
    Value m = b.reshape(mask, ms);
    Value negInf = b.scalar(e, -INFINITY, 4);
    auto full = b.type({batch, h, sq, sk}, e);
    Value masked = tosa::SelectOp::create(rewriter, loc, full, m, s, negInf);
    Value mx = b.reduceMax(masked, 3);
    auto rowType = b.type({batch, h, sq, 1}, e);
    auto rowBool = b.type({batch, h, sq, 1}, rewriter.getI1Type());
    Value empty = tosa::EqualOp::create(rewriter, loc, rowBool, mx, negInf);
    mx = tosa::SelectOp::create(rewriter, loc, rowType, empty,
                                b.scalar(e, 0, 4), mx);
    Value ex = b.unary("exp", b.sub(masked, mx));
    Value sum = b.reduceSum(ex, 3);
    Value zero =
        tosa::EqualOp::create(rewriter, loc, rowBool, sum, b.scalar(e, 0, 4));
    sum = tosa::SelectOp::create(rewriter, loc, rowType, zero,
                                 b.scalar(e, 1, 4), sum);
    return b.mul(ex, b.unary("reciprocal", sum));
  }
};

/// Reference attention: materializes the scores per head.
struct DecomposeAttention : OpRewritePattern<gt::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::AttentionOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    if (ShapedType::isDynamicShape(TosaBuilder::shape(op.getQuery())))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    if (op.getSpatialTable())
      return rewriter.notifyMatchFailure(op, "spatial bias not unfused");
    AttentionShapes a(op.getQuery(), op.getKey(), op.getValue(),
                      op.getNumHeads());
    Value q = a.split(b, op.getQuery(), a.sq, a.dh);
    Value kt = a.split(b, op.getKey(), a.sk, a.dh, /*transposed=*/true);
    Value v = a.split(b, op.getValue(), a.sk, a.dvh);
    Value p = a.probabilities(b, q, kt, op.getBias(), op.getMask(),
                              op.getScaleOrDefault());
    Value o = b.matmul(b.reshape(p, {a.batch * a.h, a.sq, a.sk}), v);
    rewriter.replaceOp(op, a.merge(b, o, a.sq, a.dvh));
    return success();
  }
};

/// Reference attention backward: recomputes P as the forward reference
/// does, then
///   dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)),
///   dQ = scale dS K, dK = scale dS^T Q, dBias = dS summed to the bias shape.
/// Masked scores have P = 0, hence dS = 0: they contribute nothing.
struct DecomposeAttentionGrad : OpRewritePattern<gt::AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(gt::AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder b(rewriter, op.getLoc());
    if (ShapedType::isDynamicShape(TosaBuilder::shape(op.getQuery())))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    if (op.getSpatialTable())
      return rewriter.notifyMatchFailure(op, "spatial bias not unfused");
    AttentionShapes a(op.getQuery(), op.getKey(), op.getValue(),
                      op.getNumHeads());
    int64_t g = a.batch * a.h;
    double scale = op.getScaleOrDefault();
    Value q = a.split(b, op.getQuery(), a.sq, a.dh);         // [G,Sq,dh]
    Value k = a.split(b, op.getKey(), a.sk, a.dh);           // [G,Sk,dh]
    Value kt = b.transpose(k, {0, 2, 1});                    // [G,dh,Sk]
    Value vt = a.split(b, op.getValue(), a.sk, a.dvh, true); // [G,dvh,Sk]
    Value dout = a.split(b, op.getDout(), a.sq, a.dvh);      // [G,Sq,dvh]
    Value p4 = a.probabilities(b, q, kt, op.getBias(), op.getMask(), scale);
    Value p = b.reshape(p4, {g, a.sq, a.sk});
    Value pt = b.transpose(p, {0, 2, 1}); // [G,Sk,Sq]
    Value dv = b.matmul(pt, dout);        // [G,Sk,dvh]
    Value dp = b.matmul(dout, vt);        // [G,Sq,Sk]
    Value ds = b.mul(p, b.sub(dp, b.reduceSum(b.mul(dp, p), 2)));
    Value sc = b.scalar(a.e, scale, 3);
    Value dq = b.mul(b.matmul(ds, k), sc);                         // [G,Sq,dh]
    Value dk = b.mul(b.matmul(b.transpose(ds, {0, 2, 1}), q), sc); // [G,Sk,dh]
    SmallVector<Value> results = {a.merge(b, dq, a.sq, a.dh),
                                  a.merge(b, dk, a.sk, a.dh),
                                  a.merge(b, dv, a.sk, a.dvh)};
    if (Value bias = op.getBias()) {
      // Sum dS [B, H, Sq, Sk] over the dimensions where the bias broadcast.
      ArrayRef<int64_t> bs = TosaBuilder::shape(bias);
      Value db = b.reshape(ds, {a.batch, a.h, a.sq, a.sk});
      int64_t lead = 4 - bs.size();
      for (int64_t i = 0; i < 4; ++i) {
        int64_t t = i < lead ? 1 : bs[i - lead];
        if (t == 1 && TosaBuilder::shape(db)[i] != 1)
          db = b.reduceSum(db, i);
      }
      results.push_back(b.reshape(db, bs));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The sum of an [n, 1] column as [1, 1]: blocks of kSumBlock rows first,
/// then the block sums (and the rows left over). One float32 loop over all n
/// rows rounds every addition at the size of the running total, so its error
/// grows with n (2e-4 relative for a loss over 2^20 rows); summing block
/// sums keeps each loop short.
static Value sumRows(TosaBuilder &b, Value column) {
  constexpr int64_t kSumBlock = 1024;
  const int64_t n = TosaBuilder::shape(column)[0];
  if (n <= kSumBlock)
    return b.reduceSum(column, 0);
  const int64_t blocks = n / kSumBlock, head = blocks * kSumBlock;
  Type e = TosaBuilder::elem(column);
  auto rows = [&](int64_t start, int64_t size) -> Value {
    if (start == 0 && size == n)
      return column;
    return tosa::SliceOp::create(b.r, b.loc, b.type({size, 1}, e), column,
                                 b.constShape({start, 0}),
                                 b.constShape({size, 1}));
  };
  Value total = b.reduceSum(
      b.reduceSum(b.reshape(rows(0, head), {blocks, kSumBlock}), 1), 0);
  if (head != n)
    total = b.add(total, b.reduceSum(rows(head, n - head), 0));
  return total;
}

/// Masked mean cross-entropy over rows of [N, C] logits:
/// sum(mask * (logsumexp(x) - x[label])) / max(sum(mask), 1), the sums over
/// rows in blocks (sumRows). The label's
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
    Value total = sumRows(b, b.mul(nll, weight)); // [1, 1]
    Value count = sumRows(b, weight);             // [1, 1]
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
// Attentions with a spatial bias
//===----------------------------------------------------------------------===//

/// The largest table the CPU kernels' i16 distances can index.
constexpr int64_t kMaxSpatialRows = 32768;

/// The first point at which `v` is available: after its defining op, or
/// the start of its block.
Operation *availableAt(Value v) {
  if (Operation *def = v.getDefiningOp())
    return def->getNextNode();
  return &v.getParentBlock()->front();
}

/// Sets `builder` where both `a` and `b` are first available (one of the
/// two points is dominated by both values: they dominate a common use).
void setInsertionPointAfterBoth(OpBuilder &builder, DominanceInfo &dom, Value a,
                                Value b) {
  Operation *atA = availableAt(a);
  builder.setInsertionPoint(
      a == b || dom.properlyDominates(b, atA) ? atA : availableAt(b));
}

/// `distance` as i16 (values beyond i16 saturate, which keeps
/// clamp(distance, 0, V - 1) for every table of up to 2^15 rows): one
/// linalg.generic after its definition, shared by all its attentions.
Value narrowDistance(OpBuilder &builder, DominanceInfo &dom, Value distance,
                     DenseMap<Value, Value> &narrowed) {
  auto type = cast<RankedTensorType>(distance.getType());
  if (type.getElementType().isInteger(16))
    return distance;
  if (Value done = narrowed.lookup(distance))
    return done;
  OpBuilder::InsertionGuard guard(builder);
  setInsertionPointAfterBoth(builder, dom, distance, distance);
  Location loc = distance.getLoc();
  auto i16 = builder.getI16Type();
  auto resultType = RankedTensorType::get(type.getShape(), i16);
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(), i16);
  AffineMap id = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> par(type.getRank(),
                                       utils::IteratorType::parallel);
  Type from = type.getElementType();
  unsigned width = from.getIntOrFloatBitWidth();
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{resultType}, ValueRange{distance},
      ValueRange{init}, ArrayRef<AffineMap>{id, id}, par,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value x = args[0];
        if (width < 16) {
          x = arith::ExtSIOp::create(b, l, i16, x);
        } else {
          Value lo = arith::ConstantIntOp::create(b, l, from, INT16_MIN);
          Value hi = arith::ConstantIntOp::create(b, l, from, INT16_MAX);
          x = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, x, lo),
                                     hi);
          x = arith::TruncIOp::create(b, l, i16, x);
        }
        linalg::YieldOp::create(b, l, x);
      });
  Value result = generic.getResult(0);
  narrowed[distance] = result;
  return result;
}

/// `v` summed over the dimensions where `shape` (right-aligned, missing
/// leading dims = 1) is 1 and `v` is not, then reshaped to `shape`.
Value sumToShape(TosaBuilder &b, Value v, ArrayRef<int64_t> shape) {
  int64_t rank = TosaBuilder::shape(v).size();
  int64_t lead = rank - static_cast<int64_t>(shape.size());
  for (int64_t i = 0; i < rank; ++i) {
    int64_t want = i < lead ? 1 : shape[i - lead];
    if (want == 1 && TosaBuilder::shape(v)[i] != 1)
      v = b.reduceSum(v, i);
  }
  return b.reshape(v, shape);
}

/// Rebuilds the dense bias of spatial attentions: one gt.spatial_bias per
/// (distance, table), after both; plus the op's own bias, broadcast to
/// [B|1, H, Sq, Sk].
struct DenseSpatialBias {
  explicit DenseSpatialBias(DominanceInfo &dom) : dom(dom) {}
  DominanceInfo &dom;
  DenseMap<std::pair<Value, Value>, gt::SpatialBiasOp> made;
  DenseMap<std::pair<Value, Value>, Value> sums; // (bias, spatial bias)

  gt::SpatialBiasOp spatialBias(OpBuilder &builder, Value distance,
                                Value table) {
    gt::SpatialBiasOp &sb = made[{distance, table}];
    if (!sb) {
      OpBuilder::InsertionGuard guard(builder);
      setInsertionPointAfterBoth(builder, dom, distance, table);
      sb = gt::SpatialBiasOp::create(builder, distance.getLoc(), distance,
                                     table);
    }
    return sb;
  }

  /// The whole bias of an attention with optional `bias` and the spatial
  /// bias `sb` (one sum per pair, after both).
  Value dense(OpBuilder &builder, Location loc, Value bias,
              gt::SpatialBiasOp sb) {
    if (!bias)
      return sb.getResult();
    Value &sum = sums[{bias, sb.getResult()}];
    if (!sum) {
      OpBuilder::InsertionGuard guard(builder);
      setInsertionPointAfterBoth(builder, dom, bias, sb.getResult());
      TosaBuilder b(builder, loc);
      auto rank4 = [&](Value v) {
        SmallVector<int64_t> s(TosaBuilder::shape(v));
        while (s.size() < 4)
          s.insert(s.begin(), 1);
        return b.reshape(v, s);
      };
      sum = b.add(rank4(bias), rank4(sb.getResult()));
    }
    return sum;
  }
};

/// Gives every attention with a spatial bias what its lowering needs: for
/// the CPU kernels (`keep`), i16 distances; otherwise the dense bias back.
void legalizeSpatialAttentions(ModuleOp module, bool keep) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (auto a = dyn_cast<gt::AttentionOp>(op); a && a.getSpatialTable())
      ops.push_back(op);
    if (auto a = dyn_cast<gt::AttentionLseOp>(op); a && a.getSpatialTable())
      ops.push_back(op);
    if (auto a = dyn_cast<gt::AttentionGradOp>(op); a && a.getSpatialTable())
      ops.push_back(op);
  });
  DominanceInfo dom(module);
  DenseMap<Value, Value> narrowed;
  DenseSpatialBias dense(dom);
  OpBuilder builder(module.getContext());
  auto rows = [](Value table) {
    return cast<RankedTensorType>(table.getType()).getDimSize(0);
  };
  // gt.attention and gt.attention_lse: the same operands and rebuild.
  auto legalizeForward = [&](auto a, Location loc) {
    using OpTy = decltype(a);
    if (keep && rows(a.getSpatialTable()) <= kMaxSpatialRows) {
      a.getSpatialDistanceMutable().assign(
          narrowDistance(builder, dom, a.getSpatialDistance(), narrowed));
      return;
    }
    Value bias = dense.dense(builder, loc, a.getBias(),
                             dense.spatialBias(builder, a.getSpatialDistance(),
                                               a.getSpatialTable()));
    auto plain = OpTy::create(builder, loc, a.getQuery(), a.getKey(),
                              a.getValue(), bias, a.getMask(), Value(), Value(),
                              a.getNumHeadsAttr(), a.getScaleAttr());
    plain->setDiscardableAttrs(a->getDiscardableAttrDictionary());
    a->replaceAllUsesWith(plain);
    a.erase();
  };
  for (Operation *op : ops) {
    builder.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto a = dyn_cast<gt::AttentionOp>(op)) {
      legalizeForward(a, loc);
    } else if (auto a = dyn_cast<gt::AttentionLseOp>(op)) {
      legalizeForward(a, loc);
    } else {
      auto g = cast<gt::AttentionGradOp>(op);
      if (keep && rows(g.getSpatialTable()) <= kMaxSpatialRows) {
        g.getSpatialDistanceMutable().assign(
            narrowDistance(builder, dom, g.getSpatialDistance(), narrowed));
        continue;
      }
      gt::SpatialBiasOp sb = dense.spatialBias(builder, g.getSpatialDistance(),
                                               g.getSpatialTable());
      Value bias = dense.dense(builder, loc, g.getBias(), sb);
      auto plain = gt::AttentionGradOp::create(
          builder, loc,
          TypeRange{g.getDq().getType(), g.getDk().getType(),
                    g.getDv().getType(), bias.getType()},
          g.getDout(), g.getQuery(), g.getKey(), g.getValue(), bias,
          g.getMask(), Value(), Value(), g.getOut(), g.getLse(),
          g.getNumHeadsAttr(), g.getScaleAttr());
      plain->setDiscardableAttrs(g->getDiscardableAttrDictionary());
      TosaBuilder b(builder, loc);
      Value dWhole = plain.getDbias();
      // The table's gradient through gt.spatial_bias's gradient rule.
      SmallVector<Value> sbGrads;
      Value dsb = sumToShape(b, dWhole, TosaBuilder::shape(sb.getResult()));
      (void)sb.buildGradient(builder, {dsb}, sbGrads);
      g.getDq().replaceAllUsesWith(plain.getDq());
      g.getDk().replaceAllUsesWith(plain.getDk());
      g.getDv().replaceAllUsesWith(plain.getDv());
      if (Value db = g.getDbias())
        db.replaceAllUsesWith(
            sumToShape(b, dWhole, TosaBuilder::shape(g.getBias())));
      g.getDtable().replaceAllUsesWith(sbGrads[1]);
      g.erase();
    }
  }
}

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
    // 2. Spatial biases: i16 distances for the kernels, or the dense bias.
    legalizeSpatialAttentions(getOperation(), keepAttention && keepSpatialBias);
    // 3. One pattern per gt op with a TOSA form.
    RewritePatternSet patterns(ctx);
    patterns.add<DecomposeGelu, DecomposeLinear, DecomposeLayerNorm,
                 DecomposeNodeEmbedding, DecomposeDegreeEmbedding,
                 DecomposeSpatialBias, DecomposeCrossEntropy, DecomposeEdgeBias,
                 DecomposeSoftmax>(ctx);
    if (!keepAttention)
      patterns.add<DecomposeAttention, DecomposeAttentionGrad>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // 4. Whatever gt op remains has no CPU lowering yet (pre-order, so a
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
