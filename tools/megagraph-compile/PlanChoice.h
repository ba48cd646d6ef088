//===- PlanChoice.h - megagraph-compile's plan search step ------*- C++ -*-===//
//
// Part of MegaGraph. What megagraph-compile does with --devices,
// --device-memory, --profile, --explain and --emit=plan: summarize the
// model (gt-raise on a copy), search (or price the given --plan), print the
// choice, and re-import the model at each rank's batch when the chosen plan
// splits the batch over dp.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TOOLS_PLANCHOICE_H
#define MEGAGRAPH_TOOLS_PLANCHOICE_H

#include "megagraph/Import/OnnxImporter.h"
#include "megagraph/Plan/ParallelPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <string>

namespace megagraph {

struct PlanRequest {
  /// No --plan: search. Else price the given plan.
  bool search = false;
  bool emitPlan = false, explain = false, train = false;
  /// --plan-report: fill `planJson` (searched, or the given plan priced)
  /// and go on compiling.
  bool report = false;
  /// --devices (0: not given), --device-memory (text, "" if not given).
  int64_t devices = 0;
  std::string deviceMemory;
  std::string profile = "cpu-here";
  std::string optimizer = "adamw";
  /// --graph-stats FILE (EXE --mode graph-stats): the graph a full-graph
  /// GCN trains on, for the choice between mop and gp; "" uses the
  /// model's own N and E.
  std::string graphStats;
  /// --moa: search the accelerator pipeline's chunk count too.
  bool moa = false;
  /// gt-sparse-adjacency's edge count for the raised copy (-1: none).
  int64_t sparseAdjacencyEdges = -1;
  /// "" when the compiler can build the plan (the driver's own --plan
  /// checks), else why not.
  std::function<std::string(const ParallelPlan &)> implemented;
  /// Re-imports the model with other input shapes; null when the input
  /// cannot be re-imported (.mlir).
  std::function<mlir::OwningOpRef<mlir::ModuleOp>(const OnnxImportOptions &)>
      reimport;
};

/// Runs the plan step. On success returns -1 (continue compiling with
/// `plan` and `module`, possibly re-imported), or 0 when the work is done
/// (--emit=plan: `planJson` holds the output; with `report`, it is filled
/// on -1 too); else an exit code (errors
/// are printed as `megagraph-compile: error: ...`).
int choosePlan(mlir::MLIRContext &context,
               mlir::OwningOpRef<mlir::ModuleOp> &module,
               OnnxImportOptions &importOptions, const PlanRequest &request,
               ParallelPlan &plan, std::string &planJson);

} // namespace megagraph

#endif // MEGAGRAPH_TOOLS_PLANCHOICE_H
