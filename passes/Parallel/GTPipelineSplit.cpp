//===- GTPipelineSplit.cpp - Split @main into pipeline stages ---*- C++ -*-===//
//
// Part of MegaGraph. Finds the cut points of the forward @main (positions in
// its topological order where few activations are live), groups the ops
// between consecutive cut points into units, picks `pp` stage boundaries
// over the units (given, or by the cost DP of megagraph/Plan/StageSplit.h),
// and outlines each stage into `@pp_stage<k>`: the graph inputs and the
// activations crossing into the stage (`act<i>`, received from stage k-1)
// in, the activations crossing out of it (sent to stage k+1) or, for the
// last stage, @main's results out. Parameters (global loads) and constants
// are cloned into the stages that use them. A parameter that several stages
// read (tied weights, Graphormer's spatial table read by every layer's
// attention) belongs to the first: its value is sent on to the later
// readers as one more activation, and its cotangents come back as theirs
// do, so the gradient sums every stage's part on the rank that holds it.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"
#include "megagraph/Plan/ForwardUnits.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTInterfaces.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Plan/StageSplit.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace megagraph {
#define GEN_PASS_DEF_GTPIPELINESPLIT
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-pipeline-split"

using namespace mlir;
using namespace megagraph;

namespace {

int64_t bytesOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  return t.getNumElements() *
         std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

/// Forward + backward seconds of one op on one rank under the hardware
/// profile of the plan search (megagraph/Plan/Profile.h): GEMMs (gt.linear,
/// tosa.matmul) at the profile's GEMM curve at their size
/// (HardwareProfile::gemmRate; the gemm / small-GEMM rates of CostModel.cpp
/// without a curve), gt.attention at the attention rate, every other op
/// at the memory bandwidth, plus the per-op overhead; the backward costs
/// about twice the forward, and recomputation adds a forward (as in
/// CostModel.cpp). `share` is the rank's part of a shared CPU.
struct OpCost {
  double time = 0;
  int64_t activationBytes = 0;
};

OpCost costOf(Operation *op, const HardwareProfile &hw, double share,
              bool recompute) {
  int64_t activation;
  if (auto cost = dyn_cast<gt::CostOpInterface>(op))
    activation = cost.getActivationBytes();
  else
    activation = gt::detail::defaultActivationBytes(op);
  auto known = [](int64_t v) {
    return static_cast<double>(std::max<int64_t>(0, v));
  };
  double seconds;
  if (auto att = dyn_cast<gt::AttentionOp>(op)) {
    seconds = known(att.getFlops()) / hw.attentionFlops;
  } else if (auto lin = dyn_cast<gt::LinearOp>(op)) {
    auto w = cast<ShapedType>(lin.getWeight().getType());
    const double flops = known(lin.getFlops());
    const double k = w.getDimSize(0), n = w.getDimSize(1);
    seconds = flops / hw.gemmRate(flops / (2 * k * n), k, n);
  } else if (auto mm = dyn_cast<tosa::MatMulOp>(op);
             mm && cast<ShapedType>(mm.getA().getType()).hasStaticShape() &&
             cast<ShapedType>(mm.getB().getType()).hasStaticShape()) {
    auto a = cast<ShapedType>(mm.getA().getType());
    auto b = cast<ShapedType>(mm.getB().getType());
    const double m = a.getDimSize(1), k = a.getDimSize(2), n = b.getDimSize(2);
    seconds = 2.0 * a.getDimSize(0) * m * k * n / hw.gemmRate(m, k, n);
  } else {
    int64_t bytes = isa<gt::CostOpInterface>(op)
                        ? cast<gt::CostOpInterface>(op).getBytesMoved()
                        : gt::detail::defaultBytesMoved(op);
    seconds = known(bytes) / hw.memoryBandwidth;
  }
  OpCost c;
  c.time = (recompute ? 4.0 : 3.0) * (seconds / share + hw.opOverhead);
  c.activationBytes = activation;
  return c;
}

struct GTPipelineSplitPass
    : megagraph::impl::GTPipelineSplitBase<GTPipelineSplitPass> {
  using GTPipelineSplitBase::GTPipelineSplitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || !main.getBody().hasOneBlock()) {
      module.emitError("gt-pipeline-split needs a single-block func.func "
                       "@main");
      return signalPassFailure();
    }
    if (pp < 1 || microBatches < 1) {
      main.emitError() << "pp and mb must be at least 1, got pp="
                       << static_cast<int64_t>(pp)
                       << ", mb=" << static_cast<int64_t>(microBatches);
      return signalPassFailure();
    }
    llvm::Expected<HardwareProfile> loaded = loadProfile(profile);
    if (!loaded) {
      module.emitError("gt-pipeline-split: ")
          << llvm::toString(loaded.takeError());
      return signalPassFailure();
    }
    const HardwareProfile &hw = *loaded;
    // CPU ranks share the node's cores (the profile's rates are the whole
    // node's); a GPU rank owns its device.
    const double share = hw.computeShare(pp);
    Block &body = main.getBody().front();
    Operation *terminator = body.getTerminator();

    // 1-3. The compute ops, the values crossing each position and the cut
    //      points (ForwardUnits.h).
    ForwardUnits fu = findForwardUnits(main);
    const SmallVector<Operation *> &compute = fu.compute;
    const DenseSet<Value> &dependsOnInput = fu.dependsOnInput;
    const std::vector<SmallVector<Value>> &crossing = fu.crossing;
    const int64_t n = compute.size();
    if (n == 0) {
      main.emitError("@main computes nothing from its inputs; nothing to "
                     "split into pipeline stages");
      return signalPassFailure();
    }
    const SmallVector<int64_t> &cuts = fu.cuts; // 0, ..., n
    const int64_t numUnits = fu.numUnits();

    // 4. Unit costs: time, parameter state (weights, gradient and two
    //    AdamW moments), activations, and the bytes entering the unit.
    SmallVector<UnitCost> units(numUnits);
    SmallVector<StringAttr> unitNames;
    for (int64_t u = 0; u < numUnits; ++u) {
      UnitCost &c = units[u];
      llvm::SetVector<StringAttr> params;
      Operation *heaviest = nullptr;
      double heaviestTime = -1;
      for (int64_t i = cuts[u]; i < cuts[u + 1]; ++i) {
        OpCost oc = costOf(compute[i], hw, share, recompute);
        c.time += oc.time;
        c.activationBytes += oc.activationBytes;
        if (oc.time > heaviestTime)
          heaviestTime = oc.time, heaviest = compute[i];
        SmallVector<Operation *> work = {compute[i]};
        while (!work.empty()) {
          Operation *op = work.pop_back_val();
          for (Value v : op->getOperands()) {
            Operation *def = v.getDefiningOp();
            if (!def || dependsOnInput.contains(v))
              continue;
            if (auto load = dyn_cast<ml_program::GlobalLoadOp>(def)) {
              if (params.insert(load.getGlobal().getLeafReference()))
                c.persistentBytes += 4 * bytesOf(load.getType());
              continue;
            }
            work.push_back(def);
          }
        }
      }
      for (Value v : crossing[cuts[u]])
        c.inputBytes += bytesOf(v.getType());
      c.name = heaviest->getName().getStringRef().str();
      unitNames.push_back(StringAttr::get(ctx, c.name));
    }

    // 5. Stage boundaries: given (--plan stages=) or by cost.
    StageSplitOptions options;
    options.pp = pp;
    options.microBatches = microBatches;
    options.recompute = recompute;
    options.memoryLimit = memoryLimit;
    StageSplit split;
    SmallVector<int64_t> given(stages.begin(), stages.end());
    if (!given.empty()) {
      if (static_cast<int64_t>(given.size()) != pp) {
        main.emitError() << "stages lists " << given.size()
                         << " boundaries but pp=" << static_cast<int64_t>(pp);
        return signalPassFailure();
      }
      split = evaluateSplit(units, given, options);
      if (!split.feasible) {
        main.emitError() << "stages=" << formatStages(given)
                         << " is not a split of the " << numUnits
                         << " units of @main into " << static_cast<int64_t>(pp)
                         << " non-empty stages (the first starts at 0, "
                            "boundaries increase, the last is below "
                         << numUnits << ")";
        return signalPassFailure();
      }
    } else if (balance == "even") {
      split = evenSplit(units, options);
    } else {
      split = splitStages(units, options);
    }
    if (!split.feasible && memoryLimit > 0 && numUnits >= pp) {
      int64_t least = 0;
      StageSplitOptions unlimited = options;
      unlimited.memoryLimit = 0;
      if (StageSplit s = splitStages(units, unlimited); s.feasible)
        least = *llvm::max_element(s.stageMemory);
      main.emitError() << "no split into " << static_cast<int64_t>(pp)
                       << " stages fits memory-limit="
                       << static_cast<int64_t>(memoryLimit)
                       << " bytes per stage (the fastest split needs " << least
                       << ")";
      return signalPassFailure();
    }
    if (!split.feasible) {
      main.emitError() << "@main has " << numUnits
                       << " pipeline units (cut points where few "
                          "activations are live), too few for pp="
                       << static_cast<int64_t>(pp);
      return signalPassFailure();
    }

    // 6. Parameters read by several stages (tied weights, or one table
    //    that every layer's attention reads): the first stage that reads
    //    one loads it and sends its value on, like an activation, to each
    //    stage up to the last that reads it; the cotangents come back the
    //    same way, so that its gradient, on the rank that holds it, sums
    //    every stage's part.
    // The values an op (and the ops nested in it) reads that no graph
    // input reaches: parameter loads, constants and what is computed from
    // them only, which each stage materializes for itself.
    auto freeOperands = [&](Operation *op) {
      SmallVector<Value> free;
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (!dependsOnInput.contains(operand) &&
              operand.getParentBlock() == &body)
            free.push_back(operand);
      });
      return free;
    };
    auto stageOf = [&](int64_t i) {
      int64_t k = 0;
      while (k + 1 < pp && cuts[split.firstUnit[k + 1]] <= i)
        ++k;
      return k;
    };
    // By parameter: the load whose value is sent (the first), every load
    // of it, and the first and last stage that read it.
    struct Shared {
      Value sent;
      SmallVector<Value> loads;
      int64_t first, last;
    };
    llvm::MapVector<StringAttr, Shared> sharedParams;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = stageOf(i);
      SmallVector<Value> work = freeOperands(compute[i]);
      DenseSet<Value> seen;
      while (!work.empty()) {
        Value v = work.pop_back_val();
        Operation *def = v.getDefiningOp();
        if (!def || !seen.insert(v).second)
          continue;
        if (auto load = dyn_cast<ml_program::GlobalLoadOp>(def)) {
          auto [it, inserted] = sharedParams.try_emplace(
              load.getGlobal().getLeafReference(), Shared{v, {}, k, k});
          Shared &sh = it->second;
          if (!llvm::is_contained(sh.loads, v))
            sh.loads.push_back(v);
          sh.first = std::min(sh.first, k);
          sh.last = std::max(sh.last, k);
          continue;
        }
        for (Value operand : def->getOperands())
          work.push_back(operand);
      }
    }
    sharedParams.remove_if([](const auto &entry) {
      return entry.second.first == entry.second.last;
    });
    // What stage k receives beside crossing[begin] (it sends the same list
    // on to stage k + 1 when it is not that parameter's last reader).
    auto sharedInto = [&](int64_t k) {
      SmallVector<Shared *> out;
      for (auto &entry : sharedParams)
        if (entry.second.first < k && k <= entry.second.last)
          out.push_back(&entry.second);
      return out;
    };

    // 7. One function per stage.
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(main);
    for (int64_t k = 0; k < pp; ++k) {
      int64_t begin = cuts[split.firstUnit[k]];
      int64_t end = k + 1 < pp ? cuts[split.firstUnit[k + 1]] : n;
      SmallVector<Value> ins;
      if (k)
        llvm::append_range(ins, crossing[begin]);
      const SmallVector<Shared *> received = sharedInto(k);
      for (Shared *sh : received)
        ins.push_back(sh->sent);
      SmallVector<Type> argTypes(main.getArgumentTypes());
      SmallVector<DictionaryAttr> argAttrs;
      for (unsigned i = 0; i < main.getNumArguments(); ++i)
        argAttrs.push_back(main.getArgAttrDict(i));
      for (auto [i, v] : llvm::enumerate(ins)) {
        argTypes.push_back(v.getType());
        argAttrs.push_back(mb.getDictionaryAttr(
            {mb.getNamedAttr(gt::kTensorNameAttr,
                             mb.getStringAttr(abi::activationName(i))),
             mb.getNamedAttr("gt.differentiable", mb.getUnitAttr()),
             mb.getNamedAttr("gt.recv_from", mb.getI64IntegerAttr(k - 1))}));
      }
      auto fn =
          func::FuncOp::create(mb, main.getLoc(), ("pp_stage" + Twine(k)).str(),
                               FunctionType::get(ctx, argTypes, {}));
      fn->setAttr("gt.pipeline_stage", mb.getI64IntegerAttr(k));
      Block *entry = fn.addEntryBlock();
      IRMapping map;
      for (unsigned i = 0; i < main.getNumArguments(); ++i)
        map.map(body.getArgument(i), entry->getArgument(i));
      for (auto [i, v] : llvm::enumerate(ins))
        map.map(v, entry->getArgument(main.getNumArguments() + i));
      // Every load of a received parameter reads the value received.
      for (Shared *sh : received)
        for (Value load : sh->loads)
          map.map(load, map.lookup(sh->sent));
      OpBuilder b = OpBuilder::atBlockEnd(entry);
      // Free ops are cloned on first use (operands first).
      std::function<LogicalResult(Value)> materialize =
          [&](Value v) -> LogicalResult {
        if (map.contains(v))
          return success();
        Operation *def = v.getDefiningOp();
        if (!def || dependsOnInput.contains(v))
          return main.emitError("internal error: a value crosses into "
                                "pipeline stage ")
                 << k << " without being sent";
        for (Value operand : def->getOperands())
          if (failed(materialize(operand)))
            return failure();
        b.clone(*def, map);
        return success();
      };
      for (int64_t i = begin; i < end; ++i) {
        for (Value operand : compute[i]->getOperands())
          if (failed(materialize(operand)))
            return signalPassFailure();
        for (Value operand : freeOperands(compute[i]))
          (void)materialize(operand);
        b.clone(*compute[i], map);
      }
      SmallVector<Value> outs;
      SmallVector<DictionaryAttr> resAttrs;
      if (k + 1 < pp) {
        SmallVector<Value> sent(crossing[end]);
        for (Shared *sh : sharedInto(k + 1))
          sent.push_back(sh->sent);
        for (auto [i, v] : llvm::enumerate(sent)) {
          if (failed(materialize(v)))
            return signalPassFailure();
          outs.push_back(map.lookup(v));
          resAttrs.push_back(mb.getDictionaryAttr(
              {mb.getNamedAttr(gt::kTensorNameAttr,
                               mb.getStringAttr(abi::activationName(i))),
               mb.getNamedAttr("gt.send_to", mb.getI64IntegerAttr(k + 1))}));
        }
      } else {
        for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
          if (failed(materialize(v)))
            return signalPassFailure();
          outs.push_back(map.lookup(v));
          resAttrs.push_back(main.getResultAttrDict(i));
        }
      }
      func::ReturnOp::create(b, main.getLoc(), outs);
      SmallVector<Type> resultTypes;
      for (Value v : outs)
        resultTypes.push_back(v.getType());
      fn.setType(FunctionType::get(ctx, argTypes, resultTypes));
      fn.setAllArgAttrs(argAttrs);
      fn.setAllResultAttrs(resAttrs);
      mb.setInsertionPointAfter(fn);
    }

    // 8. What was chosen, for the later passes, the driver and the reader.
    SmallVector<double> times;
    for (const UnitCost &c : units)
      times.push_back(c.time);
    module->setAttr(
        gt::kPipelineAttr,
        gt::PipelineAttr::get(ctx, pp, microBatches, split.firstUnit, unitNames,
                              mb.getDenseF64ArrayAttr(times),
                              mb.getDenseF64ArrayAttr(split.stageTime),
                              split.stageMemory));
  }
};

} // namespace
