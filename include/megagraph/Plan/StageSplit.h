//===- StageSplit.h - Pipeline stage boundaries by cost ---------*- C++ -*-===//
//
// Part of MegaGraph. Splits a chain of units (the embedding and bias
// encoders, the transformer layers, the head) into `pp` contiguous pipeline
// stages. `splitStages` is a dynamic program that minimizes the time of the
// slowest stage (the 1F1B bottleneck) subject to a per-stage memory limit
// that counts the activations each stage keeps for its in-flight
// micro-batches: under 1F1B stage k of K keeps min(K - k, M) of them.
// The plan search (megagraph/Plan/Search.h) calls it too, to price the
// pipelined points of the plan space.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_STAGESPLIT_H
#define MEGAGRAPH_PLAN_STAGESPLIT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace megagraph {

/// The cost of one unit for one micro-batch.
struct UnitCost {
  /// Forward + backward time (any consistent unit: seconds, FLOPs).
  double time = 0;
  /// Bytes held for the whole step: parameters, gradients, optimizer state.
  int64_t persistentBytes = 0;
  /// Activation bytes the unit's backward needs, per micro-batch.
  int64_t activationBytes = 0;
  /// Bytes of the activation entering the unit (what a stage that starts
  /// here stores per micro-batch under recomputation).
  int64_t inputBytes = 0;
  std::string name;
  /// Bytes a stage that starts here (not the first stage) receives per
  /// micro-batch beyond what activationBytes already counts: values an
  /// earlier unit produced and kept that this or a later unit of the
  /// stage reads (an attention bias forwarded from stage to stage). The
  /// stage keeps them in its input slot of every micro-batch in flight.
  int64_t forwardedBytes = 0;
};

struct StageSplitOptions {
  int64_t pp = 1;
  int64_t microBatches = 1;
  /// Per-stage memory limit in bytes; <= 0: unlimited.
  int64_t memoryLimit = 0;
  /// Stages keep only their input per micro-batch and recompute the
  /// forward during the backward.
  bool recompute = false;
  /// GPipe keeps all M micro-batches in flight on every stage.
  bool gpipe = false;
};

struct StageSplit {
  /// False when no split satisfies the memory limit (or fewer units than
  /// stages); the other fields are then empty.
  bool feasible = false;
  /// First unit of each stage; firstUnit[0] == 0, strictly increasing.
  std::vector<int64_t> firstUnit;
  std::vector<double> stageTime;
  std::vector<int64_t> stageMemory;
  /// max(stageTime).
  double bottleneck = 0;
};

/// Micro-batches stage `stage` (0-based) of `pp` keeps in flight.
int64_t inFlightMicroBatches(int64_t stage, const StageSplitOptions &options);

/// Micro-batches of activations stage `stage` holds in its entries' arena
/// on top of the in-flight ones: 1 for a stage before the last without
/// recomputation, else 0. Its forward computes the values the backward
/// needs in its arena (gt-memory-plan) and returns them into the driver's
/// slot, so at its end the micro-batch's values are there twice; its
/// backward's arena (the gradients, with the slots still full) is about
/// as large. The last stage runs forward and backward in one call: its
/// one micro-batch in flight is the one in its arena. With recomputation
/// the backward's recomputed activations are the stage's one micro-batch.
int64_t entryArenaMicroBatches(int64_t stage, const StageSplitOptions &options);

/// Peak bytes of stage `stage` holding units [begin, end): the units'
/// persistent bytes, plus per micro-batch in flight (inFlightMicroBatches)
/// their activations (with recomputation: the stage input, and one
/// micro-batch's activations recomputed) and, after the first stage, the
/// forwarded bytes of unit `begin`; without recomputation, per micro-batch
/// in flight or in the entries' arena (entryArenaMicroBatches).
int64_t stageMemory(llvm::ArrayRef<UnitCost> units, int64_t begin, int64_t end,
                    int64_t stage, const StageSplitOptions &options);

/// Time and memory of a given split (firstUnit as in StageSplit); feasible
/// is false if a stage is empty or over the memory limit.
StageSplit evaluateSplit(llvm::ArrayRef<UnitCost> units,
                         llvm::ArrayRef<int64_t> firstUnit,
                         const StageSplitOptions &options);

/// The split that minimizes the slowest stage's time within the memory
/// limit; among those, the one with the least peak stage memory.
/// O(pp * n^2).
StageSplit splitStages(llvm::ArrayRef<UnitCost> units,
                       const StageSplitOptions &options);

/// The same number of units per stage (the first stages take the
/// remainder), the baseline the benchmark compares against.
StageSplit evenSplit(llvm::ArrayRef<UnitCost> units,
                     const StageSplitOptions &options);

/// "0:3:5" for firstUnit {0, 3, 5}, the --plan stages= syntax.
std::string formatStages(llvm::ArrayRef<int64_t> firstUnit);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_STAGESPLIT_H
