//===- StageSplitTest.cpp - The stage-splitting DP vs brute force ---------===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/StageSplit.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace megagraph;
using llvm::ArrayRef;

namespace {

/// Every split of n units into pp non-empty stages: the least bottleneck,
/// then the least peak memory.
StageSplit bruteForce(ArrayRef<UnitCost> units,
                      const StageSplitOptions &options) {
  StageSplit best;
  int64_t n = units.size();
  std::vector<int64_t> firstUnit{0};
  std::function<void()> recurse = [&]() {
    if (static_cast<int64_t>(firstUnit.size()) == options.pp) {
      StageSplit s = evaluateSplit(units, firstUnit, options);
      if (!s.feasible)
        return;
      int64_t peak =
          *std::max_element(s.stageMemory.begin(), s.stageMemory.end());
      if (!best.feasible || s.bottleneck < best.bottleneck ||
          (s.bottleneck == best.bottleneck &&
           peak < *std::max_element(best.stageMemory.begin(),
                                    best.stageMemory.end())))
        best = s;
      return;
    }
    for (int64_t b = firstUnit.back() + 1; b < n; ++b) {
      firstUnit.push_back(b);
      recurse();
      firstUnit.pop_back();
    }
  };
  recurse();
  return best;
}

int64_t peakOf(const StageSplit &s) {
  return *std::max_element(s.stageMemory.begin(), s.stageMemory.end());
}

TEST(StageSplit, InFlightMicroBatches) {
  StageSplitOptions o;
  o.pp = 4;
  o.microBatches = 8;
  EXPECT_EQ(inFlightMicroBatches(0, o), 4);
  EXPECT_EQ(inFlightMicroBatches(3, o), 1);
  o.microBatches = 2;
  EXPECT_EQ(inFlightMicroBatches(0, o), 2);
  o.gpipe = true;
  EXPECT_EQ(inFlightMicroBatches(3, o), 2);
}

TEST(StageSplit, ForwardedBytesPerMicroBatchAfterTheFirstStage) {
  // A bias made by unit 0 and read by every unit: a stage that starts
  // later holds it in the input slot of each micro-batch in flight.
  std::vector<UnitCost> units(4);
  for (UnitCost &u : units) {
    u.time = 1;
    u.persistentBytes = 100;
    u.activationBytes = 10;
    u.inputBytes = 3;
  }
  for (size_t u = 1; u < units.size(); ++u)
    units[u].forwardedBytes = 7;
  StageSplitOptions o;
  o.pp = 2;
  o.microBatches = 4;
  // Stage 0 (2 in flight, 1 in its entries' arena): its own units only.
  EXPECT_EQ(stageMemory(units, 0, 2, 0, o), 200 + 3 * 20);
  // Stage 1 (1 in flight): plus the bias it receives.
  EXPECT_EQ(stageMemory(units, 2, 4, 1, o), 200 + 1 * (20 + 7));
  // Recomputation stores the stage input and the forwarded bias per
  // micro-batch in flight, and one micro-batch's activations.
  o.recompute = true;
  EXPECT_EQ(stageMemory(units, 2, 4, 1, o), 200 + 1 * (3 + 7) + 20);
  EXPECT_EQ(stageMemory(units, 0, 2, 0, o), 200 + 2 * 3 + 20);
  o.recompute = false;
  o.pp = 4;
  StageSplit even = evaluateSplit(units, {0, 1, 2, 3}, o);
  ASSERT_TRUE(even.feasible);
  EXPECT_EQ(even.stageMemory,
            (std::vector<int64_t>{100 + 5 * 10, 100 + 4 * 17, 100 + 3 * 17,
                                  100 + 1 * 17}));
}

TEST(StageSplit, EntryArenaOfStagesBeforeTheLast) {
  // A stage before the last holds one micro-batch's values in its entries'
  // arena on top of its slots; the last stage (forward and backward in one
  // call) and recomputation do not.
  std::vector<UnitCost> units(4);
  for (UnitCost &u : units) {
    u.time = 1;
    u.persistentBytes = 100;
    u.activationBytes = 10;
    u.inputBytes = 3;
  }
  StageSplitOptions o;
  o.pp = 2;
  o.microBatches = 2;
  EXPECT_EQ(entryArenaMicroBatches(0, o), 1);
  EXPECT_EQ(entryArenaMicroBatches(1, o), 0);
  EXPECT_EQ(stageMemory(units, 0, 2, 0, o), 200 + (2 + 1) * 20);
  EXPECT_EQ(stageMemory(units, 2, 4, 1, o), 200 + 1 * 20);
  o.recompute = true;
  EXPECT_EQ(entryArenaMicroBatches(0, o), 0);
  o.recompute = false;
  o.pp = 1;
  EXPECT_EQ(entryArenaMicroBatches(0, o), 0);
  EXPECT_EQ(stageMemory(units, 0, 4, 0, o), 400 + 1 * 40);
}

TEST(StageSplit, HeavyEmbeddingGetsItsOwnStage) {
  // An embedding as costly as three layers, then six layers.
  std::vector<UnitCost> units(7, UnitCost{1.0, 10, 5, 5, "layer"});
  units[0].time = 3.0;
  StageSplitOptions o;
  o.pp = 3;
  o.microBatches = 4;
  StageSplit s = splitStages(units, o);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.firstUnit, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(s.bottleneck, 3.0);
  StageSplit even = evenSplit(units, o);
  ASSERT_TRUE(even.feasible);
  EXPECT_EQ(even.firstUnit, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(even.bottleneck, 5.0);
  EXPECT_EQ(formatStages(s.firstUnit), "0:1:4");
}

TEST(StageSplit, TooFewUnitsOrTooLittleMemory) {
  std::vector<UnitCost> units(2, UnitCost{1.0, 10, 5, 5, ""});
  StageSplitOptions o;
  o.pp = 3;
  EXPECT_FALSE(splitStages(units, o).feasible);
  o.pp = 2;
  o.memoryLimit = 14;
  EXPECT_FALSE(splitStages(units, o).feasible);
  o.memoryLimit = 15;
  // Stage 0 keeps 2 micro-batches at mb=2: 10 + 2*5 > 15.
  o.microBatches = 2;
  EXPECT_FALSE(splitStages(units, o).feasible);
  o.recompute = true; // 10 + 2*5 (inputs) + 5
  EXPECT_FALSE(splitStages(units, o).feasible);
  o.memoryLimit = 25;
  EXPECT_TRUE(splitStages(units, o).feasible);
}

TEST(StageSplit, MatchesBruteForceOnRandomInstances) {
  std::mt19937 rng(12345);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t n = 1 + rng() % 9;
    std::vector<UnitCost> units(n);
    for (UnitCost &u : units) {
      // Small integer times: many ties, which the tie-break must resolve
      // like the brute force does.
      u.time = static_cast<double>(rng() % 6) + (rng() % 2 ? 0.5 : 0.0);
      u.persistentBytes = rng() % 50;
      u.activationBytes = rng() % 30;
      u.inputBytes = rng() % 10;
    }
    StageSplitOptions o;
    o.pp = 1 + rng() % 5;
    o.microBatches = 1 + rng() % 8;
    o.recompute = rng() % 2;
    o.gpipe = rng() % 4 == 0;
    o.memoryLimit = rng() % 3 == 0 ? 0 : 40 + rng() % 200;
    StageSplit dp = splitStages(units, o);
    StageSplit brute = bruteForce(units, o);
    ASSERT_EQ(dp.feasible, brute.feasible) << "trial " << trial;
    if (!dp.feasible) {
      ++infeasible;
      continue;
    }
    ++feasible;
    EXPECT_EQ(dp.bottleneck, brute.bottleneck) << "trial " << trial;
    EXPECT_EQ(peakOf(dp), peakOf(brute)) << "trial " << trial;
    // The DP's split is a valid one with the values it reports.
    StageSplit again = evaluateSplit(units, dp.firstUnit, o);
    ASSERT_TRUE(again.feasible);
    EXPECT_EQ(again.bottleneck, dp.bottleneck);
    EXPECT_EQ(again.stageMemory, dp.stageMemory);
  }
  // Both outcomes are exercised.
  EXPECT_GT(feasible, 200);
  EXPECT_GT(infeasible, 50);
}

} // namespace
