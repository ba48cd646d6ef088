//===- GTPipelineTrain.cpp - Pipeline stage entry points --------*- C++ -*-===//
//
// Part of MegaGraph. Turns the stage functions of gt-pipeline-split into the
// entry points the driver's 1F1B schedule calls: per stage a forward, a
// backward (recomputing the forward from the stage inputs, then
// gt-autodiff's reverse sweep from the loss or from the cotangents of the
// stage outputs) and an optimizer update (gt-optimizer on the gradients
// accumulated over the micro-batches). gt-autodiff and gt-optimizer run
// unchanged on a temporary @main / @main_grad per stage.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

namespace megagraph {
#define GEN_PASS_DEF_GTPIPELINETRAIN
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-pipeline-train"

using namespace mlir;
using namespace megagraph;

namespace {

void markEntry(func::FuncOp fn, const Twine &entry) {
  fn->setAttr(gt::kPipelineEntryAttr,
              StringAttr::get(fn.getContext(), entry.str()));
}

Value zeros(OpBuilder &b, Location loc, Type type) {
  auto t = cast<RankedTensorType>(type);
  Attribute zero = isa<FloatType>(t.getElementType())
                       ? Attribute(b.getFloatAttr(t.getElementType(), 0.0))
                       : Attribute(b.getIntegerAttr(t.getElementType(), 0));
  return tosa::ConstOp::create(b, loc, t, DenseElementsAttr::get(t, zero));
}

/// Splits the backward `bwd` (gt-autodiff of `stage`: a clone of the stage's
/// ops, then the reverse sweep) at the end of the forward clone: the
/// forward values the sweep reads become results `saved<i>` of `fwd` and
/// arguments of `bwd`, whose forward clone is erased (parameter loads and
/// constants, free to redo, stay).
void stashActivations(func::FuncOp stage, func::FuncOp fwd, func::FuncOp bwd) {
  Block &sb = stage.getBody().front(), &bb = bwd.getBody().front(),
        &fb = fwd.getBody().front();
  const size_t numForward = sb.getOperations().size() - 1; // no return
  SmallVector<Operation *> forwardOps, fwdOps;
  for (Operation &op : bb) {
    if (forwardOps.size() == numForward)
      break;
    forwardOps.push_back(&op);
  }
  for (Operation &op : fb.without_terminator())
    fwdOps.push_back(&op);
  DenseSet<Operation *> inForward(forwardOps.begin(), forwardOps.end());
  // Free ops: no operand from a block argument, directly or not.
  DenseSet<Operation *> free;
  for (Operation *op : forwardOps)
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && free.contains(def);
        }))
      free.insert(op);
  OpBuilder b(bwd.getContext());
  SmallVector<Value> fwdResults(fb.getTerminator()->getOperands());
  SmallVector<DictionaryAttr> fwdAttrs;
  for (unsigned i = 0; i < fwd.getNumResults(); ++i)
    fwdAttrs.push_back(fwd.getResultAttrDict(i));
  SmallVector<DictionaryAttr> bwdArgAttrs;
  for (unsigned i = 0; i < bwd.getNumArguments(); ++i)
    bwdArgAttrs.push_back(bwd.getArgAttrDict(i));
  int saved = 0;
  for (auto [index, op] : llvm::enumerate(forwardOps)) {
    if (free.contains(op))
      continue;
    for (auto [r, result] : llvm::enumerate(op->getResults())) {
      bool usedLater = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !inForward.contains(bb.findAncestorOpInBlock(*user));
      });
      if (!usedLater)
        continue;
      Value arg = bb.addArgument(result.getType(), result.getLoc());
      result.replaceUsesWithIf(arg, [&](OpOperand &use) {
        return !inForward.contains(bb.findAncestorOpInBlock(*use.getOwner()));
      });
      auto name = b.getStringAttr(abi::savedName(saved++));
      bwdArgAttrs.push_back(
          b.getDictionaryAttr(b.getNamedAttr(gt::kTensorNameAttr, name)));
      fwdResults.push_back(fwdOps[index]->getResult(r));
      fwdAttrs.push_back(
          b.getDictionaryAttr(b.getNamedAttr(gt::kTensorNameAttr, name)));
    }
  }
  for (Operation *op : llvm::reverse(forwardOps))
    if (op->use_empty())
      op->erase();
  bwd.setType(FunctionType::get(bwd.getContext(), bb.getArgumentTypes(),
                                bwd.getResultTypes()));
  bwd.setAllArgAttrs(bwdArgAttrs);
  Operation *ret = fb.getTerminator();
  b.setInsertionPoint(ret);
  func::ReturnOp::create(b, ret->getLoc(), fwdResults);
  ret->erase();
  SmallVector<Type> types;
  for (Value v : fwdResults)
    types.push_back(v.getType());
  fwd.setType(
      FunctionType::get(fwd.getContext(), fwd.getArgumentTypes(), types));
  fwd.setAllResultAttrs(fwdAttrs);
}

struct GTPipelineTrainPass
    : megagraph::impl::GTPipelineTrainBase<GTPipelineTrainPass> {
  using GTPipelineTrainBase::GTPipelineTrainBase;

  /// gt-optimizer's options for every stage's update: this pass's recipe.
  GTOptimizerOptions optimizerOptions() const {
    GTOptimizerOptions opt;
    opt.optimizer = optimizer;
    opt.learningRate = learningRate;
    opt.weightDecay = weightDecay;
    opt.momentum = momentum;
    opt.dampening = dampening;
    opt.nesterov = nesterov;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.epsilon = epsilon;
    opt.lrSchedule = lrSchedule;
    opt.warmupSteps = warmupSteps;
    opt.totalSteps = totalSteps;
    opt.minLr = minLr;
    opt.power = power;
    opt.clipGradNorm = clipGradNorm;
    return opt;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto info = module->getAttrOfType<gt::PipelineAttr>(gt::kPipelineAttr);
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!info || !main) {
      module.emitError("gt-pipeline-train needs @main and the stage "
                       "functions of gt-pipeline-split");
      return signalPassFailure();
    }
    int64_t pp = info.getPp();
    int64_t mb = info.getMicroBatches();
    // Each stage's update sees only its own parameters' gradients.
    if (clipGradNorm > 0 && pp > 1) {
      module.emitError("gt-pipeline-train: clip-grad-norm is not supported "
                       "with pipeline stages (pp > 1): each stage holds only "
                       "its parameters' gradients, and the global norm needs "
                       "them all");
      return signalPassFailure();
    }
    if (dp < 1 || cp < 1 || zero < 0 || zero > 3) {
      module.emitError() << "gt-pipeline-train: needs dp >= 1, cp >= 1 and "
                            "zero 0, 1, 2 or 3, got dp="
                         << static_cast<int64_t>(dp)
                         << ", cp=" << static_cast<int64_t>(cp)
                         << ", zero=" << static_cast<int64_t>(zero);
      return signalPassFailure();
    }
    // The stages' updates reduce-scatter their gradients over the dp x cp
    // ranks that hold the stage's parameters.
    const bool sharded = dp * cp > 1 && zero > 0;
    // zero=3: gt-zero-gather shards the parameters of every stage entry at
    // the end; it reads the stage from the module's plan.
    const bool shardParams = sharded && zero == 3;
    if (shardParams) {
      auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan");
      if (!plan || plan.getZero() != 3) {
        module.emitError("gt-pipeline-train: zero=3 needs the module's "
                         "gt.plan to say zero = 3 (gt-set-plan)");
        return signalPassFailure();
      }
    }
    // Every stage must be there before any is rewritten.
    for (int64_t k = 0; k < pp; ++k)
      if (!module.lookupSymbol<func::FuncOp>(("pp_stage" + Twine(k)).str())) {
        module.emitError() << "missing @pp_stage" << k;
        return signalPassFailure();
      }
    // The forward @main is replaced by the stub at the end.
    main.setSymName("pp_forward");
    OpBuilder b(ctx);

    // Runs `pm` on the module (gt-autodiff / gt-optimizer work on @main and
    // @main_grad) and renames @main_grad or @main to `name`.
    auto runOn = [&](func::FuncOp fn, OpPassManager &pm, StringRef result,
                     const Twine &name) -> func::FuncOp {
      fn.setSymName(fn.getSymName() == "main_grad" ? "main_grad" : "main");
      if (failed(runPipeline(pm, module)))
        return nullptr;
      auto out = module.lookupSymbol<func::FuncOp>(result);
      if (auto tmp = module.lookupSymbol<func::FuncOp>("main");
          tmp && tmp != out)
        tmp.erase();
      out.setSymName(name.str());
      return out;
    };

    for (int64_t k = 0; k < pp; ++k) {
      auto stage =
          module.lookupSymbol<func::FuncOp>(("pp_stage" + Twine(k)).str());
      const bool last = k + 1 == pp;
      b.setInsertionPointAfter(stage);
      // Forward.
      func::FuncOp fwd;
      if (!last) {
        fwd = cast<func::FuncOp>(b.clone(*stage));
        fwd.setSymName(("pp_s" + Twine(k) + "_fwd").str());
        markEntry(fwd, abi::stageEntryName(k, MGRT_STAGE_FORWARD));
      }
      // Backward: gt-autodiff on a copy as @main.
      auto copy = cast<func::FuncOp>(b.clone(*stage));
      OpPassManager autodiffPm(ModuleOp::getOperationName());
      GTAutodiffOptions autodiff;
      autodiff.cotangents = !last;
      // The last stage's loss gradient is the micro-batch's weight, which
      // the driver passes (under cp the ranks' output gradients meet in the
      // attention backward, so they must be weighted before it).
      autodiff.seedInput = last;
      autodiffPm.addPass(createGTAutodiff(autodiff));
      // The last stage runs its forward and backward in one call: with
      // recomputation, inside it, unit by unit.
      if (last && recompute)
        autodiffPm.addPass(createGTRecompute());
      func::FuncOp bwd =
          runOn(copy, autodiffPm, "main_grad", "pp_s" + Twine(k) + "_bwd");
      if (!bwd)
        return signalPassFailure();
      markEntry(bwd, abi::stageEntryName(k, MGRT_STAGE_BACKWARD));
      // Without recomputation the forward hands the values the backward
      // needs to the driver, which keeps them per in-flight micro-batch.
      if (!last && !recompute)
        stashActivations(stage, fwd, bwd);
      // Update: gt-optimizer on @main_grad(grad:<param>...) -> the same.
      SmallVector<Type> gradTypes;
      SmallVector<DictionaryAttr> gradAttrs;
      for (unsigned i = 0; i < bwd.getNumResults(); ++i) {
        auto name = bwd.getResultAttrOfType<StringAttr>(i, gt::kTensorNameAttr);
        if (name && abi::isGradientName(name.getValue())) {
          gradTypes.push_back(bwd.getResultTypes()[i]);
          gradAttrs.push_back(bwd.getResultAttrDict(i));
        }
      }
      b.setInsertionPointAfter(bwd);
      auto update =
          func::FuncOp::create(b, bwd.getLoc(), "main_grad",
                               FunctionType::get(ctx, gradTypes, gradTypes));
      Block *entry = update.addEntryBlock();
      {
        OpBuilder ub = OpBuilder::atBlockEnd(entry);
        func::ReturnOp::create(ub, update.getLoc(), entry->getArguments());
      }
      update.setAllArgAttrs(gradAttrs);
      update.setAllResultAttrs(gradAttrs);
      OpPassManager optimizerPm(ModuleOp::getOperationName());
      if (sharded) {
        GTDataParallelOptions dataParallel;
        dataParallel.dp = dp;
        dataParallel.pp = pp;
        dataParallel.cp = cp;
        dataParallel.presummed = true;
        dataParallel.zero = zero;
        dataParallel.bucketPrefix = ("gt.zero.s" + Twine(k) + ".bucket").str();
        optimizerPm.addPass(createGTDataParallel(dataParallel));
      }
      optimizerPm.addPass(createGTOptimizer(optimizerOptions()));
      // zero=1|2: the update all-gathers its parameters; zero=3 keeps the
      // shard as their storage (below, once every entry exists).
      if (sharded && !shardParams)
        optimizerPm.addPass(createGTZeroGather());
      func::FuncOp upd =
          runOn(update, optimizerPm, "main", "pp_s" + Twine(k) + "_update");
      if (!upd)
        return signalPassFailure();
      markEntry(upd, abi::stageEntryName(k, MGRT_STAGE_UPDATE));
      stage.erase();
    }

    // The stub @main: the driver's view of one step over mb micro-batches.
    main = module.lookupSymbol<func::FuncOp>("pp_forward");
    auto logits = dyn_cast<RankedTensorType>(main.getResultTypes()[0]);
    if (!logits || logits.getRank() < 1) {
      main.emitError("the first result must be the logits [..., C]");
      return signalPassFailure();
    }
    SmallVector<Type> argTypes;
    SmallVector<DictionaryAttr> argAttrs;
    auto scaled = [&](RankedTensorType t) {
      SmallVector<int64_t> shape(t.getShape());
      if (!shape.empty())
        shape[0] *= mb;
      return RankedTensorType::get(shape, t.getElementType());
    };
    for (auto [i, t] : llvm::enumerate(main.getArgumentTypes())) {
      argTypes.push_back(scaled(cast<RankedTensorType>(t)));
      argAttrs.push_back(main.getArgAttrDict(i));
    }
    ArrayRef<int64_t> items = logits.getShape().drop_back();
    Type f32 = b.getF32Type();
    auto named = [&](StringRef name) {
      return b.getDictionaryAttr(
          b.getNamedAttr(gt::kTensorNameAttr, b.getStringAttr(name)));
    };
    argTypes.push_back(scaled(RankedTensorType::get(items, b.getI64Type())));
    argAttrs.push_back(named(abi::kLabels));
    argTypes.push_back(scaled(RankedTensorType::get(items, b.getI1Type())));
    argAttrs.push_back(named(abi::kLabelMask));
    argTypes.push_back(
        scaled(RankedTensorType::get(items, logits.getElementType())));
    argAttrs.push_back(named(abi::kEvalMask));
    auto scalar = RankedTensorType::get({}, f32);
    SmallVector<Type> resultTypes(3, scalar);
    b.setInsertionPoint(main);
    auto stub =
        func::FuncOp::create(b, main.getLoc(), "main",
                             FunctionType::get(ctx, argTypes, resultTypes));
    stub->setAttr("gt.pipeline_stub", b.getUnitAttr());
    Block *entry = stub.addEntryBlock();
    OpBuilder sb = OpBuilder::atBlockEnd(entry);
    Value zero = zeros(sb, stub.getLoc(), scalar);
    func::ReturnOp::create(sb, stub.getLoc(), ValueRange{zero, zero, zero});
    stub.setAllArgAttrs(argAttrs);
    SmallVector<DictionaryAttr> resultAttrs = {
        named(abi::kLoss), named(abi::kCorrect), named(abi::kEvalCorrect)};
    stub.setAllResultAttrs(resultAttrs);
    main.erase();

    // zero=3: each stage's shard globals become its parameters' storage;
    // every entry of the stage all-gathers the buckets it reads at its
    // start, and its update writes only the shard.
    if (shardParams) {
      OpPassManager zeroPm(ModuleOp::getOperationName());
      zeroPm.addPass(createGTZeroGather());
      if (failed(runPipeline(zeroPm, module)))
        return signalPassFailure();
    }
  }
};

} // namespace
