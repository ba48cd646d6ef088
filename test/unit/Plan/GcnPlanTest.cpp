//===- GcnPlanTest.cpp - mop vs gp for full-graph GCNs --------------------===//
//
// The GCN step model (GcnPlan.h): its traffic follows the two strategies'
// formulas, and the choice follows the graph: a power-law graph whose METIS
// parts each need most of the others' rows (hubs everywhere) goes to mop, a
// graph whose parts barely touch (small halo) to gp; the halo estimate of an
// unmeasured graph grows with P; gp's halo exchange is hidden behind its
// interior rows, bounded by both; the stats read back from JSON.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/GcnPlan.h"

#include <gtest/gtest.h>

#include "llvm/ADT/STLExtras.h"

using namespace megagraph;

namespace {

/// A two-layer GCN of N nodes: F -> H -> C, aggregating H then C columns.
GcnProfile gcn(int64_t n, int64_t f, int64_t h, int64_t c) {
  GcnProfile g;
  g.nodes = n;
  g.aggregations = {{h, false, true}, {c, false, true}};
  g.transforms = {{f, h}, {h, c}};
  g.paramBytes = 4 * (f * h + h + h * c + c);
  return g;
}

HardwareProfile machine() {
  HardwareProfile hw;
  getBuiltinProfile("h100", hw);
  return hw;
}

TEST(GcnPlanTest, TrafficFollowsTheFormulas) {
  const GcnProfile m = gcn(1024, 64, 128, 16);
  GraphStats g;
  g.nodes = 1024;
  g.edges = 16384;
  g.partitions = {{4, 3000, 900, 5000}};
  const HardwareProfile hw = machine();
  ParallelPlan mop;
  mop.mop = 4;
  const double grads = 2.0 * m.paramBytes * 3 / 4;
  // 4 switches of N / P x F' 4 bytes per aggregation, 3/4 of them sent.
  const double mopBytes =
      4 * (1024.0 / 4 * 128 * 4 * 3 / 4) + 4 * (1024.0 / 4 * 16 * 4 * 3 / 4);
  GcnPrediction r = predictGcn(m, g, mop, hw);
  EXPECT_DOUBLE_EQ(r.commBytesPerRank, mopBytes + grads);
  EXPECT_DOUBLE_EQ(r.commBytesTotal, 4 * (mopBytes + grads));
  ParallelPlan gp;
  gp.gp = 4;
  // The halo forward and backward, per aggregation.
  r = predictGcn(m, g, gp, hw);
  EXPECT_DOUBLE_EQ(r.commBytesPerRank, 2 * 900.0 * 4 * (128 + 16) + grads);
  EXPECT_DOUBLE_EQ(r.commBytesTotal, 2 * 3000.0 * 4 * (128 + 16) + 4 * grads);
  // One process sends nothing.
  r = predictGcn(m, g, ParallelPlan{}, hw);
  EXPECT_EQ(r.commBytesPerRank, 0);
  EXPECT_GT(r.stepTime, 0);
}

TEST(GcnPlanTest, ChoiceFollowsTheGraph) {
  const GcnProfile m = gcn(1 << 20, 128, 128, 16);
  const HardwareProfile hw = machine();
  GraphStats skewed;
  skewed.nodes = 1 << 20;
  skewed.edges = 16 << 20;
  skewed.degreeMean = 16;
  skewed.degreeCv = 4;
  // Each of 8 parts needs 70% of the other parts' rows.
  skewed.partitions = {{8, 8 * 640000, 660000, 2400000}};
  GcnChoice c = chooseGcnPlan(m, skewed, 8, hw);
  EXPECT_EQ(c.plan.mop, 8) << toString(c.plan);
  ASSERT_EQ(c.ranked.size(), 2u);
  // A mesh-like graph: each part touches a thin boundary.
  GraphStats local = skewed;
  local.degreeCv = 0.2;
  local.partitions = {{8, 8 * 2000, 2200, 2100000}};
  c = chooseGcnPlan(m, local, 8, hw);
  EXPECT_EQ(c.plan.gp, 8) << toString(c.plan);
  // mop's traffic does not depend on the graph; gp's does.
  ParallelPlan mop;
  mop.mop = 8;
  EXPECT_EQ(predictGcn(m, skewed, mop, hw).commBytesPerRank,
            predictGcn(m, local, mop, hw).commBytesPerRank);
  // P must divide N: no split of 3 for 2^20 nodes.
  EXPECT_TRUE(chooseGcnPlan(m, local, 3, hw).ranked.empty());
  // One device: one process; with moa, a chunk count.
  c = chooseGcnPlan(m, local, 1, hw, /*moa=*/true);
  EXPECT_TRUE(c.plan.moa);
  EXPECT_GT(c.plan.chunks, 1);
  // Each plan is priced without the pipeline too; on 8 devices with gp
  // and with mop.
  c = chooseGcnPlan(m, local, 8, hw, /*moa=*/true);
  for (bool moa : {false, true}) {
    EXPECT_TRUE(llvm::any_of(c.ranked, [&](const auto &r) {
      return r.first.moa == moa && r.first.gp == 8;
    }));
    EXPECT_TRUE(llvm::any_of(c.ranked, [&](const auto &r) {
      return r.first.moa == moa && r.first.mop == 8;
    }));
  }
  // The pipeline hides compute only: the bytes do not change, and mop's
  // switches inside the pipeline cost K - 1 more all-to-all latencies.
  ParallelPlan gp8, gp8moa, mop8, mop8moa;
  gp8.gp = gp8moa.gp = 8;
  mop8.mop = mop8moa.mop = 8;
  gp8moa.moa = mop8moa.moa = true;
  gp8moa.chunks = mop8moa.chunks = 4;
  EXPECT_EQ(predictGcn(m, local, gp8moa, hw).commBytesTotal,
            predictGcn(m, local, gp8, hw).commBytesTotal);
  EXPECT_EQ(predictGcn(m, local, mop8moa, hw).commBytesPerRank,
            predictGcn(m, local, mop8, hw).commBytesPerRank);
  const double chunkCost = 4 * hw.opOverhead * 2 * m.aggregations.size();
  EXPECT_LT(predictGcn(m, local, gp8moa, hw).computeTime - chunkCost,
            predictGcn(m, local, gp8, hw).computeTime);
  EXPECT_LT(predictGcn(m, local, mop8moa, hw).computeTime - chunkCost,
            predictGcn(m, local, mop8, hw).computeTime);
  EXPECT_GT(predictGcn(m, local, mop8moa, hw).communicationTime,
            predictGcn(m, local, mop8, hw).communicationTime);
  EXPECT_EQ(predictGcn(m, local, gp8moa, hw).communicationTime,
            predictGcn(m, local, gp8, hw).communicationTime);
}

TEST(GcnPlanTest, OverlapHidesTheHaloUpToTheInteriorRows) {
  const GcnProfile m = gcn(1024, 64, 128, 16);
  const HardwareProfile hw = machine();
  GraphStats g;
  g.nodes = 1024;
  g.edges = 16384;
  ParallelPlan gp;
  gp.gp = 4;
  // No interior rows: nothing hidden.
  g.partitions = {{4, 3000, 900, 1 << 26, 0}};
  const GcnPrediction none = predictGcn(m, g, gp, hw);
  EXPECT_EQ(none.overlapTime, 0);
  EXPECT_DOUBLE_EQ(none.stepTime, none.computeTime + none.communicationTime);
  // Each exchange (forward and backward, per aggregation) is hidden behind
  // the interior rows' SpMM, bounded by the exchange ...
  const AlphaBeta &ab = 4 <= hw.devicesPerNode ? hw.intra : hw.inter;
  auto halo = [&](double f) { return 3 * ab.alpha + 900 * f * 4 * ab.beta; };
  g.partitions = {{4, 3000, 900, 1 << 26, 1 << 26}};
  GcnPrediction all = predictGcn(m, g, gp, hw);
  const double bw = hw.memoryBandwidth * hw.computeShare(4);
  ASSERT_LT(halo(128), (1 << 26) * 128.0 * 4 / bw)
      << "the interior must outlast it";
  EXPECT_DOUBLE_EQ(all.overlapTime, 2 * halo(128) + 2 * halo(16));
  EXPECT_DOUBLE_EQ(all.stepTime, none.stepTime - all.overlapTime);
  EXPECT_DOUBLE_EQ(all.communicationTime, none.communicationTime);
  EXPECT_DOUBLE_EQ(all.commBytesPerRank, none.commBytesPerRank);
  // ... and by the interior rows' SpMM time.
  g.partitions = {{4, 3000, 900, 1 << 26, 1}};
  GcnPrediction few = predictGcn(m, g, gp, hw);
  ASSERT_GT(halo(16), 16 * 4 / bw);
  EXPECT_DOUBLE_EQ(few.overlapTime, 2 * 128 * 4 / bw + 2 * 16 * 4 / bw);
  // The pipelined kernels exchange outside their pipeline: no credit.
  gp.moa = true;
  gp.chunks = 4;
  g.partitions = {{4, 3000, 900, 1 << 26, 1 << 26}};
  EXPECT_EQ(predictGcn(m, g, gp, hw).overlapTime, 0);
  // An unmeasured graph: interior rows with probability (1/P)^degree.
  GraphStats est;
  est.nodes = 1024;
  est.edges = 16384;
  est.degreeMean = 2;
  EXPECT_EQ(est.partition(4).minInteriorEdges, 16384 / 4 / 16);
}

TEST(GcnPlanTest, EstimatedHaloGrowsWithParts) {
  GraphStats g;
  g.nodes = 100000;
  g.edges = 1600000;
  g.degreeMean = 16;
  int64_t prev = 0;
  for (int64_t p : {2, 4, 8, 16}) {
    GraphStats::Partition part = g.partition(p);
    EXPECT_GT(part.haloRows, prev) << p;
    EXPECT_LE(part.maxHaloRows, g.nodes);
    prev = part.haloRows;
  }
  // A measured partition wins over the estimate.
  g.partitions = {{4, 123, 45, 6}};
  EXPECT_EQ(g.partition(4).haloRows, 123);
}

TEST(GcnPlanTest, StatsRoundTripThroughJson) {
  GraphStats g;
  g.nodes = 10;
  g.edges = 40;
  g.degreeMean = 4;
  g.degreeMax = 9;
  g.degreeCv = 0.5;
  g.partitions = {{2, 7, 4, 22, 13}};
  GraphStats back;
  llvm::json::Path::Root root;
  ASSERT_TRUE(fromJSON(toJSON(g), back, root));
  EXPECT_EQ(back.nodes, 10);
  EXPECT_EQ(back.partitions.size(), 1u);
  EXPECT_EQ(back.partitions[0].maxPartEdges, 22);
  EXPECT_EQ(back.partitions[0].minInteriorEdges, 13);
  llvm::json::Value bad = llvm::json::Object{{"nodes", 0}, {"edges", 1}};
  llvm::json::Path::Root root2;
  EXPECT_FALSE(fromJSON(bad, back, root2));
  llvm::Expected<GraphStats> missing = loadGraphStats("/nonexistent.json");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("/nonexistent.json"),
            std::string::npos);
}

} // namespace
