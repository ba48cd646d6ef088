//===- GcnPlan.h - Mixture vs partition parallelism for GCNs ----*- C++ -*-===//
//
// Part of MegaGraph. Profile-Model-Search for full-graph GCN training (B = 1,
// S = N), where the choice is how to split the graph's N nodes over P
// devices: mixture of parallelism (`mop=P`: aggregations feature-parallel,
// transforms node-parallel, an all-to-all at each switch) or partition
// parallelism (`gp=P`: METIS row blocks, boundary rows exchanged in every
// aggregation). Their traffic differs in kind: mop moves a fixed share of
// every switched activation, (P - 1) / P of it, whatever the graph; gp moves
// the halo, the rows of other parts that a part's rows reference, which
// grows with P and with the graph's degree skew (hubs are everybody's
// neighbours). So the choice needs the graph:
//   Profile  the driver measures it (`--mode graph-stats`: N, E, the degree
//            distribution, and per P the halo rows and the largest part of
//            the METIS partition gp would use) into a JSON file;
//   Model    per plan, the bytes each rank sends per step and the step
//            time (compute share + alpha-beta communication) on a hardware
//            profile;
//   Search   the faster of mop=P and gp=P; with moa, the chunk count.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_GCNPLAN_H
#define MEGAGRAPH_PLAN_GCNPLAN_H

#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Plan/Profile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace megagraph {

/// The graph of a full-graph training run, as the plans see it.
struct GraphStats {
  int64_t nodes = 0;
  int64_t edges = 0; ///< directed (an undirected edge counts twice)
  double degreeMean = 0, degreeMax = 0;
  /// Coefficient of variation of the degrees (std / mean): about 0.3 for an
  /// SBM of mean degree 10, several for a power-law graph.
  double degreeCv = 0;
  /// The METIS partition into P equal parts gp would use.
  struct Partition {
    int64_t parts = 1;
    /// Halo rows summed over the parts, and the largest part's.
    int64_t haloRows = 0, maxHaloRows = 0;
    /// Edges whose row is in the busiest part.
    int64_t maxPartEdges = 0;
    /// Edges of the interior rows (no neighbour in another part) of the
    /// part with the fewest: what every rank aggregates while its halo
    /// arrives (gp overlaps the exchange with them).
    int64_t minInteriorEdges = 0;
  };
  std::vector<Partition> partitions;

  /// The measured partition into `parts`, or an estimate from the degrees
  /// (each part's nodes a random sample: a node is in another part's halo
  /// with probability 1 - (1 - 1/P)^degree, and a row is interior with
  /// probability (1/P)^degree, at the mean degree).
  Partition partition(int64_t parts) const;
};

llvm::json::Value toJSON(const GraphStats &stats);
bool fromJSON(const llvm::json::Value &value, GraphStats &stats,
              llvm::json::Path path);
/// Reads a graph-stats JSON file; the error names the file.
llvm::Expected<GraphStats> loadGraphStats(llvm::StringRef path);

/// The layers of a full-graph model, from its gt-raised forward module.
struct GcnProfile {
  int64_t nodes = 0;
  struct Aggregation {
    int64_t width = 0; ///< feature columns aggregated
    /// Its input is a function argument every rank holds whole: mop cuts
    /// it locally instead of switching it.
    bool wholeInput = false;
    /// Its input depends on a parameter: the backward runs it again
    /// (transposed), with its switches or halo.
    bool backward = true;
  };
  std::vector<Aggregation> aggregations;
  /// Dense transforms: (in, out) features of each [N, in] x [in, out].
  std::vector<std::pair<int64_t, int64_t>> transforms;
  int64_t paramBytes = 0;
};

/// The aggregations (gt.spmm over the node features' descendants) and
/// transforms (gt.linear over them) of `module`; an error when it is not a
/// full-graph model (no input x [N, F], no aggregation).
llvm::Expected<GcnProfile> analyzeGcn(mlir::ModuleOp module);

struct GcnPrediction {
  double stepTime = 0, computeTime = 0, communicationTime = 0;
  /// The part of communicationTime hidden behind compute: gp's halo
  /// exchanges overlapped with the interior rows' aggregation (stepTime =
  /// computeTime + communicationTime - overlapTime).
  double overlapTime = 0;
  /// Bytes one rank sends in a step (the largest rank's), and all ranks'.
  double commBytesPerRank = 0, commBytesTotal = 0;
};

/// The step of `plan` (one process, mop=P or gp=P, moa with chunks).
GcnPrediction predictGcn(const GcnProfile &model, const GraphStats &graph,
                         const ParallelPlan &plan,
                         const HardwareProfile &profile);

struct GcnChoice {
  ParallelPlan plan;
  GcnPrediction prediction;
  /// Every plan compared, with its prediction, fastest first.
  std::vector<std::pair<ParallelPlan, GcnPrediction>> ranked;
};

/// The fastest way to train `model` on `graph` over `devices` devices:
/// mop=P or gp=P (one process for one device); `moa` adds, beside each
/// plan, its variants with the accelerator pipeline (one per chunk count).
GcnChoice chooseGcnPlan(const GcnProfile &model, const GraphStats &graph,
                        int64_t devices, const HardwareProfile &profile,
                        bool moa = false);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_GCNPLAN_H
