//===- GTGpuOffload.cpp - Loop nests of the step as GPU kernels -*- C++ -*-===//
//
// Part of MegaGraph. The device half of `--target cuda` (see Passes.td):
// runtime calls become their device versions, every linalg op on memrefs
// becomes one `gpu.launch` whose threads cover the op's leading parallel
// loops (a chain of elementwise ops over the same points becomes one
// launch), and nothing on the host reads or writes a buffer's elements.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace megagraph {
#define GEN_PASS_DEF_GTGPUOFFLOAD
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-gpu-offload"

using namespace mlir;
using namespace megagraph;

namespace {

/// Runtime calls with a version on device buffers taking the same memref
/// operands: the heavy kernels (CUDA), the context-parallel attention
/// (CUDA kernels, keys over NCCL) and the collectives of dp / cp / pp
/// plans (the communication runtime's NCCL backend).
constexpr std::pair<StringLiteral, StringLiteral> kCudaKernels[] = {
    {MGRT_KERNEL_MATMUL, MGRT_CUDA_KERNEL_MATMUL},
    {MGRT_KERNEL_ATTENTION, MGRT_CUDA_KERNEL_ATTENTION},
    {MGRT_KERNEL_ATTENTION_BWD, MGRT_CUDA_KERNEL_ATTENTION_BWD},
    {MGRT_KERNEL_MATMUL_BF16, MGRT_CUDA_KERNEL_MATMUL_BF16},
    {MGRT_KERNEL_ATTENTION_BF16, MGRT_CUDA_KERNEL_ATTENTION_BF16},
    {MGRT_KERNEL_ATTENTION_BWD_BF16, MGRT_CUDA_KERNEL_ATTENTION_BWD_BF16},
    {MGRT_KERNEL_CP_ATTENTION, MGRT_CUDA_KERNEL_CP_ATTENTION},
    {MGRT_KERNEL_CP_ATTENTION_BWD, MGRT_CUDA_KERNEL_CP_ATTENTION_BWD},
    {MGRT_SHARD_ALL_REDUCE, MGRT_DEVICE_SHARD_ALL_REDUCE},
    {MGRT_SHARD_ALL_GATHER, MGRT_DEVICE_SHARD_ALL_GATHER},
    {MGRT_SHARD_REDUCE_SCATTER, MGRT_DEVICE_SHARD_REDUCE_SCATTER},
    {MGRT_SHARD_REDUCE_SCATTER_START, MGRT_DEVICE_SHARD_REDUCE_SCATTER_START},
    {MGRT_SHARD_ALL_REDUCE_START, MGRT_DEVICE_SHARD_ALL_REDUCE_START},
    {MGRT_SHARD_ALL_GATHER_START, MGRT_DEVICE_SHARD_ALL_GATHER_START},
    {MGRT_SHARD_WAIT, MGRT_DEVICE_SHARD_WAIT},
    {MGRT_SHARD_ALL_TO_ALL, MGRT_DEVICE_SHARD_ALL_TO_ALL},
    {MGRT_SHARD_ALL_SLICE, MGRT_DEVICE_SHARD_ALL_SLICE},
    {MGRT_SHARD_BROADCAST, MGRT_DEVICE_SHARD_BROADCAST},
    {MGRT_SHARD_SEND, MGRT_DEVICE_SHARD_SEND},
    {MGRT_SHARD_RECV, MGRT_DEVICE_SHARD_RECV},
    {MGRT_SHARD_SHIFT, MGRT_DEVICE_SHARD_SHIFT},
};

/// Whether `callee` already is a device-buffer call.
bool isDeviceCall(StringRef callee) {
  return callee.starts_with("mgrt_cuda_") ||
         callee.starts_with("mgrt_comm_device_");
}

/// The host reads of rank-0 device buffers, `<prefix><type>`
/// (megagraph/RuntimeCuda.h).
constexpr StringLiteral kLoadPrefix = MGRT_CUDA_LOAD_PREFIX;

/// The gpu.module every kernel is outlined into.
constexpr StringLiteral kKernelModule = "megagraph_kernels";

bool insideKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

/// Bytes of a global's buffer as the LLVM lowering lays it out (i1 as a
/// byte).
int64_t bytesOf(MemRefType type) {
  Type element = type.getElementType();
  int64_t width = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, (width + 7) / 8);
}

struct GTGpuOffloadPass : megagraph::impl::GTGpuOffloadBase<GTGpuOffloadPass> {
  using GTGpuOffloadBase::GTGpuOffloadBase;

  /// Kernels created so far (their function names).
  int64_t kernelCount = 0;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      module.emitError("gt-gpu-offload: block-size must be in [1, 1024], got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    if ((!emulateOnHost && failed(retargetRuntimeCalls(module))) ||
        failed(offloadLoops(module)) || failed(hostScalars(module)) ||
        failed(checkHost(module)))
      return signalPassFailure();
    recordGlobals(module);
    if (emulateOnHost)
      launchesToLoops(module);
  }

  /// emulate-on-host: each gpu.launch becomes host loops over its blocks
  /// and threads, so the kernels' index arithmetic runs (and is tested) on
  /// a machine without a GPU.
  void launchesToLoops(ModuleOp module) {
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(module.getContext());
    for (gpu::LaunchOp launch : launches) {
      Location loc = launch.getLoc();
      rewriter.setInsertionPoint(launch);
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto blocks =
          scf::ForOp::create(rewriter, loc, zero, launch.getGridSizeX(), one);
      rewriter.setInsertionPointToStart(blocks.getBody());
      auto threads =
          scf::ForOp::create(rewriter, loc, zero, launch.getBlockSizeX(), one);
      Block &body = launch.getBody().front();
      IRMapping mapping;
      gpu::KernelDim3 ids[] = {launch.getBlockIds(), launch.getThreadIds()};
      Value values[] = {blocks.getInductionVar(), threads.getInductionVar()};
      for (auto [dims, x] : llvm::zip(ids, values)) {
        mapping.map(dims.x, x);
        mapping.map(dims.y, zero);
        mapping.map(dims.z, zero);
      }
      gpu::KernelDim3 gridArgs = launch.getGridSize();
      gpu::KernelDim3 blockArgs = launch.getBlockSize();
      gpu::KernelDim3 gridValues = launch.getGridSizeOperandValues();
      gpu::KernelDim3 blockValues = launch.getBlockSizeOperandValues();
      mapping.map(gridArgs.x, gridValues.x);
      mapping.map(gridArgs.y, gridValues.y);
      mapping.map(gridArgs.z, gridValues.z);
      mapping.map(blockArgs.x, blockValues.x);
      mapping.map(blockArgs.y, blockValues.y);
      mapping.map(blockArgs.z, blockValues.z);
      rewriter.setInsertionPointToStart(threads.getBody());
      for (Operation &op : body.without_terminator())
        rewriter.clone(op, mapping);
      rewriter.eraseOp(launch);
    }
  }

  /// Renames the runtime kernels to their CUDA versions; a runtime call
  /// without one is an error.
  LogicalResult retargetRuntimeCalls(ModuleOp module) {
    WalkResult result = module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (!callee.starts_with("mgrt_") || isDeviceCall(callee))
        return WalkResult::advance();
      for (auto [cpu, cuda] : kCudaKernels)
        if (callee == cpu)
          return WalkResult::advance();
      call.emitError() << "runtime call @" << callee
                       << " has no CUDA version yet (--target cuda runs "
                          "models without sparse attention or SpMM); "
                          "compile this model with --target cpu";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
    MLIRContext *ctx = module.getContext();
    for (auto [cpu, cuda] : kCudaKernels) {
      auto decl = module.lookupSymbol<func::FuncOp>(cpu);
      if (!decl)
        continue;
      if (failed(SymbolTable::replaceAllSymbolUses(
              decl, StringAttr::get(ctx, cuda), module)))
        return decl.emitError("cannot rename @") << cpu;
      decl.setSymName(cuda);
      ++numCalls;
    }
    return success();
  }

  /// One gpu.launch per host-level linalg op (memref.copy included), or
  /// per chain of fusable ones.
  LogicalResult offloadLoops(ModuleOp module) {
    IRRewriter rewriter(module.getContext());
    SmallVector<memref::CopyOp> copies;
    module.walk([&](memref::CopyOp copy) {
      if (!insideKernel(copy))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (!insideKernel(op))
        ops.push_back(op);
    });
    SmallVector<SmallVector<linalg::LinalgOp>> chains;
    for (linalg::LinalgOp op : ops) {
      if (!chains.empty() && fusable(chains.back(), op)) {
        chains.back().push_back(op);
        continue;
      }
      chains.push_back({op});
    }
    for (SmallVector<linalg::LinalgOp> &chain : chains) {
      if (chain.size() > 1)
        numFused += chain.size() - 1;
      if (failed(offload(rewriter, chain)))
        return failure();
    }
    return success();
  }

  /// The static loop ranges of an op whose loops are all parallel, or
  /// nothing.
  static std::optional<SmallVector<int64_t>>
  elementwiseRanges(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() ||
        op.getNumLoops() != op.getNumParallelLoops() || op.getNumLoops() == 0)
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges,
                     [](int64_t r) { return ShapedType::isDynamic(r) || !r; }))
      return std::nullopt;
    return ranges;
  }

  /// The buffer a view is a view of (through view-like ops and casts).
  static Value rootOf(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
        v = view.getViewSource();
        continue;
      }
      if (auto cast = dyn_cast<memref::CastOp>(def)) {
        v = cast.getSource();
        continue;
      }
      break;
    }
    return v;
  }

  /// Whether two buffers may share memory: the same root, or two reads of
  /// the same global. Distinct allocations, globals and arguments do not
  /// (each argument of a compiled entry is its own buffer).
  static bool mayAlias(Value a, Value b) {
    Value ra = rootOf(a), rb = rootOf(b);
    if (ra == rb)
      return true;
    auto ga = ra.getDefiningOp<memref::GetGlobalOp>();
    auto gb = rb.getDefiningOp<memref::GetGlobalOp>();
    return ga && gb && ga.getName() == gb.getName();
  }

  /// Whether `op` can join `chain` in one kernel, each thread running
  /// every op of the chain at its point in order: all of them elementwise
  /// over the same static iteration space, nothing between them that
  /// touches memory (the kernel runs where the last op was), and every
  /// buffer one of them writes and another accesses is the same buffer
  /// through the same one-to-one indexing, so no thread reads or writes
  /// what another thread writes.
  bool fusable(ArrayRef<linalg::LinalgOp> chain, linalg::LinalgOp op) {
    linalg::LinalgOp last = chain.back();
    if (last->getBlock() != op->getBlock() || !last->isBeforeInBlock(op))
      return false;
    std::optional<SmallVector<int64_t>> ranges = elementwiseRanges(op);
    if (!ranges || elementwiseRanges(chain.front()) != ranges)
      return false;
    for (Operation *between = last->getNextNode(); between != op;
         between = between->getNextNode()) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(between);
      if (!effects || !(effects.hasNoEffect() ||
                        effects.onlyHasEffect<MemoryEffects::Allocate>()))
        return false;
    }
    for (linalg::LinalgOp prior : chain) {
      for (OpOperand &a : prior->getOpOperands()) {
        if (!isa<MemRefType>(a.get().getType()))
          continue;
        for (OpOperand &b : op->getOpOperands()) {
          if (!isa<MemRefType>(b.get().getType()))
            continue;
          const bool writes = prior.isDpsInit(&a) || op.isDpsInit(&b);
          if (!writes || !mayAlias(a.get(), b.get()))
            continue;
          AffineMap ma = prior.getMatchingIndexingMap(&a);
          AffineMap mb = op.getMatchingIndexingMap(&b);
          if (a.get() != b.get() || ma != mb || !ma.isPermutation())
            return false;
        }
      }
    }
    return true;
  }

  /// Interchanges `op`'s loops (generalizing a named op) so that every
  /// parallel loop comes before every reduction loop.
  LogicalResult parallelLoopsFirst(IRRewriter &rewriter, linalg::LinalgOp &op) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order;
    for (auto [d, it] : llvm::enumerate(iterators))
      if (it == utils::IteratorType::parallel)
        order.push_back(d);
    size_t numParallel = order.size();
    for (auto [d, it] : llvm::enumerate(iterators))
      if (it != utils::IteratorType::parallel)
        order.push_back(d);
    bool identity = true;
    for (auto [i, d] : llvm::enumerate(order))
      identity &= i == d;
    if (identity || numParallel == 0)
      return success();
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return success(); // keep the loop order; still correct
      generic = *g;
    }
    FailureOr<linalg::GenericOp> swapped =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(swapped))
      return generic.emitError("gt-gpu-offload: cannot interchange loops");
    op = cast<linalg::LinalgOp>(swapped->getOperation());
    ++numInterchanged;
    return success();
  }

  /// One kernel for `chain` (one op, or elementwise ops that `fusable`
  /// accepted), launched where its last op was.
  LogicalResult offload(IRRewriter &rewriter,
                        MutableArrayRef<linalg::LinalgOp> chain) {
    for (linalg::LinalgOp op : chain)
      if (!op.hasPureBufferSemantics())
        return op.emitError("gt-gpu-offload needs linalg ops on memrefs (run "
                            "it after bufferization)");
    linalg::LinalgOp first = chain.front();
    Location loc = chain.back().getLoc();
    // 0. Parallel loops first (a column sum [N,D] -> [D] gets D threads
    // instead of one): each thread still reduces in the original order.
    // (A fused chain is all parallel already.)
    if (chain.size() == 1 && failed(parallelLoopsFirst(rewriter, first)))
      return failure();
    chain.front() = first;
    // 1. The threads: one per point of the leading parallel loops (the
    // same iteration space for every op of a chain).
    rewriter.setInsertionPoint(chain.back());
    SmallVector<Range> ranges = first.createLoopRanges(rewriter, loc);
    SmallVector<utils::IteratorType> iterators = first.getIteratorTypesArray();
    size_t leading = 0;
    while (leading < iterators.size() &&
           iterators[leading] == utils::IteratorType::parallel)
      ++leading;
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
    int64_t staticTotal = 1;
    for (size_t d = 0; d < leading; ++d) {
      Value size =
          getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].size);
      total = arith::MulIOp::create(rewriter, loc, total, size);
      std::optional<int64_t> s = getConstantIntValue(ranges[d].size);
      staticTotal = (s && staticTotal >= 0) ? staticTotal * *s : -1;
    }
    if (staticTotal == 0) {
      for (linalg::LinalgOp op : chain)
        rewriter.eraseOp(op);
      return success();
    }
    int64_t threads = blockSize;
    if (staticTotal > 0 && staticTotal < threads)
      threads = staticTotal;
    gpu::LaunchOp launch = newLaunch(rewriter, loc, total, threads);
    if (leading == 0)
      ++numSerial;
    Block &body = launch.getBody().front();
    Operation *terminator = body.getTerminator();

    // 2. Each op's loops inside the kernel, in order; 3. the leading
    // parallel loops become the thread index.
    for (linalg::LinalgOp op : chain) {
      rewriter.setInsertionPoint(terminator);
      Operation *moved = rewriter.clone(*op.getOperation());
      rewriter.eraseOp(op);
      rewriter.setInsertionPoint(moved);
      FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToParallelLoops(
          rewriter, cast<linalg::LinalgOp>(moved));
      if (failed(loops))
        return moved->emitError(
            "gt-gpu-offload: cannot lower this op to loops");
      rewriter.eraseOp(moved);
    }
    if (leading == 0)
      return success();
    SmallVector<scf::ParallelOp> parallels;
    for (Operation &nested : body)
      if (auto parallel = dyn_cast<scf::ParallelOp>(nested))
        parallels.push_back(parallel);
    if (parallels.size() != chain.size())
      return launch.emitError("gt-gpu-offload: expected the op's parallel "
                              "loops in the kernel");
    for (scf::ParallelOp parallel : parallels)
      threadIndexed(rewriter, launch, parallel);
    return success();
  }

  /// The outermost scf.parallel of an op (its leading parallel loops)
  /// becomes the thread index, row-major, guarded against the last partial
  /// block.
  void threadIndexed(IRRewriter &rewriter, gpu::LaunchOp launch,
                     scf::ParallelOp parallel) {
    rewriter.setInsertionPoint(parallel);
    Location ploc = parallel.getLoc();
    SmallVector<Value> trips;
    Value count = arith::ConstantIndexOp::create(rewriter, ploc, 1);
    for (auto [lb, ub, step] :
         llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                   parallel.getStep())) {
      Value span = arith::SubIOp::create(rewriter, ploc, ub, lb);
      Value trip = arith::CeilDivUIOp::create(rewriter, ploc, span, step);
      trips.push_back(trip);
      count = arith::MulIOp::create(rewriter, ploc, count, trip);
    }
    Value base = arith::MulIOp::create(rewriter, ploc, launch.getBlockIds().x,
                                       launch.getBlockSizeX());
    Value id =
        arith::AddIOp::create(rewriter, ploc, base, launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(rewriter, ploc,
                                          arith::CmpIPredicate::ult, id, count);
    auto guard = scf::IfOp::create(rewriter, ploc, inRange);
    rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping mapping;
    Value rest = id;
    for (int64_t d = static_cast<int64_t>(trips.size()) - 1; d >= 0; --d) {
      Value index = rest;
      if (d > 0) {
        index = arith::RemUIOp::create(rewriter, ploc, rest, trips[d]);
        rest = arith::DivUIOp::create(rewriter, ploc, rest, trips[d]);
      }
      Value scaled =
          arith::MulIOp::create(rewriter, ploc, index, parallel.getStep()[d]);
      Value iv = arith::AddIOp::create(rewriter, ploc, scaled,
                                       parallel.getLowerBound()[d]);
      mapping.map(parallel.getInductionVars()[d], iv);
    }
    for (Operation &inner : parallel.getBody()->without_terminator())
      rewriter.clone(inner, mapping);
    rewriter.eraseOp(parallel);
  }

  /// An empty one-dimensional launch of `threads` threads in blocks of
  /// `block`, in the program's kernel module, ending in its terminator.
  gpu::LaunchOp newLaunch(IRRewriter &rewriter, Location loc, Value total,
                          int64_t threads) {
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value block = arith::ConstantIndexOp::create(rewriter, loc, threads);
    Value grid = arith::CeilDivUIOp::create(rewriter, loc, total, block);
    auto launch =
        gpu::LaunchOp::create(rewriter, loc, grid, one, one, block, one, one);
    // One kernel module for the whole program: one PTX image to compile
    // and JIT-load.
    MLIRContext *ctx = rewriter.getContext();
    auto parent = launch->getParentOfType<FunctionOpInterface>();
    launch.setModuleAttr(FlatSymbolRefAttr::get(ctx, kKernelModule));
    std::string name = (parent ? parent.getName() : StringRef("kernel")).str() +
                       "_k" + std::to_string(kernelCount++);
    launch.setFunctionAttr(FlatSymbolRefAttr::get(ctx, name));
    ++numKernels;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(rewriter, loc);
    return launch;
  }

  /// Host-level scalar accesses of device memory (a flag the step sets and
  /// branches on): a store becomes a one-thread kernel (the value its
  /// argument); a load of a rank-0 buffer becomes a device-to-host read of
  /// the element (mgrt_cuda_load_<type>, RuntimeCuda.h). Emulated on the
  /// host such a load stays as it is: host memory is the device memory.
  LogicalResult hostScalars(ModuleOp module) {
    IRRewriter rewriter(module.getContext());
    SmallVector<memref::StoreOp> stores;
    SmallVector<memref::LoadOp> loads;
    module.walk([&](Operation *op) {
      if (insideKernel(op))
        return;
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && !store.getMemRef().getDefiningOp<memref::AllocaOp>())
        stores.push_back(store);
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && load.getMemRefType().getRank() == 0 && !emulateOnHost &&
          !load.getMemRef().getDefiningOp<memref::AllocaOp>())
        loads.push_back(load);
    });
    for (memref::StoreOp store : stores) {
      rewriter.setInsertionPoint(store);
      Location loc = store.getLoc();
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      gpu::LaunchOp launch = newLaunch(rewriter, loc, one, 1);
      ++numSerial;
      rewriter.moveOpBefore(store, launch.getBody().front().getTerminator());
    }
    for (memref::LoadOp load : loads) {
      Type type = load.getType();
      std::string suffix;
      if (type.isInteger(32) || type.isInteger(64) || type.isF32() ||
          type.isF64())
        suffix = (type.isInteger(32)   ? "i32"
                  : type.isInteger(64) ? "i64"
                  : type.isF32()       ? "f32"
                                       : "f64");
      if (suffix.empty())
        continue; // checkHost reports it
      std::string callee = std::string(kLoadPrefix) + suffix;
      auto memrefType = load.getMemRefType();
      auto fnType =
          FunctionType::get(module.getContext(), {memrefType}, {type});
      // One declaration per element type and buffer type.
      std::string declName = callee;
      auto decl = module.lookupSymbol<func::FuncOp>(declName);
      if (decl && decl.getFunctionType() != fnType)
        return load.emitError("gt-gpu-offload: host reads of rank-0 buffers "
                              "of different layouts are not supported");
      if (!decl) {
        OpBuilder b(module.getBodyRegion());
        decl = func::FuncOp::create(b, load.getLoc(), declName, fnType);
        decl.setPrivate();
        decl->setAttr("llvm.emit_c_interface",
                      UnitAttr::get(module.getContext()));
      }
      rewriter.setInsertionPoint(load);
      rewriter.replaceOpWithNewOp<func::CallOp>(load, decl,
                                                ValueRange{load.getMemRef()});
    }
    return success();
  }

  /// No host-level op may touch a buffer's elements, and no kernel may use
  /// a host stack buffer.
  LogicalResult checkHost(ModuleOp module) {
    WalkResult result = module.walk([&](Operation *op) {
      if (auto alloca = dyn_cast<memref::AllocaOp>(op);
          alloca && !insideKernel(op) && !emulateOnHost) {
        for (Operation *user : alloca->getUsers())
          if (insideKernel(user)) {
            alloca.emitError("gt-gpu-offload: a kernel uses this host stack "
                             "buffer");
            return WalkResult::interrupt();
          }
      }
      if (!isa<memref::LoadOp, memref::StoreOp, linalg::LinalgOp>(op) ||
          insideKernel(op))
        return WalkResult::advance();
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && emulateOnHost && load.getMemRefType().getRank() == 0)
        return WalkResult::advance(); // a device-to-host read on a GPU
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && store.getMemRef().getDefiningOp<memref::AllocaOp>())
        return WalkResult::advance(); // the host's own stack
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && load.getMemRef().getDefiningOp<memref::AllocaOp>())
        return WalkResult::advance();
      op->emitError("gt-gpu-offload: this op would read or write device "
                    "memory on the host");
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  void recordGlobals(ModuleOp module) {
    SmallVector<FlatSymbolRefAttr> globals;
    SmallVector<int64_t> bytes;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      globals.push_back(FlatSymbolRefAttr::get(global.getSymNameAttr()));
      bytes.push_back(bytesOf(global.getType()));
    }
    module->setAttr(
        gt::kDeviceGlobalsAttr,
        gt::DeviceGlobalsAttr::get(module.getContext(), globals, bytes));
  }
};

} // namespace
