//===- GTFuseSpatialBias.cpp - Spatial bias read inside attention ---------===//
//
// Part of MegaGraph. Graphormer's spatial encoding is a [B, H, Sq, Sk] bias
// gathered from a [V, H] table by a [B, Sq, Sk] distance matrix, and its
// gradient another [B, H, Sq, Sk] tensor scattered back into the table. At
// S = 4096, B = 2, H = 8 each is 1 GiB, written once and read by every
// layer's attention in both directions. When the gt.spatial_bias only
// feeds attention biases (alone, or added to a bias of attention's own bias
// shape), the attention can take the distance and the table instead: its
// kernels look the table up per score and, backwards, sum dS per table row
// (gt.attention_grad's dtable). This pass rewrites the attention so; the
// gradient rule does the rest when it runs before gt-autodiff. A context-
// parallel attention (gt.cp, after gt-context-parallel) is rewritten the
// same way: its spatial bias is already [B, H, S/cp, S], built from the
// rank's [B, S/cp, S] distance rows, which the cp kernels then read per key
// block.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace megagraph {
#define GEN_PASS_DEF_GTFUSESPATIALBIAS
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-fuse-spatial-bias"

using namespace mlir;
using namespace megagraph;

namespace {

/// What replaces an attention's bias: the spatial bias's operands and the
/// rest of the bias (null when the spatial bias is all of it).
struct SpatialSplit {
  gt::SpatialBiasOp spatial;
  Value rest;
};

/// Whether `bias` is, as attention bias, `sb` or `sb + rest`: the sum's
/// type is `sb`'s (the spatial bias is not broadcast) and `rest` only
/// broadcasts over batch and heads (so that it is an attention bias too).
std::optional<SpatialSplit> splitBias(Value bias) {
  if (auto sb = bias.getDefiningOp<gt::SpatialBiasOp>())
    return SpatialSplit{sb, Value()};
  auto add = bias.getDefiningOp<tosa::AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [mine, other] : {std::pair{add.getInput1(), add.getInput2()},
                             std::pair{add.getInput2(), add.getInput1()}}) {
    auto sb = mine.getDefiningOp<gt::SpatialBiasOp>();
    if (!sb || Type(sb.getType()) != Type(add.getType()))
      continue;
    ArrayRef<int64_t> whole = sb.getType().getShape();
    ArrayRef<int64_t> rest = cast<RankedTensorType>(other.getType()).getShape();
    // Rank 3 ([H, Sq, Sk]) must match; rank 4 may broadcast batch and heads.
    bool ok = rest.size() == whole.size() &&
              rest.take_back(2) == whole.take_back(2) &&
              (whole.size() == 4 || rest == whole);
    if (ok)
      return SpatialSplit{sb, other};
  }
  return std::nullopt;
}

/// Whether `bias` already has a gradient taken with it as a dense tensor.
bool hasGradient(Value bias) {
  return llvm::any_of(bias.getUsers(), [](Operation *user) {
    return isa<gt::AttentionGradOp>(user);
  });
}

/// Replaces `attn` by the same attention reading `split` in place of its
/// bias.
void fuse(OpBuilder &builder, gt::AttentionOp attn, SpatialSplit split) {
  builder.setInsertionPoint(attn);
  auto fused = gt::AttentionOp::create(
      builder, attn.getLoc(), attn.getQuery(), attn.getKey(), attn.getValue(),
      split.rest, attn.getMask(), split.spatial.getDistance(),
      split.spatial.getTable(), attn.getNumHeadsAttr(), attn.getScaleAttr());
  fused->setDiscardableAttrs(attn->getDiscardableAttrDictionary());
  attn.getResult().replaceAllUsesWith(fused.getResult());
  attn.erase();
}

struct GTFuseSpatialBiasPass
    : megagraph::impl::GTFuseSpatialBiasBase<GTFuseSpatialBiasPass> {
  using GTFuseSpatialBiasBase::GTFuseSpatialBiasBase;

  void runOnOperation() override {
    // 1. The attentions whose bias is (or holds) a spatial bias.
    SmallVector<std::pair<gt::AttentionOp, SpatialSplit>> work;
    getOperation().walk([&](gt::AttentionOp attn) {
      Value bias = attn.getBias();
      if (!bias || attn.getSpatialTable() || hasGradient(bias))
        return;
      if (std::optional<SpatialSplit> split = splitBias(bias))
        work.push_back({attn, *split});
    });
    // 2. Each reads the distance and table instead; what fed only them
    //    goes.
    OpBuilder builder(&getContext());
    llvm::SetVector<Operation *> maybeDead;
    for (auto [attn, split] : work) {
      maybeDead.insert(attn.getBias().getDefiningOp());
      maybeDead.insert(split.spatial);
      fuse(builder, attn, split);
      ++numFused;
    }
    // (A sum goes before the spatial bias it adds.)
    SmallVector<Operation *> dead(maybeDead.begin(), maybeDead.end());
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&op : dead)
        if (op && op->use_empty()) {
          op->erase();
          op = nullptr;
          erased = true;
        }
    }
  }
};

} // namespace
