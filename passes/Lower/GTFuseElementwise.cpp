//===- GTFuseElementwise.cpp - Elementwise fusion that keeps memory -*- C++
//-*-//
//
// Part of MegaGraph. Upstream's linalg elementwise fusion, with one more
// condition on each producer -> consumer fusion: it must not keep large
// tensors alive across unrelated work. Fusing a producer into its consumer
// recomputes the producer inside the consumer's loop, so the producer's
// operands must live until the consumer runs instead of until the
// producer did. When the two are next to each other (an optimizer update,
// a GELU or a layer-norm chain) that is free. When they are far apart it
// is not: gt-autodiff sums the gradients of a value used by several layers
// as each arrives (g4 + g3, then + g2, then + g1), and upstream fusion made
// that one four-input loop at the last add, so all four gradients (at
// S = 2048, B = 2 the four [B,H,S,S] spatial-bias gradients, 256 MiB each)
// stayed alive through three layers' backward passes.
//
// The rule: a producer is fused when it has a single use (as upstream) and
// either its full-size tensor operands add up to no more bytes than its
// result (fusion then grows the live bytes by no more than the broadcast
// operands: a unary op, an op with broadcast or constant operands), or
// nothing but elementwise generics, tensor.empty, constants and reshapes
// lies between it and its consumer.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace megagraph {
#define GEN_PASS_DEF_GTFUSEELEMENTWISE
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-fuse-elementwise"

using namespace mlir;
using namespace megagraph;

namespace {

/// Bytes of a static tensor, or nullopt.
std::optional<int64_t> tensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return std::nullopt;
  return t.getNumElements() *
         std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

/// Whether `op` does no work of its own that fusion could move a live range
/// across: elementwise generics (themselves fusion candidates), empty
/// tensors, constants and reshapes.
bool isTransparent(Operation *op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return linalg::isElementwise(generic);
  return isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::CastOp>(op) ||
         op->hasTrait<OpTrait::ConstantLike>();
}

/// The bytes fusion would keep alive longer: the producer's full-size
/// tensor operands (at least `result` bytes; a broadcast operand is smaller)
/// that the consumer does not read anyway (constants and empty inits hold
/// no data), or nullopt when one has a dynamic shape.
std::optional<int64_t> extendedBytes(Operation *producer, Operation *consumer,
                                     int64_t result) {
  int64_t bytes = 0;
  for (Value operand : producer->getOperands()) {
    if (!isa<RankedTensorType>(operand.getType()) ||
        llvm::is_contained(consumer->getOperands(), operand) ||
        matchPattern(operand, m_Constant()) ||
        isa_and_nonnull<tensor::EmptyOp>(operand.getDefiningOp()))
      continue;
    std::optional<int64_t> b = tensorBytes(operand.getType());
    if (!b)
      return std::nullopt;
    if (*b >= result)
      bytes += *b;
  }
  return bytes;
}

/// Whether fusing `producer` into the op that owns `use` keeps the live
/// bytes as they are, or the two are adjacent up to transparent ops.
bool keepsMemory(Operation *producer, OpOperand *use) {
  Operation *consumer = use->getOwner();
  if (std::optional<int64_t> result = tensorBytes(use->get().getType())) {
    std::optional<int64_t> extended =
        extendedBytes(producer, consumer, *result);
    if (extended && *extended <= *result)
      return true;
  }
  if (producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer))
    return false;
  for (Operation *op = producer->getNextNode(); op != consumer;
       op = op->getNextNode())
    if (!isTransparent(op))
      return false;
  return true;
}

struct GTFuseElementwisePass
    : megagraph::impl::GTFuseElementwiseBase<GTFuseElementwisePass> {
  using GTFuseElementwiseBase::GTFuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Upstream's linalg-fuse-elementwise-ops, with `control` for the
    // elementwise fusions.
    linalg::ControlFusionFn defaultControl = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn control = [&](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      if (keepsMemory(producer, fused))
        return true;
      ++numKept;
      return false;
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, defaultControl);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, defaultControl);
    // Top-down, as upstream, for compile time.
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal(true))))
      signalPassFailure();
  }
};

} // namespace
