//===- ParallelPlan.h - The parallel plan as a value ------------*- C++ -*-===//
//
// Part of MegaGraph. A parallel training plan (the point of the plan space a
// program is compiled for) as a plain value: parsed from `--plan`, printed,
// written as JSON, and converted to the `#gt.plan` attribute. The plan
// search (megagraph/Plan/Search.h) produces these; the passes read them.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_PARALLELPLAN_H
#define MEGAGRAPH_PLAN_PARALLELPLAN_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace megagraph {
namespace gt {
class PlanAttr;
} // namespace gt

/// The device grid is dp x pp x cp (dp outermost, cp innermost).
struct ParallelPlan {
  int64_t dp = 1, pp = 1, cp = 1;
  /// Micro-batches per dp replica and step (pipelining).
  int64_t microBatches = 1;
  /// ZeRO stage 0-3 of the data-parallel group.
  int64_t zero = 0;
  /// Recompute each stage's forward during its backward.
  bool recompute = false;
  /// How K/V move under context parallelism: allgather, ring or ulysses.
  std::string cpMode = "allgather";
  /// First unit of each pipeline stage (the units gt-pipeline-split finds,
  /// in program order); empty: chosen by the stage-splitting DP.
  std::vector<int64_t> stages;
  /// Full-graph GCN training: mixture of parallelism over `mop` ranks
  /// (aggregations feature-parallel, transforms node-parallel) or
  /// partition parallelism over `gp` ranks (METIS parts, halo exchange);
  /// each alone on the grid.
  int64_t mop = 1, gp = 1;
  /// Mixture of accelerators: aggregation and transform on separate thread
  /// groups, pipelined over `chunks` node chunks.
  bool moa = false;
  int64_t chunks = 1;

  int64_t devices() const { return dp * pp * cp * mop * gp; }
  /// Whether the step runs as stage entries under the driver's pipeline
  /// schedule (gt-pipeline-split / gt-pipeline-train): stages, or
  /// micro-batches whose gradients accumulate (the one-stage pipeline).
  /// The training pass pipeline builds it then, and the cost model prices
  /// what that driver holds (in-flight slots, gradient accumulators).
  bool pipelined() const { return pp > 1 || microBatches > 1; }
  bool operator==(const ParallelPlan &other) const;
  bool operator!=(const ParallelPlan &other) const { return !(*this == other); }
};

/// Parses `dp=2,cp=2,cp_mode=ring,pp=2,mb=4,zero=1,recompute=1,stages=0:3`
/// (or `mop=4,moa=1,chunks=8`, `gp=4`).
/// Keys may come in any order; left-out keys keep their defaults. The error
/// names the bad item.
llvm::Expected<ParallelPlan> parseParallelPlan(llvm::StringRef spec);

/// Checks the plan's invariants (grid >= 1, zero in [0,3], known cp_mode,
/// stage boundaries).
llvm::Error verifyParallelPlan(const ParallelPlan &plan);

/// Checks that the compiler and the driver implement the plan (a valid
/// one): mb and stages only
/// with pp. The one place that decides
/// which plans megagraph-compile --plan accepts and the search may choose.
llvm::Error checkPlanImplemented(const ParallelPlan &plan);

/// The `--plan` spelling of a plan; only non-default keys (dp always, but
/// for mop / gp plans: "mop=4,moa=1").
std::string toString(const ParallelPlan &plan);

/// {"dp":..,"pp":..,"cp":..,"micro_batches":..,"zero":..,"recompute":..,
///  "cp_mode":..,"stages":[..],"mop":..,"gp":..,"moa":..,"chunks":..,
///  "devices":..}
llvm::json::Value toJSON(const ParallelPlan &plan);
bool fromJSON(const llvm::json::Value &value, ParallelPlan &plan,
              llvm::json::Path path);

/// The `#gt.plan` attribute of a plan, and back.
gt::PlanAttr toAttr(mlir::MLIRContext *context, const ParallelPlan &plan);
ParallelPlan fromAttr(gt::PlanAttr attr);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_PARALLELPLAN_H
