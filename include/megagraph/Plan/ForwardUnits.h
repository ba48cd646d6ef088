//===- ForwardUnits.h - Where a forward function can be cut -----*- C++ -*-===//
//
// Part of MegaGraph. The units of a forward function (@main, or a pipeline
// stage), shared by gt-pipeline-split (stage boundaries), gt-recompute
// (activation checkpoints) and the plan search's cost model (its layer
// units end at these cut points, so that its stage boundaries are ones
// gt-pipeline-split can choose): the ops that depend on a function argument are
// the compute ops, in order; the others (parameter loads, constants and
// what is computed from them only) are free. At each position p between
// compute ops, the crossing values are the compute values defined before p
// and used at or after it (the return counts as a use at the end). The cut
// points are the positions where the fewest crossing values are live, not
// counting the outputs of source ops (ops reading only arguments and free
// values, such as an embedding or an attention-bias encoder, whose outputs
// may be read by every layer), with every crossing value a static float
// tensor. Consecutive cut points delimit the units: for a pre-LN
// transformer, each encoder, each attention half and FFN half of a layer,
// the final norm and the head.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_FORWARDUNITS_H
#define MEGAGRAPH_PLAN_FORWARDUNITS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace megagraph {

struct ForwardUnits {
  /// The compute ops of the function's block, in order (n of them).
  llvm::SmallVector<mlir::Operation *> compute;
  /// The position of each compute op in `compute`.
  llvm::DenseMap<mlir::Operation *, int64_t> position;
  /// The arguments and the results of compute ops.
  llvm::DenseSet<mlir::Value> dependsOnInput;
  /// crossing[p], p in [0, n]: compute values defined before position p
  /// and used at or after it, in definition order.
  std::vector<llvm::SmallVector<mlir::Value>> crossing;
  /// The first position of each unit, from 0, then n.
  llvm::SmallVector<int64_t> cuts;

  int64_t numUnits() const { return static_cast<int64_t>(cuts.size()) - 1; }
};

/// The units of the single-block function `fn` (see the file comment); no
/// compute op gives no units (cuts = {0}).
ForwardUnits findForwardUnits(mlir::func::FuncOp fn);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_FORWARDUNITS_H
