//===- PlanReport.h - megagraph-compile --plan-report -----------*- C++ -*-===//
//
// Part of MegaGraph. Writes the plan the compiler chose as a page for the
// browser: DIR/index.html, self-contained (inline CSS and SVG, no script),
// and DIR/plan.json, the plan step's JSON it is drawn from (the same as
// --emit=plan). The page shows the device grid (dp x pp x cp, ranks
// row-major), the predicted memory of every device stacked by kind against
// the budget, the pipeline schedule (1F1B) as a Gantt chart with one row
// per stage, and the ranked alternatives with why each was not chosen.
// megagraph-report adds what a run measured.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TOOLS_PLANREPORT_H
#define MEGAGRAPH_TOOLS_PLANREPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace megagraph {

/// One action of a pipeline stage's schedule, with its predicted times.
struct ScheduledAction {
  int64_t stage = 0, microBatch = 0;
  bool forward = true;
  double start = 0, end = 0;
};

/// The 1F1B schedule of `stageTimes.size()` stages over `microBatches`
/// micro-batches, as the driver runs it: stage s runs min(pp - s - 1, mb)
/// warm-up forwards, then forward / backward pairs, then the remaining
/// backwards; each action starts
/// when its stage is free and its input has arrived (forward i after the
/// previous stage's forward i, backward i after the next stage's backward
/// i). stageTimes[s] is a forward and a backward of one micro-batch on
/// stage s; a backward takes twice a forward.
std::vector<ScheduledAction>
scheduleOneFOneB(const std::vector<double> &stageTimes, int64_t microBatches);

/// Writes DIR/plan.json (`planJson` as given) and DIR/index.html, creating
/// DIR if needed.
llvm::Error writePlanReport(llvm::StringRef dir, llvm::StringRef planJson);

} // namespace megagraph

#endif // MEGAGRAPH_TOOLS_PLANREPORT_H
