//===- CostModel.h - Analytic step time and memory of a plan ----*- C++ -*-===//
//
// Part of MegaGraph. The "Model" of Profile-Model-Search. A model is
// summarized once (from its gt-raised forward module, through
// CostOpInterface and shape rules for upstream ops) as a chain of units
// (the encoders before the first transformer layer, one unit per layer,
// the head in the last one) with per-sequence costs. `predict` turns that
// summary, a plan and a hardware profile into a per-device peak memory and
// a step time (compute + communication not overlapped + pipeline bubble).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_COSTMODEL_H
#define MEGAGRAPH_PLAN_COSTMODEL_H

#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Plan/Profile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace megagraph {

/// Costs of one unit for ONE sequence of S nodes, forward pass.
struct UnitProfile {
  std::string name;
  /// FLOPs in GEMMs with every dimension >= 64, in smaller GEMMs, in the
  /// fused attention; bytes moved by everything else (norms, elementwise).
  double gemmFlops = 0, smallGemmFlops = 0, attentionFlops = 0;
  double otherBytes = 0;
  int64_t numOps = 0;
  /// Parameter bytes of the unit (not per sequence).
  int64_t paramBytes = 0;
  /// Its parameters of rank >= 2 (weight matrices): with ZeRO >= 2 each
  /// starts a gradient bucket (gt-data-parallel), one collective apiece.
  int64_t matrixParams = 0;
  /// Its largest parameter's bytes, and the bytes of its parameters that
  /// gt-optimizer updates in packed groups (fewer than
  /// kOptimizerPackElements elements each): what the update's transient
  /// copies are sized by (updateBytes).
  int64_t largestParamBytes = 0, packedParamBytes = 0;
  /// Bytes kept for the backward pass (node-wise tensors: split by cp).
  double activationBytes = 0;
  /// Attention bias / [H, S, S] tensors kept for the backward (split by
  /// cp by rows): the term cost models without graph bias leave out.
  double biasBytes = 0;
  /// The part of biasBytes that is a Graphormer spatial bias alone
  /// (gt.spatial_bias), which the attention kernels read in place
  /// (gt-fuse-spatial-bias runs under every plan): it is not kept.
  double spatialBiasBytes = 0;
  /// The activation entering the unit (what a pipeline stage receives and,
  /// under recomputation, stores).
  double inputBytes = 0;
  /// Attention bias bytes the unit reads that an earlier unit produced
  /// and kept (a Graphormer spatial bias computed once and read by every
  /// layer). A pipeline stage that starts at this unit receives them with
  /// its input for every micro-batch in flight (gt-pipeline-split forwards
  /// a source op's outputs from stage to stage), on top of what its own
  /// units keep.
  double forwardedBiasBytes = 0;
  /// Peak scratch of one op (score blocks, ...).
  double transientBytes = 0;
  /// K and V bytes of the unit's attention (moved by cp).
  double kvBytes = 0;
  /// The attention backward's workspace per packed query row and per
  /// packed key row (its largest attention's; rows padded to 96, as the
  /// kernel packs them): under cp a rank's S / cp rows pad to the same
  /// granularity, so its workspace is not the sequence's divided by cp.
  double attentionQueryRowBytes = 0, attentionKeyRowBytes = 0;
  int64_t attentionOps = 0;
};

struct ModelProfile {
  std::string name;
  /// Global batch B (sequences per step) and sequence length S.
  int64_t batch = 1, seqLen = 1;
  std::vector<UnitProfile> units;
  /// Bytes of the step's inputs and outputs per sequence (the driver's).
  double ioBytesPerSeq = 0;
  /// The attention bias gradients accumulated over the layers in the
  /// backward (one per distinct bias tensor), per sequence.
  double biasGradBytesPerSeq = 0;
  /// The part of it that is a spatial bias alone (no gradient tensor when
  /// the bias is read in place: the table's gradient is summed inside the
  /// attention backward).
  double spatialBiasGradBytesPerSeq = 0;
  /// What reading the spatial bias in place holds instead, per sequence:
  /// the distances narrowed to int16 for the kernels (gt-decompose), one
  /// copy per distance tensor wider than int16, for the whole step.
  double spatialDistanceBytesPerSeq = 0;
  /// Optimizer state per parameter byte (AdamW: 2 moments; SGD: 0).
  double optimizerStateFactor = 2;
  /// The fewest heads of an attention op (0: unknown). Ulysses splits the
  /// heads over the cp ranks, so it needs cp to divide them.
  int64_t heads = 0;
  /// Number of transformer layers (units with attention).
  int64_t layers() const;
  int64_t paramBytes() const;
};

/// What the unit summary is read from: the gt-raised forward module (the
/// importer's output after gt-raise; no autodiff). `batch` is the global
/// batch the module's leading dimension stands for: the module's own batch
/// b0 is divided out (costs are per sequence).
struct AnalyzeOptions {
  std::string optimizer = "adamw";
};
/// The unit summary of `module`; the error says what the module lacks.
llvm::Expected<ModelProfile> analyzeModule(mlir::ModuleOp module,
                                           const AnalyzeOptions &options);

/// A synthetic transformer (for the benchmark and tests): `layers` layers of
/// hidden size `hidden`, `heads` heads, FFN 4x, an encoder and a head.
ModelProfile syntheticTransformer(int64_t layers, int64_t hidden, int64_t heads,
                                  int64_t batch, int64_t seqLen,
                                  int64_t features = 64, int64_t classes = 16);

/// Per-device memory of a plan, by kind (bytes; the worst stage).
struct MemoryBreakdown {
  double parameters = 0, gradients = 0, optimizerState = 0;
  double activations = 0, attentionBias = 0, transient = 0, io = 0;
  /// What the step holds after its backward has freed the activations,
  /// beside the gradients: the packed all-reduce bucket, the optimizer's
  /// flattened operands and new values, a ZeRO bucket's gathered update,
  /// and the distances read in place (which live for the whole step). The
  /// step peaks in whichever phase holds more.
  double update = 0;
  /// The backward's phase: activations, bias and transient.
  double backward() const { return activations + attentionBias + transient; }
  /// Whether the step peaks in the update's phase rather than the
  /// backward's.
  bool peaksInUpdate() const { return update > backward(); }
  /// The larger of the two phases.
  double phase() const { return std::max(backward(), update); }
  double total() const {
    return parameters + gradients + optimizerState + io + phase();
  }
};

struct Prediction {
  bool valid = false;
  /// Why the plan does not apply to the model (batch not divisible...).
  std::string invalidReason;
  double stepTime = 0;
  double computeTime = 0, communicationTime = 0, bubbleTime = 0;
  MemoryBreakdown memory;
  double peakBytes() const { return memory.total(); }
  /// First unit of each pipeline stage (pp > 1).
  std::vector<int64_t> firstUnit;
};

/// The cost of one plan. With pp > 1 and empty plan.stages, the stage
/// boundaries come from splitStages (StageSplit.h) within `memoryLimit`
/// (<= 0: unlimited); plan.stages, when given, are unit indices.
/// Without `breakdown`, computeTime / communicationTime stay 0 (the search
/// prices the ranked plans again with it).
Prediction predict(const ModelProfile &model, const ParallelPlan &plan,
                   const HardwareProfile &profile, int64_t memoryLimit = 0,
                   bool breakdown = true);

/// A lower bound of predict(...).stepTime over every stage split, in O(units)
/// (no DP): slots x (max(total / pp, slowest unit) + sends). Negative when
/// the plan does not apply.
double stepTimeLowerBound(const ModelProfile &model, const ParallelPlan &plan,
                          const HardwareProfile &profile);

llvm::json::Value toJSON(const Prediction &prediction);
llvm::json::Value toJSON(const ModelProfile &model);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_COSTMODEL_H
