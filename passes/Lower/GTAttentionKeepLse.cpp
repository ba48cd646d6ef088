//===- GTAttentionKeepLse.cpp - Hand the forward's LSE to the backward ----===//
//
// Part of MegaGraph. Autodiff pairs each gt.attention with a
// gt.attention_grad of the same operands, and the backward kernel then
// recomputes every row's softmax statistics: one more pass over the scores,
// about a third of the backward. This pass makes the forward keep them: the
// gt.attention becomes a gt.attention_lse, whose second result is the row
// log-sum-exp, and the gradient takes that and the forward's result (for
// rowsum(dO * O)). Context-parallel attentions (gt.cp) keep their own
// kernels and are left alone, as is any gradient whose forward is in another
// block (a pipeline stage, a recomputed forward).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace megagraph {
#define GEN_PASS_DEF_GTATTENTIONKEEPLSE
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-attention-keep-lse"

using namespace mlir;
using namespace megagraph;

namespace {

/// Whether forward `fwd` and gradient `grad` describe the same attention.
template <typename FwdOp>
bool sameAttention(FwdOp fwd, gt::AttentionGradOp grad) {
  return fwd.getKey() == grad.getKey() && fwd.getValue() == grad.getValue() &&
         fwd.getBias() == grad.getBias() && fwd.getMask() == grad.getMask() &&
         fwd.getSpatialDistance() == grad.getSpatialDistance() &&
         fwd.getSpatialTable() == grad.getSpatialTable() &&
         fwd.getNumHeads() == grad.getNumHeads() &&
         fwd.getScaleAttr() == grad.getScaleAttr() &&
         !fwd->hasAttr(gt::kContextParallelAttr);
}

/// The gt.attention or gt.attention_lse of the same operands as `grad`,
/// earlier in its block, or null.
Operation *findForward(gt::AttentionGradOp grad) {
  for (Operation *user : grad.getQuery().getUsers()) {
    if (user->getBlock() != grad->getBlock() || !user->isBeforeInBlock(grad))
      continue;
    if (auto fwd = dyn_cast<gt::AttentionOp>(user))
      if (fwd.getQuery() == grad.getQuery() && sameAttention(fwd, grad))
        return user;
    if (auto fwd = dyn_cast<gt::AttentionLseOp>(user))
      if (fwd.getQuery() == grad.getQuery() && sameAttention(fwd, grad))
        return user;
  }
  return nullptr;
}

/// Replaces `fwd` by a gt.attention_lse of the same operands.
gt::AttentionLseOp keepLse(OpBuilder &builder, gt::AttentionOp fwd) {
  builder.setInsertionPoint(fwd);
  auto withLse = gt::AttentionLseOp::create(
      builder, fwd.getLoc(), fwd.getQuery(), fwd.getKey(), fwd.getValue(),
      fwd.getBias(), fwd.getMask(), fwd.getSpatialDistance(),
      fwd.getSpatialTable(), fwd.getNumHeadsAttr(), fwd.getScaleAttr());
  withLse->setDiscardableAttrs(fwd->getDiscardableAttrDictionary());
  fwd.getResult().replaceAllUsesWith(withLse.getResult());
  fwd.erase();
  return withLse;
}

/// Recreates `grad` with the forward's result and lse as operands.
void giveStatistics(OpBuilder &builder, gt::AttentionGradOp grad,
                    gt::AttentionLseOp fwd) {
  builder.setInsertionPoint(grad);
  auto withStats = gt::AttentionGradOp::create(
      builder, grad.getLoc(), grad->getResultTypes(), grad.getDout(),
      grad.getQuery(), grad.getKey(), grad.getValue(), grad.getBias(),
      grad.getMask(), grad.getSpatialDistance(), grad.getSpatialTable(),
      fwd.getResult(), fwd.getLse(), grad.getNumHeadsAttr(),
      grad.getScaleAttr());
  withStats->setDiscardableAttrs(grad->getDiscardableAttrDictionary());
  grad->replaceAllUsesWith(withStats);
  grad.erase();
}

struct GTAttentionKeepLsePass
    : megagraph::impl::GTAttentionKeepLseBase<GTAttentionKeepLsePass> {
  using GTAttentionKeepLseBase::GTAttentionKeepLseBase;

  void runOnOperation() override {
    // 1. The gradients that recompute their statistics.
    SmallVector<gt::AttentionGradOp> grads;
    getOperation().walk([&](gt::AttentionGradOp grad) {
      if (!grad.getOut() && !grad->hasAttr(gt::kContextParallelAttr))
        grads.push_back(grad);
    });
    // 2. Each one's forward made to keep its lse (once), then passed on.
    OpBuilder builder(&getContext());
    for (gt::AttentionGradOp grad : grads) {
      Operation *fwd = findForward(grad);
      if (!fwd)
        continue;
      auto withLse = dyn_cast<gt::AttentionLseOp>(fwd);
      if (!withLse) {
        withLse = keepLse(builder, cast<gt::AttentionOp>(fwd));
        ++numForwards;
      }
      giveStatistics(builder, grad, withLse);
      ++numGradients;
    }
  }
};

} // namespace
