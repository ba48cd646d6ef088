//===- GTApproximateMath.cpp - Inline erf and tanh -------------*- C++ -*-===//
//
// Part of MegaGraph. GELU (erf, or tanh in its approximate form) is
// lowered to scalar loops; with `convert-math-to-libm` each element is a
// call to libm's erff or tanhf, which keeps LLVM's loop vectorizer off the
// whole loop (a 1024-node, 4-layer Graphormer forward spent 8% of its time
// in erff). This pass rewrites f32 `math.erf` and `math.tanh` into
// upstream MLIR's polynomial approximations (mlir/Dialect/Math/Transforms:
// erf as a piecewise rational minimax fit, absolute error about 2.5e-7;
// tanh as Eigen's rational fit, a few ulp), which are plain arith ops that
// the loop vectorizer widens. Other types and functions keep their libm
// calls.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace megagraph {
#define GEN_PASS_DEF_GTAPPROXIMATEMATH
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-approximate-math"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTApproximateMath
    : public megagraph::impl::GTApproximateMathBase<GTApproximateMath> {
  using GTApproximateMathBase::GTApproximateMathBase;

  void runOnOperation() override {
    // f32 only: the erf pattern would also take f16 and compute in it.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ErfOp, math::TanhOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateTanhPattern(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
