//===- PlanChoice.cpp - megagraph-compile's plan search step --------------===//

#include "PlanChoice.h"

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Pipelines/Pipelines.h"
#include "megagraph/Plan/CostModel.h"
#include "megagraph/Plan/GcnPlan.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Plan/Search.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace megagraph;

static int planError(const llvm::Twine &message) {
  llvm::errs() << "megagraph-compile: error: " << message << "\n";
  return 1;
}

/// The graph of a full-graph model: --graph-stats, or the model's own
/// node count and its edge_index input's edge count (the degrees then are
/// only their mean).
static llvm::Expected<GraphStats>
graphOf(ModuleOp raised, const GcnProfile &gcn, const PlanRequest &request) {
  if (!request.graphStats.empty())
    return loadGraphStats(request.graphStats);
  GraphStats g;
  g.nodes = gcn.nodes;
  if (auto main = raised.lookupSymbol<func::FuncOp>("main"))
    for (BlockArgument arg : main.getArguments()) {
      auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    gt::kTensorNameAttr);
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (name && name.getValue() == abi::kEdgeIndex && t && t.getRank() == 2)
        g.edges = t.getDimSize(1);
    }
  g.degreeMean = g.nodes ? static_cast<double>(g.edges) / g.nodes : 0;
  g.degreeMax = g.degreeMean;
  return g;
}

/// The plan step of a full-graph GCN (GcnPlan.h): price the given plan or
/// choose between mop=P and gp=P for the graph.
static int chooseGcn(ModuleOp raised, const GcnProfile &gcn,
                     const PlanRequest &request, const HardwareProfile &profile,
                     ParallelPlan &plan, std::string &planJson) {
  llvm::Expected<GraphStats> graph = graphOf(raised, gcn, request);
  if (!graph)
    return planError(llvm::toString(graph.takeError()));
  auto describe = [&](const ParallelPlan &p, const GcnPrediction &r) {
    return llvm::formatv("{0}: predicted step {1:f6} s ({2:f6} compute, "
                         "{3:f6} communication), {4} sent per rank per step",
                         toString(p), r.stepTime, r.computeTime,
                         r.communicationTime, formatBytes(r.commBytesPerRank))
        .str();
  };
  auto json = [&](const ParallelPlan &p, const GcnPrediction &r) {
    return llvm::json::Object{{"plan", toJSON(p)},
                              {"plan_string", toString(p)},
                              {"step_time", r.stepTime},
                              {"compute_time", r.computeTime},
                              {"communication_time", r.communicationTime},
                              {"overlap_time", r.overlapTime},
                              {"comm_bytes_per_rank", r.commBytesPerRank},
                              {"comm_bytes_total", r.commBytesTotal}};
  };
  llvm::json::Object out{{"profile", profile.name},
                         {"graph", toJSON(*graph)},
                         {"searched", request.search}};
  if (!request.search) {
    if (request.devices && request.devices != plan.devices())
      return planError("--devices " + llvm::Twine(request.devices) +
                       " differs from the plan's " +
                       llvm::Twine(plan.devices()) + " devices (" +
                       toString(plan) + ")");
    GcnPrediction r = predictGcn(gcn, *graph, plan, profile);
    if (request.explain)
      llvm::errs() << "plan " << describe(plan, r) << "\n";
    out["prediction"] = json(plan, r);
  } else {
    const int64_t devices = request.devices ? request.devices : 1;
    GcnChoice choice =
        chooseGcnPlan(gcn, *graph, devices, profile, request.moa);
    if (choice.ranked.empty())
      return planError("no plan splits the " + llvm::Twine(gcn.nodes) +
                       " nodes over " + llvm::Twine(devices) +
                       " devices (mop and gp need P to divide N)");
    // The fastest plan the compiler builds.
    auto why = [&](const ParallelPlan &p) {
      return request.implemented ? request.implemented(p) : std::string();
    };
    auto best = llvm::find_if(choice.ranked,
                              [&](auto &c) { return why(c.first).empty(); });
    if (request.explain)
      for (auto &[p, r] : choice.ranked) {
        std::string no = why(p);
        llvm::errs() << "  " << describe(p, r)
                     << (no.empty() ? "" : " [" + no + "]") << "\n";
      }
    if (best == choice.ranked.end())
      return planError("no implemented plan for " + llvm::Twine(devices) +
                       " devices: " + why(choice.ranked.front().first));
    choice.plan = best->first;
    choice.prediction = best->second;
    plan = choice.plan;
    llvm::errs() << "megagraph-compile: chosen plan " << toString(plan)
                 << " for " << devices << " device(s) (full-graph GCN, "
                 << graph->nodes << " nodes, " << graph->edges
                 << " edges): predicted step "
                 << llvm::format("%.6f", choice.prediction.stepTime) << " s, "
                 << formatBytes(choice.prediction.commBytesPerRank)
                 << " sent per rank per step\n";
    llvm::json::Array ranked;
    for (auto &[p, r] : choice.ranked)
      ranked.push_back(json(p, r));
    out["ranked"] = std::move(ranked);
    out["prediction"] = json(plan, choice.prediction);
    out["devices"] = devices;
  }
  out["plan"] = toJSON(plan);
  out["plan_string"] = toString(plan);
  if (request.emitPlan || request.report) {
    llvm::raw_string_ostream os(planJson);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  }
  return request.emitPlan ? 0 : -1;
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
    ImportToGtPipelineOptions importToGt;
    importToGt.sparseAdjacencyEdges = request.sparseAdjacencyEdges;
    buildImportToGtPassPipeline(pm, importToGt);
    if (failed(pm.run(*raised)))
      return 1;
  }
  // A full-graph GCN: the choice is how to split its nodes.
  if (llvm::Expected<GcnProfile> gcn = analyzeGcn(*raised))
    return chooseGcn(*raised, *gcn, request, profile, plan, planJson);
  else
    llvm::consumeError(gcn.takeError());
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
