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

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
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
    Value half, onePlusErf, x;
    for (Value leaf : leaves) {
      if (!half && isSplat(leaf, 0.5))
        half = leaf;
      else if (auto add = leaf.getDefiningOp<tosa::AddOp>(); add && !onePlusErf)
        onePlusErf = leaf;
      else
        x = leaf;
    }
    if (!half || !onePlusErf || !x)
      return failure();
    auto add = onePlusErf.getDefiningOp<tosa::AddOp>();
    Value erfVal = isSplat(add.getInput1(), 1.0)   ? add.getInput2()
                   : isSplat(add.getInput2(), 1.0) ? add.getInput1()
                                                   : Value();
    auto erf = erfVal ? erfVal.getDefiningOp<tosa::ErfOp>() : nullptr;
    if (!erf)
      return failure();
    std::optional<std::pair<Value, double>> scaled =
        matchScaled(erf.getInput());
    if (!scaled || scaled->first != x ||
        std::abs(scaled->second - M_SQRT1_2) > 1e-5)
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
// The pass
//===----------------------------------------------------------------------===//

struct GTRaisePass : megagraph::impl::GTRaiseBase<GTRaisePass> {
  using GTRaiseBase::GTRaiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // 1. Elementwise building blocks.
    patterns.add<RaiseGelu>(ctx, numGelu);
    // 2. Run to a fixpoint; constants fold on the way, which exposes splats
    //    hidden behind reshapes.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
