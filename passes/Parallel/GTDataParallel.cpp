//===- GTDataParallel.cpp - Gradient all-reduce over the dp group -*- C++
//-*-===//
//
// Part of MegaGraph. Data parallelism on the gradient function of
// gt-autodiff (@main_grad: inputs, labels, label_mask -> loss, correct,
// grad:<param>...), before gt-optimizer: each rank holds 1/dp of the global
// batch, and the gradients, the loss and the correct count returned to the
// optimizer become those of the global batch. The loss is a masked mean,
// so rank r's share is weighted by its labelled-item count n_r:
//   g = sum_r n_r g_r / sum_r n_r,
// which reproduces a one-process run of the global batch exactly (up to
// float summation order). Everything to reduce is flattened and packed into
// buckets (small gradients share one shard.all_reduce); gt-shard-to-runtime
// lowers the collectives to the communication runtime. Without ZeRO the
// buckets are all-reduced inside the backward as they fill. With ZeRO the
// gradient buckets are reduce-scattered instead; from stage 2 on, one
// bucket per layer, right where the backward has produced it, so that no
// more than one layer's full-size gradients are live at a time.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/DataParallel.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace megagraph {
#define GEN_PASS_DEF_GTDATAPARALLEL
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-data-parallel"

using namespace mlir;
using namespace megagraph;

namespace {

/// Name of the data-parallel grid.
constexpr StringLiteral kGrid = gt::kDataParallelGrid;

/// One flattened value to reduce and where its result goes.
struct Piece {
  Value value;           ///< the local value as the function computes it
  Value flat;            ///< rank-1 f32, the (weighted) local value
  RankedTensorType type; ///< the original result type
  int result = -1;       ///< index in the return, -1 for the count
  bool weighted = false; ///< divide by the global count after the sum
  StringRef param;       ///< the parameter of a gradient, "" otherwise
  int bucket = 0;        ///< which all-reduce carries it
  int64_t offset = 0;    ///< where it starts in the bucket
  Value reduced;         ///< its slice of the reduced bucket
};

/// Static-shape TOSA helpers.
struct Builder {
  OpBuilder &b;
  Location loc;

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return TosaBuilder(b, loc).reshape(v, shape);
  }
  Value flatten(Value v) {
    return reshape(v, {cast<RankedTensorType>(v.getType()).getNumElements()});
  }
  /// x * s with s a rank-1 one-element tensor, broadcast to x's shape.
  Value mulScalar(Value x, Value s) {
    auto t = cast<RankedTensorType>(x.getType());
    Value bs = reshape(s, SmallVector<int64_t>(t.getRank(), 1));
    auto i8 = RankedTensorType::get({1}, b.getI8Type());
    Value shift = tosa::ConstOp::create(
        b, loc, i8, DenseElementsAttr::get(i8, b.getI8IntegerAttr(0)));
    return tosa::MulOp::create(b, loc, t, x, bs, shift);
  }
  Value slice(Value v, int64_t start, int64_t size) {
    ImplicitLocOpBuilder ib(loc, b);
    return tosa::SliceOp::create(b, loc, f32({size}), v,
                                 tosa::getTosaConstShape(ib, {start}),
                                 tosa::getTosaConstShape(ib, {size}));
  }
};

struct GTDataParallelPass
    : megagraph::impl::GTDataParallelBase<GTDataParallelPass> {
  using GTDataParallelBase::GTDataParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (dp < 1) {
      module.emitError() << "gt-data-parallel: dp must be at least 1, got "
                         << static_cast<int64_t>(dp);
      return signalPassFailure();
    }
    if (pp < 1) {
      module.emitError() << "gt-data-parallel: pp must be at least 1, got "
                         << static_cast<int64_t>(pp);
      return signalPassFailure();
    }
    if (zero < 0 || zero > 3) {
      module.emitError() << "gt-data-parallel: zero must be 0, 1, 2 or 3, got "
                         << static_cast<int64_t>(zero);
      return signalPassFailure();
    }
    if (bucketBytes < 4) {
      module.emitError("gt-data-parallel: bucket-bytes must be at least 4");
      return signalPassFailure();
    }
    if (cp < 1) {
      module.emitError() << "gt-data-parallel: cp must be at least 1, got "
                         << static_cast<int64_t>(cp);
      return signalPassFailure();
    }
    // The ranks whose gradients are summed (the ZeRO shard count).
    const int64_t shards = dp * cp;
    if (shards == 1)
      return;
    auto grad = module.lookupSymbol<func::FuncOp>("main_grad");
    if (!grad || grad.isExternal()) {
      module.emitError("gt-data-parallel needs the gradient function "
                       "@main_grad (run gt-autodiff first, gt-optimizer "
                       "after)");
      return signalPassFailure();
    }
    // Pipeline stages share the dp x pp (x cp) grid; otherwise an existing
    // grid means the pass already ran.
    const SmallVector<int64_t> gridShape = dataParallelGridShape(dp, pp, cp);
    auto existing = module.lookupSymbol<shard::GridOp>(kGrid);
    const bool shared =
        pp > 1 && existing && existing.getShape() == ArrayRef(gridShape);
    if (module.lookupSymbol(kGrid) && !shared) {
      module.emitError() << "gt-data-parallel: the module already has a "
                            "symbol @"
                         << kGrid << " (the pass ran twice?)";
      return signalPassFailure();
    }
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    Location loc = grad.getLoc();
    Builder h{b, loc};

    // 1. The grid, and the plan for the driver (mgrt_plan, written by the
    // entry table from `gt.plan`).
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPointToStart(module.getBody());
    shard::GridOp grid =
        shared ? existing : shard::GridOp::create(mb, loc, kGrid, gridShape);
    const SmallVector<int16_t> axes = dataParallelAxes(grid);
    mb.setInsertionPoint(grad);
    // The plan megagraph-compile attached (it may have more axes, e.g. cp)
    // stays; a module without one gets this pass's.
    if (!module->getAttrOfType<gt::PlanAttr>("gt.plan"))
      module->setAttr("gt.plan",
                      gt::PlanAttr::get(mb.getContext(), dp, /*pp=*/1,
                                        /*cp=*/1, /*microBatches=*/1, zero,
                                        /*recompute=*/false, "allgather",
                                        /*stages=*/{}, /*mop=*/1, /*gp=*/1,
                                        /*moa=*/false, /*chunks=*/1));

    // 2. The local count n of labelled items (1 without a label_mask). With
    //    zero=0 and zero>=2 the gradient buckets are all-reduced or
    //    reduce-scattered inside the backward, so the count they are
    //    weighted by comes first.
    const bool inBackward = zero != 1;
    if (inBackward)
      b.setInsertionPointToStart(&body);
    Value count;
    for (BlockArgument arg : grad.getArguments()) {
      auto name = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    gt::kTensorNameAttr);
      if (!name || name.getValue() != abi::kLabelMask)
        continue;
      auto t = cast<RankedTensorType>(arg.getType());
      Value m = tosa::CastOp::create(b, loc, h.f32(t.getShape()), arg);
      m = h.flatten(m);
      count = tosa::ReduceSumOp::create(b, loc, h.f32({1}), m,
                                        b.getI32IntegerAttr(0));
    }
    if (!count)
      count = tosa::ConstOp::create(
          b, loc, h.f32({1}),
          DenseElementsAttr::get(h.f32({1}), b.getF32FloatAttr(1.0f)));
    b.setInsertionPoint(ret);

    // 3. The pieces: the count, then each reduced result.
    SmallVector<Piece> pieces;
    pieces.push_back({count, count, h.f32({1}), -1, false});
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto name = grad.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
      if (!name)
        continue;
      StringRef n = name.getValue();
      const bool isGrad = abi::isGradientName(n);
      bool weighted = n == abi::kLoss || (isGrad && !presummed);
      if (!weighted && n != abi::kCorrect && n != abi::kEvalCorrect && !isGrad)
        continue;
      auto t = dyn_cast<RankedTensorType>(value.getType());
      if (!t || !t.hasStaticShape() || !t.getElementType().isF32()) {
        grad.emitError() << "gt-data-parallel: result '" << n
                         << "' must be a static f32 tensor, got "
                         << value.getType();
        return signalPassFailure();
      }
      // zero=0 and zero>=2 flatten a gradient where its bucket is sent.
      Value flat;
      if (!inBackward || !isGrad)
        flat = h.flatten(weighted ? h.mulScalar(value, count) : value);
      pieces.push_back({value, flat, t, static_cast<int>(i), weighted,
                        abi::parameterOfGradient(n)});
      if (isGrad)
        ++numGradients;
    }

    // 4. Buckets: consecutive pieces up to bucketBytes; a piece that large
    //    travels alone. With zero>=1 the gradients start a new bucket, since
    //    they are reduce-scattered and the rest all-reduced. With zero=0
    //    and zero>=2 the gradients go in the order the backward produces
    //    them. zero=0 holds every full gradient anyway, so its buckets are
    //    filled up to bucketBytes (as DDP's): fewer collectives, each
    //    started as soon as its last gradient exists. With zero>=2 each
    //    weight matrix (rank >= 2) also starts a bucket: a bucket is one
    //    layer, its weight and the vectors (bias, norm scales) produced
    //    after it, so that its full-size gradients die at its
    //    reduce-scatter.
    const int64_t cap = bucketBytes / 4;
    SmallVector<SmallVector<Piece *>> buckets;
    auto pack = [&](ArrayRef<Piece *> order, bool byLayer) {
      buckets.emplace_back();
      int64_t filled = 0;
      for (Piece *p : order) {
        int64_t n = p->type.getNumElements();
        const bool open = !buckets.back().empty();
        const bool firstGrad = zero && !p->param.empty() && open &&
                               buckets.back().back()->param.empty();
        const bool newLayer = byLayer && open && p->type.getRank() >= 2;
        if (open && (n >= cap || filled + n > cap || firstGrad || newLayer)) {
          buckets.emplace_back();
          filled = 0;
        }
        p->bucket = buckets.size() - 1;
        p->offset = filled;
        buckets.back().push_back(p);
        filled += n;
        if (n >= cap) {
          buckets.emplace_back();
          filled = 0;
        }
      }
      if (buckets.back().empty())
        buckets.pop_back();
    };
    SmallVector<Piece *> rest, grads;
    for (Piece &p : pieces)
      (inBackward && !p.param.empty() ? grads : rest).push_back(&p);
    pack(rest, /*byLayer=*/false);
    if (!grads.empty()) {
      // Production order: the position in the body of the op defining the
      // gradient (block arguments and early constants first).
      llvm::DenseMap<Operation *, int64_t> position;
      for (auto [k, op] : llvm::enumerate(body))
        position[&op] = k;
      auto producedAt = [&](Piece *p) -> int64_t {
        Operation *def = p->value.getDefiningOp();
        if (!def)
          return -1;
        return position.lookup(body.findAncestorOpInBlock(*def));
      };
      llvm::stable_sort(grads, [&](Piece *x, Piece *y) {
        return producedAt(x) < producedAt(y);
      });
      pack(grads, /*byLayer=*/zero >= 2);
    }

    // 5. One sum all-reduce per bucket, then the slices; with zero>=1 one
    //    reduce-scatter per gradient bucket (padded to a multiple of dp),
    //    whose shard the optimizer updates (see gt-zero-gather).
    struct ZeroBucket {
      SmallVector<Piece *> pieces;
      Value shard;
      int64_t padded;
    };
    SmallVector<ZeroBucket> zeroBuckets;
    Operation *lastCollective = nullptr;
    // zero=0 and zero>=2: a gradient bucket goes right after its last
    // gradient (and the count, and the previous bucket's collective, to
    // keep their order), where its pieces are flattened.
    auto placeInBackward = [&](ArrayRef<Piece *> bucket) {
      Operation *after =
          lastCollective ? lastCollective : count.getDefiningOp();
      for (Piece *p : bucket)
        if (Operation *def = p->value.getDefiningOp()) {
          Operation *top = body.findAncestorOpInBlock(*def);
          if (after->isBeforeInBlock(top))
            after = top;
        }
      b.setInsertionPointAfter(after);
      for (Piece *p : bucket)
        p->flat =
            h.flatten(p->weighted ? h.mulScalar(p->value, count) : p->value);
    };
    for (SmallVector<Piece *> &bucket : buckets) {
      const bool gradBucket = !bucket.front()->param.empty();
      if (zero && gradBucket) {
        if (zero >= 2)
          placeInBackward(bucket);
        SmallVector<Value> flats;
        int64_t total = 0;
        for (Piece *p : bucket) {
          flats.push_back(p->flat);
          total += p->type.getNumElements();
        }
        const int64_t pad = (shards - total % shards) % shards;
        if (pad)
          flats.push_back(tosa::ConstOp::create(
              b, loc, h.f32({pad}),
              DenseElementsAttr::get(h.f32({pad}), b.getF32FloatAttr(0.f))));
        Value packed =
            flats.size() == 1
                ? flats.front()
                : tosa::ConcatOp::create(b, loc, h.f32({total + pad}), flats,
                                         b.getI32IntegerAttr(0))
                      .getResult();
        auto scatter = shard::ReduceScatterOp::create(
            b, loc, h.f32({(total + pad) / shards}), kGrid, axes, packed,
            shard::ReductionKind::Sum, APInt(64, 0));
        // zero>=2: the bucket's transfer runs while the backward computes
        // the next buckets' gradients (gt-shard-to-runtime).
        if (zero >= 2)
          scatter->setAttr(gt::kOverlapAttr, b.getUnitAttr());
        Value shard = scatter;
        zeroBuckets.push_back({bucket, shard, total + pad});
        lastCollective = shard.getDefiningOp();
        ++numBuckets;
        b.setInsertionPoint(ret);
        continue;
      }
      // zero=0: a gradient bucket is all-reduced inside the backward and
      // moves while the backward computes the next buckets' gradients
      // (gt.overlap); its slices are read at the end.
      const bool overlap = inBackward && gradBucket;
      if (overlap)
        placeInBackward(bucket);
      SmallVector<Value> flats;
      int64_t total = 0;
      for (Piece *p : bucket) {
        flats.push_back(p->flat);
        total += p->type.getNumElements();
      }
      Value packed = flats.size() == 1
                         ? flats.front()
                         : tosa::ConcatOp::create(b, loc, h.f32({total}), flats,
                                                  b.getI32IntegerAttr(0))
                               .getResult();
      auto reduce =
          shard::AllReduceOp::create(b, loc, packed.getType(), kGrid, axes,
                                     packed, shard::ReductionKind::Sum);
      Value sum = reduce;
      if (overlap) {
        reduce->setAttr(gt::kOverlapAttr, b.getUnitAttr());
        lastCollective = reduce;
        b.setInsertionPoint(ret);
      }
      for (Piece *p : bucket)
        p->reduced = bucket.size() == 1
                         ? sum
                         : h.slice(sum, p->offset, p->type.getNumElements());
      ++numBuckets;
    }

    // 6. Divide the weighted sums by the global count; restore the shapes.
    Value inv =
        tosa::ReciprocalOp::create(b, loc, h.f32({1}), pieces.front().reduced);
    SmallVector<Value> results(ret.getOperands());
    for (Piece &p : llvm::drop_begin(pieces)) {
      if (!p.reduced)
        continue; // in a zero bucket
      Value v = p.weighted ? h.mulScalar(p.reduced, inv) : p.reduced;
      results[p.result] = h.reshape(v, p.type.getShape());
    }
    if (zeroBuckets.empty()) {
      ret->setOperands(results);
      return;
    }

    // 7. zero>=1: the bucket's gradient shard replaces its parameters'
    //    gradients, named after a new global `gt.zero.bucket<k>` that stands
    //    for this rank's shard of the packed parameters (gt-optimizer keeps
    //    its moments at the shard's size; gt-zero-gather then loads the
    //    shard from the parameters and all-gathers the update).
    llvm::SmallDenseSet<int> dropped;
    SmallVector<Value> newResults;
    SmallVector<DictionaryAttr> newAttrs;
    for (auto [k, zb] : llvm::enumerate(zeroBuckets)) {
      std::string name = bucketPrefix + std::to_string(k);
      auto type = h.f32({zb.padded / shards});
      SmallVector<FlatSymbolRefAttr> params;
      SmallVector<int64_t> sizes;
      for (Piece *p : zb.pieces) {
        dropped.insert(p->result);
        params.push_back(FlatSymbolRefAttr::get(&getContext(), p->param));
        sizes.push_back(p->type.getNumElements());
        if (!module.lookupSymbol<ml_program::GlobalOp>(p->param)) {
          grad.emitError() << "gt-data-parallel: gradient 'grad:" << p->param
                           << "' names no parameter global";
          return signalPassFailure();
        }
      }
      auto global = ml_program::GlobalOp::create(
          mb, loc, name, type, /*is_mutable=*/true,
          DenseElementsAttr::get(type, mb.getF32FloatAttr(0.f)),
          mb.getStringAttr("private"));
      global->setAttr(
          gt::kZeroShardAttr,
          gt::ZeroShardAttr::get(&getContext(), params, sizes, zb.padded));
      // Presummed gradients (cp) are already those of the global mean.
      newResults.push_back(
          zb.pieces.front()->weighted ? h.mulScalar(zb.shard, inv) : zb.shard);
      newAttrs.push_back(mb.getDictionaryAttr({mb.getNamedAttr(
          gt::kTensorNameAttr, mb.getStringAttr(abi::gradientName(name)))}));
    }
    SmallVector<Value> kept;
    SmallVector<DictionaryAttr> keptAttrs;
    for (auto [i, v] : llvm::enumerate(results)) {
      if (dropped.contains(static_cast<int>(i)))
        continue;
      kept.push_back(v);
      keptAttrs.push_back(grad.getResultAttrDict(i));
    }
    llvm::append_range(kept, newResults);
    llvm::append_range(keptAttrs, newAttrs);
    func::ReturnOp::create(b, ret.getLoc(), kept);
    ret.erase();
    SmallVector<Type> types;
    for (Value v : kept)
      types.push_back(v.getType());
    grad.setType(
        FunctionType::get(&getContext(), grad.getArgumentTypes(), types));
    grad.setAllResultAttrs(keptAttrs);
  }
};

} // namespace
