//===- GTEarlyDealloc.cpp - Free buffers after their last use ---*- C++ -*-===//
//
// Part of MegaGraph. Ownership-based buffer deallocation places every
// `memref.dealloc` at the end of the block that owns the buffer, so a
// straight-line forward pass keeps all its intermediates alive until it
// returns and its peak memory is the sum of them. This pass moves each
// dealloc of a local allocation to just after the last use of the buffer or
// of any view of it in the same block, which makes the peak the largest set
// of simultaneously live buffers. Buffers with a use it cannot see through
// (a branch, a return, a nested region it does not own) keep their place.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace megagraph {
#define GEN_PASS_DEF_GTEARLYDEALLOC
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-early-dealloc"

using namespace mlir;
using namespace megagraph;

namespace {

/// Returns the last op of `block` that uses `buffer` or a view of it (the
/// allocation itself when there is no use), or failure if some use cannot
/// be placed in `block` or may escape.
FailureOr<Operation *> lastUseInBlock(Value buffer, Operation *dealloc,
                                      Block *block) {
  SmallVector<Value> worklist = {buffer};
  Operation *last = buffer.getDefiningOp();
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      // Views alias the buffer: their uses count too.
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == v)
          for (Value r : user->getResults())
            worklist.push_back(r);
      } else if (isa<memref::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
      } else if (user->hasTrait<OpTrait::IsTerminator>()) {
        return failure(); // returned or branched: not ours to free early
      } else {
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            return failure(); // may return an alias of its operand
      }
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return failure();
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct GTEarlyDeallocPass
    : megagraph::impl::GTEarlyDeallocBase<GTEarlyDeallocPass> {
  using GTEarlyDeallocBase::GTEarlyDeallocBase;

  void runOnOperation() override {
    // 1. Collect deallocs of local allocations.
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk([&](memref::DeallocOp op) {
      if (op.getMemref().getDefiningOp<memref::AllocOp>())
        deallocs.push_back(op);
    });
    // 2. Move each right after the last use in its block.
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      Block *block = dealloc->getBlock();
      Operation *alloc = buffer.getDefiningOp();
      if (alloc->getBlock() != block)
        continue;
      FailureOr<Operation *> last = lastUseInBlock(buffer, dealloc, block);
      if (failed(last))
        continue;
      if ((*last)->isBeforeInBlock(dealloc) &&
          (*last)->getNextNode() != dealloc) {
        dealloc->moveAfter(*last);
        ++numMoved;
      }
    }
  }
};

} // namespace
