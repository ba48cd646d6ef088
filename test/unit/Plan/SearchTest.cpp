//===- SearchTest.cpp - Plan search against brute force -------------------===//
//
// The search (enumeration + splitStages + pruning + ranking) must find the
// same best step time as an independent brute force that tries every plan
// of the space and every pipeline stage split, on random synthetic cost
// tables; plus properties of the cost model and the profiles.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/Search.h"
#include "megagraph/Plan/CostModel.h"
#include "megagraph/Plan/Profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

using namespace megagraph;

namespace {

ModelProfile randomModel(std::mt19937 &rng) {
  std::uniform_int_distribution<int> layers(1, 6), pick(0, 3);
  std::uniform_real_distribution<double> u(0.2, 5.0);
  const int64_t batches[] = {4, 6, 8, 12};
  const int64_t seqs[] = {64, 96, 128, 256};
  ModelProfile m;
  m.batch = batches[pick(rng)];
  m.seqLen = seqs[pick(rng)];
  m.ioBytesPerSeq = 1e4 * u(rng);
  m.optimizerStateFactor = pick(rng) % 2 ? 2 : 0;
  m.biasGradBytesPerSeq = 1e4 * u(rng);
  m.heads = pick(rng) % 2 ? 4 : 6;
  int n = layers(rng);
  for (int l = 0; l < n; ++l) {
    UnitProfile p;
    p.name = "layer" + std::to_string(l);
    p.gemmFlops = 1e9 * u(rng);
    p.smallGemmFlops = 1e7 * u(rng);
    p.attentionFlops = 1e8 * u(rng);
    p.otherBytes = 1e6 * u(rng);
    p.numOps = 10;
    p.paramBytes = static_cast<int64_t>(1e6 * u(rng));
    p.activationBytes = 1e5 * u(rng);
    p.biasBytes = 1e4 * u(rng);
    p.inputBytes = 1e4 * u(rng);
    p.transientBytes = 1e4 * u(rng);
    p.kvBytes = 1e4 * u(rng);
    p.attentionOps = 1;
    m.units.push_back(p);
  }
  return m;
}

HardwareProfile testProfile() {
  HardwareProfile hw;
  EXPECT_TRUE(getBuiltinProfile("a100", hw));
  hw.devicesPerNode = 4; // some groups cross nodes
  return hw;
}

/// Every stage split of n units into k stages (first unit of each stage).
void forEachSplit(int64_t n, int64_t k,
                  const std::function<void(std::vector<int64_t> &)> &fn) {
  std::vector<int64_t> first{0};
  std::function<void(int64_t)> rec = [&](int64_t next) {
    if ((int64_t)first.size() == k) {
      fn(first);
      return;
    }
    for (int64_t s = next; s <= n - (k - (int64_t)first.size()); ++s) {
      first.push_back(s);
      rec(s + 1);
      first.pop_back();
    }
  };
  rec(1);
}

struct Brute {
  bool found = false;
  double time = 0;
  double peak = 0;
  ParallelPlan plan;
};

/// Independent enumeration of the plan space (the same space the search
/// documents) and of every stage split. ZeRO applies wherever gradients are
/// summed over more than one rank, dp x cp (cp blocks of one sequence hold
/// partial gradients, and the compiler shards over dp x cp), so cp > 1
/// with dp = 1 has ZeRO stages too; a cp block has at least minCpRows rows
/// (cp need not divide S: uneven blocks); the cp modes are the compiler's
/// (SearchOptions::cpModes), Ulysses only where cp divides the heads.
Brute bruteForce(const ModelProfile &m, const HardwareProfile &hw, int64_t P,
                 int64_t budget, bool recompute) {
  Brute best;
  for (int64_t dp = 1; dp <= P; ++dp)
    for (int64_t pp = 1; dp * pp <= P; ++pp) {
      if (P % (dp * pp))
        continue;
      int64_t cp = P / (dp * pp);
      if (m.batch % dp || pp > m.layers() ||
          (cp > 1 && m.seqLen / cp < SearchOptions().minCpRows))
        continue;
      int64_t b = m.batch / dp;
      for (int64_t mb = 1; mb <= b; ++mb) {
        if (b % mb || (pp > 1 && mb < pp))
          continue;
        for (int64_t zero = 0; zero <= (dp * cp > 1 ? 3 : 0); ++zero)
          for (int rec = 0; rec <= (recompute ? 1 : 0); ++rec)
            for (const std::string &mode : SearchOptions().cpModes) {
              if (cp == 1 && mode != "allgather")
                continue;
              if (mode == "ulysses" && m.heads % cp)
                continue;
              ParallelPlan p;
              p.dp = dp, p.pp = pp, p.cp = cp, p.microBatches = mb;
              p.zero = zero, p.recompute = rec, p.cpMode = mode;
              auto consider = [&](const ParallelPlan &q) {
                Prediction pr = predict(m, q, hw);
                ASSERT_TRUE(pr.valid) << toString(q) << pr.invalidReason;
                if (budget > 0 && pr.peakBytes() > budget)
                  return;
                if (!best.found || pr.stepTime < best.time) {
                  best.found = true;
                  best.time = pr.stepTime;
                  best.peak = pr.peakBytes();
                  best.plan = q;
                }
              };
              if (pp == 1) {
                consider(p);
              } else {
                forEachSplit(m.layers(), pp, [&](std::vector<int64_t> &s) {
                  ParallelPlan q = p;
                  q.stages = s;
                  consider(q);
                });
              }
            }
      }
    }
  return best;
}

TEST(PlanSearch, MatchesBruteForceOnRandomCostTables) {
  std::mt19937 rng(20261130);
  HardwareProfile hw = testProfile();
  const int64_t deviceCounts[] = {1, 2, 4, 6, 8, 12};
  int foundBoth = 0, noneBoth = 0;
  for (int trial = 0; trial < 150; ++trial) {
    ModelProfile m = randomModel(rng);
    SearchOptions o;
    o.devices = deviceCounts[trial % 6];
    o.allowRecompute = trial % 2;
    // A budget between the least and the most memory of the plans.
    Brute unlimited = bruteForce(m, hw, o.devices, 0, o.allowRecompute);
    if (!unlimited.found) { // no plan divides this batch / S / layers
      EXPECT_EQ(searchPlans(m, hw, o).evaluated -
                    searchPlans(m, hw, o).prunedInvalid,
                0);
      continue;
    }
    SearchOptions probe = o;
    probe.deviceMemory = int64_t(1) << 60;
    SearchResult all = searchPlans(m, hw, probe);
    std::uniform_real_distribution<double> frac(0.0, 1.3);
    o.deviceMemory = static_cast<int64_t>(all.smallestPeak * (0.7 + frac(rng)));
    Brute brute =
        bruteForce(m, hw, o.devices, o.deviceMemory, o.allowRecompute);
    SearchResult r = searchPlans(m, hw, o);
    ASSERT_EQ(r.found, brute.found)
        << "trial " << trial << " devices " << o.devices << " budget "
        << o.deviceMemory;
    if (!brute.found) {
      ++noneBoth;
      // The reported smallest memory is over the budget, and enough.
      EXPECT_GT(r.smallestPeakImplemented, (double)o.deviceMemory);
      SearchOptions retry = o;
      retry.deviceMemory =
          static_cast<int64_t>(std::ceil(r.smallestPeakImplemented));
      EXPECT_TRUE(searchPlans(m, hw, retry).found) << "trial " << trial;
      continue;
    }
    ++foundBoth;
    EXPECT_NEAR(r.best.prediction.stepTime, brute.time, 1e-9 * brute.time)
        << "trial " << trial << ": search " << toString(r.best.plan)
        << " brute force " << toString(brute.plan);
    EXPECT_LE(r.best.prediction.peakBytes(), (double)o.deviceMemory);
    // The chosen plan, priced again with its stages, costs what was ranked.
    Prediction again = predict(m, r.best.plan, hw);
    EXPECT_NEAR(again.stepTime, r.best.prediction.stepTime, 1e-9 * brute.time);
    // Ranked fastest first, all within the budget.
    for (size_t i = 1; i < r.ranked.size(); ++i)
      EXPECT_LE(r.ranked[i - 1].prediction.stepTime,
                r.ranked[i].prediction.stepTime);
    for (const Candidate &c : r.ranked)
      EXPECT_LE(c.prediction.peakBytes(), (double)o.deviceMemory);
  }
  // Both outcomes were exercised.
  EXPECT_GT(foundBoth, 20);
  EXPECT_GT(noneBoth, 5);
}

TEST(PlanSearch, UnimplementedPlansAreNeverChosen) {
  std::mt19937 rng(7);
  HardwareProfile hw = testProfile();
  for (int trial = 0; trial < 30; ++trial) {
    ModelProfile m = randomModel(rng);
    SearchOptions o;
    o.devices = 4;
    o.implemented = [](const ParallelPlan &p) -> std::string {
      return p.pp == 1 && p.cp == 1 && p.microBatches == 1 && !p.recompute
                 ? ""
                 : "only dp";
    };
    SearchResult r = searchPlans(m, hw, o);
    if (!r.found)
      continue;
    EXPECT_EQ(r.best.plan.pp, 1);
    EXPECT_EQ(r.best.plan.cp, 1);
    EXPECT_LE(r.bestModelled.prediction.stepTime, r.best.prediction.stepTime);
    // The best of the dp-only plans by brute force.
    double bestDp = 1e300;
    for (int64_t zero = 0; zero <= 3; ++zero) {
      ParallelPlan p;
      p.dp = 4, p.zero = zero;
      Prediction pr = predict(m, p, hw);
      if (pr.valid)
        bestDp = std::min(bestDp, pr.stepTime);
    }
    EXPECT_NEAR(r.best.prediction.stepTime, bestDp, 1e-9 * bestDp);
  }
}

TEST(CostModel, MemoryTermsFollowThePlan) {
  ModelProfile m = syntheticTransformer(8, 512, 8, 32, 256);
  HardwareProfile hw;
  ASSERT_TRUE(getBuiltinProfile("h100", hw));
  ParallelPlan dp;
  dp.dp = 8;
  Prediction z0 = predict(m, dp, hw);
  ASSERT_TRUE(z0.valid);
  double P = m.paramBytes();
  EXPECT_DOUBLE_EQ(z0.memory.parameters, P);
  EXPECT_DOUBLE_EQ(z0.memory.optimizerState, 2 * P);
  dp.zero = 1;
  Prediction z1 = predict(m, dp, hw);
  EXPECT_DOUBLE_EQ(z1.memory.optimizerState, 2 * P / 8);
  EXPECT_DOUBLE_EQ(z1.memory.gradients, P);
  dp.zero = 3;
  Prediction z3 = predict(m, dp, hw);
  // The shard (each layer's gathered parameters live only around its
  // forward and its backward, in the constant terms).
  EXPECT_DOUBLE_EQ(z3.memory.parameters, P / 8);
  EXPECT_LT(z3.peakBytes(), z1.peakBytes());
  EXPECT_LT(z1.peakBytes(), z0.peakBytes());
  EXPECT_GT(z3.communicationTime, z0.communicationTime);
  // ZeRO-3's buckets are a weight matrix each (and the vectors after it);
  // each gather is prefetched one bucket ahead: twice the largest weight's
  // gathered parameters are live at once, whatever the units' sizes.
  {
    ModelProfile uneven = m;
    uneven.units[2].paramBytes *= 3;
    uneven.units[5].largestParamBytes *= 2;
    ParallelPlan z = dp;
    z.zero = 2;
    const double below = predict(uneven, z, hw).memory.transient;
    z.zero = 3;
    EXPECT_DOUBLE_EQ(predict(uneven, z, hw).memory.transient - below,
                     2.0 * uneven.units[5].largestParamBytes);
  }
  // cp splits activations and the bias by rows, except K and V, which the
  // attention backward needs whole (all-gather and ring; Ulysses moves
  // heads instead).
  ParallelPlan cp;
  cp.cp = 4;
  ParallelPlan one;
  Prediction c4 = predict(m, cp, hw), c1 = predict(m, one, hw);
  double kv = 0;
  for (const UnitProfile &u : m.units)
    kv += u.kvBytes * m.batch;
  ASSERT_GT(kv, 0);
  EXPECT_NEAR(c4.memory.activations, (c1.memory.activations - kv) / 4 + kv,
              1e-6 * c1.memory.activations);
  EXPECT_NEAR(c4.memory.attentionBias, c1.memory.attentionBias / 4,
              1e-6 * c1.memory.attentionBias);
  ParallelPlan ulysses = cp;
  ulysses.cpMode = "ulysses";
  EXPECT_NEAR(predict(m, ulysses, hw).memory.activations,
              c1.memory.activations / 4, 1e-6 * c1.memory.activations);
  // Ulysses moves the bias to heads (and its gradient back) every layer;
  // all-gather and ring never send it.
  ModelProfile noBias = m;
  for (UnitProfile &u : noBias.units)
    u.biasBytes = 0;
  EXPECT_GT(predict(m, ulysses, hw).communicationTime,
            predict(noBias, ulysses, hw).communicationTime);
  EXPECT_DOUBLE_EQ(predict(m, cp, hw).communicationTime,
                   predict(noBias, cp, hw).communicationTime);
  ParallelPlan ring = cp;
  ring.cpMode = "ring";
  EXPECT_DOUBLE_EQ(predict(m, ring, hw).memory.activations,
                   c4.memory.activations);
  // Under cp the gradients are summed over dp x cp ranks, and ZeRO shards
  // over all of them.
  ParallelPlan dpcp;
  dpcp.dp = 2, dpcp.cp = 4, dpcp.zero = 3;
  Prediction s8 = predict(m, dpcp, hw);
  ASSERT_TRUE(s8.valid);
  EXPECT_DOUBLE_EQ(s8.memory.parameters, P / 8);
  EXPECT_DOUBLE_EQ(s8.memory.gradients, P / 8);
  EXPECT_DOUBLE_EQ(s8.memory.optimizerState, 2 * P / 8);
  ParallelPlan cpz = cp;
  cpz.zero = 1;
  Prediction cz = predict(m, cpz, hw);
  EXPECT_DOUBLE_EQ(cz.memory.optimizerState, 2 * P / 4);
  // cp alone all-reduces the gradients over its 4 ranks.
  EXPECT_GT(predict(m, cp, hw, 0, true).communicationTime, 0);
  // A pipeline has a bubble of (pp - 1) slots.
  ParallelPlan pp;
  pp.pp = 4, pp.microBatches = 8;
  Prediction p4 = predict(m, pp, hw);
  ASSERT_TRUE(p4.valid);
  EXPECT_NEAR(p4.bubbleTime, p4.stepTime * 3 / 11, 1e-9 * p4.stepTime);
  EXPECT_EQ(p4.firstUnit.size(), 4u);
  // A pipeline rank holds its own stage's parameters, gradients and
  // moments (gt-stage-globals): the worst stage's, less than the model's;
  // the gradients twice (the backward's outputs and the accumulators).
  EXPECT_LT(p4.memory.parameters, P);
  EXPECT_GE(p4.memory.parameters, P / 4);
  EXPECT_DOUBLE_EQ(p4.memory.gradients, 2 * p4.memory.parameters);
  EXPECT_DOUBLE_EQ(p4.memory.optimizerState, 2 * p4.memory.parameters);
  ParallelPlan ppz3 = pp;
  ppz3.dp = 2, ppz3.zero = 3;
  Prediction pz = predict(m, ppz3, hw);
  ASSERT_TRUE(pz.valid);
  // ZeRO-3 shards the stage's parameters and moments over its 2 replicas.
  EXPECT_LT(pz.memory.parameters, P / 2);
  EXPECT_DOUBLE_EQ(pz.memory.optimizerState, 2 * pz.memory.parameters);
  // Plans that do not divide the batch are reported as such.
  ParallelPlan bad;
  bad.dp = 3;
  EXPECT_FALSE(predict(m, bad, hw).valid);
}

TEST(CostModel, PipelineScheduleBuffers) {
  ModelProfile m = syntheticTransformer(4, 256, 4, 8, 128);
  HardwareProfile hw;
  ASSERT_TRUE(getBuiltinProfile("h100", hw));
  const double P = m.paramBytes();
  // Under the driver's pipeline schedule the gradients are held twice
  // (backward outputs and accumulators) and whole: the update
  // reduce-scatters them itself under ZeRO.
  ParallelPlan accumulate;
  accumulate.microBatches = 2;
  Prediction a = predict(m, accumulate, hw);
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.memory.gradients, 2 * P);
  ParallelPlan dpz2;
  dpz2.dp = 2, dpz2.zero = 2;
  EXPECT_DOUBLE_EQ(predict(m, dpz2, hw).memory.gradients, P / 2);
  ParallelPlan ppz2 = dpz2;
  ppz2.pp = 2, ppz2.microBatches = 2;
  Prediction pz = predict(m, ppz2, hw);
  ASSERT_TRUE(pz.valid);
  EXPECT_DOUBLE_EQ(pz.memory.gradients, 2 * pz.memory.parameters);
  EXPECT_DOUBLE_EQ(pz.memory.optimizerState, pz.memory.parameters);
  // A bias made before the first layer and read by every layer: a stage
  // after the first receives it per micro-batch in flight. Made large,
  // the last stage (one micro-batch in flight) is the worst.
  ParallelPlan pp;
  pp.pp = 2;
  Prediction before = predict(m, pp, hw);
  ASSERT_TRUE(before.valid);
  for (size_t u = 1; u < m.units.size(); ++u)
    m.units[u].forwardedBiasBytes = 40 * m.units[0].biasBytes;
  Prediction p = predict(m, pp, hw);
  ASSERT_TRUE(p.valid);
  ASSERT_EQ(p.firstUnit.size(), 2u);
  const int64_t begin = p.firstUnit[1];
  ASSERT_GT(begin, 0);
  double bias = 0;
  for (size_t u = begin; u < m.units.size(); ++u)
    bias += m.units[u].biasBytes;
  const double seqs = m.batch; // one micro-batch of the whole batch
  EXPECT_NEAR(p.memory.attentionBias,
              seqs * (bias + m.units[begin].forwardedBiasBytes),
              1e-6 * p.memory.attentionBias);
  EXPECT_GT(p.peakBytes(), before.peakBytes());
}

TEST(PlanSearch, ConsidersOnlyPlansThatCanExist) {
  // 4 layers, 8 heads, S = 256 on 1024 devices: Ulysses needs cp to divide
  // the 8 heads, and a cp block has at least minCpRows of the 256 rows.
  ModelProfile m = syntheticTransformer(4, 128, 8, 1024, 256);
  SearchOptions o;
  o.devices = 1024;
  // By default all three cp modes, Ulysses only where cp divides the
  // heads, every plan accepted by checkPlanImplemented (what
  // megagraph-compile --plan refuses).
  std::vector<ParallelPlan> plans = enumeratePlans(m, o);
  for (const ParallelPlan &p : plans) {
    llvm::Error e = checkPlanImplemented(p);
    EXPECT_FALSE(static_cast<bool>(e)) << toString(p);
    llvm::consumeError(std::move(e));
  }
  ASSERT_FALSE(plans.empty());
  bool ulysses = false;
  for (const ParallelPlan &p : plans) {
    EXPECT_GE(m.seqLen / p.cp, o.minCpRows) << toString(p);
    if (p.cpMode == "ulysses") {
      ulysses = true;
      EXPECT_EQ(8 % p.cp, 0) << toString(p);
    }
  }
  EXPECT_TRUE(ulysses);
  // Without it in the modes, none.
  o.cpModes = {"allgather", "ring"};
  for (const ParallelPlan &p : enumeratePlans(m, o))
    EXPECT_NE(p.cpMode, "ulysses") << toString(p);
  o.cpModes = SearchOptions().cpModes;
  // ZeRO shards over dp x cp: cp alone has ZeRO stages too.
  o.devices = 4;
  bool zeroUnderCp = false;
  for (const ParallelPlan &p : enumeratePlans(m, o))
    zeroUnderCp |= p.dp == 1 && p.cp == 4 && p.zero == 3;
  EXPECT_TRUE(zeroUnderCp);
  // cp need not divide S: 3 devices give cp = 3 over S = 256 (uneven
  // blocks of 85 and 86 rows), priced at the longest block's rows.
  o = SearchOptions();
  o.devices = 3;
  bool uneven = false;
  for (const ParallelPlan &p : enumeratePlans(m, o))
    if (p.cp == 3) {
      uneven = true;
      Prediction pr = predict(m, p, testProfile());
      EXPECT_TRUE(pr.valid) << toString(p) << ": " << pr.invalidReason;
    }
  EXPECT_TRUE(uneven);
  ParallelPlan c3, c4;
  c3.cp = 3, c4.cp = 4;
  // Without K and V (which the attention backward keeps whole under cp
  // all-gather and ring) the activations scale with the rows: 86 rows per
  // rank against 64.
  ModelProfile rowsOnly = m;
  for (UnitProfile &u : rowsOnly.units)
    u.kvBytes = 0;
  Prediction p3 = predict(rowsOnly, c3, testProfile()),
             p4 = predict(rowsOnly, c4, testProfile());
  ASSERT_TRUE(p3.valid && p4.valid);
  EXPECT_NEAR(p3.memory.activations / p4.memory.activations, 86.0 / 64.0, 1e-9);
}

TEST(PlanSearch, LargeSearchAndNoFit) {
  // 48 layers on 1024 devices (the benchmark measures the time).
  ModelProfile m = syntheticTransformer(48, 4096, 32, 1024, 4096);
  HardwareProfile hw;
  ASSERT_TRUE(getBuiltinProfile("h200", hw));
  SearchOptions o;
  o.devices = 1024;
  SearchResult r = searchPlans(m, hw, o);
  ASSERT_TRUE(r.found);
  EXPECT_GT(r.evaluated, 1000);
  EXPECT_LE(r.best.prediction.peakBytes(), hw.deviceMemory);
  EXPECT_EQ(r.best.plan.devices(), 1024);
  // Nothing fits in 1 MiB: the answer names a budget that does.
  o.deviceMemory = 1 << 20;
  SearchResult none = searchPlans(m, hw, o);
  EXPECT_FALSE(none.found);
  EXPECT_GT(none.smallestPeakImplemented, 1 << 20);
  EXPECT_NE(formatExplain(none).find("no plan fits"), std::string::npos);
}

TEST(Profile, BuiltinsAndJson) {
  for (const std::string &name : builtinProfileNames()) {
    HardwareProfile p;
    ASSERT_TRUE(getBuiltinProfile(name, p)) << name;
    EXPECT_GT(p.gemmFlops, 0);
    EXPECT_GT(p.memoryBandwidth, 0);
    llvm::json::Value v = toJSON(p);
    HardwareProfile back;
    llvm::json::Path::Root root;
    ASSERT_TRUE(fromJSON(v, back, root)) << name;
    EXPECT_EQ(back.name, p.name);
    EXPECT_DOUBLE_EQ(back.gemmFlops, p.gemmFlops);
    EXPECT_DOUBLE_EQ(back.inter.beta, p.inter.beta);
    EXPECT_EQ(back.scratchBytes, p.scratchBytes);
    EXPECT_EQ(back.coresPerNode, p.coresPerNode);
    EXPECT_DOUBLE_EQ(back.syncLatency, p.syncLatency);
    EXPECT_EQ(back.attentionRowBlock, p.attentionRowBlock);
  }
  HardwareProfile h100, h200;
  ASSERT_TRUE(getBuiltinProfile("H100", h100));
  ASSERT_TRUE(getBuiltinProfile("h200", h200));
  EXPECT_GT(h200.deviceMemory, h100.deviceMemory);
  HardwareProfile none;
  EXPECT_FALSE(getBuiltinProfile("tpu", none));
  llvm::Expected<HardwareProfile> missing = loadProfile("no-such-profile.json");
  EXPECT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()), "");
  // Ring all-reduce: 2 (n-1)/n of the bytes on the wire.
  EXPECT_NEAR(h100.allReduce(8, 1e9),
              14 * h100.intra.alpha + 2 * 7.0 / 8 * 1e9 * h100.intra.beta,
              1e-12);
  EXPECT_EQ(h100.allReduce(1, 1e9), 0);
}

/// A CPU node of 2 cores shared by its ranks, as cpu-here, with a given
/// cost per synchronisation.
HardwareProfile twoCores(double syncLatency) {
  HardwareProfile hw;
  EXPECT_TRUE(getBuiltinProfile("cpu-here", hw));
  hw.coresPerNode = 2;
  hw.syncLatency = syncLatency;
  return hw;
}

TEST(Profile, TimeSharedCores) {
  HardwareProfile hw = twoCores(0);
  EXPECT_EQ(hw.threadsPerRank(1), 2);
  EXPECT_EQ(hw.threadsPerRank(2), 1);
  EXPECT_EQ(hw.threadsPerRank(4), 1);
  EXPECT_FALSE(hw.oversubscribed(2));
  EXPECT_TRUE(hw.oversubscribed(4));
  // Alone, a rank's one thread has a core: 1/2 of the node, against 1/4.
  EXPECT_DOUBLE_EQ(hw.aloneSpeedup(4), 2.0);
  EXPECT_DOUBLE_EQ(hw.aloneSpeedup(2), 1.0);
  EXPECT_DOUBLE_EQ(hw.rankScratchBytes(4), hw.scratchBytes / 2.0);
  EXPECT_DOUBLE_EQ(hw.rankScratchBytes(1), hw.scratchBytes);
  // Unknown cores, or a GPU: nothing is time-shared.
  hw.coresPerNode = 0;
  EXPECT_FALSE(hw.oversubscribed(4));
  EXPECT_DOUBLE_EQ(hw.aloneSpeedup(4), 1.0);
  HardwareProfile h100;
  ASSERT_TRUE(getBuiltinProfile("h100", h100));
  EXPECT_FALSE(h100.oversubscribed(8));
}

TEST(CostModel, PipelineBubbleReclaimedOnTimeSharedCores) {
  ModelProfile m = syntheticTransformer(4, 64, 4, 8, 64);
  ParallelPlan pp;
  pp.pp = 4;
  pp.microBatches = 4;
  HardwareProfile shared = twoCores(0), owned = shared;
  owned.coresPerNode = 0; // the same rates, no reclaim
  Prediction r = predict(m, pp, shared), full = predict(m, pp, owned);
  ASSERT_TRUE(r.valid && full.valid);
  // Below the schedule's (mb + pp - 1) slots of the slowest stage, not
  // below that span at a rank's speed alone (2x here), and still bounded
  // by the search's bound.
  EXPECT_LT(r.stepTime, full.stepTime * 0.99);
  EXPECT_GE(r.stepTime, full.stepTime / shared.aloneSpeedup(4) * 0.999);
  EXPECT_LE(stepTimeLowerBound(m, pp, shared), r.stepTime * (1 + 1e-12));
  // Without stages nothing changes.
  ParallelPlan dp;
  dp.dp = 4;
  EXPECT_DOUBLE_EQ(predict(m, dp, shared).stepTime,
                   predict(m, dp, owned).stepTime);
}

/// A plan of `cp` context-parallel ranks in `mode`, nothing else.
ParallelPlan cpPlan(int64_t cp, const std::string &mode) {
  ParallelPlan p;
  p.cp = cp;
  p.cpMode = mode;
  return p;
}

/// How much longer `plan`'s step is predicted on `a` than on `b`.
double slowerOn(const ModelProfile &m, const ParallelPlan &plan,
                const HardwareProfile &a, const HardwareProfile &b) {
  return predict(m, plan, a).stepTime - predict(m, plan, b).stepTime;
}

TEST(CostModel, SynchronisationsOnTimeSharedCores) {
  ModelProfile m = syntheticTransformer(4, 64, 4, 8, 64);
  const double s = 1e-3;
  auto extra = [&](const std::string &mode) {
    return slowerOn(m, cpPlan(4, mode), twoCores(s), twoCores(0));
  };
  // Per layer: a ring step per other block forward and a K/V and a dK/dV
  // step per block backward (9 at cp = 4) against the all-gather's 2; the
  // gradient buckets cost the same in both.
  EXPECT_NEAR(extra("ring") - extra("allgather"), 4 * (9 - 2) * s, 1e-9);
  EXPECT_GT(extra("allgather"), 4 * 2 * s);
  // Two ranks on two cores synchronise for free.
  EXPECT_DOUBLE_EQ(slowerOn(m, cpPlan(2, "ring"), twoCores(s), twoCores(0)), 0);
}

TEST(CostModel, AttentionBackwardRunsOnPaddedRows) {
  // S = 64, cp = 4: a rank's 16 rows run as a block of 96 on the CPU (64
  // on a GPU); the backward's attention work grows by that padding, most
  // for the ring (a block per key block).
  ModelProfile m = syntheticTransformer(4, 64, 4, 8, 64);
  HardwareProfile cpu = twoCores(0), exact = cpu;
  ASSERT_EQ(cpu.attentionRowBlock, 96);
  exact.attentionRowBlock = 1;
  HardwareProfile h100;
  ASSERT_TRUE(getBuiltinProfile("h100", h100));
  EXPECT_EQ(h100.attentionRowBlock, 64);
  auto extra = [&](const std::string &mode) {
    return slowerOn(m, cpPlan(4, mode), cpu, exact);
  };
  EXPECT_GT(extra("allgather"), 0);
  EXPECT_GT(extra("ring"), 3 * extra("allgather"));
  // A sequence that fills its blocks pays nothing.
  ModelProfile full = syntheticTransformer(4, 64, 4, 8, 384);
  EXPECT_DOUBLE_EQ(slowerOn(full, cpPlan(4, "allgather"), cpu, exact), 0);
}

TEST(CostModel, CpAttentionWorkspaceIsPaddedRows) {
  // 64 rows per sequence; 4 bytes per packed query or key row. On a cp=4
  // rank 16 rows pack like 96: the workspace is m x (96 + 96) rows, not
  // the sequence's / 4.
  ModelProfile m = syntheticTransformer(2, 64, 4, 8, 64);
  for (UnitProfile &u : m.units) {
    u.transientBytes = 0;
    u.attentionQueryRowBytes = u.attentionKeyRowBytes = 1000;
  }
  HardwareProfile hw = twoCores(0);
  hw.scratchBytes = 0;
  Prediction r = predict(m, cpPlan(4, "ring"), hw);
  ASSERT_TRUE(r.valid);
  // m = 8 sequences per rank.
  EXPECT_DOUBLE_EQ(r.memory.transient, 8 * (96 + 96) * 1000.0);
  Prediction g = predict(m, cpPlan(4, "allgather"), hw);
  // All 64 keys pad to 96 as well; the gathered K and V come on top.
  EXPECT_DOUBLE_EQ(g.memory.transient,
                   8 * (96 + 96) * 1000.0 + 2 * 8 * m.units[0].kvBytes);
}

TEST(CostModel, UpdatePhaseAfterTheBackward) {
  // Large weights, 16-node sequences, one per rank: the step peaks after
  // the backward, when the gradients are reduced and the parameters
  // updated, not while the activations are held.
  ModelProfile m = syntheticTransformer(2, 512, 8, 8, 16);
  HardwareProfile hw;
  ASSERT_TRUE(getBuiltinProfile("h100", hw));
  hw.scratchBytes = 0;
  const double P = m.paramBytes();
  const double largest = m.units[0].largestParamBytes; // a 512 x 2048 weight
  ASSERT_DOUBLE_EQ(largest, 4.0 * 512 * 2048);
  ParallelPlan dp;
  dp.dp = 8;
  Prediction z0 = predict(m, dp, hw);
  ASSERT_TRUE(z0.valid);
  // Without ZeRO AdamW's update of the largest weight holds its new value
  // and two new moments, more than the 4 MiB all-reduce bucket or a
  // packed group of the vectors.
  EXPECT_DOUBLE_EQ(z0.memory.update, 3 * largest);
  const MemoryBreakdown &mem = z0.memory;
  const double backward = mem.activations + mem.attentionBias + mem.transient;
  ASSERT_GT(mem.update, backward);
  EXPECT_DOUBLE_EQ(z0.peakBytes(), mem.parameters + mem.gradients +
                                       mem.optimizerState + mem.io +
                                       mem.update);
  // ZeRO-1 updates a shard and all-gathers the whole bucket back into the
  // parameters; ZeRO-3 only updates the shard, its storage.
  dp.zero = 1;
  EXPECT_DOUBLE_EQ(predict(m, dp, hw).memory.update, 3 * P / 8 + P);
  dp.zero = 3;
  EXPECT_DOUBLE_EQ(predict(m, dp, hw).memory.update, 3 * P / 8);
  // SGD without momentum keeps no state: on one device (no bucket) the
  // new weight alone.
  ModelProfile sgd = m;
  sgd.optimizerStateFactor = 0;
  EXPECT_DOUBLE_EQ(predict(sgd, ParallelPlan(), hw).memory.update, largest);
  // Long sequences: the backward's phase is the peak, the update is not
  // added to it.
  ModelProfile longSeq = syntheticTransformer(2, 512, 8, 8, 2048);
  Prediction l = predict(longSeq, ParallelPlan(), hw);
  ASSERT_TRUE(l.valid);
  const MemoryBreakdown &lm = l.memory;
  ASSERT_LT(lm.update, lm.activations + lm.attentionBias + lm.transient);
  EXPECT_DOUBLE_EQ(l.peakBytes(),
                   lm.parameters + lm.gradients + lm.optimizerState + lm.io +
                       lm.activations + lm.attentionBias + lm.transient);
}

TEST(Profile, ByteCounts) {
  int64_t b = 0;
  EXPECT_TRUE(parseByteCount("2GiB", b));
  EXPECT_EQ(b, int64_t(2) << 30);
  EXPECT_TRUE(parseByteCount("80GB", b));
  EXPECT_EQ(b, 80000000000);
  EXPECT_TRUE(parseByteCount("1234", b));
  EXPECT_EQ(b, 1234);
  EXPECT_TRUE(parseByteCount("1.5M", b));
  EXPECT_EQ(b, 3 << 19);
  EXPECT_FALSE(parseByteCount("lots", b));
  EXPECT_FALSE(parseByteCount("5 parsecs", b));
  EXPECT_EQ(formatBytes(3 << 20), "3.00 MiB");
}

} // namespace
