//===- GTAutodiff.cpp - Reverse-mode differentiation of @main ---*- C++ -*-===//
//
// Part of MegaGraph. Builds the gradient function of a model: a copy of
// @main extended with `labels`, `label_mask` and `eval_mask` arguments, the
// masked cross-entropy of the chosen output, and a reverse sweep that asks
// every op on a path from a parameter to the loss for its
// GradientOpInterface rule.
// The function returns the loss and one gradient per parameter global
// (`gt.param`), named `grad:<parameter>`, after the loss, the number of
// correctly classified labelled items (`correct`) and the number of correctly
// classified evaluation items (`eval_correct`, weighted by the f32
// `eval_mask`; the test split). Fan-out accumulates with tosa.add.
// The optimizer update (issue 5) consumes these gradients.
//
//===----------------------------------------------------------------------===//

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
      auto name = main.getArgAttrOfType<StringAttr>(i, "gt.name");
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
    resAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr("gt.name", b.getStringAttr(name))));
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
    auto name = main.getResultAttrOfType<StringAttr>(i, "gt.name");
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        "gt.name", b.getStringAttr(abi::cotangentName(
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
    //    label mask over the logits' items.
    OpBuilder b(ctx);
    b.setInsertionPointAfter(main);
    auto grad = cast<func::FuncOp>(b.clone(*main));
    grad.setSymName("main_grad");
    Block &body = grad.getBody().front();
    Location loc = grad.getLoc();
    ArrayRef<int64_t> items = logitsType.getShape().drop_back();
    Value labels =
        body.addArgument(RankedTensorType::get(items, b.getI64Type()), loc);
    Value mask =
        body.addArgument(RankedTensorType::get(items, b.getI1Type()), loc);
    // The evaluation (test-split) mask: which items eval_correct counts.
    Value evalMask = body.addArgument(
        RankedTensorType::get(items, logitsType.getElementType()), loc);
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    Value loss = gt::CrossEntropyOp::create(b, loc, ret.getOperand(output),
                                            labels, mask);

    // 2. Values that depend on a parameter (or on an input marked
    //    `gt.differentiable`): only their producers need rules.
    SmallVector<Value> diffInputs;
    SmallVector<std::string> diffNames;
    collectDifferentiableInputs(main, body, diffInputs, diffNames);
    DenseSet<Value> dependsOnParam = dependents(body, diffInputs);

    // 3. Reverse sweep from the loss.
    DenseMap<Value, Value> grads;
    grads[loss] =
        main->hasAttr(kContextParallelSeedAttr)
            ? buildContextParallelLossSeed(b, loc, mask, loss.getType())
            : splat(b, loc, loss.getType(), 1.0);
    if (failed(reverseSweep(b, loc, body, ret, dependsOnParam, grads)))
      return signalPassFailure();

    // 4. Count the correctly classified items (argmax == label) among the
    //    labelled ones (the training log's accuracy) and among the
    //    evaluation ones (test accuracy), both from the forward logits, i.e.
    //    before any update of this step.
    Value logits = ret.getOperand(output);
    Value correct = countCorrect(b, loc, logits, labels, mask);
    Value evalCorrect = countCorrect(b, loc, logits, labels, evalMask);

    // 5. Return the loss, the counts and the parameter gradients.
    unsigned numArgs = body.getNumArguments();
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i + 3 < numArgs; ++i)
      argAttrs.push_back(main.getArgAttrDict(i));
    for (StringRef name : {abi::kLabels, abi::kLabelMask, abi::kEvalMask})
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("gt.name", b.getStringAttr(name))));
    finishGradient(
        b, loc, grad, ret, {loss, correct, evalCorrect},
        {abi::kLoss.str(), abi::kCorrect.str(), abi::kEvalCorrect.str()},
        diffInputs, diffNames, grads, argAttrs);

    // 6. Optionally make it the module's entry point.
    if (replaceMain) {
      main.erase();
      grad.setSymName("main");
    }
  }
};

} // namespace
