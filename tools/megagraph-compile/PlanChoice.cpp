//===- PlanChoice.cpp - megagraph-compile's plan search step --------------===//

#include "PlanChoice.h"

#include "megagraph/Passes/Passes.h"
#include "megagraph/Plan/CostModel.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Plan/Search.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace megagraph;

static int planError(const llvm::Twine &message) {
  llvm::errs() << "megagraph-compile: error: " << message << "\n";
  return 1;
}

int megagraph::choosePlan(MLIRContext &context, OwningOpRef<ModuleOp> &module,
                          OnnxImportOptions &importOptions,
                          const PlanRequest &request, ParallelPlan &plan,
                          std::string &planJson) {
  if (!request.search && !request.emitPlan && !request.explain &&
      !request.report && request.devices == 0)
    return -1; // a plain --plan compile: nothing to do here
  if (request.search && request.devices == 0 && !request.emitPlan &&
      !request.explain && !request.report)
    return -1; // no --plan, no --devices: one device, as before
  int64_t budget = 0;
  if (!request.deviceMemory.empty() &&
      (!parseByteCount(request.deviceMemory, budget) || budget <= 0))
    return planError("--device-memory needs a positive byte count such as "
                     "17179869184, 16GiB or 80GB, got '" +
                     request.deviceMemory + "'");
  llvm::Expected<HardwareProfile> loaded = loadProfile(request.profile);
  if (!loaded)
    return planError(llvm::toString(loaded.takeError()));
  HardwareProfile profile = std::move(*loaded);
  if (request.devices < 0)
    return planError("--devices must be positive");

  // The model's summary, from a gt-raised copy.
  OwningOpRef<ModuleOp> raised(cast<ModuleOp>((*module)->clone()));
  {
    PassManager pm(&context);
    pm.addPass(createGTRaise());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (failed(pm.run(*raised)))
      return 1;
  }
  AnalyzeOptions analyze;
  analyze.optimizer = request.optimizer;
  llvm::Expected<ModelProfile> analyzed = analyzeModule(*raised, analyze);
  if (!analyzed)
    return planError("plan search: " + llvm::toString(analyzed.takeError()));
  ModelProfile model = std::move(*analyzed);
  const int64_t b0 = model.batch;

  if (!request.search) {
    // A given --plan: the module's batch is each rank's (with pp, one
    // micro-batch's: docs/pipeline.md).
    model.batch = b0 * plan.dp * (plan.pp > 1 ? plan.microBatches : 1);
    if (request.devices && request.devices != plan.devices())
      return planError("--devices " + llvm::Twine(request.devices) +
                       " differs from the plan's " +
                       llvm::Twine(plan.devices()) + " devices (" +
                       toString(plan) + ")");
    Prediction pred = predict(model, plan, profile, budget);
    if (!pred.valid)
      return planError("--plan " + toString(plan) + ": " + pred.invalidReason);
    if (request.explain)
      llvm::errs() << "plan " << toString(plan) << ": predicted step "
                   << llvm::format("%.6f", pred.stepTime) << " s, peak "
                   << formatBytes(pred.peakBytes()) << " per device ("
                   << (int64_t)pred.peakBytes() << " bytes)\n";
    if (request.emitPlan || request.report) {
      llvm::json::Object o{
          {"plan", toJSON(plan)},        {"plan_string", toString(plan)},
          {"searched", false},           {"profile", profile.name},
          {"global_batch", model.batch}, {"prediction", toJSON(pred)},
          {"model", toJSON(model)}};
      if (budget > 0) {
        o["budget_bytes"] = budget;
        o["fits"] = pred.peakBytes() <= (double)budget;
      }
      llvm::raw_string_ostream os(planJson);
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
    }
    return request.emitPlan ? 0 : -1;
  }

  // The search: the module's batch is the global batch.
  SearchOptions options;
  options.devices = request.devices ? request.devices : 1;
  options.deviceMemory = budget;
  // dp > 1 compiles each rank's B / dp sequences: the model is re-imported
  // at that batch, which needs symbolic batch dims given by --input-shape.
  bool rebatchable = request.reimport && !importOptions.inputShapes.empty();
  for (const auto &entry : importOptions.inputShapes)
    if (entry.second.empty() || entry.second[0] != b0)
      rebatchable = false;
  // A cp plan is implemented only if gt-context-parallel shards this model
  // (it rejects ops that are not row-local): run it on a copy of the raised
  // module, once per (cp, mode).
  std::map<std::pair<int64_t, std::string>, std::string> cpVerdicts;
  auto contextParallelRejects = [&](const ParallelPlan &p) -> std::string {
    auto key = std::make_pair(p.cp, p.cpMode);
    if (auto it = cpVerdicts.find(key); it != cpVerdicts.end())
      return it->second;
    std::string first;
    ScopedDiagnosticHandler swallow(&context, [&](Diagnostic &d) {
      if (first.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        first = d.str();
      return success();
    });
    ModuleOp copy = cast<ModuleOp>((*raised)->clone());
    PassManager pm(&context);
    GTContextParallelOptions o;
    o.cp = p.cp;
    o.mode = p.cpMode;
    pm.addPass(createGTContextParallel(o));
    std::string why;
    if (failed(pm.run(copy)))
      why = "gt-context-parallel rejects this model at cp=" +
            std::to_string(p.cp) + ": " +
            (first.empty() ? std::string("(no message)") : first);
    copy->erase();
    return cpVerdicts[key] = why;
  };
  options.implemented = [&](const ParallelPlan &p) -> std::string {
    if (!request.train)
      return "plans apply to training (--train)";
    if ((p.dp > 1 || p.pp > 1) && !rebatchable)
      return "dp>1 or pp>1 needs a model exported with a dynamic batch "
             "axis (compiled with --input-shape)";
    std::string why =
        request.implemented ? request.implemented(p) : std::string();
    if (why.empty() && p.cp > 1)
      why = contextParallelRejects(p);
    return why;
  };
  SearchResult result = searchPlans(model, profile, options);
  if (request.explain)
    llvm::errs() << formatExplain(result);
  if (request.emitPlan || request.report) {
    llvm::json::Value v = toJSON(result);
    v.getAsObject()->insert({"searched", true});
    v.getAsObject()->insert({"profile", profile.name});
    v.getAsObject()->insert({"devices", options.devices});
    v.getAsObject()->insert({"global_batch", model.batch});
    v.getAsObject()->insert({"model", toJSON(model)});
    llvm::raw_string_ostream os(planJson);
    os << llvm::formatv("{0:2}", v) << "\n";
  }
  if (!result.found) {
    if (result.smallestPeakImplemented > 0 && result.prunedMemory > 0)
      return planError(
          "no plan fits in " + formatBytes((double)result.budget) +
          " per device on " + llvm::Twine(options.devices) +
          " devices; the smallest per-device memory that would fit is " +
          formatBytes(result.smallestPeakImplemented) + " (" +
          llvm::Twine((int64_t)std::ceil(result.smallestPeakImplemented)) +
          " bytes, plan " + toString(result.smallestPeakPlan) + ")");
    return planError(
        "no implemented plan for " + llvm::Twine(options.devices) +
        " devices (" + llvm::Twine(result.prunedInvalid) + " not applicable, " +
        llvm::Twine(result.prunedUnimplemented) + " not implemented yet)");
  }
  plan = result.best.plan;
  // The search's stage boundaries are over transformer layers; the
  // compiler's gt-pipeline-split cuts its own units by the same DP.
  plan.stages.clear();
  llvm::errs() << "megagraph-compile: chosen plan " << toString(plan) << " for "
               << options.devices << " device(s): predicted step "
               << llvm::format("%.6f", result.best.prediction.stepTime)
               << " s, peak " << formatBytes(result.best.prediction.peakBytes())
               << " per device";
  if (result.budget > 0)
    llvm::errs() << " (budget " << formatBytes((double)result.budget) << ")";
  llvm::errs() << "\n";
  if (!(result.bestModelled.plan == plan))
    llvm::errs() << "megagraph-compile: note: the model prefers "
                 << toString(result.bestModelled.plan) << " ("
                 << llvm::format("%.6f",
                                 result.bestModelled.prediction.stepTime)
                 << " s), which is " << result.bestModelled.pruned << "\n";
  if (request.emitPlan)
    return 0;
  const int64_t perRankBatch =
      b0 / plan.dp / (plan.pp > 1 ? plan.microBatches : 1);
  if (perRankBatch != b0) {
    OnnxImportOptions perRank = importOptions;
    for (auto &entry : perRank.inputShapes)
      entry.second[0] = perRankBatch;
    OwningOpRef<ModuleOp> again = request.reimport(perRank);
    if (!again)
      return 1;
    module = std::move(again);
    importOptions = perRank;
  }
  return -1;
}
