//===- GTOptimizer.cpp - Parameter updates from gradients -------*- C++ -*-===//
//
// Part of MegaGraph. Turns the gradient function built by gt-autodiff
// (@main_grad: inputs, labels, label_mask -> loss, correct, grad:<param>...)
// into the training step @main: each gradient updates its parameter global
// in place (ml_program.global_store) with SGD or AdamW, and the step returns
// only the loss and the correct count. AdamW keeps its moments in new
// zero-initialized globals `<param>.adam_m` / `.adam_v` and the step count
// in `gt.adam_step`, so the executable carries all training state.
//
// Every ml_program.global_store is emitted at the end of the step, after the
// last read of any state. This is required for correctness, not style: the
// upstream bufferization model of global_store (LLVM 22) declares its operand
// written and *not read*. So when a stored tensor is still read afterwards
// (m_t for mhat, v_t for vhat, t for the bias corrections), one-shot
// bufferization stores a fresh buffer "out of place" without copying the
// data: uninitialized memory reached the moment globals. That was the AdamW
// NaN on the Graphormer-style model. Stores placed last have no later
// readers, so they bufferize in place (a memcpy of the computed value into
// the global), and no forward load can see a parameter overwritten in the
// same step.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace megagraph {
#define GEN_PASS_DEF_GTOPTIMIZER
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-optimizer"

using namespace mlir;
using namespace megagraph;

namespace {

/// Elementwise TOSA helpers on same-rank operands (constants are splats of
/// unit dims, which broadcast).
struct Updater {
  OpBuilder &b;
  Location loc;

  RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  Value splat(Value like, double value) {
    RankedTensorType t = typeOf(like);
    auto s = RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1),
                                   t.getElementType());
    return tosa::ConstOp::create(
        b, loc, s,
        DenseElementsAttr::get(s, b.getFloatAttr(t.getElementType(), value)));
  }
  Value add(Value x, Value y) {
    return tosa::AddOp::create(b, loc, x.getType(), x, y);
  }
  Value sub(Value x, Value y) {
    return tosa::SubOp::create(b, loc, x.getType(), x, y);
  }
  Value mul(Value x, Value y) {
    auto i8 = RankedTensorType::get({1}, b.getI8Type());
    Value shift = tosa::ConstOp::create(
        b, loc, i8, DenseElementsAttr::get(i8, b.getI8IntegerAttr(0)));
    Type t =
        typeOf(x).getRank() >= typeOf(y).getRank() ? x.getType() : y.getType();
    return tosa::MulOp::create(b, loc, t, x, y, shift);
  }
  Value scale(Value x, double c) { return mul(x, splat(x, c)); }
  Value reshape(Value v, Type to) {
    auto t = cast<RankedTensorType>(to);
    ImplicitLocOpBuilder ib(loc, b);
    return tosa::ReshapeOp::create(b, loc, t, v,
                                   tosa::getTosaConstShape(ib, t.getShape()));
  }
};

/// Creates (once) a mutable zero-initialized global like `type`.
ml_program::GlobalOp zeroGlobal(ModuleOp module, OpBuilder &mb, StringRef name,
                                RankedTensorType type) {
  if (auto g = module.lookupSymbol<ml_program::GlobalOp>(name))
    return g;
  auto zero =
      DenseElementsAttr::get(type, mb.getFloatAttr(type.getElementType(), 0.0));
  auto g = ml_program::GlobalOp::create(mb, module.getLoc(), name, type,
                                        /*is_mutable=*/true, zero,
                                        mb.getStringAttr("private"));
  g->setAttr("gt.optimizer_state", mb.getUnitAttr());
  return g;
}

struct GTOptimizerPass : megagraph::impl::GTOptimizerBase<GTOptimizerPass> {
  using GTOptimizerBase::GTOptimizerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grad = module.lookupSymbol<func::FuncOp>("main_grad");
    if (!grad) {
      module.emitError("gt-optimizer needs the gradient function @main_grad "
                       "(run gt-autodiff first)");
      return signalPassFailure();
    }
    if (optimizer != "sgd" && optimizer != "adamw") {
      module.emitError() << "unknown optimizer '" << optimizer
                         << "'; use sgd or adamw";
      return signalPassFailure();
    }
    if (learningRate <= 0.0 || weightDecay < 0.0) {
      module.emitError("the learning rate must be positive and the weight "
                       "decay non-negative");
      return signalPassFailure();
    }
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPoint(grad);
    Location loc = grad.getLoc();
    Updater u{b, loc};
    // (global, new value) pairs, stored after all the updates are computed.
    SmallVector<std::pair<FlatSymbolRefAttr, Value>> stores;

    // 1. The AdamW step counter t (incremented once per step).
    Value biasCorr1, biasCorr2;
    if (optimizer == "adamw") {
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      ml_program::GlobalOp step =
          zeroGlobal(module, mb, "gt.adam_step", scalar);
      Value t = ml_program::GlobalLoadOp::create(
          b, loc, scalar, FlatSymbolRefAttr::get(step.getSymNameAttr()));
      t = u.add(t, u.splat(t, 1.0));
      stores.push_back({FlatSymbolRefAttr::get(step.getSymNameAttr()), t});
      // 1 / (1 - beta^t) for both moments.
      auto corr = [&](double beta) {
        Value p = tosa::PowOp::create(b, loc, scalar, u.splat(t, beta), t);
        return tosa::ReciprocalOp::create(b, loc, scalar,
                                          u.sub(u.splat(t, 1.0), p))
            .getResult();
      };
      biasCorr1 = corr(beta1);
      biasCorr2 = corr(beta2);
    }

    DenseMap<StringAttr, Value> forwardLoads;
    for (auto load : body.getOps<ml_program::GlobalLoadOp>())
      forwardLoads.try_emplace(load.getGlobal().getLeafReference(),
                               load.getResult());

    // 2. One update per gradient result.
    SmallVector<Value> kept;
    SmallVector<DictionaryAttr> keptAttrs;
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto name = grad.getResultAttrOfType<StringAttr>(i, "gt.name");
      bool isGrad = name && abi::isGradientName(name.getValue());
      if (!isGrad || returnState) {
        kept.push_back(value);
        keptAttrs.push_back(grad.getResultAttrDict(i));
      }
      if (!isGrad)
        continue;
      StringRef param = name.getValue().drop_front(5);
      auto global = module.lookupSymbol<ml_program::GlobalOp>(param);
      if (!global || !global.getIsMutable()) {
        grad.emitError() << "gradient '" << name.getValue()
                         << "' names no mutable parameter global";
        return signalPassFailure();
      }
      auto type = cast<RankedTensorType>(value.getType());
      auto ref = FlatSymbolRefAttr::get(global.getSymNameAttr());
      // Reuse the forward's load of the parameter: nothing stores to it
      // before the updates.
      Value w = forwardLoads.lookup(global.getSymNameAttr());
      if (!w)
        w = ml_program::GlobalLoadOp::create(b, loc, type, ref);
      Value g = value;
      Value step;
      if (optimizer == "sgd") {
        // w -= lr * (g + wd * w)
        Value dir = weightDecay > 0 ? u.add(g, u.scale(w, weightDecay)) : g;
        step = u.scale(dir, learningRate);
      } else {
        auto mg = zeroGlobal(module, mb, (param + ".adam_m").str(), type);
        auto vg = zeroGlobal(module, mb, (param + ".adam_v").str(), type);
        auto mref = FlatSymbolRefAttr::get(mg.getSymNameAttr());
        auto vref = FlatSymbolRefAttr::get(vg.getSymNameAttr());
        Value m = ml_program::GlobalLoadOp::create(b, loc, type, mref);
        Value v = ml_program::GlobalLoadOp::create(b, loc, type, vref);
        m = u.add(u.scale(m, beta1), u.scale(g, 1.0 - beta1));
        v = u.add(u.scale(v, beta2), u.scale(u.mul(g, g), 1.0 - beta2));
        stores.push_back({mref, m});
        stores.push_back({vref, v});
        // Decoupled weight decay: w -= lr * (mhat / (sqrt(vhat) + eps) + wd w)
        auto bcast = [&](Value s) {
          SmallVector<int64_t> ones(type.getRank(), 1);
          return u.reshape(s,
                           RankedTensorType::get(ones, type.getElementType()));
        };
        Value mhat = u.mul(m, bcast(biasCorr1));
        Value vhat = u.mul(v, bcast(biasCorr2));
        Value denom =
            u.add(tosa::PowOp::create(b, loc, type, vhat, u.splat(vhat, 0.5)),
                  u.splat(vhat, epsilon));
        Value dir =
            u.mul(mhat, tosa::ReciprocalOp::create(b, loc, type, denom));
        if (weightDecay > 0)
          dir = u.add(dir, u.scale(w, weightDecay));
        step = u.scale(dir, learningRate);
      }
      stores.push_back({ref, u.sub(w, step)});
      ++numUpdated;
    }
    for (auto [ref, value] : stores)
      ml_program::GlobalStoreOp::create(b, loc, ref, value);
    // Testing: what the globals hold after the step, loaded back after the
    // stores.
    if (returnState)
      for (auto [ref, value] : stores) {
        kept.push_back(
            ml_program::GlobalLoadOp::create(b, loc, value.getType(), ref));
        keptAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
            "gt.name", b.getStringAttr("state:" + ref.getValue().str()))));
      }

    // 3. The step returns the loss and the correct count only.
    func::ReturnOp::create(b, ret.getLoc(), kept);
    ret.erase();
    SmallVector<Type> types;
    for (Value v : kept)
      types.push_back(v.getType());
    grad.setType(
        FunctionType::get(&getContext(), grad.getArgumentTypes(), types));
    grad.setAllResultAttrs(keptAttrs);

    // 4. The training step is the module's entry point.
    if (auto main = module.lookupSymbol<func::FuncOp>("main"))
      main.erase();
    grad.setSymName("main");
    module->setAttr(
        "gt.training",
        mb.getDictionaryAttr(
            {mb.getNamedAttr("optimizer", mb.getStringAttr(optimizer)),
             mb.getNamedAttr("lr", mb.getF64FloatAttr(learningRate)),
             mb.getNamedAttr("weight_decay",
                             mb.getF64FloatAttr(weightDecay))}));
  }
};

} // namespace
