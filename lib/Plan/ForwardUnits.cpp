//===- ForwardUnits.cpp - Where a forward function can be cut -------------===//
//
// Part of MegaGraph. See megagraph/Plan/ForwardUnits.h.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/ForwardUnits.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstdint>

using namespace mlir;
using namespace megagraph;

namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && isa<FloatType>(t.getElementType());
}

} // namespace

ForwardUnits megagraph::findForwardUnits(func::FuncOp fn) {
  ForwardUnits fu;
  Block &body = fn.getBody().front();
  Operation *terminator = body.getTerminator();

  // 1. Free ops (constants, parameter loads and what is computed from them
  //    only) are not compute ops.
  fu.dependsOnInput.insert(body.getArguments().begin(),
                           body.getArguments().end());
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return fu.dependsOnInput.contains(v); }))
      continue;
    for (Value r : op.getResults())
      fu.dependsOnInput.insert(r);
    fu.position[&op] = fu.compute.size();
    fu.compute.push_back(&op);
  }
  const int64_t n = fu.compute.size();
  fu.cuts = {0};
  fu.crossing.assign(n + 1, {});
  if (n == 0)
    return fu;

  // 2. crossing[p]: compute values defined before position p and used at
  //    or after it (the return counts as position n), in definition order.
  DenseMap<Value, int64_t> lastUse;
  for (Operation *op : fu.compute)
    for (Value r : op->getResults()) {
      int64_t last = -1;
      for (Operation *user : r.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        last = std::max(last, top == terminator ? n : fu.position.lookup(top));
      }
      lastUse[r] = last;
    }
  for (int64_t p = 1; p <= n; ++p)
    for (int64_t i = 0; i < p; ++i)
      for (Value r : fu.compute[i]->getResults())
        if (lastUse[r] >= p)
          fu.crossing[p].push_back(r);

  // 3. Cut points: the positions where the fewest activations cross, not
  //    counting the outputs of source ops (ops reading only arguments and
  //    free values: the embedding and bias encoders, whose outputs, such as
  //    an attention bias, may be read by every layer and are forwarded from
  //    stage to stage), and at least one. Every crossing value must be a
  //    float tensor (its gradient flows back).
  DenseSet<Operation *> sources;
  for (Operation *op : fu.compute)
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          return !fu.dependsOnInput.contains(v) || isa<BlockArgument>(v);
        }))
      sources.insert(op);
  SmallVector<int64_t> weight(n + 1, INT64_MAX);
  int64_t least = INT64_MAX;
  for (int64_t p = 1; p < n; ++p) {
    if (fu.crossing[p].empty() || !llvm::all_of(fu.crossing[p], isFloatTensor))
      continue;
    weight[p] =
        std::max<int64_t>(1, llvm::count_if(fu.crossing[p], [&](Value v) {
                            return !sources.contains(v.getDefiningOp());
                          }));
    least = std::min(least, weight[p]);
  }
  for (int64_t p = 1; p < n; ++p)
    if (weight[p] == least)
      fu.cuts.push_back(p);
  fu.cuts.push_back(n);
  return fu;
}
