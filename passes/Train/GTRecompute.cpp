//===- GTRecompute.cpp - Activation recomputation in one step ---*- C++ -*-===//
//
// Part of MegaGraph. Activation checkpointing inside a step function that
// runs the forward and the backward (gt-autodiff's @main_grad: a clone of
// the forward @main, then the loss and the reverse sweep). The forward is
// cut into units (megagraph/Plan/ForwardUnits.h); a unit's values that
// cross a cut point stay from the forward to the backward, the others that
// the backward reads are recomputed by a clone of the unit placed before
// their first backward use. The clone reads its inputs through
// `bufferization.alloc_tensor copy(...)`, which CSE does not merge, so the
// recomputation is not folded back into the forward.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"
#include "megagraph/Plan/ForwardUnits.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace megagraph {
#define GEN_PASS_DEF_GTRECOMPUTE
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-recompute"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTRecomputePass : megagraph::impl::GTRecomputeBase<GTRecomputePass> {
  using GTRecomputeBase::GTRecomputeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fwd = module.lookupSymbol<func::FuncOp>(forward);
    auto step = module.lookupSymbol<func::FuncOp>(function);
    if (!fwd || !step || !fwd.getBody().hasOneBlock() ||
        !step.getBody().hasOneBlock()) {
      module.emitError() << "gt-recompute needs the forward @" << forward
                         << " and the step @" << function
                         << " gt-autodiff built from it";
      return signalPassFailure();
    }
    Block &fb = fwd.getBody().front(), &sb = step.getBody().front();
    // The step's forward region: its first ops, one per op of the forward
    // (gt-autodiff clones them first).
    SmallVector<Operation *> fwdOps, stepOps;
    for (Operation &op : fb.without_terminator())
      fwdOps.push_back(&op);
    for (Operation &op : sb) {
      if (stepOps.size() == fwdOps.size())
        break;
      stepOps.push_back(&op);
    }
    if (stepOps.size() != fwdOps.size() ||
        llvm::any_of(llvm::zip(fwdOps, stepOps), [](auto pair) {
          auto [a, b] = pair;
          return a->getName() != b->getName() ||
                 a->getNumResults() != b->getNumResults();
        })) {
      step.emitError() << "gt-recompute: the first ops of @" << function
                       << " are not those of @" << forward
                       << " (run it right after gt-autodiff)";
      return signalPassFailure();
    }
    DenseMap<Operation *, Operation *> toStep;
    DenseMap<Operation *, int64_t> index;
    for (auto [i, pair] : llvm::enumerate(llvm::zip(fwdOps, stepOps))) {
      toStep[std::get<0>(pair)] = std::get<1>(pair);
      index[std::get<1>(pair)] = static_cast<int64_t>(i);
    }
    const int64_t numForward = static_cast<int64_t>(fwdOps.size());
    auto inBackward = [&](Operation *user) {
      return !index.contains(sb.findAncestorOpInBlock(*user));
    };

    ForwardUnits fu = findForwardUnits(fwd);
    const int64_t units = fu.numUnits();
    if (units < 2 || numForward == 0)
      return;
    // The checkpoints: values that cross some cut point (forward values).
    DenseSet<Value> kept;
    for (int64_t u = 1; u < units; ++u)
      for (Value v : fu.crossing[fu.cuts[u]])
        kept.insert(v);
    // The step's compute values: its arguments and the results of the
    // clones of compute ops.
    DenseSet<Value> compute(sb.getArguments().begin(), sb.getArguments().end());
    for (Operation *op : fu.compute)
      for (Value r : toStep[op]->getResults())
        compute.insert(r);

    // Each unit but the last: its ops in the step, the values the backward
    // reads that are not checkpoints, and the first such read.
    for (int64_t u = 0; u + 1 < units; ++u) {
      SmallVector<Operation *> ops;
      DenseSet<Operation *> inUnit;
      for (int64_t i = fu.cuts[u]; i < fu.cuts[u + 1]; ++i) {
        Operation *op = toStep[fu.compute[i]];
        ops.push_back(op);
        inUnit.insert(op);
      }
      SmallVector<Value> recomputed;
      Operation *firstUse = nullptr;
      for (int64_t i = fu.cuts[u]; i < fu.cuts[u + 1]; ++i)
        for (auto [r, fr] : llvm::zip(toStep[fu.compute[i]]->getResults(),
                                      fu.compute[i]->getResults())) {
          if (kept.contains(fr))
            continue;
          bool read = false;
          for (Operation *user : r.getUsers()) {
            if (!inBackward(user))
              continue;
            read = true;
            Operation *top = sb.findAncestorOpInBlock(*user);
            if (!firstUse || top->isBeforeInBlock(firstUse))
              firstUse = top;
          }
          if (read)
            recomputed.push_back(r);
        }
      if (recomputed.empty())
        continue;

      // The clone, before the first read: compute inputs from outside the
      // unit through a copy, free values (parameters, constants) as they
      // are.
      OpBuilder b(firstUse);
      IRMapping map;
      for (Operation *op : ops)
        for (Value v : op->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (map.contains(v) || !compute.contains(v) ||
              (def && inUnit.contains(def)))
            continue;
          auto type = dyn_cast<RankedTensorType>(v.getType());
          if (!type) {
            op->emitError("gt-recompute: a unit input is not a ranked "
                          "tensor");
            return signalPassFailure();
          }
          map.map(v, bufferization::AllocTensorOp::create(
                         b, v.getLoc(), type, ValueRange{}, /*copy=*/v)
                         .getResult());
        }
      for (Operation *op : ops) {
        b.clone(*op, map);
        ++numCloned;
      }
      // The clones read the copies and each other, never `r`: every read
      // outside the forward region is the backward's.
      for (Value r : recomputed)
        r.replaceUsesWithIf(map.lookup(r), [&](OpOperand &use) {
          return inBackward(use.getOwner());
        });
      ++numUnits;
    }
  }
};

} // namespace
