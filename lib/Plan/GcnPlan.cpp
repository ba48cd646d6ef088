//===- GcnPlan.cpp - Mixture vs partition parallelism for GCNs ------------===//
//
// Part of MegaGraph. See GcnPlan.h.
//
// The step model, per rank, with P ranks and F' = F rounded up to P:
//   aggregation (SpMM over E' edges of F columns), memory bound:
//       one   E' F 4 bytes / bandwidth (the rows of x read per edge)
//       mop   the same over F' / P columns (every rank all N rows)
//       gp    the busiest part's edges over all F columns
//   transform ([n, K] x [K, M] forward, two more for the backward):
//       3 x 2 n K M / GEMM rate, n = N (one), N / P (mop, gp)
//   traffic: mop switches each aggregated value into and out of columns,
//       forward and backward: 4 all-to-alls of N F' 4 / P bytes per rank,
//       (P - 1) / P of them sent (one fewer each way when its input is a
//       whole argument, cut locally; none backward when its input does not
//       depend on a parameter); gp exchanges each aggregation's halo forward
//       and backward: 2 halo rows x F x 4 bytes (1 without a backward);
//       both all-reduce the gradients.
//   overlap: gp aggregates the interior rows (no halo neighbour) while the
//       halo arrives, so each exchange is hidden up to the interior rows'
//       SpMM time on the part with the fewest (not with moa, whose
//       pipelined kernels exchange before or after their pipeline).
//   On a CPU the ranks share the node (computeShare).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/GcnPlan.h"

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/ModelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace megagraph;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Seconds of one all-to-all in which a rank sends `bytes` to the others.
double allToAll(const HardwareProfile &hw, int64_t group, double bytes) {
  if (group <= 1)
    return 0;
  const AlphaBeta &ab = group <= hw.devicesPerNode ? hw.intra : hw.inter;
  return static_cast<double>(group - 1) * ab.alpha + bytes * ab.beta;
}

} // namespace

GraphStats::Partition GraphStats::partition(int64_t parts) const {
  for (const Partition &p : partitions)
    if (p.parts == parts)
      return p;
  Partition p;
  p.parts = parts;
  if (parts <= 1 || nodes <= 0)
    return p;
  const double P = static_cast<double>(parts);
  const double inHalo = 1 - std::pow(1 - 1 / P, degreeMean);
  // Nodes of the other parts adjacent to a part, summed over the parts.
  p.haloRows = static_cast<int64_t>(nodes * (P - 1) / P * inHalo * P);
  p.maxHaloRows = static_cast<int64_t>(nodes * (P - 1) / P * inHalo);
  p.maxPartEdges = static_cast<int64_t>(std::ceil(edges / P));
  p.minInteriorEdges =
      static_cast<int64_t>(std::floor(edges / P * std::pow(1 / P, degreeMean)));
  return p;
}

llvm::json::Value megagraph::toJSON(const GraphStats &s) {
  llvm::json::Array parts;
  for (const GraphStats::Partition &p : s.partitions)
    parts.push_back(
        llvm::json::Object{{"parts", p.parts},
                           {"halo_rows", p.haloRows},
                           {"max_halo_rows", p.maxHaloRows},
                           {"max_part_edges", p.maxPartEdges},
                           {"min_interior_edges", p.minInteriorEdges}});
  return llvm::json::Object{{"nodes", s.nodes},
                            {"edges", s.edges},
                            {"degree_mean", s.degreeMean},
                            {"degree_max", s.degreeMax},
                            {"degree_cv", s.degreeCv},
                            {"partitions", std::move(parts)}};
}

bool megagraph::fromJSON(const llvm::json::Value &value, GraphStats &s,
                         llvm::json::Path path) {
  llvm::json::ObjectMapper m(value, path);
  if (!m || !m.map("nodes", s.nodes) || !m.map("edges", s.edges) ||
      !m.mapOptional("degree_mean", s.degreeMean) ||
      !m.mapOptional("degree_max", s.degreeMax) ||
      !m.mapOptional("degree_cv", s.degreeCv))
    return false;
  const llvm::json::Array *parts = value.getAsObject()->getArray("partitions");
  s.partitions.clear();
  for (size_t i = 0; parts && i < parts->size(); ++i) {
    llvm::json::ObjectMapper pm((*parts)[i], path.field("partitions").index(i));
    GraphStats::Partition p;
    if (!pm || !pm.map("parts", p.parts) || !pm.map("halo_rows", p.haloRows) ||
        !pm.mapOptional("max_halo_rows", p.maxHaloRows) ||
        !pm.mapOptional("max_part_edges", p.maxPartEdges) ||
        !pm.mapOptional("min_interior_edges", p.minInteriorEdges))
      return false;
    s.partitions.push_back(p);
  }
  if (s.nodes < 1 || s.edges < 0) {
    path.report("nodes must be >= 1 and edges >= 0");
    return false;
  }
  return true;
}

llvm::Expected<GraphStats> megagraph::loadGraphStats(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("--graph-stats '" + path + "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("--graph-stats '" + path +
                "': " + llvm::toString(json.takeError()));
  GraphStats stats;
  llvm::json::Path::Root root("graph-stats");
  if (!fromJSON(*json, stats, root))
    return fail("--graph-stats '" + path +
                "': " + llvm::toString(root.getError()) +
                " (write it with EXE --mode graph-stats)");
  return stats;
}

llvm::Expected<GcnProfile> megagraph::analyzeGcn(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("the module has no forward function @main");
  GcnProfile g;
  Value x;
  for (BlockArgument arg : main.getArguments()) {
    auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  gt::kTensorNameAttr);
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (name && t && t.getRank() == 2 && t.hasStaticShape() &&
        mgrt_role_of_name(name.getValue().str().c_str(), nullptr) ==
            MGRT_ROLE_NODE_FEATURES) {
      x = arg;
      g.nodes = t.getDimSize(0);
    }
  }
  if (!x)
    return fail("not a full-graph model: no input x [N, F]");
  // The node features' descendants, and the parameters'.
  DenseSet<Value> fromX = {x}, fromParams;
  main.walk([&](Operation *op) {
    auto in = [&](const DenseSet<Value> &set) {
      return llvm::any_of(op->getOperands(),
                          [&](Value v) { return set.contains(v); });
    };
    if (in(fromX))
      fromX.insert(op->result_begin(), op->result_end());
    auto load = dyn_cast<ml_program::GlobalLoadOp>(op);
    auto global =
        load ? SymbolTable::lookupNearestSymbolFrom<ml_program::GlobalOp>(
                   op, load.getGlobalAttr())
             : ml_program::GlobalOp();
    if (in(fromParams) || (global && global->hasAttr("gt.param")))
      fromParams.insert(op->result_begin(), op->result_end());
    if (auto spmm = dyn_cast<gt::SpmmOp>(op);
        spmm && fromX.contains(spmm.getInput()))
      g.aggregations.push_back(
          {cast<RankedTensorType>(spmm.getInput().getType()).getDimSize(1),
           spmm.getInput() == x, fromParams.contains(spmm.getInput())});
    if (auto lin = dyn_cast<gt::LinearOp>(op);
        lin && fromX.contains(lin.getInput())) {
      auto w = cast<RankedTensorType>(lin.getWeight().getType());
      g.transforms.push_back({w.getDimSize(0), w.getDimSize(1)});
    }
  });
  if (g.aggregations.empty())
    return fail("not a full-graph GCN: no aggregation (gt.spmm) over the "
                "node features");
  for (auto global : module.getOps<ml_program::GlobalOp>())
    if (global->hasAttr("gt.param")) {
      auto t = cast<ShapedType>(global.getType());
      g.paramBytes += t.getNumElements() * t.getElementTypeBitWidth() / 8;
    }
  return g;
}

GcnPrediction megagraph::predictGcn(const GcnProfile &model,
                                    const GraphStats &graph,
                                    const ParallelPlan &plan,
                                    const HardwareProfile &hw) {
  GcnPrediction r;
  const int64_t P = std::max<int64_t>(1, std::max(plan.mop, plan.gp));
  const bool mop = plan.mop > 1, gp = plan.gp > 1;
  const double N = static_cast<double>(model.nodes);
  // Self loops the model adds are part of the aggregation.
  const double edges = static_cast<double>(graph.edges) + N;
  const double share = hw.computeShare(P);
  const GraphStats::Partition part = graph.partition(P);
  const double bw = hw.memoryBandwidth * share;
  double spmm = 0, gemm = 0, commTime = 0, commBytes = 0, commTotal = 0;
  double hidden = 0;
  for (const GcnProfile::Aggregation &a : model.aggregations) {
    const double f = static_cast<double>(a.width);
    const double fp = std::ceil(f / P) * P;
    // Forward and backward (the transposed SpMM).
    const int runs = a.backward ? 2 : 1;
    if (mop) {
      spmm += runs * edges * fp / P * 4 / bw;
      const double sent = N / P * fp * 4 * (P - 1) / P;
      const int switches = runs * (a.wholeInput ? 1 : 2);
      commBytes += switches * sent;
      commTotal += switches * sent * P;
      commTime += switches * allToAll(hw, P, sent);
      // moa=1 takes the switch next to each transform into the pipeline,
      // one all-to-all per chunk: the same bytes, K - 1 more latencies.
      if (plan.moa)
        commTime +=
            runs * (static_cast<double>(plan.chunks) - 1) * allToAll(hw, P, 0);
    } else if (gp) {
      const double e = static_cast<double>(part.maxPartEdges) + N / P;
      spmm += runs * e * f * 4 / bw;
      const double halo = static_cast<double>(part.maxHaloRows) * f * 4;
      commBytes += runs * halo;
      commTotal += runs * static_cast<double>(part.haloRows) * f * 4;
      const double haloTime = allToAll(hw, P, halo);
      commTime += runs * haloTime;
      const double interior =
          static_cast<double>(part.minInteriorEdges) * f * 4 / bw;
      if (!plan.moa)
        hidden += runs * std::min(haloTime, interior);
    } else {
      spmm += runs * edges * f * 4 / bw;
    }
  }
  for (auto [k, m] : model.transforms) {
    const double n = N / P;
    gemm += 3 * 2 * n * k * m / (hw.gemmRate(n, k, m) * share);
  }
  if (P > 1) {
    const double grads = static_cast<double>(model.paramBytes);
    commBytes += 2 * grads * (P - 1) / P;
    commTotal += 2 * grads * (P - 1);
    commTime += hw.allReduce(P, grads);
  }
  double compute = spmm + gemm;
  // The accelerator pipeline: SpMM and GEMM on separate units, overlapped
  // but for the first and last chunk; a fixed cost per chunk. Under gp and
  // mop each rank pipelines its share; the halo exchange (gp) and the
  // chunks' all-to-alls (mop, which may run alongside the pool's blocks)
  // are charged in full as communication time above, not overlapped.
  // Without moa, gp's exchanges are hidden behind the interior rows up to
  // their SpMM time (`hidden`).
  if (plan.moa) {
    const double k = static_cast<double>(plan.chunks);
    compute = std::max(spmm, gemm) + std::min(spmm, gemm) / k +
              k * hw.opOverhead * 2 * model.aggregations.size();
  }
  r.computeTime = compute;
  r.communicationTime = commTime;
  r.overlapTime = hidden;
  // The CPU cores do the copies.
  r.stepTime = compute + commTime - hidden;
  r.commBytesPerRank = commBytes;
  r.commBytesTotal = commTotal;
  return r;
}

GcnChoice megagraph::chooseGcnPlan(const GcnProfile &model,
                                   const GraphStats &graph, int64_t devices,
                                   const HardwareProfile &hw, bool moa) {
  GcnChoice c;
  std::vector<ParallelPlan> plans;
  auto add = [&](ParallelPlan p) {
    plans.push_back(p); // without the pipeline too: it may not pay off
    if (!moa)
      return;
    p.moa = true;
    for (int64_t k : {2, 4, 8, 16, 32}) {
      p.chunks = k;
      plans.push_back(p);
    }
  };
  if (devices <= 1) {
    add(ParallelPlan{});
  } else {
    // Each split needs P | N (equal row blocks).
    if (model.nodes % devices == 0) {
      ParallelPlan m;
      m.mop = devices;
      add(m);
      ParallelPlan g;
      g.gp = devices;
      add(g);
    }
  }
  for (const ParallelPlan &p : plans)
    c.ranked.push_back({p, predictGcn(model, graph, p, hw)});
  std::stable_sort(c.ranked.begin(), c.ranked.end(),
                   [](const auto &a, const auto &b) {
                     return a.second.stepTime < b.second.stepTime;
                   });
  if (!c.ranked.empty()) {
    c.plan = c.ranked.front().first;
    c.prediction = c.ranked.front().second;
  }
  return c;
}
