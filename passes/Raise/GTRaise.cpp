//===- GTRaise.cpp - Raise imported tensor ops to gt ops --------*- C++ -*-===//
//
// Part of MegaGraph. The ONNX importer maps nodes one by one to TOSA (plus
// linalg.softmax and ml_program globals). This pass finds the Graph
// Transformer building blocks among them and replaces each with one gt op, so
// that cost, autodiff and context parallelism reason about attention and its
// bias instead of dozens of generic ops. Patterns match on values, not on op
// order, and accept the variants PyTorch exports (commuted operands, a
// division written as a multiplication by a reciprocal, reshapes of
// constants); anything unmatched is left untouched.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "GTRaisePatterns.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/TosaBuilder.h"

#include "llvm/ADT/Statistic.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace megagraph {
#define GEN_PASS_DEF_GTRAISE
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-raise"

using namespace mlir;
using namespace megagraph;

namespace {

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elemOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

int64_t getNumElementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// Returns the value of a floating-point splat constant, if `v` is one.
std::optional<double> getSplatValue(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// True if `v` is a splat constant within 1e-5 relative of `expected`.
bool isSplat(Value v, double expected) {
  std::optional<double> got = getSplatValue(v);
  return got && std::abs(*got - expected) <= 1e-5 * std::abs(expected);
}

/// Collects the factors of a product tree of single-use tosa.mul ops rooted
/// at `root` (the root itself may have many uses). Gives up past 4 leaves.
void collectFactors(Value v, bool isRoot, SmallVectorImpl<Value> &leaves) {
  auto mul = v.getDefiningOp<tosa::MulOp>();
  if (leaves.size() > 4 || !mul || (!isRoot && !mul->hasOneUse())) {
    leaves.push_back(v);
    return;
  }
  collectFactors(mul.getInput1(), false, leaves);
  collectFactors(mul.getInput2(), false, leaves);
}

/// Matches `x * c`, `c * x` or `x * (1 / c)` with a splat `c`; returns x and
/// the total factor.
std::optional<std::pair<Value, double>> matchScaled(Value v) {
  auto mul = v.getDefiningOp<tosa::MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [x, c] : {std::pair{mul.getInput1(), mul.getInput2()},
                      std::pair{mul.getInput2(), mul.getInput1()}}) {
    if (std::optional<double> s = getSplatValue(c))
      return std::pair{x, *s};
    if (auto rec = c.getDefiningOp<tosa::ReciprocalOp>())
      if (std::optional<double> s = getSplatValue(rec.getInput1()))
        return std::pair{x, 1.0 / *s};
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// GELU (erf form): x * 0.5 * (1 + erf(x / sqrt(2))), any association.
//===----------------------------------------------------------------------===//

struct RaiseGelu : OpRewritePattern<tosa::MulOp> {
  RaiseGelu(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(tosa::MulOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value, 4> leaves;
    collectFactors(root.getResult(), /*isRoot=*/true, leaves);
    if (leaves.size() != 3)
      return failure();
    // Find the 0.5 factor and the `1 + erf(x / sqrt 2)` factor; the last
    // leaf must be that same x.
    auto erfArgument = [](Value leaf) -> Value {
      auto add = leaf.getDefiningOp<tosa::AddOp>();
      if (!add)
        return Value();
      Value erfVal = isSplat(add.getInput1(), 1.0)   ? add.getInput2()
                     : isSplat(add.getInput2(), 1.0) ? add.getInput1()
                                                     : Value();
      auto erf = erfVal ? erfVal.getDefiningOp<tosa::ErfOp>() : nullptr;
      if (!erf)
        return Value();
      std::optional<std::pair<Value, double>> scaled =
          matchScaled(erf.getInput());
      if (!scaled || std::abs(scaled->second - M_SQRT1_2) > 1e-5)
        return Value();
      return scaled->first;
    };
    int halfIdx = -1, erfIdx = -1;
    Value erfX;
    for (auto [i, leaf] : llvm::enumerate(leaves)) {
      if (halfIdx < 0 && isSplat(leaf, 0.5))
        halfIdx = i;
      else if (Value arg = erfArgument(leaf); arg && erfIdx < 0) {
        erfIdx = i;
        erfX = arg;
      }
    }
    if (halfIdx < 0 || erfIdx < 0)
      return failure();
    Value x = leaves[3 - halfIdx - erfIdx];
    if (x != erfX)
      return failure();
    if (x.getType() != root.getType())
      return failure();
    rewriter.replaceOpWithNewOp<gt::GeluOp>(root, x);
    ++count;
    return success();
  }

  llvm::Statistic &count;
};

//===----------------------------------------------------------------------===//
// Layout tracking through reshape / transpose chains
//===----------------------------------------------------------------------===//

/// Describes a tensor produced from a `base` tensor by reshapes, transposes
/// and multiplications by scalar constants: each dimension of the tensor is
/// a row-major group of "atoms", the finest factors of the base dimensions
/// that the chain never splits. `baseAtoms` lists the atoms of each base
/// dimension, major to minor.
struct Layout {
  Value base;
  double scale = 1.0;
  SmallVector<int64_t> atomSize;           // by atom id
  SmallVector<SmallVector<int>> baseAtoms; // per base dim
  SmallVector<SmallVector<int>> dims;      // per dim of the tensor

  /// Splits atom `a` into (major `outer`, minor rest) everywhere.
  int split(int a, int64_t outer) {
    int lo = atomSize.size();
    atomSize.push_back(atomSize[a] / outer);
    atomSize[a] = outer;
    for (auto *lists : {&baseAtoms, &dims})
      for (SmallVector<int> &list : *lists)
        for (size_t i = 0; i < list.size(); ++i)
          if (list[i] == a) {
            list.insert(list.begin() + i + 1, lo);
            break;
          }
    return lo;
  }

  /// Applies a reshape to `shape`; fails if it mixes atoms incompatibly.
  LogicalResult reshape(ArrayRef<int64_t> shape) {
    SmallVector<int> flat;
    for (const SmallVector<int> &d : dims)
      flat.append(d.begin(), d.end());
    SmallVector<SmallVector<int>> out;
    size_t next = 0;
    for (int64_t size : shape) {
      SmallVector<int> group;
      int64_t have = 1;
      while (have < size) {
        if (next >= flat.size())
          return failure();
        int a = flat[next];
        int64_t need = size / have;
        if (size % have != 0)
          return failure();
        if (atomSize[a] > need) {
          if (atomSize[a] % need != 0)
            return failure();
          int lo = split(a, need);
          flat.insert(flat.begin() + next + 1, lo);
        }
        group.push_back(a);
        have *= atomSize[a];
        ++next;
      }
      if (have != size)
        return failure();
      out.push_back(group);
    }
    if (next != flat.size())
      return failure();
    dims = std::move(out);
    return success();
  }

  void transpose(ArrayRef<int32_t> perm) {
    SmallVector<SmallVector<int>> out;
    for (int32_t p : perm)
      out.push_back(dims[p]);
    dims = std::move(out);
  }

  int64_t size(ArrayRef<int> atoms) const {
    int64_t n = 1;
    for (int a : atoms)
      n *= atomSize[a];
    return n;
  }
  /// The base dimension holding atom `a`.
  int baseDimOf(int a) const {
    for (auto [i, list] : llvm::enumerate(baseAtoms))
      if (llvm::is_contained(list, a))
        return i;
    return -1;
  }
};

/// Traces `v` back through reshape / transpose / scalar multiplications to
/// its base and returns its layout.
std::optional<Layout> traceLayout(Value v) {
  SmallVector<Operation *> chain;
  double scale = 1.0;
  Value cur = v;
  while (Operation *def = cur.getDefiningOp()) {
    if (auto r = dyn_cast<tosa::ReshapeOp>(def)) {
      chain.push_back(def);
      cur = r.getInput1();
    } else if (auto t = dyn_cast<tosa::TransposeOp>(def)) {
      chain.push_back(def);
      cur = t.getInput1();
    } else if (auto m = matchScaled(cur);
               m && isa<tosa::MulOp>(def) &&
               getNumElementsOf(m->first) == getNumElementsOf(cur)) {
      scale *= m->second;
      chain.push_back(def);
      cur = m->first;
    } else {
      break;
    }
  }
  Layout layout;
  layout.base = cur;
  layout.scale = scale;
  for (int64_t d : cast<RankedTensorType>(cur.getType()).getShape()) {
    SmallVector<int> atoms;
    if (d != 1) {
      atoms.push_back(layout.atomSize.size());
      layout.atomSize.push_back(d);
    }
    layout.baseAtoms.push_back(atoms);
    layout.dims.push_back(atoms);
  }
  for (Operation *op : llvm::reverse(chain)) {
    if (auto r = dyn_cast<tosa::ReshapeOp>(op)) {
      if (failed(layout.reshape(r.getType().getShape())))
        return std::nullopt;
    } else if (auto t = dyn_cast<tosa::TransposeOp>(op)) {
      layout.transpose(t.getPerms());
    }
  }
  return layout;
}

//===----------------------------------------------------------------------===//
// Layer norm, decomposed (exports at opsets below 17):
// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * w (+ b).
//===----------------------------------------------------------------------===//

/// Matches mean(v) over the last dim as the importer writes ReduceMean with
/// keepdims: reduce_sum(v, last) * (1 / N), the scale in any factor order.
Value matchLastDimMean(Value m) {
  std::optional<std::pair<Value, double>> scaled = matchScaled(m);
  if (!scaled)
    return Value();
  auto sum = scaled->first.getDefiningOp<tosa::ReduceSumOp>();
  if (!sum)
    return Value();
  Value v = sum.getInput();
  int64_t rank = shapeOf(v).size();
  if (rank == 0 || sum.getAxis() != rank - 1)
    return Value();
  double n = static_cast<double>(shapeOf(v).back());
  if (std::abs(scaled->second * n - 1.0) > 1e-5)
    return Value();
  return v;
}

/// Matches d^2 as pow(d, 2) or d * d; returns d.
Value matchSquare(Value v) {
  if (auto pow = v.getDefiningOp<tosa::PowOp>())
    return isSplat(pow.getInput2(), 2.0) ? pow.getInput1() : Value();
  if (auto mul = v.getDefiningOp<tosa::MulOp>())
    return mul.getInput1() == mul.getInput2() ? mul.getInput1() : Value();
  return Value();
}

/// Matches 1 / sqrt(v) as reciprocal(pow(v, 0.5)) or rsqrt(v); returns v.
Value matchInvSqrt(Value r) {
  if (auto rs = r.getDefiningOp<tosa::RsqrtOp>())
    return rs.getInput1();
  auto rec = r.getDefiningOp<tosa::ReciprocalOp>();
  if (!rec)
    return Value();
  auto pow = rec.getInput1().getDefiningOp<tosa::PowOp>();
  return pow && isSplat(pow.getInput2(), 0.5) ? pow.getInput1() : Value();
}

Value getParameter(Value v);

/// The [D] parameter behind a [1, .., 1, D] operand (or [D] itself).
Value getFeatureParameter(Value v, int64_t d) {
  ArrayRef<int64_t> vs = shapeOf(v);
  if (vs.empty() || vs.back() != d ||
      !llvm::all_of(vs.drop_back(), [](int64_t s) { return s == 1; }))
    return Value();
  Value p = getParameter(v);
  return p && shapeOf(p) == ArrayRef<int64_t>{d} ? p : Value();
}

/// n * w (+ b) with n the normalized x -> gt.layer_norm(x, w, b).
struct RaiseLayerNorm : OpRewritePattern<tosa::MulOp> {
  RaiseLayerNorm(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(tosa::MulOp scaleMul,
                                PatternRewriter &rewriter) const override {
    for (auto [n, w] :
         {std::pair{scaleMul.getInput1(), scaleMul.getInput2()},
          std::pair{scaleMul.getInput2(), scaleMul.getInput1()}}) {
      // n = d * (1 / sqrt(var + eps)), d = x - mean(x).
      auto norm = n.getDefiningOp<tosa::MulOp>();
      if (!norm || !n.hasOneUse() || n.getType() != scaleMul.getType())
        continue;
      for (auto [d, r] : {std::pair{norm.getInput1(), norm.getInput2()},
                          std::pair{norm.getInput2(), norm.getInput1()}}) {
        auto sub = d.getDefiningOp<tosa::SubOp>();
        Value ve = matchInvSqrt(r);
        auto addEps = ve ? ve.getDefiningOp<tosa::AddOp>() : tosa::AddOp();
        if (!sub || !addEps)
          continue;
        Value x = sub.getInput1();
        if (x.getType() != d.getType() ||
            matchLastDimMean(sub.getInput2()) != x)
          continue;
        std::optional<double> eps;
        Value var;
        for (auto [a, c] : {std::pair{addEps.getInput1(), addEps.getInput2()},
                            std::pair{addEps.getInput2(), addEps.getInput1()}})
          if (std::optional<double> e = getSplatValue(c)) {
            eps = e;
            var = a;
          }
        if (!eps || !var || matchSquare(matchLastDimMean(var)) != d)
          continue;
        int64_t dim = shapeOf(x).back();
        Value scale = getFeatureParameter(w, dim);
        if (!scale)
          continue;
        // A bias added after the scale joins the op.
        Operation *root = scaleMul;
        Value bias;
        if (scaleMul->hasOneUse())
          if (auto add = dyn_cast<tosa::AddOp>(*scaleMul->getUsers().begin()))
            for (Value other : {add.getInput1(), add.getInput2()})
              if (other != scaleMul.getResult() &&
                  add.getType() == scaleMul.getType())
                if (Value b = getFeatureParameter(other, dim)) {
                  bias = b;
                  root = add;
                }
        rewriter.replaceOpWithNewOp<gt::LayerNormOp>(
            root, root->getResult(0).getType(), x, scale, bias,
            rewriter.getF32FloatAttr(static_cast<float>(*eps)));
        ++count;
        return success();
      }
    }
    return failure();
  }
  llvm::Statistic &count;
};

//===----------------------------------------------------------------------===//
// Linear: reshape(matmul(reshape(x), reshape(W))) (+ bias), W a parameter.
//===----------------------------------------------------------------------===//

/// Returns `v` if it is a parameter loaded from an ml_program global, looking
/// through reshapes that only add unit dims.
Value getParameter(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>())
    v = r.getInput1();
  if (v.getDefiningOp<ml_program::GlobalLoadOp>() ||
      v.getDefiningOp<ml_program::GlobalLoadConstOp>())
    return v;
  return Value();
}

/// x [.., K] times a [K, N] parameter. The importer flattens x to the
/// [1, M, K] operand of tosa.matmul and restores the leading dims after it;
/// where x is already [1, M, K] (batch 1: full-graph training, or a
/// flattened node set) there is no reshape on either side, and the
/// matmul itself is the linear layer.
/// The [K, N] weight of a linear layer: a parameter, or the transpose of an
/// [N, K] one (torch.nn.Linear's layout, which Gemm with transB = 1 and
/// unfolded exports keep), looking through reshapes that add unit dims.
Value getLinearWeight(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>())
    v = r.getInput1();
  if (getParameter(v))
    return v;
  auto t = v.getDefiningOp<tosa::TransposeOp>();
  if (t && t.getPerms() == ArrayRef<int32_t>{1, 0} &&
      getParameter(t.getInput1()))
    return v;
  return Value();
}

struct RaiseLinear : OpRewritePattern<tosa::MatMulOp> {
  RaiseLinear(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(tosa::MatMulOp mm,
                                PatternRewriter &rewriter) const override {
    if (mm.getType().getDimSize(0) != 1)
      return failure();
    Value w = getLinearWeight(mm.getB());
    if (!w || shapeOf(w).size() != 2)
      return failure();
    int64_t k = shapeOf(w)[0], n = shapeOf(w)[1];
    // The result the linear layer replaces, and its input.
    Operation *root = mm;
    Value x = mm.getA();
    if (auto xr = x.getDefiningOp<tosa::ReshapeOp>())
      if (mm->hasOneUse())
        if (auto out = dyn_cast<tosa::ReshapeOp>(*mm->getUsers().begin())) {
          ArrayRef<int64_t> xs = shapeOf(xr.getInput1());
          ArrayRef<int64_t> os = out.getType().getShape();
          if (!xs.empty() && xs.back() == k && os.size() == xs.size() &&
              os.drop_back() == xs.drop_back() && os.back() == n) {
            x = xr.getInput1();
            root = out;
          }
        }
    if (shapeOf(x).back() != k)
      return failure();
    rewriter.replaceOpWithNewOp<gt::LinearOp>(root, x, w, Value());
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

/// Folds a parameter bias added after gt.linear into it.
struct FoldLinearBias : OpRewritePattern<tosa::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [lin, other] : {std::pair{add.getInput1(), add.getInput2()},
                              std::pair{add.getInput2(), add.getInput1()}}) {
      auto linear = lin.getDefiningOp<gt::LinearOp>();
      if (!linear || linear.getBias() || !linear->hasOneUse() ||
          linear.getType() != add.getType())
        continue;
      Value bias = getParameter(other);
      int64_t n = shapeOf(linear.getWeight())[1];
      // The added operand must broadcast along the output features only:
      // [1, ..., 1, N].
      ArrayRef<int64_t> os = shapeOf(other);
      bool featureOnly =
          !os.empty() && os.back() == n &&
          llvm::all_of(os.drop_back(), [](int64_t d) { return d == 1; });
      if (!bias || !featureOnly || shapeOf(bias) != ArrayRef<int64_t>{n})
        continue;
      rewriter.replaceOpWithNewOp<gt::LinearOp>(add, linear.getInput(),
                                                linear.getWeight(), bias);
      rewriter.eraseOp(linear);
      return success();
    }
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// Embeddings: tosa.gather on a parameter table.
//===----------------------------------------------------------------------===//

/// Matches `reshape(gather(reshape(table), reshape(cast(ids))))` with a
/// [V, D] parameter table; returns (ids, table) and the op whose result is
/// the embedding `[ids.shape, D]`: the final reshape, or the gather itself
/// where no reshape is needed (ids of shape [1, S], as at batch 1). With
/// `unitFeature`, also a result of shape `[ids.shape[:-1], D]` when the last
/// ids dim is 1: the sum over a single feature, which the importer folds to
/// a reshape.
struct EmbeddingMatch {
  Value ids, table;
  Operation *out;
  /// The result drops the unit feature dim of `ids`.
  bool droppedUnitFeature = false;
};

std::optional<EmbeddingMatch> matchEmbedding(Value v,
                                             bool unitFeature = false) {
  Operation *out = v.getDefiningOp();
  auto gather = dyn_cast_or_null<tosa::GatherOp>(out);
  if (auto r = dyn_cast_or_null<tosa::ReshapeOp>(out))
    gather = r.getInput1().getDefiningOp<tosa::GatherOp>();
  if (!gather || (gather != out && !gather->hasOneUse()))
    return std::nullopt;
  Value table = getParameter(gather.getValues());
  if (!table || shapeOf(table).size() != 2)
    return std::nullopt;
  Value ids = gather.getIndices();
  while (auto r = ids.getDefiningOp<tosa::ReshapeOp>())
    ids = r.getInput1();
  // The importer wraps negative indices: select(0 > i, i + K, i). gt
  // embeddings clamp instead; both agree on valid (non-negative) ids.
  if (auto sel = ids.getDefiningOp<tosa::SelectOp>()) {
    auto add = sel.getInput2().getDefiningOp<tosa::AddOp>();
    auto gt = sel.getInput1().getDefiningOp<tosa::GreaterOp>();
    Value i = sel.getInput3();
    if (add && gt && gt.getInput2() == i &&
        (add.getInput1() == i || add.getInput2() == i))
      ids = i;
  }
  if (auto c = ids.getDefiningOp<tosa::CastOp>())
    ids = c.getInput();
  int64_t d = shapeOf(table)[1];
  ArrayRef<int64_t> is = shapeOf(ids), os = shapeOf(v);
  SmallVector<int64_t> expect(is);
  expect.push_back(d);
  if (os == ArrayRef<int64_t>(expect))
    return EmbeddingMatch{ids, table, out};
  if (unitFeature && !is.empty() && is.back() == 1 && os.size() == is.size() &&
      os.drop_back() == is.drop_back() && os.back() == d)
    return EmbeddingMatch{ids, table, out, /*droppedUnitFeature=*/true};
  return std::nullopt;
}

/// transpose(embedding(ids [.., Sq, Sk])) moving the head dim before the
/// node pair -> gt.spatial_bias.
struct RaiseSpatialBias : OpRewritePattern<tosa::TransposeOp> {
  RaiseSpatialBias(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx, /*benefit=*/2), count(count) {}
  LogicalResult matchAndRewrite(tosa::TransposeOp t,
                                PatternRewriter &rewriter) const override {
    std::optional<EmbeddingMatch> m = matchEmbedding(t.getInput1());
    if (!m || !m->out->hasOneUse())
      return failure();
    int64_t rank = shapeOf(m->ids).size();
    if (rank != 2 && rank != 3)
      return failure();
    SmallVector<int32_t> expect;
    for (int64_t d = 0; d < rank - 2; ++d)
      expect.push_back(d);
    expect.append({static_cast<int32_t>(rank), static_cast<int32_t>(rank - 2),
                   static_cast<int32_t>(rank - 1)});
    if (t.getPerms() != ArrayRef<int32_t>(expect))
      return failure();
    rewriter.replaceOpWithNewOp<gt::SpatialBiasOp>(t, m->ids, m->table);
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

/// Embedding lookups (optionally summed over a feature dim) ->
/// gt.node_embedding. Rooted at the gather, whose result is the embedding
/// itself or is reshaped to it.
struct RaiseNodeEmbedding : OpRewritePattern<tosa::GatherOp> {
  RaiseNodeEmbedding(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}
  LogicalResult matchAndRewrite(tosa::GatherOp gather,
                                PatternRewriter &rewriter) const override {
    std::optional<EmbeddingMatch> m;
    if (gather->hasOneUse())
      if (auto r = dyn_cast<tosa::ReshapeOp>(*gather->getUsers().begin()))
        m = matchEmbedding(r.getResult(), /*unitFeature=*/true);
    if (!m)
      m = matchEmbedding(gather.getResult(), /*unitFeature=*/true);
    if (!m)
      return failure();
    Operation *root = m->out;
    // Leave transposed gathers to the spatial-bias pattern.
    if (llvm::any_of(root->getUsers(),
                     [](Operation *u) { return isa<tosa::TransposeOp>(u); }))
      return failure();
    if (m->droppedUnitFeature) {
      rewriter.replaceOpWithNewOp<gt::NodeEmbeddingOp>(root, m->ids, m->table,
                                                       /*sum_features=*/true);
      ++count;
      return success();
    }
    int64_t rank = shapeOf(m->ids).size();
    // reduce_sum over the feature axis + reshape dropping it.
    if (root->hasOneUse() && rank >= 1) {
      auto sum = dyn_cast<tosa::ReduceSumOp>(*root->getUsers().begin());
      if (sum && sum.getAxis() == rank - 1 && sum->hasOneUse())
        if (auto drop = dyn_cast<tosa::ReshapeOp>(*sum->getUsers().begin())) {
          SmallVector<int64_t> expect(shapeOf(m->ids).drop_back());
          expect.push_back(shapeOf(m->table)[1]);
          if (drop.getType().getShape() == ArrayRef<int64_t>(expect)) {
            auto emb = gt::NodeEmbeddingOp::create(rewriter, root->getLoc(),
                                                   m->ids, m->table,
                                                   /*sum_features=*/true);
            rewriter.replaceOp(drop, emb.getResult());
            ++count;
            return success();
          }
        }
    }
    rewriter.replaceOpWithNewOp<gt::NodeEmbeddingOp>(root, m->ids, m->table,
                                                     /*sum_features=*/false);
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

/// x + node_embedding(degree [.., S], table [M, D]) -> gt.degree_embedding.
struct RaiseDegreeEmbedding : OpRewritePattern<tosa::AddOp> {
  RaiseDegreeEmbedding(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}
  LogicalResult matchAndRewrite(tosa::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [x, e] : {std::pair{add.getInput1(), add.getInput2()},
                        std::pair{add.getInput2(), add.getInput1()}}) {
      auto emb = e.getDefiningOp<gt::NodeEmbeddingOp>();
      if (!emb || emb.getSumFeatures() || !emb->hasOneUse() ||
          x.getType() != add.getType() || emb.getType() != add.getType())
        continue;
      rewriter.replaceOpWithNewOp<gt::DegreeEmbeddingOp>(add, x, emb.getIds(),
                                                         emb.getTable());
      rewriter.eraseOp(emb);
      ++count;
      return success();
    }
    return failure();
  }
  llvm::Statistic &count;
};

//===----------------------------------------------------------------------===//
// Attention: softmax(scale * Q K^T + bias) V with heads split by reshape and
// transpose chains, in any of the layouts PyTorch exports (batch-first
// [B, H, S, d], nn.MultiheadAttention's [B*H, S, d] from seq-first
// projections, scaling of q or of the scores).
//===----------------------------------------------------------------------===//

Value buildReshape(PatternRewriter &rewriter, Location loc, Value v,
                   ArrayRef<int64_t> shape) {
  return TosaBuilder(rewriter, loc).reshape(v, shape);
}

Value buildTranspose(PatternRewriter &rewriter, Location loc, Value v,
                     ArrayRef<int32_t> perm) {
  bool identity = true;
  SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    identity &= static_cast<int32_t>(i) == p;
    shape.push_back(shapeOf(v)[p]);
  }
  if (identity)
    return v;
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  return tosa::TransposeOp::create(rewriter, loc, type, v,
                                   rewriter.getDenseI32ArrayAttr(perm));
}

/// Plans how to materialize the base of `layout` with its atoms reordered
/// as `order`: the base's atom shape and the transpose permutation. Fails
/// unless `order` uses every atom of the base exactly once.
std::optional<std::pair<SmallVector<int64_t>, SmallVector<int32_t>>>
planRearrange(const Layout &layout, ArrayRef<int> order) {
  SmallVector<int> flat;
  SmallVector<int64_t> atomShape;
  for (const SmallVector<int> &d : layout.baseAtoms)
    for (int a : d) {
      flat.push_back(a);
      atomShape.push_back(layout.atomSize[a]);
    }
  if (flat.size() != order.size())
    return std::nullopt;
  SmallVector<int32_t> perm;
  for (int a : order) {
    auto it = llvm::find(flat, a);
    if (it == flat.end() || llvm::is_contained(perm, it - flat.begin()))
      return std::nullopt;
    perm.push_back(it - flat.begin());
  }
  return std::pair{atomShape, perm};
}

/// Builds the rearrangement planned by planRearrange, grouped into `shape`.
Value rearrange(PatternRewriter &rewriter, Location loc, const Layout &layout,
                ArrayRef<int> order, ArrayRef<int64_t> shape) {
  auto plan = planRearrange(layout, order);
  assert(plan && "rearrange must be planned before building");
  Value v = buildReshape(rewriter, loc, layout.base, plan->first);
  v = buildTranspose(rewriter, loc, v, plan->second);
  return buildReshape(rewriter, loc, v, shape);
}

/// Roles of one attention operand: which atoms are batch, sequence, head
/// and per-head feature.
struct OperandRoles {
  SmallVector<int> batch, seq, head, feature;
  /// For each group position, whether it is a head atom.
  SmallVector<bool> groupIsHead;
};

/// Splits the group atoms of `groupAtoms` into batch and head atoms: head
/// atoms live in the same base dimension as the feature atoms.
std::optional<OperandRoles> classify(const Layout &l, ArrayRef<int> group,
                                     ArrayRef<int> seq, ArrayRef<int> feature) {
  if (feature.empty() || seq.empty())
    return std::nullopt;
  int featDim = l.baseDimOf(feature.front());
  for (int a : feature)
    if (l.baseDimOf(a) != featDim)
      return std::nullopt;
  OperandRoles r;
  r.seq.assign(seq.begin(), seq.end());
  r.feature.assign(feature.begin(), feature.end());
  for (int a : group) {
    bool isHead = l.baseDimOf(a) == featDim;
    r.groupIsHead.push_back(isHead);
    (isHead ? r.head : r.batch).push_back(a);
  }
  return r;
}

/// True if `v` is a splat that removes a score from a softmax: -inf, or a
/// finite stand-in of -1e9 or below (torch.finfo(float).min, -1e9), whose
/// exponential is zero next to any real score.
bool isMaskFill(Value v) {
  std::optional<double> s = getSplatValue(v);
  return s && *s <= -1e9;
}

/// A key mask applied to the attention scores: `masked_fill(pred, -inf)`
/// (select(pred, fill, s): true removes) or `where(pred, s, -inf)` (true
/// keeps), in a view of the scores of shape `view`. For an additive mask,
/// `moves` are the reshapes, tiles and transposes that carried the select's
/// result to the scores; they carry `pred` the same way.
struct ScoreMask {
  Value pred;
  bool keepIfTrue;
  SmallVector<int64_t> view;
  SmallVector<Operation *> moves;
};

/// If `t` is select(pred, x, fill) or select(pred, fill, x) with `x` of t's
/// shape, records the mask and returns x.
Value peelMask(Value t, SmallVectorImpl<ScoreMask> &masks) {
  auto sel = t.getDefiningOp<tosa::SelectOp>();
  if (!sel)
    return Value();
  ArrayRef<int64_t> view = shapeOf(t);
  if (isMaskFill(sel.getInput3()) && shapeOf(sel.getInput2()) == view) {
    masks.push_back({sel.getInput1(), true, SmallVector<int64_t>(view)});
    return sel.getInput2();
  }
  if (isMaskFill(sel.getInput2()) && shapeOf(sel.getInput3()) == view) {
    masks.push_back({sel.getInput1(), false, SmallVector<int64_t>(view)});
    return sel.getInput3();
  }
  return Value();
}

/// If `t` is an additive mask, select(pred, fill, 0) or select(pred, 0,
/// fill) (nn.MultiheadAttention turns key_padding_mask into one), possibly
/// reshaped, tiled or transposed on its way to the scores, records it:
/// adding it removes the same scores as masking them.
bool peelAdditiveMask(Value t, SmallVectorImpl<ScoreMask> &masks) {
  SmallVector<Operation *> moves;
  Value v = t;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tosa::ReshapeOp, tosa::TileOp, tosa::TransposeOp>(def))
      break;
    moves.push_back(def);
    v = def->getOperand(0);
  }
  auto sel = v.getDefiningOp<tosa::SelectOp>();
  if (!sel || shapeOf(sel.getInput1()) != shapeOf(v))
    return false;
  SmallVector<int64_t> view(shapeOf(t));
  std::reverse(moves.begin(), moves.end());
  if (isMaskFill(sel.getInput2()) && isSplat(sel.getInput3(), 0.0)) {
    masks.push_back({sel.getInput1(), false, view, moves});
    return true;
  }
  if (isMaskFill(sel.getInput3()) && isSplat(sel.getInput2(), 0.0)) {
    masks.push_back({sel.getInput1(), true, view, moves});
    return true;
  }
  return false;
}

/// The mask's predicate in the view of the scores it was applied to: the
/// recorded moves replayed on the i1 predicate.
Value replayMoves(PatternRewriter &rewriter, Location loc, const ScoreMask &m) {
  Value v = m.pred;
  for (Operation *op : m.moves) {
    auto type = RankedTensorType::get(
        cast<RankedTensorType>(op->getResult(0).getType()).getShape(),
        elemOf(v));
    if (auto r = dyn_cast<tosa::ReshapeOp>(op))
      v = buildReshape(rewriter, loc, v, type.getShape());
    else if (auto t = dyn_cast<tosa::TileOp>(op))
      v = tosa::TileOp::create(rewriter, loc, type, v, t.getMultiples());
    else
      v = tosa::TransposeOp::create(rewriter, loc, type, v,
                                    cast<tosa::TransposeOp>(op).getPerms());
  }
  return v;
}

/// Each of `shape`'s dims is 1 or equal to `full`'s.
bool broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> full) {
  if (shape.size() != full.size())
    return false;
  for (auto [d, f] : llvm::zip(shape, full))
    if (d != 1 && d != f)
      return false;
  return true;
}

/// The shape of `m.pred` over the atoms of the scores: one dim per group
/// atom (`groupSizes`, 1 where the mask broadcasts) then [Sq|1, Sk|1]. The
/// mask must be given in the scores' own layout (`zs`) or in the view that
/// splits their group dim into its atoms.
std::optional<SmallVector<int64_t>> maskAtomShape(const ScoreMask &m,
                                                  ArrayRef<int64_t> zs,
                                                  ArrayRef<int64_t> groupSizes,
                                                  int64_t sq, int64_t sk) {
  // The predicate's shape once moved into the view (moves keep shapes
  // aligned with the view).
  ArrayRef<int64_t> ps = m.view;
  if (m.moves.empty())
    ps = shapeOf(m.pred);
  if (ps.size() != m.view.size() || ps.size() < 2 || !broadcastsTo(ps, m.view))
    return std::nullopt;
  int64_t a = ps[ps.size() - 2], b = ps.back();
  SmallVector<int64_t> atoms(groupSizes);
  atoms.append({sq, sk});
  // A view over the atoms of the scores (batch-first scores, or fairseq's
  // view(B, H, T, S)).
  if (broadcastsTo(m.view, atoms))
    return SmallVector<int64_t>(ps);
  // A view that broadcasts to the scores' own [G.., Sq, Sk].
  if (!broadcastsTo(m.view, zs))
    return std::nullopt;
  int64_t group = 1;
  for (int64_t g : zs.drop_back(2))
    group *= g;
  int64_t predGroup = 1;
  for (int64_t g : ps.drop_back(2))
    predGroup *= g;
  SmallVector<int64_t> shape;
  if (predGroup == 1)
    shape.assign(groupSizes.size(), 1);
  else if (predGroup == group) // every group dim full: the scores' atoms
    shape.assign(groupSizes.begin(), groupSizes.end());
  else
    return std::nullopt;
  shape.append({a, b});
  return shape;
}

/// Matches where(p == p, p, 0) or where(!(p == p), 0, p) (ONNX IsNaN, then
/// Where) as the only users of `p`: NaN entries replaced by zero.
tosa::SelectOp matchNanGuard(Value p) {
  for (Operation *user : p.getUsers()) {
    auto guard = dyn_cast<tosa::SelectOp>(user);
    if (!guard)
      continue;
    Value pred = guard.getInput1();
    bool negated = false;
    if (auto n = pred.getDefiningOp<tosa::LogicalNotOp>();
        n && n->hasOneUse()) {
      pred = n.getInput1();
      negated = true;
    }
    auto eq = pred.getDefiningOp<tosa::EqualOp>();
    Value kept = negated ? guard.getInput3() : guard.getInput2();
    Value zero = negated ? guard.getInput2() : guard.getInput3();
    if (!eq || !eq->hasOneUse() || eq.getInput1() != p || eq.getInput2() != p ||
        kept != p || !isSplat(zero, 0.0))
      return tosa::SelectOp();
    bool only = llvm::all_of(p.getUsers(), [&](Operation *u) {
      return u == guard.getOperation() || u == eq.getOperation();
    });
    return only ? guard : tosa::SelectOp();
  }
  return tosa::SelectOp();
}

struct RaiseAttention : OpRewritePattern<linalg::SoftmaxOp> {
  RaiseAttention(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(linalg::SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    Location loc = softmax.getLoc();
    Value z = softmax.getInput();
    int64_t rank = shapeOf(z).size();
    if ((rank != 3 && rank != 4) ||
        softmax.getDimension() != static_cast<uint64_t>(rank - 1) ||
        !z.hasOneUse())
      return rewriter.notifyMatchFailure(softmax, "not a last-dim softmax");

    // 1. Additive terms of the softmax input: one is the Q K^T product
    //    (possibly scaled), the others form the bias.
    //    Masks that remove scores (masked_fill(-inf), where) are peeled off
    //    on the way, on the scores or on a view that splits their leading
    //    dim (fairseq's view(B, H, T, S).masked_fill(...).view(B*H, T, S)):
    //    softmax(select(m, -inf, s) + b) = softmax(select(m, -inf, s + b)).
    SmallVector<Value> terms, worklist = {z};
    SmallVector<ScoreMask> masks;
    while (!worklist.empty()) {
      Value t = worklist.pop_back_val();
      bool owned = t == z || t.hasOneUse();
      if (auto add = t.getDefiningOp<tosa::AddOp>(); add && owned) {
        worklist.push_back(add.getInput1());
        worklist.push_back(add.getInput2());
        continue;
      }
      // Additive masks are only read (they may be shared between layers).
      if (peelAdditiveMask(t, masks))
        continue;
      if (Value x = owned ? peelMask(t, masks) : Value()) {
        worklist.push_back(x);
        continue;
      }
      // reshape(select(m, fill, ... reshape(x))) with x of t's shape.
      if (auto view = t.getDefiningOp<tosa::ReshapeOp>(); view && owned) {
        SmallVector<ScoreMask> viewMasks;
        Value inner = view.getInput1();
        while (inner.hasOneUse())
          if (Value x = peelMask(inner, viewMasks))
            inner = x;
          else
            break;
        auto back = inner.getDefiningOp<tosa::ReshapeOp>();
        if (!viewMasks.empty() && back &&
            shapeOf(back.getInput1()) == shapeOf(t)) {
          masks.append(viewMasks.begin(), viewMasks.end());
          worklist.push_back(back.getInput1());
          continue;
        }
      }
      terms.push_back(t);
    }
    tosa::MatMulOp scores;
    double scale = 1.0;
    SmallVector<Value> biasTerms;
    for (Value t : terms) {
      double s = 1.0;
      Value cur = t;
      while (true) {
        if (auto m = matchScaled(cur);
            m && getNumElementsOf(m->first) == getNumElementsOf(cur)) {
          s *= m->second;
          cur = m->first;
        } else if (auto r = cur.getDefiningOp<tosa::ReshapeOp>()) {
          cur = r.getInput1();
        } else {
          break;
        }
      }
      auto mm = cur.getDefiningOp<tosa::MatMulOp>();
      if (mm && !scores && getNumElementsOf(mm) == getNumElementsOf(z)) {
        scores = mm;
        scale *= s;
      } else {
        biasTerms.push_back(t);
      }
    }
    if (!scores)
      return rewriter.notifyMatchFailure(softmax, "no Q K^T product");

    // 2. Layouts of Q and K^T relative to their projections.
    std::optional<Layout> lq = traceLayout(scores.getA());
    std::optional<Layout> lk = traceLayout(scores.getB());
    if (!lq || !lk || lq->dims.size() != 3 || lk->dims.size() != 3)
      return rewriter.notifyMatchFailure(softmax, "untraceable Q/K layout");
    std::optional<OperandRoles> rq =
        classify(*lq, lq->dims[0], lq->dims[1], lq->dims[2]);
    std::optional<OperandRoles> rk =
        classify(*lk, lk->dims[0], lk->dims[2], lk->dims[1]);
    if (!rq || !rk || rq->groupIsHead != rk->groupIsHead)
      return rewriter.notifyMatchFailure(softmax, "no head split found");
    scale *= lq->scale * lk->scale;

    // 3. P V and the layout of its result.
    Value p = softmax.getResult()[0];
    // torch's scaled_dot_product_attention zeroes the rows that a mask
    // removes entirely (softmax gives NaN there): where(p == p, p, 0).
    // gt.attention yields zeros for such rows too.
    if (!p.hasOneUse())
      if (tosa::SelectOp guard = matchNanGuard(p))
        p = guard.getResult();
    if (!p.hasOneUse())
      return rewriter.notifyMatchFailure(softmax, "softmax has many users");
    Operation *user = *p.getUsers().begin();
    Value pv3 = p;
    while (auto r = dyn_cast<tosa::ReshapeOp>(user)) {
      if (!r->hasOneUse())
        return failure();
      pv3 = r.getResult();
      user = *r->getUsers().begin();
    }
    auto pv = dyn_cast<tosa::MatMulOp>(user);
    if (!pv || pv.getA() != pv3)
      return rewriter.notifyMatchFailure(softmax, "no P V product");
    std::optional<Layout> lv = traceLayout(pv.getB());
    if (!lv || lv->dims.size() != 3 || lv->scale != 1.0)
      return rewriter.notifyMatchFailure(softmax, "untraceable V layout");
    std::optional<OperandRoles> rv =
        classify(*lv, lv->dims[0], lv->dims[1], lv->dims[2]);
    if (!rv || rv->groupIsHead != rq->groupIsHead)
      return rewriter.notifyMatchFailure(softmax, "V heads differ");

    int64_t batch = lq->size(rq->batch), heads = lq->size(rq->head);
    int64_t sq = lq->size(rq->seq), sk = lk->size(rk->seq);
    int64_t dh = lq->size(rq->feature), dv = lv->size(rv->feature);
    if (lk->size(rk->batch) != batch || lv->size(rv->batch) != batch ||
        lk->size(rk->head) != heads || lv->size(rv->head) != heads ||
        lv->size(rv->seq) != sk || lk->size(rk->feature) != dh)
      return rewriter.notifyMatchFailure(softmax, "inconsistent sizes");

    ArrayRef<int64_t> zs = shapeOf(z);
    if (zs[rank - 1] != sk || zs[rank - 2] != sq)
      return rewriter.notifyMatchFailure(softmax, "softmax is not over keys");

    // Everything below is checked before the first op is built, so a
    // failed match leaves the IR untouched.

    // 4. Classify the bias terms: [B|1, H|1, Sq, Sk] as is (batch-first
    //    scores), [1.., Sq, Sk] broadcast rows, or z's own [G.., Sq, Sk]
    //    layout to regroup.
    SmallVector<int64_t> groupSizes;
    for (int a : lq->dims[0])
      groupSizes.push_back(lq->atomSize[a]);
    enum class BiasKind { Direct, Pair, Regroup };
    SmallVector<BiasKind> kinds;
    bool batchFirst = rank == 4 &&
                      zs == ArrayRef<int64_t>{batch, heads, sq, sk} &&
                      rq->groupIsHead == SmallVector<bool>{false, true};
    for (Value t : biasTerms) {
      ArrayRef<int64_t> ts = shapeOf(t);
      if (elemOf(t) != elemOf(z))
        return rewriter.notifyMatchFailure(softmax, "bias element type");
      bool pairOnly =
          ts.size() >= 2 && ts[ts.size() - 1] == sk &&
          ts[ts.size() - 2] == sq &&
          llvm::all_of(ts.drop_back(2), [](int64_t d) { return d == 1; });
      if (batchFirst && ts.size() == 4 && (ts[0] == 1 || ts[0] == batch) &&
          (ts[1] == 1 || ts[1] == heads) && ts[2] == sq && ts[3] == sk)
        kinds.push_back(BiasKind::Direct);
      else if (pairOnly)
        kinds.push_back(BiasKind::Pair);
      else if (ts == zs)
        kinds.push_back(BiasKind::Regroup);
      else
        return rewriter.notifyMatchFailure(softmax, "bias of unknown layout");
    }

    // Masks over the atoms of the scores (checked here, built in 7).
    SmallVector<SmallVector<int64_t>> maskShapes;
    for (const ScoreMask &m : masks) {
      std::optional<SmallVector<int64_t>> shape =
          maskAtomShape(m, zs, groupSizes, sq, sk);
      // Batch atoms must all broadcast or all be full, likewise head atoms,
      // so that the mask is [B|1, H|1, Sq|1, Sk|1].
      bool ok = shape.has_value();
      for (bool wantHead : {false, true}) {
        bool anyFull = false, anyUnit = false;
        for (auto [i, isHead] : llvm::enumerate(rq->groupIsHead))
          if (ok && isHead == wantHead && groupSizes[i] != 1) {
            anyFull |= (*shape)[i] != 1;
            anyUnit |= (*shape)[i] == 1;
          }
        ok = ok && !(anyFull && anyUnit);
      }
      if (!ok)
        return rewriter.notifyMatchFailure(softmax, "mask of unknown layout");
      maskShapes.push_back(*shape);
    }

    // 5. The output view: follow single-use reshapes/transposes after P V.
    Layout lo;
    lo.base = pv.getResult();
    SmallVector<int> groupIds;
    for (int64_t g : groupSizes) {
      groupIds.push_back(lo.atomSize.size());
      lo.atomSize.push_back(g);
    }
    int sqId = lo.atomSize.size(), dvId = sqId + 1;
    lo.atomSize.append({sq, dv});
    lo.dims = {groupIds, {sqId}, {dvId}};
    Value outView = pv.getResult();
    while (outView.hasOneUse()) {
      Operation *next = *outView.getUsers().begin();
      Layout trial = lo;
      if (auto r = dyn_cast<tosa::ReshapeOp>(next)) {
        if (failed(trial.reshape(r.getType().getShape())))
          break;
      } else if (auto t = dyn_cast<tosa::TransposeOp>(next)) {
        trial.transpose(t.getPerms());
      } else {
        break;
      }
      // Stop before a view that splits the sequence or feature atoms.
      if (trial.atomSize.size() != lo.atomSize.size())
        break;
      lo = std::move(trial);
      outView = next->getResult(0);
    }
    // The attention result [B, Sq, H*dv] as a layout over the same atoms.
    Layout la;
    la.atomSize = lo.atomSize;
    SmallVector<int> batchIds, headIds;
    for (auto [i, id] : llvm::enumerate(groupIds))
      (rq->groupIsHead[i] ? headIds : batchIds).push_back(id);
    SmallVector<int> featureIds(headIds);
    featureIds.push_back(dvId);
    la.baseAtoms = {batchIds, {sqId}, featureIds};
    SmallVector<int> outOrder;
    for (const SmallVector<int> &d : lo.dims)
      outOrder.append(d.begin(), d.end());

    // 6. Operand rearrangements must be possible.
    auto stdOrder = [](const OperandRoles &r) {
      SmallVector<int> order(r.batch);
      order.append(r.seq);
      order.append(r.head);
      order.append(r.feature);
      return order;
    };
    if (!planRearrange(*lq, stdOrder(*rq)) ||
        !planRearrange(*lk, stdOrder(*rk)) ||
        !planRearrange(*lv, stdOrder(*rv)) || !planRearrange(la, outOrder))
      return rewriter.notifyMatchFailure(softmax, "operands use extra atoms");
    if (elemOf(scores.getA()) != elemOf(pv.getB()))
      return rewriter.notifyMatchFailure(softmax, "element types differ");

    // 7. Build: the bias, the [B, S, H*d] operands, gt.attention, and the
    //    re-view of its result that replaces the old output view.
    Value bias;
    for (auto [t, kind] : llvm::zip(biasTerms, kinds)) {
      Value b = t;
      if (kind == BiasKind::Pair) {
        b = buildReshape(rewriter, loc, t, {1, 1, sq, sk});
      } else if (kind == BiasKind::Regroup) {
        SmallVector<int64_t> atomShape(groupSizes);
        atomShape.append({sq, sk});
        Value v = buildReshape(rewriter, loc, t, atomShape);
        SmallVector<int32_t> perm;
        for (bool wantHead : {false, true})
          for (auto [i, isHead] : llvm::enumerate(rq->groupIsHead))
            if (isHead == wantHead)
              perm.push_back(i);
        perm.append({static_cast<int32_t>(groupSizes.size()),
                     static_cast<int32_t>(groupSizes.size() + 1)});
        v = buildTranspose(rewriter, loc, v, perm);
        b = buildReshape(rewriter, loc, v, {batch, heads, sq, sk});
      }
      if (!bias) {
        bias = b;
        continue;
      }
      // Every kind above yields a rank-4 [B|1, H|1, Sq, Sk] term.
      SmallVector<int64_t> shape;
      for (auto [x, y] : llvm::zip(shapeOf(bias), shapeOf(b)))
        shape.push_back(std::max(x, y));
      bias = tosa::AddOp::create(
          rewriter, loc, RankedTensorType::get(shape, elemOf(bias)), bias, b);
    }
    // The masks as one [B|1, H|1, Sq|1, Sk|1] operand that is true where a
    // score is kept.
    Value mask;
    for (auto [m, atomShape] : llvm::zip(masks, maskShapes)) {
      Value v =
          buildReshape(rewriter, loc, replayMoves(rewriter, loc, m), atomShape);
      SmallVector<int32_t> perm;
      int64_t predBatch = 1, predHeads = 1;
      for (bool wantHead : {false, true})
        for (auto [i, isHead] : llvm::enumerate(rq->groupIsHead))
          if (isHead == wantHead) {
            perm.push_back(i);
            (isHead ? predHeads : predBatch) *= atomShape[i];
          }
      int64_t g = groupSizes.size();
      perm.append({static_cast<int32_t>(g), static_cast<int32_t>(g + 1)});
      v = buildTranspose(rewriter, loc, v, perm);
      v = buildReshape(rewriter, loc, v,
                       {predBatch, predHeads, atomShape[g], atomShape[g + 1]});
      if (!m.keepIfTrue)
        v = tosa::LogicalNotOp::create(rewriter, loc, v.getType(), v);
      if (!mask) {
        mask = v;
        continue;
      }
      SmallVector<int64_t> shape;
      for (auto [x, y] : llvm::zip(shapeOf(mask), shapeOf(v)))
        shape.push_back(std::max(x, y));
      mask = tosa::LogicalAndOp::create(
          rewriter, loc, RankedTensorType::get(shape, elemOf(mask)), mask, v);
    }
    Value q =
        rearrange(rewriter, loc, *lq, stdOrder(*rq), {batch, sq, heads * dh});
    Value k =
        rearrange(rewriter, loc, *lk, stdOrder(*rk), {batch, sk, heads * dh});
    Value v =
        rearrange(rewriter, loc, *lv, stdOrder(*rv), {batch, sk, heads * dv});
    auto attn = gt::AttentionOp::create(
        rewriter, loc, q, k, v, bias, mask, /*spatial_distance=*/Value(),
        /*spatial_table=*/Value(), static_cast<uint64_t>(heads),
        rewriter.getF32FloatAttr(static_cast<float>(scale)));
    la.base = attn.getResult();
    Value replacement =
        rearrange(rewriter, loc, la, outOrder, shapeOf(outView));
    rewriter.replaceAllUsesWith(outView, replacement);
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct GTRaisePass : megagraph::impl::GTRaiseBase<GTRaisePass> {
  using GTRaiseBase::GTRaiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // 1. Elementwise building blocks.
    patterns.add<RaiseGelu>(ctx, numGelu);
    patterns.add<RaiseLinear>(ctx, numLinear);
    patterns.add<RaiseLayerNorm>(ctx, numLayerNorm);
    patterns.add<FoldLinearBias>(ctx);
    patterns.add<RaiseSpatialBias>(ctx, numBias);
    patterns.add<RaiseNodeEmbedding, RaiseDegreeEmbedding>(ctx, numEmbedding);
    patterns.add<RaiseAttention>(ctx, numAttention);
    populateRaiseSpmmPatterns(patterns, numSpmm);
    // 2. Run to a fixpoint; constants fold on the way, which exposes splats
    //    hidden behind reshapes.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
