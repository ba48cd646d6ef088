//===- GTShardToRuntime.cpp - shard collectives -> runtime calls -*- C++
//-*-===//
//
// Part of MegaGraph. Lowers the upstream `shard` collectives on tensors to
// calls of the communication runtime (megagraph/Comm.h), before
// bufferization: the operand is flattened and copied into a fresh buffer,
// the call gets rank-1 memref<?xf32> operands, the grid as four sizes and
// the group's axes as a bit mask, and the result is the output buffer as a
// tensor, reshaped back. One path serves the MPI and the NCCL backends.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

namespace megagraph {
#define GEN_PASS_DEF_GTSHARDTORUNTIME
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-shard-to-runtime"

using namespace mlir;
using namespace megagraph;

namespace {

/// The runtime's reduction code (mgrt_comm_op) of `kind`.
FailureOr<int64_t> reductionCode(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return MGRT_COMM_SUM;
  case shard::ReductionKind::Average:
    return MGRT_COMM_AVG;
  case shard::ReductionKind::Max:
    return MGRT_COMM_MAX;
  case shard::ReductionKind::Min:
    return MGRT_COMM_MIN;
  default:
    return failure();
  }
}

/// What every lowering needs: the builder, the grid arguments of the call.
struct Lowering {
  OpBuilder &b;
  Operation *op;
  SmallVector<Value> gridArgs;     // g0, g1, g2, g3, axes mask
  SmallVector<int64_t> groupShape; // sizes of the group's axes, in order

  Location loc() { return op->getLoc(); }

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc(), b.getI64Type(), v);
  }

  /// `v` as a rank-1 tensor (collapse or expand, no copy).
  Value flatten(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    auto flat = RankedTensorType::get({t.getNumElements()}, t.getElementType());
    if (t.getRank() == 1)
      return v;
    if (t.getRank() == 0)
      return tensor::ExpandShapeOp::create(b, loc(), flat, v,
                                           ArrayRef<ReassociationIndices>{});
    ReassociationIndices all;
    for (int64_t i = 0; i < t.getRank(); ++i)
      all.push_back(i);
    return tensor::CollapseShapeOp::create(b, loc(), flat, v,
                                           ArrayRef<ReassociationIndices>{all});
  }

  /// A rank-1 tensor reshaped to `type`.
  Value unflatten(Value v, RankedTensorType type) {
    if (type.getRank() == 1)
      return v;
    if (type.getRank() == 0)
      return tensor::CollapseShapeOp::create(b, loc(), type, v,
                                             ArrayRef<ReassociationIndices>{});
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    return tensor::ExpandShapeOp::create(b, loc(), type, v,
                                         ArrayRef<ReassociationIndices>{all});
  }

  /// A new buffer of `n` f32, optionally holding the flattened `init`.
  Value buffer(int64_t n, Value init = {}) {
    auto type = MemRefType::get({n}, b.getF32Type());
    Value buf = memref::AllocOp::create(b, loc(), type);
    if (init) {
      auto mat = bufferization::MaterializeInDestinationOp::create(
          b, loc(), TypeRange{}, flatten(init), buf);
      mat.setRestrict(true);
      mat.setWritable(true);
    }
    return buf;
  }

  /// The buffer as the runtime's memref<?xf32>.
  Value dynamic(Value buf) {
    return memref::CastOp::create(
        b, loc(), MemRefType::get({ShapedType::kDynamic}, b.getF32Type()), buf);
  }

  /// The buffer as a tensor of `type`.
  Value result(Value buf, RankedTensorType type) {
    auto flatType = RankedTensorType::get(
        {cast<MemRefType>(buf.getType()).getDimSize(0)}, b.getF32Type());
    Value t = bufferization::ToTensorOp::create(b, loc(), flatType, buf,
                                                /*restrict=*/true,
                                                /*writable=*/true);
    return unflatten(t, type);
  }

  /// Declares `name` once (C interface) and calls it with `args`.
  func::CallOp callFn(StringRef name, ArrayRef<Value> args,
                      TypeRange results = {}) {
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    auto module = op->getParentOfType<ModuleOp>();
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      OpBuilder mb(module.getBodyRegion());
      fn = func::FuncOp::create(mb, module.getLoc(), name,
                                b.getFunctionType(types, results));
      fn.setPrivate();
      fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    }
    return func::CallOp::create(b, loc(), fn, args);
  }

  /// The arguments of a collective's call: `buffers`, the grid arguments,
  /// then `extra`.
  SmallVector<Value> collectiveArgs(ArrayRef<Value> buffers,
                                    ArrayRef<int64_t> extra) {
    SmallVector<Value> args;
    for (Value v : buffers)
      args.push_back(dynamic(v));
    llvm::append_range(args, gridArgs);
    for (int64_t e : extra)
      args.push_back(i64(e));
    return args;
  }

  /// Declares `name` once and calls it with `buffers` then the grid
  /// arguments then `extra`.
  void call(StringRef name, ArrayRef<Value> buffers, ArrayRef<int64_t> extra) {
    callFn(name, collectiveArgs(buffers, extra));
  }

  /// Row-major index of an in-group multi-index.
  FailureOr<int64_t> linear(ArrayRef<int64_t> index, StringRef what) {
    if (index.size() != groupShape.size())
      return op->emitOpError() << what << " has " << index.size()
                               << " coordinates for a group of "
                               << groupShape.size() << " axes",
             failure();
    int64_t r = 0;
    for (auto [i, s] : llvm::zip(index, groupShape)) {
      if (i < 0 || i >= s)
        return op->emitOpError() << what << " is outside the group", failure();
      r = r * s + i;
    }
    return r;
  }

  int64_t groupSize() {
    int64_t n = 1;
    for (int64_t s : groupShape)
      n *= s;
    return n;
  }

  /// `v` [d0, .., da, ..] as [P, d0, .., da / P, ..]: piece p of axis `a`
  /// first, so the P pieces are contiguous (a reshape and a transpose).
  Value piecesFirst(Value v, int64_t a) {
    auto t = cast<RankedTensorType>(v.getType());
    const int64_t P = groupSize();
    SmallVector<int64_t> split(t.getShape());
    split[a] /= P;
    split.insert(split.begin() + a, P);
    ImplicitLocOpBuilder ib(loc(), b);
    Value r = tosa::ReshapeOp::create(b, loc(), t.clone(split), v,
                                      tosa::getTosaConstShape(ib, split));
    if (a == 0)
      return r;
    SmallVector<int32_t> perm = {static_cast<int32_t>(a)};
    SmallVector<int64_t> shape = {P};
    for (int64_t i = 0; i < static_cast<int64_t>(split.size()); ++i)
      if (i != a) {
        perm.push_back(static_cast<int32_t>(i));
        shape.push_back(split[i]);
      }
    return tosa::TransposeOp::create(b, loc(), t.clone(shape), r, perm);
  }

  /// The inverse for a result: `v` [P, e0, .., ec, ..] as the type `to`
  /// [e0, .., P ec, ..], piece p at offset p ec of axis `c`.
  Value piecesAt(Value v, int64_t c, RankedTensorType to) {
    auto t = cast<RankedTensorType>(v.getType());
    const int64_t rank = t.getRank();
    if (c != 0) {
      SmallVector<int32_t> perm;
      SmallVector<int64_t> shape;
      for (int64_t i = 1; i < rank; ++i) {
        if (i - 1 == c) {
          perm.push_back(0);
          shape.push_back(t.getDimSize(0));
        }
        perm.push_back(static_cast<int32_t>(i));
        shape.push_back(t.getDimSize(i));
      }
      v = tosa::TransposeOp::create(b, loc(), t.clone(shape), v, perm);
    }
    ImplicitLocOpBuilder ib(loc(), b);
    return tosa::ReshapeOp::create(b, loc(), to, v,
                                   tosa::getTosaConstShape(ib, to.getShape()));
  }
};

/// The tensor dimension `axis` is preceded only by unit dimensions, so the
/// pieces along it are contiguous in the flattened tensor.
bool leading(RankedTensorType t, int64_t axis) {
  for (int64_t i = 0; i < axis; ++i)
    if (t.getDimSize(i) != 1)
      return false;
  return true;
}

/// Checks the common conditions and fills the grid arguments.
LogicalResult prepare(Operation *op, FlatSymbolRefAttr gridRef,
                      ArrayRef<int16_t> axes, Lowering &l) {
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    if (isa<IndexType>(t))
      continue;
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return op->emitOpError("gt-shard-to-runtime lowers collectives on "
                             "tensors only");
    if (!rt.hasStaticShape() || !rt.getElementType().isF32())
      return op->emitOpError("gt-shard-to-runtime needs static f32 tensors, "
                             "got ")
             << rt;
  }
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridRef);
  if (!grid)
    return op->emitOpError("no shard.grid named ") << gridRef;
  ArrayRef<int64_t> shape = grid.getShape();
  if (shape.size() > 4 || llvm::any_of(shape, ShapedType::isDynamic))
    return op->emitOpError("the runtime supports static grids of at most 4 "
                           "axes");
  int64_t mask = 0, last = -1;
  for (int16_t a : axes) {
    if (a <= last)
      return op->emitOpError("grid_axes must be ascending");
    last = a;
    mask |= int64_t(1) << a;
    l.groupShape.push_back(shape[a]);
  }
  for (int i = 0; i < 4; ++i)
    l.gridArgs.push_back(l.i64(i < (int)shape.size() ? shape[i] : 1));
  l.gridArgs.push_back(l.i64(mask));
  return success();
}

/// Whether `next` is the next overlapped collective of the chain of the
/// overlapped `collective`. The gradients' reduce-scatters and all-reduces
/// are one chain, the parameters' all-gathers (ZeRO-3's prefetch) another:
/// each keeps at most one collective in flight beside the one being
/// produced, which bounds the buffers they hold (for the gathers, two
/// buckets' parameters). The chains do not wait for each other: the
/// backward starts the next bucket's parameter gather right after the
/// reduce-scatter of the previous bucket's gradients, and that
/// reduce-scatter waited for there would not overlap the layer it is
/// meant to hide behind.
bool nextOfChain(Operation *collective, Operation *next) {
  if (!next->hasAttr(gt::kOverlapAttr))
    return false;
  if (isa<shard::AllGatherOp>(collective))
    return isa<shard::AllGatherOp>(next);
  return isa<shard::ReduceScatterOp, shard::AllReduceOp>(next);
}

/// Where an overlapped collective waits: the first op after it in its
/// block that reads its result (itself or inside its regions) or is the
/// next overlapped collective of its chain; the terminator at the latest.
Operation *waitPoint(Operation *collective) {
  Block *block = collective->getBlock();
  llvm::SmallPtrSet<Operation *, 8> readers;
  for (Operation *user : collective->getResult(0).getUsers())
    if (Operation *top = block->findAncestorOpInBlock(*user))
      readers.insert(top);
  for (Operation *o = collective->getNextNode(); o; o = o->getNextNode()) {
    if (readers.contains(o) || o->hasTrait<OpTrait::IsTerminator>())
      return o;
    if (nextOfChain(collective, o))
      return o;
  }
  return block->getTerminator();
}

/// Calls the collective `blocking` on `buffers` (then the grid arguments
/// and `extra`) at `l.op`, or, when that op is marked gt.overlap, starts it
/// with `started` there and waits for it right before the first op that
/// reads the result or starts the next overlapped collective of its chain
/// (waitPoint; so at most one is in flight beside the one being produced,
/// see nextOfChain): the ops between run while it moves. The wait takes
/// the first and the last buffer, which keeps them alive (and unreused by
/// the memory plan) until then.
void callCollective(Lowering &l, StringRef blocking, StringRef started,
                    ArrayRef<Value> buffers, ArrayRef<int64_t> extra) {
  if (!l.op->hasAttr(gt::kOverlapAttr)) {
    l.call(blocking, buffers, extra);
    return;
  }
  Value request =
      l.callFn(started, l.collectiveArgs(buffers, extra), {l.b.getI64Type()})
          .getResult(0);
  l.b.setInsertionPoint(waitPoint(l.op));
  l.callFn(MGRT_SHARD_WAIT,
           {l.dynamic(buffers.front()), l.dynamic(buffers.back()), request});
}

LogicalResult lower(Operation *op, int64_t &count) {
  OpBuilder b(op);
  Lowering l{b, op, {}, {}};
  auto fail = [&](const Twine &msg) { return op->emitOpError(msg), failure(); };
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Value replacement;

  if (auto ar = dyn_cast<shard::AllReduceOp>(op)) {
    if (failed(prepare(op, ar.getGridAttr(), ar.getGridAxes(), l)))
      return failure();
    FailureOr<int64_t> code = reductionCode(ar.getReduction());
    if (failed(code))
      return fail("reduction must be sum, average, max or min");
    auto t = typeOf(ar.getResult());
    Value buf = l.buffer(t.getNumElements(), ar.getInput());
    callCollective(l, MGRT_SHARD_ALL_REDUCE, MGRT_SHARD_ALL_REDUCE_START, {buf},
                   {*code});
    replacement = l.result(buf, t);
  } else if (auto ag = dyn_cast<shard::AllGatherOp>(op)) {
    if (failed(prepare(op, ag.getGridAttr(), ag.getGridAxes(), l)))
      return failure();
    int64_t axis = ag.getGatherAxis().getSExtValue();
    if (!leading(typeOf(ag.getInput()), axis))
      return fail("gather_axis must be preceded by unit dimensions only");
    auto t = typeOf(ag.getResult());
    Value in = l.buffer(typeOf(ag.getInput()).getNumElements(), ag.getInput());
    Value out = l.buffer(t.getNumElements());
    // Overlapped: ZeRO-3's prefetch, the next bucket's parameters move
    // while the ops before its first use compute.
    callCollective(l, MGRT_SHARD_ALL_GATHER, MGRT_SHARD_ALL_GATHER_START,
                   {out, in}, {});
    replacement = l.result(out, t);
  } else if (auto rs = dyn_cast<shard::ReduceScatterOp>(op)) {
    if (failed(prepare(op, rs.getGridAttr(), rs.getGridAxes(), l)))
      return failure();
    FailureOr<int64_t> code = reductionCode(rs.getReduction());
    if (failed(code))
      return fail("reduction must be sum, average, max or min");
    int64_t axis = rs.getScatterAxis().getSExtValue();
    if (!leading(typeOf(rs.getInput()), axis))
      return fail("scatter_axis must be preceded by unit dimensions only");
    auto t = typeOf(rs.getResult());
    Value in = l.buffer(typeOf(rs.getInput()).getNumElements(), rs.getInput());
    Value out = l.buffer(t.getNumElements());
    callCollective(l, MGRT_SHARD_REDUCE_SCATTER,
                   MGRT_SHARD_REDUCE_SCATTER_START, {out, in}, {*code});
    replacement = l.result(out, t);
  } else if (auto aa = dyn_cast<shard::AllToAllOp>(op)) {
    if (failed(prepare(op, aa.getGridAttr(), aa.getGridAxes(), l)))
      return failure();
    int64_t split = aa.getSplitAxis().getSExtValue();
    int64_t concat = aa.getConcatAxis().getSExtValue();
    auto t = typeOf(aa.getResult());
    if (split == concat && leading(typeOf(aa.getInput()), split)) {
      Value in = l.buffer(t.getNumElements(), aa.getInput());
      Value out = l.buffer(t.getNumElements());
      l.call(MGRT_SHARD_ALL_TO_ALL, {out, in}, {});
      replacement = l.result(out, t);
    } else {
      // The P pieces of the split axis made contiguous, exchanged, and
      // laid along the concat axis (rank p's piece at offset p).
      if (typeOf(aa.getInput()).getDimSize(split) % l.groupSize())
        return fail("the group size must divide the split axis");
      Value packed = l.piecesFirst(aa.getInput(), split);
      auto pieces = typeOf(packed);
      Value in = l.buffer(t.getNumElements(), packed);
      Value out = l.buffer(t.getNumElements());
      l.call(MGRT_SHARD_ALL_TO_ALL, {out, in}, {});
      replacement = l.piecesAt(l.result(out, pieces), concat, t);
    }
  } else if (auto sl = dyn_cast<shard::AllSliceOp>(op)) {
    if (failed(prepare(op, sl.getGridAttr(), sl.getGridAxes(), l)))
      return failure();
    int64_t axis = sl.getSliceAxis().getSExtValue();
    auto t = typeOf(sl.getResult());
    // Off the leading dimensions, the pieces are made contiguous first.
    Value input = sl.getInput();
    if (!leading(typeOf(input), axis)) {
      if (typeOf(input).getDimSize(axis) % l.groupSize())
        return fail("the group size must divide the slice axis");
      input = l.piecesFirst(input, axis);
    }
    Value in = l.buffer(typeOf(input).getNumElements(), input);
    Value out = l.buffer(t.getNumElements());
    l.call(MGRT_SHARD_ALL_SLICE, {out, in}, {});
    replacement = l.result(out, t);
  } else if (auto pli = dyn_cast<shard::ProcessLinearIndexOp>(op)) {
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, pli.getGridAttr());
    if (!grid)
      return fail("no shard.grid named " + pli.getGrid());
    SmallVector<int16_t> all;
    for (int64_t i = 0; i < grid.getRank(); ++i)
      all.push_back(static_cast<int16_t>(i));
    if (failed(prepare(op, pli.getGridAttr(), all, l)))
      return failure();
    auto module = op->getParentOfType<ModuleOp>();
    auto i64 = b.getI64Type();
    SmallVector<Type> types(l.gridArgs.size(), i64);
    auto fn = module.lookupSymbol<func::FuncOp>(MGRT_SHARD_GROUP_RANK);
    if (!fn) {
      OpBuilder mb(module.getBodyRegion());
      fn = func::FuncOp::create(mb, module.getLoc(), MGRT_SHARD_GROUP_RANK,
                                b.getFunctionType(types, {i64}));
      fn.setPrivate();
    }
    Value rank = func::CallOp::create(b, l.loc(), fn, l.gridArgs).getResult(0);
    replacement =
        arith::IndexCastOp::create(b, l.loc(), b.getIndexType(), rank);
  } else if (auto bc = dyn_cast<shard::BroadcastOp>(op)) {
    if (failed(prepare(op, bc.getGridAttr(), bc.getGridAxes(), l)))
      return failure();
    if (!bc.getRootDynamic().empty())
      return fail("needs a static root");
    FailureOr<int64_t> root = l.linear(bc.getRoot(), "root");
    if (failed(root))
      return failure();
    auto t = typeOf(bc.getResult());
    Value buf = l.buffer(t.getNumElements(), bc.getInput());
    l.call(MGRT_SHARD_BROADCAST, {buf}, {*root});
    replacement = l.result(buf, t);
  } else if (auto send = dyn_cast<shard::SendOp>(op)) {
    if (failed(prepare(op, send.getGridAttr(), send.getGridAxes(), l)))
      return failure();
    if (!send.getDestinationDynamic().empty())
      return fail("needs a static destination");
    FailureOr<int64_t> dest = l.linear(send.getDestination(), "destination");
    if (failed(dest))
      return failure();
    Value buf =
        l.buffer(typeOf(send.getInput()).getNumElements(), send.getInput());
    l.call(MGRT_SHARD_SEND, {buf}, {*dest});
    replacement = send.getInput();
  } else if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    if (failed(prepare(op, recv.getGridAttr(), recv.getGridAxes(), l)))
      return failure();
    if (!recv.getSource() || !recv.getSourceDynamic().empty())
      return fail("needs a static source");
    FailureOr<int64_t> source = l.linear(*recv.getSource(), "source");
    if (failed(source))
      return failure();
    auto t = typeOf(recv.getResult());
    Value buf = l.buffer(t.getNumElements());
    l.call(MGRT_SHARD_RECV, {buf}, {*source});
    replacement = l.result(buf, t);
  } else if (auto shift = dyn_cast<shard::ShiftOp>(op)) {
    if (failed(prepare(op, shift.getGridAttr(), shift.getGridAxes(), l)))
      return failure();
    int64_t axis = shift.getShiftAxis().getSExtValue();
    if (shift.getGridAxes().size() != 1 || shift.getGridAxes()[0] != axis)
      return fail("the runtime shifts over the shift axis only (grid_axes = "
                  "[shift_axis])");
    auto t = typeOf(shift.getResult());
    Value in = l.buffer(t.getNumElements(), shift.getInput());
    Value out = l.buffer(t.getNumElements());
    l.call(
        MGRT_SHARD_SHIFT, {out, in},
        {static_cast<int64_t>(shift.getOffset()), shift.getRotate() ? 1 : 0});
    replacement = l.result(out, t);
  } else {
    return success();
  }
  op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  ++count;
  return success();
}

struct GTShardToRuntimePass
    : megagraph::impl::GTShardToRuntimeBase<GTShardToRuntimePass> {
  using GTShardToRuntimeBase::GTShardToRuntimeBase;

  void runOnOperation() override {
    // 1. Collect the collectives (lowering erases them).
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
              shard::AllToAllOp, shard::AllSliceOp, shard::BroadcastOp,
              shard::SendOp, shard::RecvOp, shard::ShiftOp,
              shard::ProcessLinearIndexOp>(op))
        ops.push_back(op);
    });
    // 2. Lower each one in place.
    int64_t count = 0;
    bool failedAny = false;
    for (Operation *op : ops)
      if (failed(lower(op, count)))
        failedAny = true;
    numLowered += count;
    if (failedAny)
      return signalPassFailure();
    // 3. Grids nothing refers to any more go (LLVM has no grid).
    ModuleOp module = getOperation();
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
  }
};

} // namespace
