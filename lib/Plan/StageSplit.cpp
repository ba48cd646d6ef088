//===- StageSplit.cpp - Pipeline stage boundaries by cost -----------------===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/StageSplit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>

using namespace megagraph;
using llvm::ArrayRef;

int64_t megagraph::inFlightMicroBatches(int64_t stage,
                                        const StageSplitOptions &options) {
  if (options.gpipe)
    return options.microBatches;
  return std::max<int64_t>(
      1, std::min<int64_t>(options.pp - stage, options.microBatches));
}

int64_t megagraph::entryArenaMicroBatches(int64_t stage,
                                          const StageSplitOptions &options) {
  return !options.recompute && stage + 1 < options.pp ? 1 : 0;
}

int64_t megagraph::stageMemory(ArrayRef<UnitCost> units, int64_t begin,
                               int64_t end, int64_t stage,
                               const StageSplitOptions &options) {
  int64_t persistent = 0, activations = 0;
  for (int64_t u = begin; u < end; ++u) {
    persistent += units[u].persistentBytes;
    activations += units[u].activationBytes;
  }
  int64_t inFlight = inFlightMicroBatches(stage, options);
  const int64_t forwarded = stage > 0 ? units[begin].forwardedBytes : 0;
  if (options.recompute)
    // The stored stage inputs plus one micro-batch's recomputed activations.
    return persistent + inFlight * (units[begin].inputBytes + forwarded) +
           activations;
  return persistent + (inFlight + entryArenaMicroBatches(stage, options)) *
                          (activations + forwarded);
}

static double stageTime(ArrayRef<UnitCost> units, int64_t begin, int64_t end) {
  double t = 0;
  for (int64_t u = begin; u < end; ++u)
    t += units[u].time;
  return t;
}

static bool fits(int64_t memory, const StageSplitOptions &options) {
  return options.memoryLimit <= 0 || memory <= options.memoryLimit;
}

StageSplit megagraph::evaluateSplit(ArrayRef<UnitCost> units,
                                    ArrayRef<int64_t> firstUnit,
                                    const StageSplitOptions &options) {
  StageSplit split;
  int64_t n = units.size(), pp = firstUnit.size();
  if (pp != options.pp || pp == 0 || firstUnit.front() != 0)
    return split;
  for (int64_t k = 0; k < pp; ++k) {
    int64_t begin = firstUnit[k], end = k + 1 < pp ? firstUnit[k + 1] : n;
    if (begin >= end || end > n)
      return StageSplit();
    split.stageTime.push_back(stageTime(units, begin, end));
    split.stageMemory.push_back(stageMemory(units, begin, end, k, options));
    if (!fits(split.stageMemory.back(), options))
      return StageSplit();
  }
  split.firstUnit.assign(firstUnit.begin(), firstUnit.end());
  split.bottleneck = *llvm::max_element(split.stageTime);
  split.feasible = true;
  return split;
}

StageSplit megagraph::splitStages(ArrayRef<UnitCost> units,
                                  const StageSplitOptions &options) {
  const int64_t n = units.size(), pp = options.pp;
  if (pp < 1 || n < pp)
    return StageSplit();
  const double inf = std::numeric_limits<double>::infinity();
  // Stage k covers [i, j); time[i][j] and mem[k][i][j] are computed on the
  // fly (n is the number of layers: tens).
  // Phase 1: best[k][j] = least bottleneck placing units [0, j) on stages
  // 0..k-1 (memory limit respected).
  std::vector<std::vector<double>> best(pp + 1,
                                        std::vector<double>(n + 1, inf));
  best[0][0] = 0;
  for (int64_t k = 1; k <= pp; ++k)
    for (int64_t j = k; j <= n - (pp - k); ++j)
      for (int64_t i = k - 1; i < j; ++i) {
        if (best[k - 1][i] == inf ||
            !fits(stageMemory(units, i, j, k - 1, options), options))
          continue;
        best[k][j] = std::min(best[k][j],
                              std::max(best[k - 1][i], stageTime(units, i, j)));
      }
  double bottleneck = best[pp][n];
  if (bottleneck == inf)
    return StageSplit();
  // Phase 2: among splits whose stages all take <= bottleneck, the least
  // peak stage memory (a min-max DP again, so optimal substructure holds).
  const int64_t none = std::numeric_limits<int64_t>::max();
  std::vector<std::vector<int64_t>> peak(pp + 1,
                                         std::vector<int64_t>(n + 1, none));
  std::vector<std::vector<int64_t>> from(pp + 1,
                                         std::vector<int64_t>(n + 1, -1));
  peak[0][0] = 0;
  for (int64_t k = 1; k <= pp; ++k)
    for (int64_t j = k; j <= n - (pp - k); ++j)
      for (int64_t i = k - 1; i < j; ++i) {
        if (peak[k - 1][i] == none || stageTime(units, i, j) > bottleneck)
          continue;
        int64_t memory = stageMemory(units, i, j, k - 1, options);
        if (!fits(memory, options))
          continue;
        int64_t candidate = std::max(peak[k - 1][i], memory);
        if (candidate < peak[k][j]) {
          peak[k][j] = candidate;
          from[k][j] = i;
        }
      }
  std::vector<int64_t> firstUnit(pp);
  for (int64_t k = pp, j = n; k >= 1; --k) {
    firstUnit[k - 1] = from[k][j];
    j = from[k][j];
  }
  return evaluateSplit(units, firstUnit, options);
}

StageSplit megagraph::evenSplit(ArrayRef<UnitCost> units,
                                const StageSplitOptions &options) {
  const int64_t n = units.size(), pp = options.pp;
  if (pp < 1 || n < pp)
    return StageSplit();
  std::vector<int64_t> firstUnit;
  for (int64_t k = 0, begin = 0; k < pp; ++k) {
    firstUnit.push_back(begin);
    begin += n / pp + (k < n % pp ? 1 : 0);
  }
  StageSplitOptions unlimited = options;
  unlimited.memoryLimit = 0;
  return evaluateSplit(units, firstUnit, unlimited);
}

std::string megagraph::formatStages(ArrayRef<int64_t> firstUnit) {
  return llvm::join(
      llvm::map_range(firstUnit, [](int64_t v) { return std::to_string(v); }),
      ":");
}
