//===- GTZeroGather.cpp - ZeRO-1 parameter shards -> parameters -*- C++ -*-===//
//
// Part of MegaGraph. Completes gt-data-parallel{zero=1} after gt-optimizer:
// the optimizer updated `@gt.zero.bucket<k>`, a stand-in for this rank's
// 1/dp shard of a bucket of packed parameters, with moments of the shard's
// size. Here its loads become the shard cut from the current parameters
// (shard.all_slice, local) and its store becomes an all-gather of the
// updated shard whose slices are stored into the parameters. So every rank
// keeps all parameters but only 1/dp of the optimizer state.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "megagraph/Passes/Passes.h"

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

constexpr StringLiteral kGrid = "gt_dp";

RankedTensorType f32(OpBuilder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  ImplicitLocOpBuilder ib(loc, b);
  return tosa::ReshapeOp::create(b, loc, t.clone(shape), v,
                                 tosa::getTosaConstShape(ib, shape));
}

/// One bucket: its parameters and their sizes, from `gt.zero_shard`.
struct Bucket {
  ml_program::GlobalOp global;
  SmallVector<ml_program::GlobalOp> params;
  SmallVector<int64_t> sizes;
  int64_t padded = 0;
};

struct GTZeroGatherPass : megagraph::impl::GTZeroGatherBase<GTZeroGatherPass> {
  using GTZeroGatherBase::GTZeroGatherBase;

  LogicalResult readBucket(ModuleOp module, ml_program::GlobalOp g,
                           Bucket &out) {
    auto info = g->getAttrOfType<DictionaryAttr>("gt.zero_shard");
    auto params = info.getAs<ArrayAttr>("params");
    auto sizes = info.getAs<ArrayAttr>("sizes");
    auto padded = info.getAs<IntegerAttr>("padded");
    if (!params || !sizes || !padded || params.size() != sizes.size())
      return g.emitError("gt-zero-gather: malformed gt.zero_shard (needs "
                         "params, sizes, padded)");
    out.global = g;
    out.padded = padded.getInt();
    int64_t total = 0;
    for (auto [p, s] : llvm::zip(params, sizes)) {
      auto ref = dyn_cast<FlatSymbolRefAttr>(p);
      auto param =
          ref ? module.lookupSymbol<ml_program::GlobalOp>(ref) : nullptr;
      auto size = dyn_cast<IntegerAttr>(s);
      if (!param || !size)
        return g.emitError("gt-zero-gather: gt.zero_shard names no parameter "
                           "global ")
               << p;
      auto type = dyn_cast<RankedTensorType>(param.getType());
      if (!type || type.getNumElements() != size.getInt() ||
          !type.getElementType().isF32())
        return g.emitError("gt-zero-gather: parameter ")
               << p << " is not an f32 tensor of " << size.getInt()
               << " elements";
      out.params.push_back(param);
      out.sizes.push_back(size.getInt());
      total += size.getInt();
    }
    auto shardType = dyn_cast<RankedTensorType>(g.getType());
    if (total > out.padded || !shardType || shardType.getRank() != 1 ||
        out.padded % shardType.getNumElements() != 0)
      return g.emitError("gt-zero-gather: the shard's size does not divide "
                         "the padded bucket");
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // 1. The buckets.
    SmallVector<Bucket> buckets;
    for (auto g : module.getOps<ml_program::GlobalOp>())
      if (g->hasAttr("gt.zero_shard")) {
        Bucket bucket;
        if (failed(readBucket(module, g, bucket)))
          return signalPassFailure();
        buckets.push_back(bucket);
      }
    if (buckets.empty())
      return;
    if (!module.lookupSymbol<shard::GridOp>(kGrid)) {
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

    for (Bucket &bk : buckets) {
      StringAttr name = bk.global.getSymNameAttr();
      auto shardType = cast<RankedTensorType>(bk.global.getType());
      const int64_t total =
          std::accumulate(bk.sizes.begin(), bk.sizes.end(), int64_t(0));
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
        Value packed =
            flats.size() == 1
                ? flats.front()
                : tosa::ConcatOp::create(b, loc, f32(b, {bk.padded}), flats,
                                         b.getI32IntegerAttr(0))
                      .getResult();
        Value shard = shard::AllSliceOp::create(b, loc, shardType, packed,
                                                kGrid, ArrayRef<int16_t>{0}, 0);
        load.getResult().replaceAllUsesWith(shard);
        load.erase();
      }
      // 3. The store: all-gather the updated shards into the parameters.
      ml_program::GlobalStoreOp store = stores.front();
      OpBuilder b(store);
      Location loc = store.getLoc();
      Value all = shard::AllGatherOp::create(b, loc, f32(b, {bk.padded}), kGrid,
                                             ArrayRef<int16_t>{0},
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
      // 4. The stand-in global goes.
      bk.global.erase();
    }
  }
};

} // namespace
