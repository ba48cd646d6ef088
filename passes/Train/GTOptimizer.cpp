//===- GTOptimizer.cpp - Parameter updates from gradients -------*- C++ -*-===//
//
// Part of MegaGraph. Turns the gradient function built by gt-autodiff
// (@main_grad: inputs, labels, label_mask -> loss, correct, grad:<param>...)
// into the training step @main: each gradient updates its parameter global
// in place (ml_program.global_store) and the step returns only the loss and
// the correct count. The recipes are PyTorch 1.13's: torch.optim.SGD
// (momentum, dampening, Nesterov, L2 weight decay), torch.optim.Adam (L2
// weight decay) and torch.optim.AdamW (decoupled), an LR schedule as
// torch.optim.lr_scheduler.LambdaLR with the Hugging Face transformers
// warmup/decay factors, and torch.nn.utils.clip_grad_norm_. All training
// state lives in zero-initialized globals, so the executable carries it and
// the runtime needs to know nothing about the recipe: the step counter
// `gt.step` (steps done; the schedule and the bias corrections read it), the
// Adam moments `<param>.adam_m` / `.adam_v` and the SGD momentum buffers
// `<param>.momentum_buffer`.
//
// Each update's ml_program.global_stores are emitted right after that
// update (a parameter, or a packed group of them) is computed, after the
// last read of what they overwrite; the step counter, which every update
// reads, is stored last. The placement is required for correctness, not
// style: the upstream bufferization model of global_store (LLVM 22)
// declares its operand written and *not read*. So when a stored tensor is
// still read afterwards (m_t for mhat, v_t for vhat, t for the bias
// corrections), one-shot bufferization stores a fresh buffer "out of place"
// without copying the data: uninitialized memory reached the moment
// globals. That was the AdamW NaN on the Graphormer-style model. A store
// placed after its update has no later reader (the next updates read other
// globals, and the backward that reads the forward's parameter loads comes
// before every update), so it bufferizes in place: a memcpy of the computed
// value into the global. The new values then die at their update instead of
// all living until the end of the step, so the step holds one update's new
// weight and states at a time, not (1 + states) times every parameter.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>

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
  Value recip(Value x) {
    return tosa::ReciprocalOp::create(b, loc, x.getType(), x);
  }
  Value pow(Value x, Value y) {
    return tosa::PowOp::create(b, loc, x.getType(), x, y);
  }
  Value sqrt(Value x) { return pow(x, splat(x, 0.5)); }
  Value cos(Value x) { return tosa::CosOp::create(b, loc, x.getType(), x); }
  Value min(Value x, Value y) {
    return tosa::MinimumOp::create(b, loc, x.getType(), x, y);
  }
  Value max(Value x, Value y) {
    return tosa::MaximumOp::create(b, loc, x.getType(), x, y);
  }
  /// `x < y ? onTrue : onFalse`, elementwise.
  Value selectLess(Value x, Value y, Value onTrue, Value onFalse) {
    auto i1 = RankedTensorType::get(typeOf(x).getShape(), b.getI1Type());
    Value less = tosa::GreaterOp::create(b, loc, i1, y, x);
    return tosa::SelectOp::create(b, loc, onTrue.getType(), less, onTrue,
                                  onFalse);
  }
  Value reshape(Value v, Type to) {
    auto t = cast<RankedTensorType>(to);
    ImplicitLocOpBuilder ib(loc, b);
    return tosa::ReshapeOp::create(b, loc, t, v,
                                   tosa::getTosaConstShape(ib, t.getShape()));
  }
  /// `s` (any shape of one element) as unit dims of the rank of `like`.
  Value broadcastLike(Value s, Value like) {
    RankedTensorType t = typeOf(like);
    return reshape(s,
                   RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1),
                                         typeOf(s).getElementType()));
  }
  /// The sum of all elements of `v`, as a tensor<1xf32>.
  Value sumAll(Value v) {
    RankedTensorType t = typeOf(v);
    Value flat = reshape(
        v, RankedTensorType::get({t.getNumElements()}, t.getElementType()));
    auto one = RankedTensorType::get({1}, t.getElementType());
    return tosa::ReduceSumOp::create(b, loc, one, flat, b.getI32IntegerAttr(0));
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

/// A parameter the step updates: its global, its forward value and its
/// gradient.
struct ParamUpdate {
  StringRef name;
  FlatSymbolRefAttr ref;
  Value weight, grad;
};

struct GTOptimizerPass : megagraph::impl::GTOptimizerBase<GTOptimizerPass> {
  using GTOptimizerBase::GTOptimizerBase;

  /// Whether the options form a recipe torch.optim accepts (and the
  /// schedule's steps are consistent); reports the first violation.
  LogicalResult verifyOptions(ModuleOp module);
  /// Whether the step needs the step counter `gt.step`.
  bool needsCounter() const {
    return optimizer != "sgd" || lrSchedule != "constant" || warmupSteps > 0 ||
           (momentum > 0 && dampening > 0);
  }
  /// The LambdaLR factor f(s) of the schedule after `s` steps (a
  /// tensor<f32>).
  Value scheduleFactor(Updater &u, Value s);
  /// clip_grad_norm_'s coefficient min(1, max / (||g||_2 + 1e-6)) over all
  /// `params`' gradients (a tensor<1xf32>).
  Value clipCoefficient(Updater &u, ArrayRef<ParamUpdate> params);
  /// The suffixes of the recipe's per-parameter state globals.
  SmallVector<StringRef, 2> stateSuffixes() const {
    if (optimizer != "sgd")
      return {".adam_m", ".adam_v"};
    if (momentum > 0)
      return {".momentum_buffer"};
    return {};
  }
  /// The recipe on values of one shape: from weight `w`, gradient `g` and
  /// the old states (in stateSuffixes() order), the new states followed by
  /// the new weight. `lr` is the scheduled rate (a tensor<f32>, null for
  /// the constant `learningRate`), `t` the step number from 1 and `corr1`,
  /// `corr2` Adam's 1 / (1 - beta^t).
  SmallVector<Value> compute(Updater &u, Value w, Value g,
                             ArrayRef<Value> states, Value lr, Value t,
                             Value corr1, Value corr2);
  /// Appends the update of `group` to `stores`: one parameter on its own
  /// shape, or several flattened and concatenated, updated as one tensor
  /// (one loop) and sliced back.
  void update(Updater &u, ModuleOp module, OpBuilder &mb,
              ArrayRef<const ParamUpdate *> group, Value lr, Value t,
              Value corr1, Value corr2,
              SmallVectorImpl<std::pair<FlatSymbolRefAttr, Value>> &stores);

  void runOnOperation() override;
};

LogicalResult GTOptimizerPass::verifyOptions(ModuleOp module) {
  auto fail = [&](const auto &...parts) {
    InFlightDiagnostic diag = module.emitError("gt-optimizer: ");
    (diag << ... << parts);
    return failure();
  };
  const bool sgd = optimizer == "sgd";
  if (!sgd && optimizer != "adam" && optimizer != "adamw")
    return fail("unknown optimizer '", optimizer, "'; use sgd, adam or adamw");
  if (!(learningRate > 0.0))
    return fail("lr must be positive, got ", learningRate);
  if (!(weightDecay >= 0.0))
    return fail("weight-decay must be non-negative, got ", weightDecay);
  if (!(momentum >= 0.0 && momentum < 1.0))
    return fail("momentum must be in [0, 1), got ", momentum);
  if (!(dampening >= 0.0 && dampening <= 1.0))
    return fail("dampening must be in [0, 1], got ", dampening);
  if (!sgd && (momentum > 0.0 || dampening > 0.0 || nesterov))
    return fail("momentum, dampening and nesterov are sgd options, not ",
                optimizer, "'s");
  if (nesterov && (momentum == 0.0 || dampening != 0.0))
    return fail("nesterov needs momentum > 0 and dampening 0");
  if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0))
    return fail("beta1 and beta2 must be in [0, 1), got ", beta1, " and ",
                beta2);
  if (!(epsilon > 0.0))
    return fail("eps must be positive, got ", epsilon);
  if (packBelow < 0)
    return fail("pack-below must be non-negative, got ", int64_t(packBelow));

  const bool decays = lrSchedule != "constant";
  if (decays && lrSchedule != "linear" && lrSchedule != "cosine" &&
      lrSchedule != "polynomial")
    return fail("unknown lr-schedule '", lrSchedule,
                "'; use constant, linear, cosine or polynomial");
  if (warmupSteps < 0 || totalSteps < 0)
    return fail("warmup-steps and total-steps must be non-negative");
  if (decays && totalSteps == 0)
    return fail("lr-schedule=", lrSchedule, " needs total-steps > 0");
  if (totalSteps > 0 && warmupSteps > totalSteps)
    return fail("warmup-steps (", int64_t(warmupSteps),
                ") exceeds total-steps (", int64_t(totalSteps), ")");
  if (!(minLr >= 0.0))
    return fail("min-lr must be non-negative, got ", minLr);
  if (minLr > 0.0 && lrSchedule != "cosine" && lrSchedule != "polynomial")
    return fail("min-lr applies to the cosine and polynomial schedules only");
  if (lrSchedule == "cosine" && minLr > learningRate)
    return fail("min-lr (", minLr, ") exceeds lr (", learningRate, ")");
  if (lrSchedule == "polynomial" && !(minLr < learningRate))
    return fail("polynomial decay needs min-lr < lr, got min-lr ", minLr,
                " and lr ", learningRate);
  if (!(power > 0.0))
    return fail("power must be positive, got ", power);

  if (!(clipGradNorm >= 0.0))
    return fail("clip-grad-norm must be non-negative (0: off), got ",
                clipGradNorm);
  if (clipGradNorm > 0.0)
    if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan")) {
      if (plan.getPp() > 1)
        return fail("clip-grad-norm is not supported with pipeline stages "
                    "(pp > 1): each stage holds only its parameters' "
                    "gradients, and the global norm needs them all");
      if (plan.getDp() > 1 && plan.getZero() >= 1)
        return fail("clip-grad-norm is not supported with ZeRO (zero >= 1): "
                    "each rank holds a shard of the gradients, and the "
                    "global norm needs them all");
    }
  return success();
}

Value GTOptimizerPass::scheduleFactor(Updater &u, Value s) {
  const double warmup = std::max<int64_t>(1, warmupSteps);
  Value one = u.splat(s, 1.0);
  Value ramp = u.scale(s, 1.0 / warmup);
  Value decay = one;
  if (lrSchedule != "constant") {
    const double span = std::max<int64_t>(1, totalSteps - warmupSteps);
    // p = (s - W) / max(1, T - W); r = min-lr / lr.
    Value p = u.scale(u.sub(s, u.splat(s, double(warmupSteps))), 1.0 / span);
    const double r = minLr / learningRate;
    if (lrSchedule == "linear") {
      decay = u.max(u.sub(one, p), u.splat(s, 0.0));
    } else if (lrSchedule == "cosine") {
      Value c = u.scale(u.add(one, u.cos(u.scale(p, M_PI))), 0.5);
      decay = u.max(u.add(u.splat(s, r), u.scale(c, 1.0 - r)), u.splat(s, 0.0));
    } else {
      Value left = u.sub(one, u.min(p, one));
      decay = u.add(u.splat(s, r),
                    u.scale(u.pow(left, u.splat(s, power)), 1.0 - r));
    }
  }
  if (warmupSteps == 0)
    return decay;
  return u.selectLess(s, u.splat(s, double(warmupSteps)), ramp, decay);
}

Value GTOptimizerPass::clipCoefficient(Updater &u,
                                       ArrayRef<ParamUpdate> params) {
  Value sumSq;
  for (const ParamUpdate &p : params) {
    Value part = u.sumAll(u.mul(p.grad, p.grad));
    sumSq = sumSq ? u.add(sumSq, part) : part;
  }
  Value norm = u.sqrt(sumSq);
  Value coef = u.mul(u.splat(norm, clipGradNorm),
                     u.recip(u.add(norm, u.splat(norm, 1e-6))));
  return u.min(coef, u.splat(coef, 1.0));
}

SmallVector<Value> GTOptimizerPass::compute(Updater &u, Value w, Value g,
                                            ArrayRef<Value> states, Value lr,
                                            Value t, Value corr1, Value corr2) {
  auto timesLr = [&](Value x) {
    return lr ? u.mul(x, u.broadcastLike(lr, x)) : u.scale(x, learningRate);
  };
  SmallVector<Value> newStates;
  // L2 weight decay (sgd, adam) joins the gradient; adamw's is decoupled.
  if (weightDecay > 0 && optimizer != "adamw")
    g = u.add(g, u.scale(w, weightDecay));

  Value dir;
  if (optimizer == "sgd") {
    dir = g;
    if (momentum > 0) {
      // torch.optim.SGD: buf = g at step 1, then
      // buf = momentum * buf + (1 - dampening) * g. The buffer starts at 0,
      // so step 1 only differs with dampening: there the gradient's
      // coefficient is 1 - dampening * (1 - first), first = max(0, 2 - t).
      Value buf = states[0];
      Value gScaled = g;
      if (dampening > 0) {
        Value first = u.max(u.sub(u.splat(t, 2.0), t), u.splat(t, 0.0));
        Value c = u.sub(u.splat(t, 1.0),
                        u.scale(u.sub(u.splat(t, 1.0), first), dampening));
        gScaled = u.mul(g, u.broadcastLike(c, g));
      }
      buf = u.add(u.scale(buf, momentum), gScaled);
      newStates.push_back(buf);
      dir = nesterov ? u.add(g, u.scale(buf, momentum)) : buf;
    }
  } else {
    Value m = u.add(u.scale(states[0], beta1), u.scale(g, 1.0 - beta1));
    Value v =
        u.add(u.scale(states[1], beta2), u.scale(u.mul(g, g), 1.0 - beta2));
    newStates.push_back(m);
    newStates.push_back(v);
    // mhat / (sqrt(vhat) + eps)
    Value mhat = u.mul(m, u.broadcastLike(corr1, m));
    Value vhat = u.mul(v, u.broadcastLike(corr2, v));
    dir = u.mul(mhat, u.recip(u.add(u.sqrt(vhat), u.splat(vhat, epsilon))));
    if (optimizer == "adamw" && weightDecay > 0)
      dir = u.add(dir, u.scale(w, weightDecay));
  }
  newStates.push_back(u.sub(w, timesLr(dir)));
  return newStates;
}

void GTOptimizerPass::update(
    Updater &u, ModuleOp module, OpBuilder &mb,
    ArrayRef<const ParamUpdate *> group, Value lr, Value t, Value corr1,
    Value corr2, SmallVectorImpl<std::pair<FlatSymbolRefAttr, Value>> &stores) {
  SmallVector<StringRef, 2> suffixes = stateSuffixes();
  // Per parameter: the globals it stores (states, then the parameter, the
  // order of compute's results) and the operands (weight, gradient,
  // states).
  SmallVector<SmallVector<FlatSymbolRefAttr>> refs;
  SmallVector<SmallVector<Value>> olds;
  for (const ParamUpdate *p : group) {
    auto type = cast<RankedTensorType>(p->grad.getType());
    refs.emplace_back();
    olds.push_back({p->weight, p->grad});
    for (StringRef suffix : suffixes) {
      ml_program::GlobalOp g =
          zeroGlobal(module, mb, (p->name + suffix).str(), type);
      auto ref = FlatSymbolRefAttr::get(g.getSymNameAttr());
      refs.back().push_back(ref);
      olds.back().push_back(
          ml_program::GlobalLoadOp::create(u.b, u.loc, type, ref));
    }
    refs.back().push_back(p->ref);
  }
  auto computeOn = [&](ArrayRef<Value> in) {
    return compute(u, in[0], in[1], in.drop_front(2), lr, t, corr1, corr2);
  };
  if (group.size() == 1) {
    for (auto [ref, value] : llvm::zip_equal(refs[0], computeOn(olds[0])))
      stores.push_back({ref, value});
    return;
  }
  // Several: each operand (weight, gradient, states) of all the parameters
  // as one flat tensor, the recipe on those, and each result sliced back
  // to every parameter's shape. The recipe is elementwise, so every element
  // is computed exactly as on its own parameter.
  Type elementType =
      cast<RankedTensorType>(olds[0][0].getType()).getElementType();
  int64_t total = 0;
  SmallVector<int64_t> offsets;
  for (SmallVector<Value> &o : olds) {
    offsets.push_back(total);
    total += cast<RankedTensorType>(o[0].getType()).getNumElements();
  }
  auto flatType = RankedTensorType::get({total}, elementType);
  SmallVector<Value> flat;
  for (size_t k = 0; k < olds[0].size(); ++k) {
    SmallVector<Value> pieces;
    for (SmallVector<Value> &o : olds) {
      RankedTensorType type = u.typeOf(o[k]);
      pieces.push_back(u.reshape(
          o[k], RankedTensorType::get({type.getNumElements()}, elementType)));
    }
    flat.push_back(tosa::ConcatOp::create(u.b, u.loc, flatType, pieces,
                                          u.b.getI32IntegerAttr(0)));
  }
  SmallVector<Value> results = computeOn(flat);
  ImplicitLocOpBuilder ib(u.loc, u.b);
  for (auto [i, o] : llvm::enumerate(olds)) {
    RankedTensorType type = u.typeOf(o[0]);
    int64_t n = type.getNumElements();
    for (auto [ref, value] : llvm::zip_equal(refs[i], results)) {
      Value piece = tosa::SliceOp::create(
          u.b, u.loc, RankedTensorType::get({n}, elementType), value,
          tosa::getTosaConstShape(ib, {offsets[i]}),
          tosa::getTosaConstShape(ib, {n}));
      stores.push_back({ref, u.reshape(piece, type)});
    }
  }
}

void GTOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto grad = module.lookupSymbol<func::FuncOp>("main_grad");
  if (!grad) {
    module.emitError("gt-optimizer needs the gradient function @main_grad "
                     "(run gt-autodiff first)");
    return signalPassFailure();
  }
  if (failed(verifyOptions(module)))
    return signalPassFailure();
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  OpBuilder mb(module.getBodyRegion());
  mb.setInsertionPoint(grad);
  Location loc = grad.getLoc();
  Updater u{b, loc};
  // (global, new value) pairs: the step counter's, then each update's.
  SmallVector<std::pair<FlatSymbolRefAttr, Value>> stores;

  // 1. The step counter: s steps done before this one, t = s + 1.
  Value t, lr, corr1, corr2;
  if (needsCounter()) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    ml_program::GlobalOp step = zeroGlobal(module, mb, "gt.step", scalar);
    auto ref = FlatSymbolRefAttr::get(step.getSymNameAttr());
    Value s = ml_program::GlobalLoadOp::create(b, loc, scalar, ref);
    t = u.add(s, u.splat(s, 1.0));
    stores.push_back({ref, t});
    // 2. The scheduled rate of this step: LambdaLR's lr * f(s).
    if (lrSchedule != "constant" || warmupSteps > 0)
      lr = u.scale(scheduleFactor(u, s), learningRate);
    // Adam's bias corrections 1 / (1 - beta^t).
    if (optimizer != "sgd") {
      auto corr = [&](double beta) {
        return u.recip(u.sub(u.splat(t, 1.0), u.pow(u.splat(t, beta), t)));
      };
      corr1 = corr(beta1);
      corr2 = corr(beta2);
    }
  }

  // 3. The parameters and their gradients; the other results stay.
  DenseMap<StringAttr, Value> forwardLoads;
  for (auto load : body.getOps<ml_program::GlobalLoadOp>())
    forwardLoads.try_emplace(load.getGlobal().getLeafReference(),
                             load.getResult());
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  SmallVector<ParamUpdate> params;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto name = grad.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
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
    auto ref = FlatSymbolRefAttr::get(global.getSymNameAttr());
    // Reuse the forward's load of the parameter: nothing stores to it
    // before the updates.
    Value w = forwardLoads.lookup(global.getSymNameAttr());
    if (!w)
      w = ml_program::GlobalLoadOp::create(b, loc, value.getType(), ref);
    params.push_back({param, ref, w, value});
  }

  // 4. Gradient clipping by the global norm, then one update per parameter.
  if (clipGradNorm > 0 && !params.empty()) {
    Value coef = clipCoefficient(u, params);
    for (ParamUpdate &p : params)
      p.grad = u.mul(p.grad, u.broadcastLike(coef, p.grad));
  }
  // Parameters of fewer than `pack-below` elements are updated in groups
  // of up to `pack-below` elements, each group as one flat tensor: one
  // loop instead of one per bias or norm scale (less code to compile, fewer
  // loops to run), for a transient copy of the group's few elements. Not
  // under ZeRO, whose buckets are already flat.
  bool pack = packBelow > 1;
  if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan"))
    pack = pack && !(plan.getDp() > 1 && plan.getZero() >= 1);
  SmallVector<SmallVector<const ParamUpdate *>> groups;
  llvm::DenseMap<Type, size_t> openGroup; // element type -> group index
  llvm::DenseMap<Type, int64_t> openSize;
  for (const ParamUpdate &p : params) {
    auto type = cast<RankedTensorType>(p.grad.getType());
    int64_t n = type.getNumElements();
    ++numUpdated;
    if (!pack || !type.hasStaticShape() || n >= packBelow) {
      groups.push_back({&p});
      continue;
    }
    Type e = type.getElementType();
    auto it = openGroup.find(e);
    if (it == openGroup.end() || openSize[e] + n > packBelow) {
      openGroup[e] = groups.size();
      openSize[e] = 0;
      groups.emplace_back();
    }
    groups[openGroup[e]].push_back(&p);
    openSize[e] += n;
  }
  // Each update stores its new values right away (see the file comment);
  // what `stores` holds so far, the step counter, is stored last.
  const size_t counterStores = stores.size();
  for (ArrayRef<const ParamUpdate *> group : groups) {
    const size_t first = stores.size();
    update(u, module, mb, group, lr, t, corr1, corr2, stores);
    for (auto [ref, value] : ArrayRef(stores).slice(first))
      ml_program::GlobalStoreOp::create(b, loc, ref, value);
    if (group.size() > 1)
      numPacked += group.size();
  }
  for (auto [ref, value] : ArrayRef(stores).take_front(counterStores))
    ml_program::GlobalStoreOp::create(b, loc, ref, value);
  // Testing: what the globals hold after the step, loaded back after the
  // stores.
  if (returnState)
    for (auto [ref, value] : stores) {
      kept.push_back(
          ml_program::GlobalLoadOp::create(b, loc, value.getType(), ref));
      keptAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(gt::kTensorNameAttr,
                         b.getStringAttr("state:" + ref.getValue().str()))));
    }

  // 5. The step returns the loss and the correct count only.
  func::ReturnOp::create(b, ret.getLoc(), kept);
  ret.erase();
  SmallVector<Type> types;
  for (Value v : kept)
    types.push_back(v.getType());
  grad.setType(
      FunctionType::get(&getContext(), grad.getArgumentTypes(), types));
  grad.setAllResultAttrs(keptAttrs);

  // 6. The training step is the module's entry point.
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    main.erase();
  grad.setSymName("main");
  SmallVector<NamedAttribute> recipe = {
      mb.getNamedAttr("optimizer", mb.getStringAttr(optimizer)),
      mb.getNamedAttr("lr", mb.getF64FloatAttr(learningRate)),
      mb.getNamedAttr("weight_decay", mb.getF64FloatAttr(weightDecay)),
      mb.getNamedAttr("lr_schedule", mb.getStringAttr(lrSchedule))};
  if (clipGradNorm > 0)
    recipe.push_back(
        mb.getNamedAttr("clip_grad_norm", mb.getF64FloatAttr(clipGradNorm)));
  module->setAttr("gt.training", mb.getDictionaryAttr(recipe));
}

} // namespace
