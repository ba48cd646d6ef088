//===- Search.h - The fastest parallel plan that fits -----------*- C++ -*-===//
//
// Part of MegaGraph. The "Search" of Profile-Model-Search: enumerates the
// factorizations dp x pp x cp of the device count, micro-batch counts, ZeRO
// stages, recomputation and cp modes; stage boundaries come from the
// splitStages DP; plans over the per-device memory budget are pruned; the
// rest are ranked by predicted step time.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_SEARCH_H
#define MEGAGRAPH_PLAN_SEARCH_H

#include "megagraph/Plan/CostModel.h"

#include <functional>
#include <string>
#include <vector>

namespace megagraph {

struct SearchOptions {
  int64_t devices = 1;
  /// Per-device memory budget in bytes; <= 0: the profile's device memory.
  int64_t deviceMemory = 0;
  std::vector<int64_t> zeroStages = {0, 1, 2, 3};
  /// The cp modes tried (gt-context-parallel's allgather, ring and
  /// ulysses; Ulysses only where cp divides the heads).
  std::vector<std::string> cpModes = {"allgather", "ring", "ulysses"};
  /// Fewest rows (nodes) of a sequence per cp rank (S / cp rounded down:
  /// cp need not divide S, the blocks are then uneven): a smaller block's
  /// attention is too little work to pay for moving K/V (or the bias)
  /// every layer, so such plans are not considered.
  int64_t minCpRows = 8;
  bool allowRecompute = true;
  /// Largest micro-batch count tried (the divisors of the per-replica
  /// batch up to it).
  int64_t maxMicroBatches = 64;
  /// "" when the compiler can build the plan, else why not. Plans that are
  /// not implemented are still modelled and ranked (shown by --explain)
  /// but never chosen.
  std::function<std::string(const ParallelPlan &)> implemented;
  /// How many of the fitting plans are kept, fastest first.
  int64_t keep = 10;
};

struct Candidate {
  ParallelPlan plan;
  Prediction prediction;
  /// "" for a plan that fits and is implemented; else why it was pruned.
  std::string pruned;
};

struct SearchResult {
  /// A plan that fits and is implemented was found.
  bool found = false;
  Candidate best;
  /// The fastest plan that fits whether implemented or not (== best when
  /// every plan is implemented).
  Candidate bestModelled;
  /// The fastest fitting plans (implemented or not), fastest first.
  std::vector<Candidate> ranked;
  /// The plans over the budget that came closest, smallest peak first.
  std::vector<Candidate> overBudget;
  int64_t budget = 0;
  int64_t evaluated = 0, prunedMemory = 0, prunedInvalid = 0,
          prunedUnimplemented = 0;
  /// Pipeline plans skipped without their stage DP: a lower bound of
  /// their step time was no better than the chosen plan and the kept ones.
  int64_t prunedDominated = 0;
  /// The least peak memory over all valid (implemented) plans: the budget
  /// that would make one fit.
  double smallestPeak = 0, smallestPeakImplemented = 0;
  ParallelPlan smallestPeakPlan;
  double seconds = 0;
};

/// The plan space for `options.devices` (without stage boundaries).
std::vector<ParallelPlan> enumeratePlans(const ModelProfile &model,
                                         const SearchOptions &options);

SearchResult searchPlans(const ModelProfile &model,
                         const HardwareProfile &profile,
                         const SearchOptions &options);

/// The --explain table: rank, plan, predicted step time (compute / comm /
/// bubble), predicted peak memory per device, and the pruning summary.
std::string formatExplain(const SearchResult &result, int64_t top = 10);

/// {"plan": ..., "prediction": ..., "budget": .., "alternatives": [...]}
llvm::json::Value toJSON(const SearchResult &result);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_SEARCH_H
