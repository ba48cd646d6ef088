//===- GTAutodiff.cpp - Reverse-mode differentiation of @main ---*- C++ -*-===//
//
// Part of MegaGraph. Builds the gradient function of a model: a copy of
// @main extended with `labels`, `label_mask` (and, for classification,
// `eval_mask`) arguments, the masked mean loss of the chosen output
// (cross-entropy, nll, mse, l1 or bce_with_logits), and a reverse sweep that
// asks every op on a path from a parameter to the loss for its
// GradientOpInterface rule.
// The function returns the loss and one gradient per parameter global
// (`gt.param`), named `grad:<parameter>`, after the loss, the number of
// correctly classified labelled items (`correct`) and the number of correctly
// classified evaluation items (`eval_correct`, weighted by the f32
// `eval_mask`; the test split); these counts exist for the classification
// losses only. Fan-out accumulates with tosa.add. gt-optimizer consumes
// these gradients.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/ContextParallel.h"
#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

namespace megagraph {
#define GEN_PASS_DEF_GTAUTODIFF
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-autodiff"

using namespace mlir;
using namespace megagraph;

namespace {

/// A zero (or one) tensor of `type`.
Value splat(OpBuilder &b, Location loc, Type type, double value) {
  auto t = cast<RankedTensorType>(type);
  return tosa::ConstOp::create(
      b, loc, t,
      DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), value)));
}

/// Number (as f32) of items whose argmax over the last axis equals the label
/// among those the mask counts: `mask` is i1 (the label mask) or float (the
/// evaluation mask, a weight per item, 0 or 1).
Value countCorrect(OpBuilder &b, Location loc, Value logits, Value labels,
                   Value mask) {
  auto type = cast<RankedTensorType>(logits.getType());
  int64_t c = type.getShape().back(), n = 1;
  for (int64_t d : type.getShape().drop_back())
    n *= d;
  Type f = type.getElementType(), i32 = b.getI32Type(), i1 = b.getI1Type();
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getShape() == shape)
      return v;
    ImplicitLocOpBuilder ib(loc, b);
    return tosa::ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, t.getElementType()), v,
        tosa::getTosaConstShape(ib, shape));
  };
  Value flat = reshape(logits, {n, c});
  Value best = tosa::ArgMaxOp::create(b, loc, RankedTensorType::get({n}, i32),
                                      flat, b.getI32IntegerAttr(1));
  Value lab = tosa::CastOp::create(b, loc, RankedTensorType::get({n}, i32),
                                   reshape(labels, {n}));
  auto bools = RankedTensorType::get({n}, i1);
  auto floats = RankedTensorType::get({n}, f);
  Value hit = tosa::EqualOp::create(b, loc, bools, best, lab);
  Value ones;
  Value flatMask = reshape(mask, {n});
  if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1)) {
    hit = tosa::LogicalAndOp::create(b, loc, bools, hit, flatMask);
    ones = tosa::CastOp::create(b, loc, floats, hit);
  } else {
    auto i8 = RankedTensorType::get({1}, b.getI8Type());
    Value shift = tosa::ConstOp::create(
        b, loc, i8, DenseElementsAttr::get(i8, b.getI8IntegerAttr(0)));
    ones = tosa::MulOp::create(b, loc, floats,
                               tosa::CastOp::create(b, loc, floats, hit),
                               flatMask, shift);
  }
  Value sum = tosa::ReduceSumOp::create(b, loc, RankedTensorType::get({1}, f),
                                        ones, b.getI32IntegerAttr(0));
  return reshape(sum, {});
}

/// The losses of the `loss` option.
enum class LossKind { CrossEntropy, Nll, Mse, L1, BceWithLogits };

/// The loss named `name`, or nothing.
std::optional<LossKind> parseLoss(StringRef name) {
  return llvm::StringSwitch<std::optional<LossKind>>(name)
      .Case("cross_entropy", LossKind::CrossEntropy)
      .Case("nll", LossKind::Nll)
      .Case("mse", LossKind::Mse)
      .Case("l1", LossKind::L1)
      .Case("bce_with_logits", LossKind::BceWithLogits)
      .Default(std::nullopt);
}

/// Classification losses take class labels and report accuracy counts.
bool isClassification(LossKind kind) {
  return kind == LossKind::CrossEntropy || kind == LossKind::Nll;
}

/// TOSA builders for the loss formulas, on flat `[n, c]` tensors.
struct LossBuilder {
  OpBuilder &b;
  Location loc;

  RankedTensorType like(Value v, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(
        shape, cast<RankedTensorType>(v.getType()).getElementType());
  }
  ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value reshape(Value v, ArrayRef<int64_t> to) {
    if (shape(v) == to)
      return v;
    ImplicitLocOpBuilder ib(loc, b);
    return tosa::ReshapeOp::create(b, loc, like(v, to), v,
                                   tosa::getTosaConstShape(ib, to));
  }
  Value constant(Type elem, ArrayRef<int64_t> shape, double value) {
    return splat(b, loc, RankedTensorType::get(shape, elem), value);
  }
  Value mul(Value x, Value y) {
    auto i8 = RankedTensorType::get({1}, b.getI8Type());
    Value shift = tosa::ConstOp::create(
        b, loc, i8, DenseElementsAttr::get(i8, b.getI8IntegerAttr(0)));
    return tosa::MulOp::create(b, loc, x.getType(), x, y, shift);
  }
  Value sub(Value x, Value y) {
    return tosa::SubOp::create(b, loc, x.getType(), x, y);
  }
  Value add(Value x, Value y) {
    return tosa::AddOp::create(b, loc, x.getType(), x, y);
  }
  /// The sum of all elements of a rank-2 tensor, as `[1]`.
  Value sumAll(Value v) {
    ArrayRef<int64_t> s = shape(v);
    Value rows = tosa::ReduceSumOp::create(b, loc, like(v, {s[0], 1}), v,
                                           b.getI32IntegerAttr(1));
    Value all = tosa::ReduceSumOp::create(b, loc, like(v, {1, 1}), rows,
                                          b.getI32IntegerAttr(0));
    return reshape(all, {1});
  }
};

/// The masked mean loss `kind` of the prediction `pred` `[..., C]`: the sum
/// over the items `mask` (i1 `[...]`) counts, divided by the count (at least
/// 1) and, for the element-wise losses, by C, so that it equals torch's
/// `loss(pred[mask], labels[mask])` with `reduction='mean'`. `labels` are
/// class ids `[...]` (nll) or targets of `pred`'s shape (mse, l1,
/// bce_with_logits).
Value buildElementwiseLoss(OpBuilder &b, Location loc, LossKind kind,
                           Value pred, Value labels, Value mask) {
  LossBuilder lb{b, loc};
  auto type = cast<RankedTensorType>(pred.getType());
  Type f = type.getElementType();
  int64_t c = type.getShape().back(), n = type.getNumElements() / c;
  Value p = lb.reshape(pred, {n, c});
  Value m = tosa::CastOp::create(b, loc, RankedTensorType::get({n, 1}, f),
                                 lb.reshape(mask, {n, 1}));
  Value perElement; // [n, c], zero outside the counted items
  double perItem = c;
  switch (kind) {
  case LossKind::Nll: {
    // -p[label]: p times the one-hot of the label, masked.
    SmallVector<APInt> iota;
    for (int64_t j = 0; j < c; ++j)
      iota.push_back(APInt(32, j));
    auto i32Row = RankedTensorType::get({1, c}, b.getI32Type());
    Value classes = tosa::ConstOp::create(b, loc, i32Row,
                                          DenseElementsAttr::get(i32Row, iota));
    Value lab = tosa::CastOp::create(
        b, loc, RankedTensorType::get({n, 1}, b.getI32Type()),
        lb.reshape(labels, {n, 1}));
    Value hit = tosa::EqualOp::create(
        b, loc, RankedTensorType::get({n, c}, b.getI1Type()), lab, classes);
    Value oneHot =
        tosa::CastOp::create(b, loc, RankedTensorType::get({n, c}, f), hit);
    perElement =
        lb.mul(lb.mul(p, oneHot), lb.mul(m, lb.constant(f, {1, 1}, -1.0)));
    perItem = 1;
    break;
  }
  case LossKind::Mse: {
    Value d = lb.sub(p, lb.reshape(labels, {n, c}));
    perElement = lb.mul(lb.mul(d, d), m);
    break;
  }
  case LossKind::L1: {
    Value d = lb.sub(p, lb.reshape(labels, {n, c}));
    perElement =
        lb.mul(tosa::AbsOp::create(b, loc, d.getType(), d).getResult(), m);
    break;
  }
  case LossKind::BceWithLogits: {
    // torch's stable form: max(p, 0) - p y + log(1 + exp(-|p|)).
    Value y = lb.reshape(labels, {n, c});
    Value zero = lb.constant(f, {1, 1}, 0.0);
    Value relu = tosa::MaximumOp::create(b, loc, p.getType(), p, zero);
    Value absP = tosa::AbsOp::create(b, loc, p.getType(), p);
    Value negAbs = lb.mul(absP, lb.constant(f, {1, 1}, -1.0));
    Value softplus = tosa::LogOp::create(
        b, loc, p.getType(),
        lb.add(tosa::ExpOp::create(b, loc, p.getType(), negAbs),
               lb.constant(f, {1, 1}, 1.0)));
    perElement = lb.mul(lb.add(lb.sub(relu, lb.mul(p, y)), softplus), m);
    break;
  }
  case LossKind::CrossEntropy:
    llvm_unreachable("cross_entropy is gt.cross_entropy");
  }
  Value count = tosa::MaximumOp::create(b, loc, RankedTensorType::get({1}, f),
                                        lb.sumAll(m), lb.constant(f, {1}, 1.0));
  Value denom = lb.mul(count, lb.constant(f, {1}, perItem));
  Value mean = lb.mul(
      lb.sumAll(perElement),
      tosa::ReciprocalOp::create(b, loc, denom.getType(), denom).getResult());
  return lb.reshape(mean, {});
}

/// Values of `body` that depend on a parameter load or on one of `seeds`.
DenseSet<Value> dependents(Block &body, ArrayRef<Value> seeds) {
  DenseSet<Value> depends(seeds.begin(), seeds.end());
  for (Operation &op : body) {
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op)) {
      depends.insert(load.getResult());
      continue;
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return depends.contains(v); }))
      for (Value r : op.getResults())
        depends.insert(r);
  }
  return depends;
}

/// The reverse sweep over the ops of `body` before `end`, from the gradients
/// already in `grads`; accumulates operand gradients into `grads`.
LogicalResult reverseSweep(OpBuilder &b, Location loc, Block &body,
                           Operation *end, const DenseSet<Value> &depends,
                           DenseMap<Value, Value> &grads) {
  SmallVector<Operation *> forward;
  for (Operation &op : body) {
    if (&op == end)
      break;
    forward.push_back(&op);
  }
  for (Operation *op : llvm::reverse(forward)) {
    if (isa<ml_program::GlobalLoadOp>(op) ||
        llvm::none_of(op->getOperands(),
                      [&](Value v) { return depends.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      Value g = grads.lookup(r);
      any |= static_cast<bool>(g);
      resultGrads.push_back(g);
    }
    if (!any)
      continue;
    for (auto [r, g] : llvm::zip(op->getResults(), resultGrads))
      if (!g)
        g = splat(b, loc, r.getType(), 0.0);
    auto rule = dyn_cast<gt::GradientOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no gradient rule; gt-autodiff cannot "
                             "differentiate through it");
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradient(b, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !depends.contains(operand))
        continue;
      Value &slot = grads[operand];
      slot =
          slot
              ? tosa::AddOp::create(b, loc, slot.getType(), slot, g).getResult()
              : g;
    }
  }
  return success();
}

/// The arguments of `body` whose @main argument is marked
/// `gt.differentiable`, and the names of their gradients ("d<name>").
void collectDifferentiableInputs(func::FuncOp main, Block &body,
                                 SmallVectorImpl<Value> &inputs,
                                 SmallVectorImpl<std::string> &names) {
  // `body` may have more arguments than @main (labels, masks).
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (main.getArgAttr(i, "gt.differentiable")) {
      inputs.push_back(body.getArgument(i));
      auto name = main.getArgAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
      names.push_back(
          abi::cotangentName(name ? name.str() : "arg" + std::to_string(i)));
    }
}

/// Ends the gradient function `grad`: returns `results` (named `names`),
/// then the gradient of each of `inputs` (zero where none flows) and of each
/// parameter loaded in its body that has one ("grad:<param>"), and sets its
/// type and argument attributes.
void finishGradient(OpBuilder &b, Location loc, func::FuncOp grad,
                    func::ReturnOp ret, SmallVector<Value> results,
                    SmallVector<std::string> names, ArrayRef<Value> inputs,
                    ArrayRef<std::string> inputNames,
                    const DenseMap<Value, Value> &grads,
                    ArrayRef<DictionaryAttr> argAttrs) {
  Block &body = grad.getBody().front();
  for (auto [v, name] : llvm::zip(inputs, inputNames)) {
    Value g = grads.lookup(v);
    results.push_back(g ? g : splat(b, loc, v.getType(), 0.0));
    names.push_back(name);
  }
  for (auto load : body.getOps<ml_program::GlobalLoadOp>())
    if (Value g = grads.lookup(load.getResult())) {
      results.push_back(g);
      names.push_back(abi::gradientName(load.getGlobal().getLeafReference()));
    }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  grad.setType(
      FunctionType::get(b.getContext(), body.getArgumentTypes(), resultTypes));
  grad.setAllArgAttrs(argAttrs);
  SmallVector<DictionaryAttr> resAttrs;
  for (const std::string &name : names)
    resAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(gt::kTensorNameAttr, b.getStringAttr(name))));
  grad.setAllResultAttrs(resAttrs);
}

/// `cotangents` mode (pipeline stages): @main_grad(inputs..., d<result>...)
/// -> (d<input>... for the inputs marked `gt.differentiable`,
/// grad:<param>...), seeded with one cotangent per float result of @main.
LogicalResult buildCotangentGradient(ModuleOp module, func::FuncOp main) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(main);
  auto grad = cast<func::FuncOp>(b.clone(*main));
  grad.setSymName("main_grad");
  Block &body = grad.getBody().front();
  Location loc = grad.getLoc();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  SmallVector<Value> inputs;
  SmallVector<std::string> inputNames;
  collectDifferentiableInputs(main, body, inputs, inputNames);
  DenseSet<Value> depends = dependents(body, inputs);
  DenseMap<Value, Value> grads;
  SmallVector<DictionaryAttr> argAttrs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    argAttrs.push_back(main.getArgAttrDict(i));
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return main.emitError() << "result #" << i
                              << " is not a float tensor; cotangent seeds "
                                 "need float results",
             failure();
    Value cot = body.addArgument(type, loc);
    auto name = main.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        gt::kTensorNameAttr,
        b.getStringAttr(abi::cotangentName(
            name ? name.str() : "result" + std::to_string(i))))));
    Value &slot = grads[value];
    slot =
        slot ? tosa::AddOp::create(b, loc, type, slot, cot).getResult() : cot;
  }
  if (failed(reverseSweep(b, loc, body, ret, depends, grads)))
    return failure();
  finishGradient(b, loc, grad, ret, {}, {}, inputs, inputNames, grads,
                 argAttrs);
  return success();
}

struct GTAutodiffPass : megagraph::impl::GTAutodiffBase<GTAutodiffPass> {
  using GTAutodiffBase::GTAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || !main.getBody().hasOneBlock()) {
      module.emitError("gt-autodiff needs a single-block func.func @main");
      return signalPassFailure();
    }
    std::optional<LossKind> kind = parseLoss(loss);
    if (!kind) {
      module.emitError() << "unknown loss '" << loss
                         << "' (expected cross_entropy, nll, mse, l1 or "
                            "bce_with_logits)";
      return signalPassFailure();
    }
    if (!outputName.empty()) {
      std::string names;
      std::optional<unsigned> found;
      for (unsigned i = 0; i < main.getNumResults(); ++i) {
        auto name =
            main.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
        std::string text = name ? name.str() : "#" + std::to_string(i);
        names += (names.empty() ? "" : ", ") + text;
        if (name && name.getValue() == outputName)
          found = i;
      }
      if (!found) {
        main.emitError() << "loss output '" << outputName
                         << "' is not an output of the model (outputs: "
                         << names << ")";
        return signalPassFailure();
      }
      output = *found;
    }
    if (output >= main.getNumResults()) {
      main.emitError() << "output #" << static_cast<unsigned>(output)
                       << " does not exist (@main has " << main.getNumResults()
                       << " results)";
      return signalPassFailure();
    }
    if (cotangents) {
      if (failed(buildCotangentGradient(module, main)))
        return signalPassFailure();
      return;
    }
    auto logitsType = dyn_cast<RankedTensorType>(main.getResultTypes()[output]);
    if (!logitsType || !logitsType.hasStaticShape() ||
        logitsType.getRank() < 1 ||
        !isa<FloatType>(logitsType.getElementType())) {
      main.emitError() << "output #" << static_cast<unsigned>(output)
                       << " must be static float logits [..., C], got "
                       << main.getResultTypes()[output];
      return signalPassFailure();
    }

    // 1. The gradient function starts as a copy of @main with labels and a
    //    label mask over the prediction's items; classification also gets
    //    the evaluation mask of its accuracy count.
    OpBuilder b(ctx);
    b.setInsertionPointAfter(main);
    auto grad = cast<func::FuncOp>(b.clone(*main));
    grad.setSymName("main_grad");
    Block &body = grad.getBody().front();
    Location loc = grad.getLoc();
    ArrayRef<int64_t> items = logitsType.getShape().drop_back();
    const bool classes = isClassification(*kind);
    Value labels = body.addArgument(
        classes ? RankedTensorType::get(items, b.getI64Type()) : logitsType,
        loc);
    Value mask =
        body.addArgument(RankedTensorType::get(items, b.getI1Type()), loc);
    // The evaluation (test-split) mask: which items eval_correct counts.
    Value evalMask;
    if (classes)
      evalMask = body.addArgument(
          RankedTensorType::get(items, logitsType.getElementType()), loc);
    // The loss gradient the caller chooses (a pipeline's last stage).
    Value seed;
    if (seedInput)
      seed = body.addArgument(RankedTensorType::get({}, b.getF32Type()), loc);
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    Value pred = ret.getOperand(output);
    Value loss =
        *kind == LossKind::CrossEntropy
            ? gt::CrossEntropyOp::create(b, loc, pred, labels, mask).getResult()
            : buildElementwiseLoss(b, loc, *kind, pred, labels, mask);

    // 2. Values that depend on a parameter (or on an input marked
    //    `gt.differentiable`): only their producers need rules.
    SmallVector<Value> diffInputs;
    SmallVector<std::string> diffNames;
    collectDifferentiableInputs(main, body, diffInputs, diffNames);
    DenseSet<Value> dependsOnParam = dependents(body, diffInputs);

    // 3. Reverse sweep from the loss.
    DenseMap<Value, Value> grads;
    // A given seed (a pipeline stage's loss_seed input); otherwise ranks
    // that hold disjoint rows (cp; mop and gp, whose grid
    // gt.row_shard_grid names) seed with their share of the labelled rows.
    if (seed && seed.getType() != loss.getType())
      seed = tosa::CastOp::create(b, loc, loss.getType(), seed);
    if (seed)
      grads[loss] = seed;
    else if (main->hasAttr(kContextParallelSeedAttr))
      grads[loss] = buildContextParallelLossSeed(b, loc, mask, loss.getType());
    else if (auto grid = main->getAttrOfType<StringAttr>(gt::kRowShardGridAttr))
      grads[loss] = buildContextParallelLossSeed(b, loc, mask, loss.getType(),
                                                 grid.getValue(), {0});
    else
      grads[loss] = splat(b, loc, loss.getType(), 1.0);
    if (failed(reverseSweep(b, loc, body, ret, dependsOnParam, grads)))
      return signalPassFailure();

    // 4. Classification: count the correctly classified items (argmax ==
    //    label) among the labelled ones (the training log's accuracy) and
    //    among the evaluation ones (test accuracy), both from the forward
    //    logits, i.e. before any update of this step. Regression and binary
    //    losses have no such metric.
    SmallVector<Value> results = {loss};
    SmallVector<std::string> resultNames = {abi::kLoss.str()};
    SmallVector<StringRef> addedArgs = {abi::kLabels, abi::kLabelMask};
    if (classes) {
      results.push_back(countCorrect(b, loc, pred, labels, mask));
      results.push_back(countCorrect(b, loc, pred, labels, evalMask));
      resultNames.push_back(abi::kCorrect.str());
      resultNames.push_back(abi::kEvalCorrect.str());
      addedArgs.push_back(abi::kEvalMask);
    }
    if (seed)
      addedArgs.push_back(abi::kLossSeed);

    // 5. Return the loss, the counts and the parameter gradients.
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      argAttrs.push_back(main.getArgAttrDict(i));
    for (StringRef name : addedArgs)
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(gt::kTensorNameAttr, b.getStringAttr(name))));
    finishGradient(b, loc, grad, ret, results, resultNames, diffInputs,
                   diffNames, grads, argAttrs);
    // The number of classes the labels index, for the driver's range check.
    if (classes)
      grad->setAttr(abi::kNumClassesAttr,
                    b.getI64IntegerAttr(logitsType.getShape().back()));

    // 6. Optionally make it the module's entry point.
    if (replaceMain) {
      main.erase();
      grad.setSymName("main");
    }
  }
};

} // namespace
