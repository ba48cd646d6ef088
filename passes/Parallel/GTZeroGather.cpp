//===- GTZeroGather.cpp - ZeRO-1 parameter shards -> parameters -*- C++ -*-===//
//
// Part of MegaGraph. Completes gt-data-parallel{zero=1} after gt-optimizer:
// the optimizer updated `@gt.zero.bucket<k>`, a stand-in for this rank's
// 1/dp shard of a bucket of packed parameters, with moments of the shard's
// size. Here its loads become the shard cut from the current parameters
// (shard.all_slice, local) and its store becomes an all-gather of the
// updated shard whose slices are stored into the parameters. So every rank
// keeps all parameters but only 1/dp of the optimizer state. The gradients
// are sharded too: the full-size gradients end at gt-data-parallel's
// reduce-scatter (with zero>=2 one per layer inside the backward), only the
// shard reaches the optimizer.
//
// With zero=3 (the module's `gt.plan`) the parameters are sharded as well:
// `@gt.zero.bucket<k>` stays and is the parameter storage, 1/dp of the
// packed parameters on each rank. It is all-gathered into temporaries that
// replace the parameters' loads, once for the forward and once for the
// backward, and the optimizer's store writes only the updated shard. In
// each phase the first bucket is gathered right before its first read; the
// gather of each later bucket is started (`gt.overlap`) one bucket ahead,
// before the first read of the bucket the phase reads before it, and
// waited for at its own first read, so that it moves while the ops in
// between compute (at most two buckets' gathered parameters at a time; a
// bucket is a weight matrix and the vectors after it, gt-data-parallel).
// The parameter globals become immutable: they hold the initial weights,
// from which the first step (flag `@gt.zero.ready`) cuts each rank's shard.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/DataParallel.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace megagraph {
#define GEN_PASS_DEF_GTZEROGATHER
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-zero-gather"

using namespace mlir;
using namespace megagraph;

namespace {

constexpr StringLiteral kGrid = gt::kDataParallelGrid;

RankedTensorType f32(OpBuilder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  return TosaBuilder(b, loc).reshape(v, shape);
}

/// One bucket: its parameters and their sizes, from `gt.zero_shard`.
struct Bucket {
  ml_program::GlobalOp global;
  SmallVector<ml_program::GlobalOp> params;
  SmallVector<int64_t> sizes;
  int64_t padded = 0;
};

/// zero=3: one phase's (forward or backward) gather of a bucket's
/// parameters, in one function.
struct Gather {
  Bucket *bucket = nullptr;
  Value shard;                // the bucket's shard, loaded at the start
  Operation *first = nullptr; // the phase's first op that reads the bucket
  SmallVector<OpOperand *> uses;
};

struct GTZeroGatherPass : megagraph::impl::GTZeroGatherBase<GTZeroGatherPass> {
  using GTZeroGatherBase::GTZeroGatherBase;

  /// The axes of @gt_dp the shards are spread over (DataParallel.h).
  SmallVector<int16_t> axes;

  void getDependentDialects(DialectRegistry &registry) const override {
    GTZeroGatherBase::getDependentDialects(registry);
    registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                    scf::SCFDialect, tensor::TensorDialect>();
  }

  /// The packed (flattened, concatenated, zero-padded) values of a bucket's
  /// parameters, loaded at `b`.
  Value packParams(OpBuilder &b, Location loc, Bucket &bk) {
    const int64_t total =
        std::accumulate(bk.sizes.begin(), bk.sizes.end(), int64_t(0));
    SmallVector<Value> flats;
    for (auto [param, size] : llvm::zip(bk.params, bk.sizes)) {
      Value v = ml_program::GlobalLoadOp::create(
          b, loc, param.getType(),
          FlatSymbolRefAttr::get(param.getSymNameAttr()));
      flats.push_back(reshape(b, loc, v, {size}));
    }
    if (bk.padded > total)
      flats.push_back(tosa::ConstOp::create(
          b, loc, f32(b, {bk.padded - total}),
          DenseElementsAttr::get(f32(b, {bk.padded - total}),
                                 b.getF32FloatAttr(0.f))));
    return flats.size() == 1
               ? flats.front()
               : tosa::ConcatOp::create(b, loc, f32(b, {bk.padded}), flats,
                                        b.getI32IntegerAttr(0))
                     .getResult();
  }

  /// zero=3: the shard globals are the parameters' storage (see the file
  /// comment). The parameters may be loaded in @main and in the pipeline
  /// stage entries (`gt.pipeline_entry`); each such function gathers the
  /// buckets it reads at its start.
  LogicalResult shardParameters(ModuleOp module, func::FuncOp main,
                                MutableArrayRef<Bucket> buckets) {
    // Every load of a parameter or a shard, by function and global, and no
    // store outside the optimizer's.
    using Loads =
        llvm::DenseMap<StringAttr, SmallVector<ml_program::GlobalLoadOp>>;
    llvm::MapVector<func::FuncOp, Loads> loads;
    llvm::DenseMap<StringAttr, ml_program::GlobalStoreOp> shardStores;
    llvm::DenseSet<StringAttr> params, shards;
    for (Bucket &bk : buckets) {
      shards.insert(bk.global.getSymNameAttr());
      for (ml_program::GlobalOp p : bk.params)
        params.insert(p.getSymNameAttr());
    }
    WalkResult walk = module.walk([&](Operation *op) -> WalkResult {
      if (auto l = dyn_cast<ml_program::GlobalLoadOp>(op)) {
        StringAttr n = l.getGlobal().getLeafReference();
        if (params.contains(n) || shards.contains(n)) {
          auto fn = op->getParentOfType<func::FuncOp>();
          if (fn != main && !fn->hasAttr(gt::kPipelineEntryAttr))
            return op->emitError("gt-zero-gather: zero=3 needs every load "
                                 "of a parameter in @main or a pipeline "
                                 "stage entry");
          loads[fn][n].push_back(l);
        }
      }
      if (auto s = dyn_cast<ml_program::GlobalStoreOp>(op)) {
        StringAttr n = s.getGlobal().getLeafReference();
        if (params.contains(n))
          return op->emitError("gt-zero-gather: zero=3 needs parameters "
                               "that only the optimizer's shard updates; @")
                 << n.getValue() << " is stored";
        if (shards.contains(n)) {
          if (shardStores.count(n))
            return op->emitError("gt-zero-gather: expected one store of @")
                   << n.getValue() << " (the optimizer's update)";
          shardStores[n] = s;
        }
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (Bucket &bk : buckets)
      if (!shardStores.count(bk.global.getSymNameAttr()))
        return main.emitError() << "gt-zero-gather: expected one store of @"
                                << bk.global.getSymName()
                                << " (the optimizer's update), found 0";

    // The flag: false until the first step has cut the shards.
    Location loc = main.getLoc();
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPoint(main);
    auto flagType = RankedTensorType::get({}, mb.getI32Type());
    auto flag = ml_program::GlobalOp::create(
        mb, loc, MGRT_STATE_ZERO_READY, flagType, /*is_mutable=*/true,
        DenseElementsAttr::get(flagType, mb.getI32IntegerAttr(0)),
        mb.getStringAttr("private"));
    for (auto &[fn, fnLoads] : loads)
      gatherAtStart(fn, flag, buckets, fnLoads);
    for (Bucket &bk : buckets) {
      for (ml_program::GlobalOp param : bk.params) {
        // The initial weights only: read once, never written.
        param.setIsMutable(false);
        param->removeAttr("gt.param");
        param->setAttr("gt.param_init", mb.getUnitAttr());
        ++numGathered;
      }
      // The shard global is the parameter storage from now on.
      bk.global->setAttr("gt.param_shard", mb.getUnitAttr());
    }
    // The replaced loads go last: the gathers were inserted before them.
    for (auto &[fn, fnLoads] : loads)
      for (auto &entry : fnLoads)
        for (ml_program::GlobalLoadOp l : entry.second)
          l.erase();
    return success();
  }

  /// zero=3, at the start of `fn`: whichever function runs first cuts the
  /// shards of the buckets it reads (under pp its stage's; @main reads
  /// all) from the initial weights (flag `flag`); then each
  /// bucket `fn` reads is loaded and, where `fn` reads its parameters,
  /// all-gathered into temporaries that replace their loads, for the
  /// forward and again for the backward, each gather but a phase's first
  /// started one bucket ahead (see the file comment).
  template <typename Loads>
  void gatherAtStart(func::FuncOp fn, ml_program::GlobalOp flag,
                     MutableArrayRef<Bucket> buckets, Loads &loads) {
    Location loc = fn.getLoc();
    auto flagType = cast<RankedTensorType>(flag.getType());
    Block &body = fn.getBody().front();
    // The backward starts at the first op that reads the labels, the loss
    // seed or the cotangents of a stage's outputs (the forward reads none
    // of them; what follows, recomputed forward ops included, is the
    // backward's).
    DenseSet<Value> fromBackward;
    for (BlockArgument arg : body.getArguments()) {
      auto n = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                               gt::kTensorNameAttr);
      if (n &&
          (n.getValue() == abi::kLabels || n.getValue() == abi::kLossSeed ||
           n.getValue().starts_with(MGRT_PREFIX_ACTIVATION_GRAD)))
        fromBackward.insert(arg);
    }
    Operation *backwardStart = nullptr;
    for (Operation &op : body) {
      bool reads = false;
      op.walk([&](Operation *nested) {
        reads |= llvm::any_of(nested->getOperands(), [&](Value v) {
          return fromBackward.contains(v);
        });
      });
      if (reads) {
        backwardStart = &op;
        break;
      }
    }
    OpBuilder b(&body, body.begin());
    Value ready = ml_program::GlobalLoadOp::create(
        b, loc, flagType, FlatSymbolRefAttr::get(flag.getSymNameAttr()));
    Value readyI32 = tensor::ExtractOp::create(b, loc, ready, ValueRange{});
    Value zeroI32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
    Value firstStep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            readyI32, zeroI32);
    // On the first step, store this rank's slice of the initial parameters
    // into each shard global. The cuts come before anything else of the
    // step, so that their temporaries (a whole packed bucket each) are freed
    // before the step's own buffers exist (gt-memory-plan's arena starts at
    // the first of those). (The `scf.if` yields nothing, so no buffer
    // crosses it and the deallocations stay simple.)
    // A pipeline stage's entry cuts only the buckets it reads, its stage's
    // (a rank runs one stage's entries, and its first entry reads all of
    // them): another stage's shard global is never touched on this rank.
    auto reads = [&](Bucket &bk) {
      return loads.count(bk.global.getSymNameAttr()) ||
             llvm::any_of(bk.params, [&](ml_program::GlobalOp param) {
               return loads.count(param.getSymNameAttr());
             });
    };
    for (Bucket &bk : buckets) {
      if (!reads(bk))
        continue;
      auto shardType = cast<RankedTensorType>(bk.global.getType());
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, firstStep,
                                    /*withElseRegion=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Value init = shard::AllSliceOp::create(
          tb, loc, shardType, packParams(tb, loc, bk), kGrid, axes, 0);
      ml_program::GlobalStoreOp::create(
          tb, loc, FlatSymbolRefAttr::get(bk.global.getSymNameAttr()), init);
    }
    // ready | 1, not a constant tensor: the CPU pipeline turned a stored
    // dense<1> : tensor<i32> into an uninitialized buffer.
    Value oneI32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
    Value set = arith::OrIOp::create(b, loc, readyI32, oneI32);
    ml_program::GlobalStoreOp::create(
        b, loc, FlatSymbolRefAttr::get(flag.getSymNameAttr()),
        tensor::FromElementsOp::create(b, loc, flagType, ValueRange{set}));

    // Each bucket's shard, and where each phase (forward, backward) first
    // reads its parameters.
    SmallVector<SmallVector<Gather>, 2> phases(2);
    for (Bucket &bk : buckets) {
      StringAttr name = bk.global.getSymNameAttr();
      auto shardType = cast<RankedTensorType>(bk.global.getType());
      const bool readsParams = llvm::any_of(bk.params, [&](auto param) {
        return loads.count(param.getSymNameAttr());
      });
      if (!readsParams && !loads.count(name))
        continue;
      Value shardValue = ml_program::GlobalLoadOp::create(
          b, loc, shardType, FlatSymbolRefAttr::get(name));
      for (ml_program::GlobalLoadOp l : loads.lookup(name))
        l.getResult().replaceAllUsesWith(shardValue);
      if (!readsParams)
        continue;
      // The full parameters are gathered into temporaries once for the
      // forward's uses and once for the backward's, so that each lives
      // only while its part of the step reads it.
      SmallVector<Gather, 2> gathers(2);
      for (ml_program::GlobalOp param : bk.params)
        for (ml_program::GlobalLoadOp l : loads.lookup(param.getSymNameAttr()))
          for (OpOperand &use : l.getResult().getUses()) {
            Operation *top = body.findAncestorOpInBlock(*use.getOwner());
            Gather &g =
                gathers[backwardStart && !top->isBeforeInBlock(backwardStart)
                            ? 1
                            : 0];
            g.uses.push_back(&use);
            if (!g.first || top->isBeforeInBlock(g.first))
              g.first = top;
          }
      for (auto [phase, g] : llvm::enumerate(gathers))
        if (g.first) {
          g.bucket = &bk;
          g.shard = shardValue;
          phases[phase].push_back(g);
        }
    }
    // Each phase reads the buckets in the order of their first uses (the
    // backward in reverse layer order). The first bucket's gather waits
    // where it stands; each later one is started (gt.overlap) right before
    // the first use of the bucket read before it, so that it moves while
    // the ops reading that bucket compute. Its slices stay at its own first
    // use, where gt-shard-to-runtime waits for it: at most two buckets'
    // gathered parameters are live at once.
    for (auto [phase, gathers] : llvm::enumerate(phases)) {
      llvm::stable_sort(gathers, [](const Gather &x, const Gather &y) {
        return x.first != y.first && x.first->isBeforeInBlock(y.first);
      });
      for (auto [i, g] : llvm::enumerate(gathers)) {
        Operation *startAt = i == 0 ? g.first : gathers[i - 1].first;
        gatherBucket(g, startAt, /*overlap=*/i > 0, /*copy=*/phase == 1);
      }
    }
  }

  /// All-gathers `g`'s bucket before `startAt` and replaces its parameters'
  /// uses with slices of the result placed before `g.first`. `copy`: the
  /// gather reads a copy of the shard (the backward's: two gathers of one
  /// value would be merged by CSE, they are pure).
  void gatherBucket(Gather &g, Operation *startAt, bool overlap, bool copy) {
    Bucket &bk = *g.bucket;
    Location loc = g.shard.getLoc();
    auto shardType = cast<RankedTensorType>(bk.global.getType());
    OpBuilder gb(startAt);
    Value source = copy ? bufferization::AllocTensorOp::create(
                              gb, loc, shardType, ValueRange{}, g.shard)
                              .getResult()
                        : g.shard;
    auto all = shard::AllGatherOp::create(gb, loc, f32(gb, {bk.padded}), kGrid,
                                          axes, source, APInt(64, 0));
    if (overlap)
      all->setAttr(gt::kOverlapAttr, gb.getUnitAttr());
    OpBuilder sb(g.first);
    int64_t offset = 0;
    DenseMap<Operation *, Value> full; // parameter global -> its value
    for (auto [param, size] : llvm::zip(bk.params, bk.sizes)) {
      ImplicitLocOpBuilder ib(loc, sb);
      Value piece = tosa::SliceOp::create(sb, loc, f32(sb, {size}), all,
                                          tosa::getTosaConstShape(ib, {offset}),
                                          tosa::getTosaConstShape(ib, {size}));
      offset += size;
      auto type = cast<RankedTensorType>(param.getType());
      full[param] = reshape(sb, loc, piece, type.getShape());
    }
    for (OpOperand *use : g.uses) {
      auto l = cast<ml_program::GlobalLoadOp>(use->get().getDefiningOp());
      auto param = cast<ml_program::GlobalOp>(
          SymbolTable::lookupNearestSymbolFrom(l, l.getGlobalAttr()));
      use->set(full.lookup(param));
    }
  }

  LogicalResult readBucket(ModuleOp module, ml_program::GlobalOp g,
                           Bucket &out) {
    auto info = g->getAttrOfType<gt::ZeroShardAttr>(gt::kZeroShardAttr);
    out.global = g;
    out.padded = info.getPadded();
    int64_t total = 0;
    for (auto [ref, size] : llvm::zip(info.getParams(), info.getSizes())) {
      auto param = module.lookupSymbol<ml_program::GlobalOp>(ref);
      if (!param)
        return g.emitError("gt-zero-gather: gt.zero_shard names no parameter "
                           "global ")
               << ref;
      auto type = dyn_cast<RankedTensorType>(param.getType());
      if (!type || type.getNumElements() != size ||
          !type.getElementType().isF32())
        return g.emitError("gt-zero-gather: parameter ")
               << ref << " is not an f32 tensor of " << size << " elements";
      out.params.push_back(param);
      out.sizes.push_back(size);
      total += size;
    }
    auto shardType = dyn_cast<RankedTensorType>(g.getType());
    if (total > out.padded || !shardType || shardType.getRank() != 1 ||
        out.padded % shardType.getNumElements() != 0)
      return g.emitError("gt-zero-gather: the shard's size does not divide "
                         "the padded bucket");
    return success();
  }

  /// zero=1/2: puts the bucket's `#gt.zero_shard` on each of its moment
  /// globals (the optimizer state named `<bucket>.<moment>`) as
  /// `gt.zero_moment`.
  void markMoments(ModuleOp module, Bucket &bk) {
    auto packing =
        bk.global->getAttrOfType<gt::ZeroShardAttr>(gt::kZeroShardAttr);
    const std::string prefix = (bk.global.getSymName() + ".").str();
    for (auto g : module.getOps<ml_program::GlobalOp>())
      if (g->hasAttr("gt.optimizer_state") &&
          g.getSymName().starts_with(prefix) &&
          !g.getSymName().drop_front(prefix.size()).contains('.'))
        g->setAttr(gt::kZeroMomentAttr, packing);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // 1. The buckets.
    SmallVector<Bucket> buckets;
    for (auto g : module.getOps<ml_program::GlobalOp>())
      if (g->hasAttr(gt::kZeroShardAttr)) {
        Bucket bucket;
        if (failed(readBucket(module, g, bucket)))
          return signalPassFailure();
        buckets.push_back(bucket);
      }
    if (buckets.empty())
      return;
    auto grid = module.lookupSymbol<shard::GridOp>(kGrid);
    if (grid)
      axes = dataParallelAxes(grid);
    if (!grid) {
      module.emitError("gt-zero-gather: no shard.grid @gt_dp (run "
                       "gt-data-parallel{zero=1} first)");
      return signalPassFailure();
    }
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("gt-zero-gather needs the training step @main (run "
                       "gt-optimizer first)");
      return signalPassFailure();
    }
    int64_t stage = 1;
    if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan"))
      stage = plan.getZero();
    if (stage == 3) {
      if (failed(shardParameters(module, main, buckets)))
        return signalPassFailure();
      return;
    }

    for (Bucket &bk : buckets) {
      StringAttr name = bk.global.getSymNameAttr();
      auto shardType = cast<RankedTensorType>(bk.global.getType());
      SmallVector<ml_program::GlobalLoadOp> loads;
      SmallVector<ml_program::GlobalStoreOp> stores;
      main.walk([&](Operation *op) {
        if (auto l = dyn_cast<ml_program::GlobalLoadOp>(op);
            l && l.getGlobal().getLeafReference() == name)
          loads.push_back(l);
        if (auto s = dyn_cast<ml_program::GlobalStoreOp>(op);
            s && s.getGlobal().getLeafReference() == name)
          stores.push_back(s);
      });
      if (stores.size() != 1) {
        main.emitError() << "gt-zero-gather: expected one store of @"
                         << name.getValue() << " (the optimizer's update), "
                         << "found " << stores.size();
        return signalPassFailure();
      }
      // 2. Each load: this rank's slice of the packed current parameters.
      for (ml_program::GlobalLoadOp load : loads) {
        OpBuilder b(load);
        Location loc = load.getLoc();
        Value packed = packParams(b, loc, bk);
        Value shard = shard::AllSliceOp::create(b, loc, shardType, packed,
                                                kGrid, axes, 0);
        load.getResult().replaceAllUsesWith(shard);
        load.erase();
      }
      // 3. The store: all-gather the updated shards into the parameters.
      ml_program::GlobalStoreOp store = stores.front();
      OpBuilder b(store);
      Location loc = store.getLoc();
      Value all =
          shard::AllGatherOp::create(b, loc, f32(b, {bk.padded}), kGrid, axes,
                                     store.getValue(), APInt(64, 0));
      int64_t offset = 0;
      for (auto [param, size] : llvm::zip(bk.params, bk.sizes)) {
        ImplicitLocOpBuilder ib(loc, b);
        Value piece = tosa::SliceOp::create(
            b, loc, f32(b, {size}), all, tosa::getTosaConstShape(ib, {offset}),
            tosa::getTosaConstShape(ib, {size}));
        offset += size;
        auto type = cast<RankedTensorType>(param.getType());
        ml_program::GlobalStoreOp::create(
            b, loc, FlatSymbolRefAttr::get(param.getSymNameAttr()),
            reshape(b, loc, piece, type.getShape()));
        ++numGathered;
      }
      store.erase();
      // 4. The stand-in global goes; its moments `<bucket>.<moment>` keep
      //    the packing (`gt.zero_moment`), so that the state table can say
      //    where each parameter's moments lie in the shards.
      markMoments(module, bk);
      bk.global.erase();
    }
  }
};

} // namespace
