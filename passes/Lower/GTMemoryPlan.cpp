//===- GTMemoryPlan.cpp - One arena per function, offsets from liveness --===//
//
// Part of MegaGraph. After gt-early-dealloc every local buffer of a step
// is allocated where it is first written and freed after its last use, so
// a training step made hundreds of allocations per call. The large ones
// were mapped afresh by the C library (and their pages faulted in and
// zeroed by the kernel) on every step unless the runtime's block cache
// happened to hold a block of the right size. This pass plans the buffers
// of each function at compile time instead: every static-shaped
// `memref.alloc` of the function's body block whose `memref.dealloc` is in
// the same block gets a byte offset in one arena, such that buffers whose
// lifetimes (alloc to dealloc) overlap never overlap in memory. The arena
// is one allocation of the plan's peak per call, of the same size on every
// call, so the runtime's cache hands the same block back each step: no
// mapping and no page fault in a steady-state step, and the step's memory
// is the plan's peak. The arena lives from the first planned buffer's
// allocation to the last one's free, so that what the function allocates
// outside that span (the first step's one-time work in an `scf.if`, say)
// is freed before the arena exists instead of stacking on it.
//
// Offsets come from the greedy-by-size heuristic of TensorFlow Lite's
// arena planner: buffers in decreasing size, each at the lowest
// (aligned) offset where it does not overlap a placed buffer whose
// lifetime overlaps its own.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace megagraph {
#define GEN_PASS_DEF_GTMEMORYPLAN
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-memory-plan"

using namespace mlir;
using namespace megagraph;

namespace {

/// One planned buffer: its allocation and free, its lifetime as positions
/// in the block, its size and alignment in bytes, and its offset.
struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t first, last;
  int64_t bytes, alignment;
  int64_t offset = -1;
};

int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/// The bytes of a static memref with an identity layout whose elements are
/// whole bytes, or nullopt if the plan cannot hold it.
std::optional<int64_t> staticBytes(MemRefType type, const DataLayout &layout) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return std::nullopt;
  Type elem = type.getElementType();
  if (!elem.isIntOrIndexOrFloat() ||
      (!elem.isIndex() && elem.getIntOrFloatBitWidth() % 8 != 0))
    return std::nullopt;
  int64_t bytes = static_cast<int64_t>(layout.getTypeSize(elem));
  for (int64_t d : type.getShape())
    if (llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  return bytes;
}

/// Places the buffers (greedy by size) and returns the arena's size.
int64_t placeBuffers(MutableArrayRef<Buffer> buffers) {
  SmallVector<Buffer *> order =
      llvm::map_to_vector(buffers, [](Buffer &b) { return &b; });
  // Largest first; ties by first use, so that the plan is deterministic.
  llvm::stable_sort(order, [](Buffer *a, Buffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
  });
  SmallVector<Buffer *> placed;
  int64_t total = 0;
  for (Buffer *b : order) {
    SmallVector<Buffer *> live;
    for (Buffer *p : placed)
      if (p->first <= b->last && b->first <= p->last)
        live.push_back(p);
    llvm::sort(live,
               [](Buffer *x, Buffer *y) { return x->offset < y->offset; });
    int64_t offset = 0;
    for (Buffer *p : live) {
      if (alignTo(offset, b->alignment) + b->bytes <= p->offset)
        break;
      offset = std::max(offset, p->offset + p->bytes);
    }
    b->offset = alignTo(offset, b->alignment);
    total = std::max(total, b->offset + b->bytes);
    placed.push_back(b);
  }
  return total;
}

struct GTMemoryPlanPass : megagraph::impl::GTMemoryPlanBase<GTMemoryPlanPass> {
  using GTMemoryPlanBase::GTMemoryPlanBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn.isExternal() && fn.getBody().hasOneBlock())
        planFunction(fn);
    });
  }

  void planFunction(func::FuncOp fn) {
    Block &block = fn.getBody().front();
    const DataLayout &layout = DataLayout::closest(fn);
    // 1. Lifetimes: positions in the block of each alloc and its dealloc.
    llvm::DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = static_cast<int64_t>(i);
    SmallVector<Buffer> buffers;
    for (auto alloc : block.getOps<memref::AllocOp>()) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType(), layout);
      if (!bytes || !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty())
        continue;
      memref::DeallocOp dealloc;
      for (Operation *user : alloc->getUsers())
        if (auto d = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc || d->getBlock() != &block) {
            dealloc = nullptr;
            break;
          }
          dealloc = d;
        }
      if (!dealloc)
        continue; // returned, or freed elsewhere: not the plan's
      int64_t alignment =
          std::max<int64_t>(this->alignment, alloc.getAlignment().value_or(1));
      buffers.push_back({alloc, dealloc, position[alloc], position[dealloc],
                         std::max<int64_t>(*bytes, 1), alignment});
    }
    if (buffers.size() < 2)
      return; // nothing to share
    // 2. Offsets.
    int64_t total = placeBuffers(buffers);
    // 3. One arena for the body, alive from the first planned buffer's
    //    allocation to the last one's free: what the function allocates
    //    and frees before (or after) its planned buffers, in nested
    //    regions for instance, does not add to the arena's bytes.
    OpBuilder b(fn.getContext());
    Location loc = fn.getLoc();
    Buffer *firstBuf = &buffers.front(), *lastBuf = &buffers.front();
    int64_t arenaAlignment = 1;
    for (Buffer &buf : buffers) {
      arenaAlignment = std::max(arenaAlignment, buf.alignment);
      if (buf.first < firstBuf->first)
        firstBuf = &buf;
      if (buf.last > lastBuf->last)
        lastBuf = &buf;
    }
    b.setInsertionPoint(firstBuf->alloc);
    auto arenaType = MemRefType::get({total}, b.getI8Type());
    Value arena = memref::AllocOp::create(b, loc, arenaType,
                                          b.getI64IntegerAttr(arenaAlignment));
    b.setInsertionPointAfter(lastBuf->dealloc);
    memref::DeallocOp::create(b, loc, arena);
    // 4. Each buffer becomes a view of it.
    for (Buffer &buf : buffers) {
      b.setInsertionPoint(buf.alloc);
      Value shift =
          arith::ConstantIndexOp::create(b, buf.alloc.getLoc(), buf.offset);
      Value view =
          memref::ViewOp::create(b, buf.alloc.getLoc(), buf.alloc.getType(),
                                 arena, shift, ValueRange{});
      buf.dealloc.erase();
      buf.alloc.replaceAllUsesWith(view);
      buf.alloc.erase();
    }
    numBuffers += buffers.size();
    numArenaBytes += total;
  }
};

} // namespace
