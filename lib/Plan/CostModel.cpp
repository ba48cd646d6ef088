//===- CostModel.cpp - Analytic step time and memory of a plan ------------===//
//
// The unit summary of a module and the plan-dependent formulas; see
// CostModel.h and docs/plan_search.md (the formulas, term by term).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/CostModel.h"

#include "megagraph/Dialect/GT/GTInterfaces.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Passes/GradientBuckets.h"
#include "megagraph/Passes/OptimizerPacking.h"
#include "megagraph/Plan/ForwardUnits.h"
#include "megagraph/Plan/StageSplit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>

using namespace megagraph;
using namespace mlir;

int64_t ModelProfile::layers() const {
  return static_cast<int64_t>(units.size());
}

int64_t ModelProfile::paramBytes() const {
  int64_t total = 0;
  for (const UnitProfile &u : units)
    total += u.paramBytes;
  return total;
}

//===----------------------------------------------------------------------===//
// The unit summary of a module
//===----------------------------------------------------------------------===//

static double bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return static_cast<double>(shaped.getNumElements()) * ((bits + 7) / 8);
}

/// x rounded up to a multiple of m.
static int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// The rows the attention backward packs for `rows` rows: padded to 96
/// (runtime/kernels/AttentionBackward.cpp's row tile).
static double paddedRows(int64_t rows) {
  return static_cast<double>(roundUp(rows, 96));
}

static bool isFloatTensor(Value v) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  return shaped && isa<FloatType>(shaped.getElementType());
}

/// Ops that produce views or constants: no storage of their own.
static bool isView(Operation *op) {
  return isa<tosa::ReshapeOp, tosa::ConstOp, tosa::ConstShapeOp,
             ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp>(op) ||
         op->hasTrait<OpTrait::ConstantLike>();
}

/// Ops whose backward needs no saved operand (linear in their inputs
/// without weights, or index-only).
static bool keepsNothing(Operation *op) {
  return isa<tosa::AddOp, tosa::SubOp, tosa::NegateOp, tosa::TransposeOp,
             tosa::ReshapeOp, tosa::ConcatOp, tosa::SliceOp, tosa::PadOp,
             tosa::TileOp, tosa::ReduceSumOp, tosa::CastOp, gt::SpatialBiasOp,
             gt::DegreeEmbeddingOp, gt::NodeEmbeddingOp>(op);
}

llvm::Expected<ModelProfile>
megagraph::analyzeModule(ModuleOp module, const AnalyzeOptions &options) {
  auto fail = [](const char *message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  ModelProfile model;
  func::FuncOp main;
  module.walk([&](func::FuncOp f) {
    if (!f.isDeclaration() && (!main || f.getName() == "main"))
      main = f;
  });
  if (!main)
    return fail("the module has no function to analyze");
  model.optimizerStateFactor = options.optimizer == "adamw" ? 2.0
                               : options.optimizer == "sgd" ? 0.0
                                                            : 2.0;

  // The batch b0 and sequence length S: the leading two dims of the first
  // input of rank >= 2.
  int64_t b0 = 0;
  for (Type t : main.getArgumentTypes()) {
    auto shaped = dyn_cast<ShapedType>(t);
    if (shaped && shaped.hasStaticShape() && shaped.getRank() >= 2) {
      b0 = shaped.getDimSize(0);
      model.seqLen = shaped.getDimSize(1);
      break;
    }
  }
  if (b0 <= 0)
    return fail("the model's inputs have no static [B, S, ...] shape");
  model.batch = b0;
  double io = 0;
  for (Type t : main.getArgumentTypes())
    io += bytesOf(t);
  for (Type t : main.getResultTypes())
    io += bytesOf(t);
  model.ioBytesPerSeq = io / b0;

  // Parameters: mutable gt.param globals, by symbol.
  llvm::StringMap<double> paramBytes;
  llvm::StringSet<> matrices, packed;
  module.walk([&](ml_program::GlobalOp g) {
    if (g->hasAttr("gt.param") || g->hasAttr("gt.param_shard")) {
      paramBytes[g.getSymName()] = bytesOf(g.getType());
      auto t = dyn_cast<ShapedType>(g.getType());
      if (t && t.hasRank() && t.getRank() >= 2)
        matrices.insert(g.getSymName());
      if (t && t.hasStaticShape() &&
          t.getNumElements() < kOptimizerPackElements)
        packed.insert(g.getSymName());
    }
  });

  // Program order of the top-level ops; units start at each attention's
  // backward slice (what feeds it that comes after the previous one).
  SmallVector<Operation *> ops;
  for (Operation &op : main.getBody().front())
    ops.push_back(&op);
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  SmallVector<int64_t> attentionPos;
  for (auto [i, op] : llvm::enumerate(ops))
    if (isa<gt::AttentionOp>(op))
      attentionPos.push_back(i);
  SmallVector<int64_t> unitOf(ops.size(), 0);
  int64_t numUnits = std::max<int64_t>(1, attentionPos.size());
  {
    // Unit a >= 1 starts at the last cut point of findForwardUnits
    // (ForwardUnits.h: where the fewest activations cross, the points
    // gt-pipeline-split cuts at) at or before attention a: where the
    // residual stream alone enters layer a, before its pre-norm. So the
    // model's stage boundaries are boundaries the compiler can choose. The
    // encoders fold into the first unit, the final norm and the head into
    // the last; free ops (parameter loads, constants) go with the compute
    // op before them.
    ForwardUnits fu = findForwardUnits(main);
    SmallVector<int64_t> unitStart; // compute positions, for a = 1, 2, ..
    for (int64_t a = 1; a < (int64_t)attentionPos.size(); ++a) {
      const int64_t p = fu.position.lookup(ops[attentionPos[a]]);
      int64_t cut = 0;
      for (int64_t c : fu.cuts)
        if (c <= p)
          cut = std::max(cut, c);
      unitStart.push_back(cut);
    }
    int64_t computed = 0; // compute ops before and at op i
    for (auto [i, op] : llvm::enumerate(ops)) {
      if (fu.position.count(op))
        computed = fu.position.lookup(op) + 1;
      const int64_t q = std::max<int64_t>(0, computed - 1);
      unitOf[i] = llvm::count_if(unitStart, [&](int64_t s) { return s <= q; });
    }
  }

  model.units.assign(numUnits, UnitProfile());
  for (int64_t u = 0; u < numUnits; ++u)
    model.units[u].name = "layer" + std::to_string(u);
  // Activations are counted once per value, in the unit of its first
  // backward-needing use.
  llvm::DenseSet<Value> kept, biasGrads, distances;
  // Each attention bias: the first and last unit that read it.
  llvm::MapVector<Value, std::pair<int64_t, int64_t>> biasUnits;
  llvm::DenseSet<StringRef> paramsSeen;
  auto isParamLoad = [&](Value v) {
    auto load = v.getDefiningOp<ml_program::GlobalLoadOp>();
    return load && paramBytes.count(load.getGlobal().getLeafReference());
  };
  auto keep = [&](UnitProfile &unit, Value v, bool bias) {
    if (!isFloatTensor(v) || isParamLoad(v) || !kept.insert(v).second)
      return;
    Operation *def = v.getDefiningOp();
    if (def &&
        (isa<tosa::ConstOp>(def) || def->hasTrait<OpTrait::ConstantLike>()))
      return;
    (bias ? unit.biasBytes : unit.activationBytes) += bytesOf(v.getType());
  };
  for (auto [i, op] : llvm::enumerate(ops)) {
    UnitProfile &unit = model.units[unitOf[i]];
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op)) {
      // A parameter belongs to the unit of its first user.
      StringRef sym = load.getGlobal().getLeafReference();
      auto it = paramBytes.find(sym);
      if (it == paramBytes.end() || !paramsSeen.insert(sym).second)
        continue;
      int64_t first = static_cast<int64_t>(ops.size());
      for (Operation *user : load->getUsers()) {
        Operation *top = main.getBody().front().findAncestorOpInBlock(*user);
        if (top && position.count(top))
          first = std::min(first, position[top]);
      }
      UnitProfile &owner =
          model.units[first < (int64_t)ops.size() ? unitOf[first] : unitOf[i]];
      const auto bytes = static_cast<int64_t>(it->second);
      owner.paramBytes += bytes;
      owner.matrixParams += matrices.contains(sym);
      owner.largestParamBytes = std::max(owner.largestParamBytes, bytes);
      if (packed.contains(sym))
        owner.packedParamBytes += bytes;
      continue;
    }
    if (isView(op) || isa<func::ReturnOp>(op))
      continue;
    ++unit.numOps;
    if (auto att = dyn_cast<gt::AttentionOp>(op)) {
      ++unit.attentionOps;
      const auto attHeads = static_cast<int64_t>(att.getNumHeads());
      model.heads = model.heads ? std::min(model.heads, attHeads) : attHeads;
      unit.attentionFlops += std::max<int64_t>(0, att.getFlops());
      unit.kvBytes +=
          bytesOf(att.getKey().getType()) + bytesOf(att.getValue().getType());
      // Flash-style: Q, K, V, the output and the row statistics.
      keep(unit, att.getQuery(), false);
      keep(unit, att.getKey(), false);
      keep(unit, att.getValue(), false);
      keep(unit, att.getResult(), false);
      auto q = cast<ShapedType>(att.getQuery().getType());
      unit.activationBytes += 4.0 * q.getDimSize(0) * q.getDimSize(1) *
                              static_cast<double>(att.getNumHeads());
      if (Value bias = att.getBias()) {
        if (isFloatTensor(bias)) {
          auto [it, inserted] =
              biasUnits.try_emplace(bias, unitOf[i], unitOf[i]);
          it->second.first = std::min(it->second.first, unitOf[i]);
          it->second.second = std::max(it->second.second, unitOf[i]);
        }
        // A spatial bias alone is what gt-fuse-spatial-bias moves into the
        // attention kernels (read in place, no dense gradient).
        const bool spatial = bias.getDefiningOp<gt::SpatialBiasOp>() != nullptr;
        if (spatial && isFloatTensor(bias) && !kept.count(bias))
          unit.spatialBiasBytes += bytesOf(bias.getType());
        keep(unit, bias, true);
        if (biasGrads.insert(bias).second) {
          model.biasGradBytesPerSeq += bytesOf(bias.getType());
          if (spatial)
            model.spatialBiasGradBytesPerSeq += bytesOf(bias.getType());
        }
        // In place, the kernels read the distances as int16.
        if (auto sb = bias.getDefiningOp<gt::SpatialBiasOp>()) {
          auto d = cast<ShapedType>(sb.getDistance().getType());
          if (d.hasStaticShape() && d.getElementTypeBitWidth() > 16 &&
              distances.insert(sb.getDistance()).second)
            model.spatialDistanceBytesPerSeq += 2.0 * d.getNumElements();
        }
      }
      // The backward kernel's workspace: Q, dO, K, V and their transposes
      // packed with rows padded to 96 and head dims to 16 (runtime/kernels/
      // AttentionBackward.cpp), plus the row statistics.
      auto k = cast<ShapedType>(att.getKey().getType());
      auto v = cast<ShapedType>(att.getValue().getType());
      const int64_t heads = att.getNumHeads();
      const double sqP = paddedRows(q.getDimSize(1)),
                   skP = paddedRows(k.getDimSize(1));
      const double dhP = roundUp(q.getDimSize(2) / heads, 16),
                   dvP = roundUp(v.getDimSize(2) / heads, 16);
      const double keyRow = 4.0 * q.getDimSize(0) * heads * 2 * (dhP + dvP);
      const double queryRow =
          4.0 * q.getDimSize(0) * heads * (2 * (dhP + dvP) + 2);
      unit.attentionQueryRowBytes =
          std::max(unit.attentionQueryRowBytes, queryRow);
      unit.attentionKeyRowBytes = std::max(unit.attentionKeyRowBytes, keyRow);
      unit.transientBytes =
          std::max({unit.transientBytes, skP * keyRow + sqP * queryRow,
                    (double)std::max<int64_t>(0, att.getTransientBytes())});
      continue;
    }
    double flops = 0;
    bool gemm = false;
    int64_t minDim = 0;
    if (auto lin = dyn_cast<gt::LinearOp>(op)) {
      flops = lin.getFlops();
      auto w = cast<ShapedType>(lin.getWeight().getType());
      minDim = std::min(w.getDimSize(0), w.getDimSize(1));
      gemm = true;
    } else if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
      auto a = cast<ShapedType>(mm.getA().getType());
      auto b = cast<ShapedType>(mm.getB().getType());
      if (a.hasStaticShape() && b.hasStaticShape()) {
        flops = 2.0 * a.getDimSize(0) * a.getDimSize(1) * a.getDimSize(2) *
                b.getDimSize(2);
        minDim = std::min({a.getDimSize(1), a.getDimSize(2), b.getDimSize(2)});
      }
      gemm = true;
    }
    if (gemm) {
      (minDim >= 64 ? unit.gemmFlops : unit.smallGemmFlops) += flops;
    } else {
      for (Value v : op->getOperands())
        unit.otherBytes += bytesOf(v.getType());
      for (Value v : op->getResults())
        unit.otherBytes += bytesOf(v.getType());
    }
    if (!keepsNothing(op))
      for (Value v : op->getOperands()) {
        // A float [.., S, S] operand of rank >= 3 is a bias/score tensor.
        auto shaped = dyn_cast<ShapedType>(v.getType());
        bool square = shaped && shaped.getRank() >= 3 &&
                      shaped.getDimSize(shaped.getRank() - 1) == model.seqLen &&
                      shaped.getDimSize(shaped.getRank() - 2) == model.seqLen;
        keep(unit, v, square);
      }
    if (auto cost = dyn_cast<gt::CostOpInterface>(op))
      unit.transientBytes =
          std::max(unit.transientBytes,
                   (double)std::max<int64_t>(0, cost.getTransientBytes()));
  }
  // A bias read by units first..last reaches units first+1..last as a
  // stage input when a stage boundary falls between them. A spatial bias
  // alone does not: the kernels read it in place, and the stages after
  // the first receive only its table.
  for (auto &[bias, range] : biasUnits) {
    if (bias.getDefiningOp<gt::SpatialBiasOp>())
      continue;
    for (int64_t u = range.first + 1; u <= range.second; ++u)
      model.units[u].forwardedBiasBytes += bytesOf(bias.getType());
  }
  // Inputs of each unit: the hidden state entering it ([b0, S, D] of the
  // first attention's query input); per sequence.
  for (int64_t u = 0; u < numUnits; ++u) {
    UnitProfile &unit = model.units[u];
    if (u < (int64_t)attentionPos.size()) {
      auto att = cast<gt::AttentionOp>(ops[attentionPos[u]]);
      unit.inputBytes = bytesOf(att.getQuery().getType());
    }
    for (double *f :
         {&unit.gemmFlops, &unit.smallGemmFlops, &unit.attentionFlops,
          &unit.otherBytes, &unit.activationBytes, &unit.biasBytes,
          &unit.spatialBiasBytes, &unit.forwardedBiasBytes, &unit.inputBytes,
          &unit.transientBytes, &unit.kvBytes, &unit.attentionQueryRowBytes,
          &unit.attentionKeyRowBytes})
      *f /= b0;
  }
  model.biasGradBytesPerSeq /= b0;
  model.spatialBiasGradBytesPerSeq /= b0;
  model.spatialDistanceBytesPerSeq /= b0;
  return model;
}

ModelProfile megagraph::syntheticTransformer(int64_t layers, int64_t hidden,
                                             int64_t heads, int64_t batch,
                                             int64_t seqLen, int64_t features,
                                             int64_t classes) {
  ModelProfile model;
  model.name =
      "synthetic-L" + std::to_string(layers) + "-D" + std::to_string(hidden);
  model.batch = batch;
  model.seqLen = seqLen;
  model.heads = heads;
  const double S = seqLen, D = hidden, H = heads, f = 4;
  model.ioBytesPerSeq = f * S * (features + classes + 2) + 8 * S * S;
  for (int64_t l = 0; l < layers; ++l) {
    UnitProfile u;
    u.name = "layer" + std::to_string(l);
    // Q, K, V, O projections and the 4x FFN.
    u.gemmFlops = 2 * S * D * D * 4 + 2 * S * D * 4 * D * 2;
    u.attentionFlops = 4 * S * S * D;
    u.otherBytes = f * S * D * 12;
    u.numOps = 14;
    u.paramBytes = static_cast<int64_t>(f * (12 * D * D + 13 * D));
    u.matrixParams = 6;
    // Four D x D and two D x 4D matrices, 13 vectors of D.
    u.largestParamBytes = static_cast<int64_t>(f * 4 * D * D);
    for (double elements : {D * D, 4 * D * D})
      if (elements < kOptimizerPackElements)
        u.packedParamBytes +=
            static_cast<int64_t>(f * elements * (elements == D * D ? 4 : 2));
    if (D < kOptimizerPackElements)
      u.packedParamBytes += static_cast<int64_t>(f * 13 * D);
    // LN in/out x2, Q, K, V, O, attention out, FFN in/hidden/gelu.
    u.activationBytes = f * S * D * (4 + 4 + 1 + 1 + 4 + 4) + f * S * H;
    u.biasBytes = f * H * S * S;
    u.inputBytes = f * S * D;
    u.transientBytes = f * H * std::min<int64_t>(64, seqLen) * S;
    u.kvBytes = 2 * f * S * D;
    u.attentionOps = 1;
    if (l == 0) {
      u.gemmFlops += 2 * S * features * D;
      u.paramBytes += static_cast<int64_t>(f * (features * D + D));
      ++u.matrixParams;
    }
    if (l + 1 == layers) {
      u.gemmFlops += 2 * S * D * classes;
      u.paramBytes += static_cast<int64_t>(f * (D * classes + classes));
      ++u.matrixParams;
    }
    model.units.push_back(u);
  }
  return model;
}

//===----------------------------------------------------------------------===//
// predict
//===----------------------------------------------------------------------===//

namespace {

/// The plan-dependent per-unit costs, in StageSplit's terms, and the
/// per-stage constants that do not depend on the split.
struct PlanUnits {
  std::vector<UnitCost> units;
  StageSplitOptions split;
  double stageTimeConstant = 0; // pipeline sends per micro-batch
  double memoryConstant = 0;    // io + transient + gathered shards
  double slots = 1;             // mb + pp - 1
  int64_t localBatch = 0, microBatch = 0;
  int64_t ranksOnNode = 1;
};

/// Synchronisations of ranks per attention and micro-batch under cp, each
/// of which costs HardwareProfile::syncLatency on time-shared cores
/// (runtime/cp): all-gather: K/V gathered in the forward, their gradients
/// reduce-scattered in the backward; ring: a K/V step per other block in
/// the forward, a K/V and a dK/dV step per block in the backward; Ulysses:
/// q, k, v and the bias (if any) to heads and the output back in the
/// forward, q, k, v, the bias and dO to heads and dq, dk, dv and the bias
/// gradient back in the backward.
double cpSyncs(const ParallelPlan &plan, bool bias) {
  const double cp = static_cast<double>(plan.cp);
  if (plan.cpMode == "ring")
    return (plan.recompute ? 2 : 1) * (cp - 1) + 2 * (cp - 1);
  if (plan.cpMode == "ulysses")
    return (plan.recompute ? 2 : 1) * (bias ? 5 : 4) + (bias ? 9 : 7);
  return (plan.recompute ? 2 : 1) + 1;
}

/// Collectives of a step's gradients (and ZeRO's parameter gathers) that
/// fall to a unit of `unitParams` bytes and `matrices` weight matrices in
/// a model of `modelParams` parameter bytes (gt-data-parallel): without
/// ZeRO buckets of kGradientBucketBytes filled in backward order; ZeRO-1
/// one reduce-scatter and one all-gather per step; ZeRO-2 a reduce-scatter
/// and an all-gather per layer bucket (a matrix starts one); ZeRO-3 also a
/// gather of each matrix before its first use.
double dpSyncs(int zero, double unitParams, double modelParams,
               int64_t matrices) {
  if (modelParams <= 0)
    return 0;
  const double part = unitParams / modelParams;
  if (zero == 0)
    return part *
           std::ceil(modelParams / static_cast<double>(kGradientBucketBytes));
  if (zero == 1)
    return 2 * part;
  return static_cast<double>((zero >= 3 ? 3 : 2) * matrices);
}

/// What a rank's per-sequence activations are divided by under cp: S over
/// the rows each rank holds, ceil(S / cp) (cp itself when it divides S;
/// with uneven blocks every rank's program has the longest block's rows).
double rowDivisor(const ModelProfile &model, const ParallelPlan &plan) {
  if (plan.cp <= 1 || model.seqLen <= 0)
    return static_cast<double>(plan.cp);
  const int64_t rows = (model.seqLen + plan.cp - 1) / plan.cp;
  return static_cast<double>(model.seqLen) / static_cast<double>(rows);
}

/// The attention bias bytes unit `u` keeps per sequence. The training
/// pipeline runs gt-fuse-spatial-bias under every plan: the attention
/// kernels read Graphormer's spatial bias in place, from the table and the
/// distances (under cp each rank reads its rows of the distances; under pp
/// the first stage sends the table to the others), so it is not kept.
double keptBias(const UnitProfile &u) {
  return u.biasBytes - u.spatialBiasBytes;
}

/// The int16 distances the step holds per sequence for the spatial bias
/// read in place.
double distanceBytes(const ModelProfile &model) {
  return model.spatialDistanceBytesPerSeq;
}

/// The bias gradients accumulated in the backward per sequence.
double biasGradBytes(const ModelProfile &model) {
  return model.biasGradBytesPerSeq - model.spatialBiasGradBytesPerSeq;
}

/// The gradient bytes a rank holds for `p` parameter bytes. Under the
/// driver's pipeline schedule (ParallelPlan::pipelined) a stage's backward
/// writes its gradients to output buffers that the driver adds into
/// accumulators, both whole and both held across the step
/// (runtime/driver/Pipeline.cpp); ZeRO's update reduce-scatters from the
/// accumulators. Otherwise the step's gradients, a 1/(dp x cp) shard with
/// ZeRO >= 2.
double gradientBytes(double p, const ParallelPlan &plan) {
  if (plan.pipelined())
    return 2 * p;
  return plan.zero >= 2 ? p / static_cast<double>(plan.dp * plan.cp) : p;
}

/// What a rank holds after its backward beside the gradients, for a stage
/// of `p` parameter bytes whose largest parameter has `largest` bytes and
/// whose packed parameters (gt-optimizer's pack-below) have `packed`
/// bytes, `stateFactor` optimizer states per parameter byte:
///  * without ZeRO (gt-data-parallel, gt-optimizer): the packed all-reduce
///    bucket of the gradients while its division writes them back (dp x cp
///    > 1), or the update of one parameter (its new weight and states) or
///    of one packed group (its weights, gradients and states concatenated,
///    and the new values). Each update stores its new values right away,
///    so one update's copies are live at a time;
///  * with ZeRO (gt-zero-gather): the update of a shard, and at stages 1
///    and 2 the all-gather of the updated bucket into the parameters: one
///    bucket of every parameter at stage 1, one per weight matrix at stage
///    2; at stage 3 the shards are the parameters' storage.
double updateBytes(const ParallelPlan &plan, double p, double largest,
                   double packed, double stateFactor) {
  const int64_t group = plan.dp * plan.cp;
  if (plan.zero >= 1 && group > 1) {
    const double shardUpdate =
        (1 + stateFactor) * p / static_cast<double>(group);
    if (plan.zero >= 3)
      return shardUpdate;
    return shardUpdate + (plan.zero == 1 ? p : std::min(p, largest));
  }
  const double bucket =
      group > 1 ? std::min(p, static_cast<double>(kGradientBucketBytes)) : 0;
  const double packedGroup =
      (3 + 2 * stateFactor) *
      std::min(packed, 4.0 * static_cast<double>(kOptimizerPackElements));
  return std::max({bucket, packedGroup, (1 + stateFactor) * largest});
}

/// Seconds of Ulysses all-to-alls of `bytes` in all (over the whole
/// sequence; each rank holds 1 / cp of it and sends (cp - 1) / cp of that).
double ulyssesAllToAll(const HardwareProfile &hw, int64_t cp, double bytes) {
  if (cp <= 1 || bytes <= 0)
    return 0;
  const AlphaBeta &ab = cp <= hw.devicesPerNode ? hw.intra : hw.inter;
  const double n = static_cast<double>(cp);
  return (n - 1) * ab.alpha + (n - 1) / (n * n) * bytes * ab.beta;
}

/// The work of the attention backward on a rank over its unpadded work:
/// the kernel processes query and key rows in blocks of `block` rows
/// (HardwareProfile::attentionRowBlock), so a rank's ceil(S / cp) query
/// rows cost as a whole block against all S keys (all-gather), against
/// each of cp blocks of ceil(S / cp) keys (ring), or the whole padded
/// sequence (no cp, and Ulysses' whole rows).
double attentionBackwardPadding(int64_t seqLen, const ParallelPlan &plan,
                                int64_t block) {
  if (seqLen <= 0 || block <= 1)
    return 1;
  auto pad = [&](int64_t rows) {
    return static_cast<double>(roundUp(rows, block));
  };
  const double S = static_cast<double>(seqLen);
  if (plan.cp <= 1 || plan.cpMode == "ulysses")
    return pad(seqLen) * pad(seqLen) / (S * S);
  const int64_t rows = (seqLen + plan.cp - 1) / plan.cp;
  const double r = static_cast<double>(rows);
  if (plan.cpMode == "ring")
    return static_cast<double>(plan.cp) * pad(rows) * pad(rows) / (r * S);
  return pad(rows) * pad(seqLen) / (r * S);
}

/// What the cp all-gather attention backward holds beyond the unit's
/// workspace at S / cp rows, per micro-batch of `m` sequences: the keys
/// and values gathered for all S rows, their full-length gradients before
/// the reduce-scatter, and the key side of the kernel's packed workspace
/// for the other ranks' keys. (The ring holds two blocks of S / cp rows.)
double allGatherWorkspace(const UnitProfile &u, double m, double cp,
                          const ParallelPlan &plan) {
  if (plan.cp <= 1 || plan.cpMode != "allgather")
    return 0;
  return 2 * m * u.kvBytes;
}

/// The attention backward's workspace on a cp rank, per micro-batch of
/// `m` sequences: its ceil(S / cp) query rows against all S keys
/// (all-gather) or a block of ceil(S / cp) keys (ring), each padded as the
/// kernel packs them; 0 without cp or under Ulysses (whole rows, H / cp
/// heads: the sequence's workspace divided by cp).
double cpAttentionWorkspace(const UnitProfile &u, double m, int64_t seqLen,
                            const ParallelPlan &plan) {
  if (plan.cp <= 1 || plan.cpMode == "ulysses" || !u.attentionOps)
    return 0;
  const int64_t rows = (seqLen + plan.cp - 1) / plan.cp;
  const int64_t keys = plan.cpMode == "allgather" ? seqLen : rows;
  return m * (paddedRows(rows) * u.attentionQueryRowBytes +
              paddedRows(keys) * u.attentionKeyRowBytes);
}

/// Bytes unit `u` keeps for the backward per micro-batch of `m` sequences
/// when each rank holds 1/`cp` of the rows (rowDivisor): that share,
/// except K and V under cp all-gather or ring, which the attention backward
/// needs for the whole sequence (the gathered or received blocks stay live
/// until then).
double keptActivations(const UnitProfile &u, double m, double cp,
                       const ParallelPlan &plan) {
  const double kv = plan.cp > 1 && plan.cpMode != "ulysses"
                        ? std::min(u.kvBytes, u.activationBytes)
                        : 0;
  return m / cp * (u.activationBytes - kv) + m * kv;
}

std::string planUnits(const ModelProfile &model, const ParallelPlan &plan,
                      const HardwareProfile &hw, int64_t memoryLimit,
                      PlanUnits &out) {
  if (llvm::Error e = verifyParallelPlan(plan))
    return llvm::toString(std::move(e));
  const int64_t L = model.layers();
  if (plan.pp > L)
    return "pp=" + std::to_string(plan.pp) + " exceeds the " +
           std::to_string(L) + " layers";
  if (model.batch % plan.dp)
    return "the batch of " + std::to_string(model.batch) +
           " sequences is not divisible by dp=" + std::to_string(plan.dp);
  const int64_t b = model.batch / plan.dp;
  if (b % plan.microBatches)
    return "the per-replica batch of " + std::to_string(b) +
           " is not divisible by mb=" + std::to_string(plan.microBatches);
  if (model.seqLen > 0 && model.seqLen < plan.cp)
    return "cp=" + std::to_string(plan.cp) +
           " exceeds S=" + std::to_string(model.seqLen);
  const double m = static_cast<double>(b / plan.microBatches);
  const double cp = rowDivisor(model, plan);
  const int64_t devices = plan.devices();
  const int64_t ranksOnNode = std::min<int64_t>(devices, hw.devicesPerNode);
  const double share = hw.computeShare(ranksOnNode);
  // What one synchronisation of ranks costs beyond alpha (time-shared
  // cores only).
  const double sync = hw.oversubscribed(ranksOnNode) ? hw.syncLatency : 0;
  const double modelParams = static_cast<double>(model.paramBytes());
  const double slots = static_cast<double>(plan.microBatches + plan.pp - 1);
  // The gradients are summed over the dp x cp ranks (the cp blocks of a
  // sequence hold partial gradients too), and ZeRO shards over all of them.
  const int64_t dpGroup = plan.dp * plan.cp;
  const double shard = static_cast<double>(dpGroup);
  const int zero = static_cast<int>(plan.zero);

  out = PlanUnits();
  out.localBatch = b;
  out.microBatch = b / plan.microBatches;
  out.slots = slots;
  out.ranksOnNode = ranksOnNode;
  out.split.pp = plan.pp;
  out.split.microBatches = plan.microBatches;
  out.split.recompute = plan.recompute;
  out.split.memoryLimit = memoryLimit;
  double transient = 0;
  // The largest parameter (ZeRO-3's buckets are sized by it).
  double largestParam = 0;
  int64_t attentionOps = 0; // over the units (Ulysses' distance share)
  for (const UnitProfile &u : model.units)
    attentionOps += u.attentionOps;
  for (const UnitProfile &u : model.units) {
    UnitCost c;
    c.name = u.name;
    // Forward seconds of one micro-batch on this device; the backward is
    // twice the forward, recomputation adds one forward.
    double fwd =
        m / cp *
            (u.gemmFlops / hw.gemmFlops + u.smallGemmFlops / hw.smallGemmFlops +
             u.attentionFlops / hw.attentionFlops +
             u.otherBytes / hw.memoryBandwidth) /
            share +
        u.numOps * hw.opOverhead;
    double compute = fwd * (plan.recompute ? 4 : 3);
    // The attention backward (twice its forward) runs on rows padded as
    // the kernel packs them (attentionBackwardPadding).
    if (u.attentionOps)
      compute +=
          2 * m / cp * u.attentionFlops / hw.attentionFlops / share *
          (attentionBackwardPadding(model.seqLen, plan, hw.attentionRowBlock) -
           1);
    // cp: K/V all-gathered in the forward, their gradients reduce-scattered
    // in the backward; ring overlaps the blocks with the attention.
    double cpComm = 0;
    if (plan.cp > 1 && u.attentionOps) {
      double kv = u.kvBytes * m;
      if (plan.cpMode == "ulysses") {
        // What runtime/cp/CpUlysses.cpp moves per attention: the forward
        // q, k, v to heads and the output back (2 kv), the dense bias to
        // heads; the backward q, k, v, dO to heads and dq, dk, dv back
        // (3.5 kv), the bias to heads and its gradient back.
        // Recomputation runs the forward twice. The int16 distance rows of
        // a spatial bias read in place are all-gathered once per
        // micro-batch (each attention unit its share).
        const double bias = m * keptBias(u);
        const double dist = hw.allGather(plan.cp, m * distanceBytes(model)) *
                            static_cast<double>(u.attentionOps) /
                            static_cast<double>(attentionOps);
        const double fwd = ulyssesAllToAll(hw, plan.cp, 2 * kv + bias);
        const double bwd = ulyssesAllToAll(hw, plan.cp, 3.5 * kv + 2 * bias);
        cpComm = dist + (plan.recompute ? 2 : 1) * fwd + bwd;
      } else {
        cpComm = 2 * hw.allGather(plan.cp, kv);
        if (plan.recompute)
          cpComm *= 1.5;
      }
      if (plan.cpMode == "ring" && hw.overlap) {
        double attention =
            3 * m / cp * u.attentionFlops / hw.attentionFlops / share;
        cpComm = std::max(0.0, cpComm - attention);
      }
      cpComm += static_cast<double>(u.attentionOps) *
                cpSyncs(plan, u.biasBytes > 0) * sync;
    }
    // dp x cp: the unit's gradients all-reduced once per step (ZeRO 1/2: a
    // reduce-scatter plus the parameters' all-gather, the same volume;
    // ZeRO 3: the parameters gathered again for the backward), spread over
    // the pipeline slots so that the stage sum stays the step's share.
    double dpComm = 0;
    if (dpGroup > 1) {
      dpComm = hw.allReduce(dpGroup, (double)u.paramBytes);
      if (zero >= 3)
        dpComm += hw.allGather(dpGroup, (double)u.paramBytes);
      dpComm +=
          dpSyncs(zero, (double)u.paramBytes, modelParams, u.matrixParams) *
          sync;
    }
    c.time = compute + cpComm + dpComm / slots;
    // Memory held for the whole step.
    double p = (double)u.paramBytes;
    double params = zero >= 3 ? p / shard : p;
    double grads = gradientBytes(p, plan);
    double state = model.optimizerStateFactor * (zero >= 1 ? p / shard : p);
    // Under pp a rank holds its own stage's parameters, gradients and
    // moments only (gt-stage-globals).
    c.persistentBytes = static_cast<int64_t>(params + grads + state);
    c.activationBytes = static_cast<int64_t>(keptActivations(u, m, cp, plan) +
                                             m / cp * keptBias(u));
    c.inputBytes = static_cast<int64_t>(m / cp * u.inputBytes);
    c.forwardedBytes = static_cast<int64_t>(m / cp * u.forwardedBiasBytes);
    transient = std::max(
        transient, std::max(m / cp * u.transientBytes,
                            cpAttentionWorkspace(u, m, model.seqLen, plan)) +
                       allGatherWorkspace(u, m, cp, plan));
    largestParam = std::max(largestParam, (double)u.largestParamBytes);
    out.units.push_back(c);
  }
  if (plan.pp > 1) {
    double boundary = m / cp * model.units.front().inputBytes;
    out.stageTimeConstant =
        2 * (hw.sendRecv(boundary, plan.devices() > hw.devicesPerNode) + sync);
  }
  // The kernels' workspace and the attention backward's packed operands
  // are not live at once; the bias gradient accumulates over the layers.
  // ZeRO-3 gathers each bucket's parameters right before their first use
  // in the forward and again in the backward; a bucket is a weight matrix
  // and the vectors after it (gt-data-parallel), and each gather after a
  // phase's first is started one bucket ahead (gt-zero-gather's prefetch):
  // two buckets' gathered parameters are live at a time, at most twice the
  // largest weight's.
  const double gathered = zero >= 3 ? 2.0 * largestParam : 0.0;
  out.memoryConstant = std::max(transient, hw.rankScratchBytes(ranksOnNode)) +
                       m / cp * biasGradBytes(model) +
                       b / cp * distanceBytes(model) +
                       model.ioBytesPerSeq * b / cp + gathered;
  return "";
}

} // namespace

Prediction megagraph::predict(const ModelProfile &model,
                              const ParallelPlan &plan,
                              const HardwareProfile &hw, int64_t memoryLimit,
                              bool breakdown) {
  Prediction pred;
  PlanUnits pu;
  if (std::string e = planUnits(model, plan, hw, 0, pu); !e.empty()) {
    pred.invalidReason = e;
    return pred;
  }
  StageSplit split;
  if (plan.pp == 1) {
    split = evaluateSplit(pu.units, {0}, pu.split);
  } else if (!plan.stages.empty()) {
    split = evaluateSplit(pu.units, plan.stages, pu.split);
    if (!split.feasible) {
      pred.invalidReason = "invalid stage boundaries";
      return pred;
    }
  } else {
    // The DP's memory limit leaves room for the per-stage constants.
    pu.split.memoryLimit =
        memoryLimit > 0
            ? std::max<int64_t>(1, memoryLimit -
                                       static_cast<int64_t>(pu.memoryConstant))
            : 0;
    split = splitStages(pu.units, pu.split);
    if (!split.feasible) {
      // Nothing fits: report the even split (the search prunes the plan
      // by memory; its memory is a budget that would fit).
      pu.split.memoryLimit = 0;
      split = evenSplit(pu.units, pu.split);
    }
  }
  if (!split.feasible) {
    pred.invalidReason = "no pipeline split";
    return pred;
  }
  pred.valid = true;
  pred.firstUnit = split.firstUnit;
  // The worst stage's memory, by kind.
  int64_t worst = 0;
  for (int64_t k = 1; k < (int64_t)split.stageMemory.size(); ++k)
    if (split.stageMemory[k] > split.stageMemory[worst])
      worst = k;
  // ZeRO shards over the dp x cp ranks that sum the gradients.
  const double shard = static_cast<double>(plan.dp * plan.cp);
  int64_t begin = split.firstUnit[worst],
          end = worst + 1 < (int64_t)split.firstUnit.size()
                    ? split.firstUnit[worst + 1]
                    : (int64_t)model.units.size();
  double p = 0, act = 0, bias = 0, largest = 0, packed = 0;
  const double m = pu.microBatch, cp = rowDivisor(model, plan);
  for (int64_t u = begin; u < end; ++u) {
    p += model.units[u].paramBytes;
    largest = std::max(largest, (double)model.units[u].largestParamBytes);
    packed += model.units[u].packedParamBytes;
    act += keptActivations(model.units[u], m, cp, plan);
    bias += m / cp * keptBias(model.units[u]);
  }
  int64_t inFlight = inFlightMicroBatches(worst, pu.split);
  // A stage before the last also holds one micro-batch's values in its
  // entries' arena (entryArenaMicroBatches).
  const int64_t held = inFlight + entryArenaMicroBatches(worst, pu.split);
  MemoryBreakdown &mem = pred.memory;
  // Parameters, gradients and moments: the worst stage's (under pp each
  // rank materialises only its own stage's state, gt-stage-globals).
  mem.parameters = plan.zero >= 3 ? p / shard : p;
  mem.gradients = gradientBytes(p, plan);
  mem.optimizerState =
      model.optimizerStateFactor * (plan.zero >= 1 ? p / shard : p);
  // A stage after the first receives the bias the earlier stages made,
  // per micro-batch in flight.
  const double forwarded =
      worst > 0 ? m / cp * model.units[begin].forwardedBiasBytes : 0;
  if (plan.recompute) {
    mem.activations = inFlight * m / cp * model.units[begin].inputBytes + act;
    mem.attentionBias = bias + inFlight * forwarded;
  } else {
    mem.activations = held * act;
    mem.attentionBias = held * (bias + forwarded);
  }
  mem.io = model.ioBytesPerSeq * pu.localBatch / cp;
  const double inPlace = pu.localBatch / cp * distanceBytes(model);
  mem.attentionBias += m / cp * biasGradBytes(model) + inPlace;
  mem.transient =
      pu.memoryConstant - mem.io - m / cp * biasGradBytes(model) - inPlace;
  mem.update = inPlace + updateBytes(plan, p, largest, packed,
                                     model.optimizerStateFactor);
  // Time: every stage runs mb + pp - 1 slots of its bottleneck.
  double bottleneck = split.bottleneck + pu.stageTimeConstant;
  pred.stepTime = pu.slots * bottleneck;
  pred.bubbleTime = (plan.pp - 1) * bottleneck;
  // On time-shared cores a stage idle in the bubble leaves its core to the
  // busy ones: the step is bounded by the ranks' work (mb slots of the mean
  // stage, every rank at its share) and by the schedule's span with each
  // rank as fast as it is alone.
  if (const double alone = hw.aloneSpeedup(pu.ranksOnNode);
      plan.pp > 1 && alone > 1) {
    double total = 0;
    for (double t : split.stageTime)
      total += t;
    const double mean = total / plan.pp + pu.stageTimeConstant;
    pred.stepTime = std::max(plan.microBatches * mean, pred.stepTime / alone);
    pred.bubbleTime =
        std::max(0.0, pred.stepTime - plan.microBatches * bottleneck);
  }
  if (!breakdown)
    return pred;
  // Compute alone: the same split priced without communication.
  HardwareProfile quiet = hw;
  quiet.intra = quiet.inter = AlphaBeta();
  PlanUnits computeOnly;
  planUnits(model, plan, quiet, 0, computeOnly);
  double slowest = 0;
  for (int64_t k = 0; k < (int64_t)split.firstUnit.size(); ++k) {
    int64_t s = split.firstUnit[k], e = k + 1 < (int64_t)split.firstUnit.size()
                                            ? split.firstUnit[k + 1]
                                            : (int64_t)model.units.size();
    double t = 0;
    for (int64_t u = s; u < e; ++u)
      t += computeOnly.units[u].time;
    slowest = std::max(slowest, t);
  }
  pred.computeTime = slowest * plan.microBatches;
  pred.communicationTime =
      std::max(0.0, pred.stepTime - pred.bubbleTime - pred.computeTime);
  return pred;
}

double megagraph::stepTimeLowerBound(const ModelProfile &model,
                                     const ParallelPlan &plan,
                                     const HardwareProfile &hw) {
  PlanUnits pu;
  if (!planUnits(model, plan, hw, 0, pu).empty())
    return -1;
  double total = 0, slowest = 0;
  for (const UnitCost &u : pu.units) {
    total += u.time;
    slowest = std::max(slowest, u.time);
  }
  const double span =
      pu.slots * (std::max(total / plan.pp, slowest) + pu.stageTimeConstant);
  // predict's bound on time-shared cores (the bubble reclaimed).
  if (const double alone = hw.aloneSpeedup(pu.ranksOnNode);
      plan.pp > 1 && alone > 1)
    return std::max(static_cast<double>(plan.microBatches) *
                        (total / plan.pp + pu.stageTimeConstant),
                    span / alone);
  return span;
}

llvm::json::Value megagraph::toJSON(const Prediction &p) {
  const MemoryBreakdown &m = p.memory;
  llvm::json::Array stages;
  for (int64_t s : p.firstUnit)
    stages.push_back(s);
  return llvm::json::Object{
      {"step_time_s", p.stepTime},
      {"compute_s", p.computeTime},
      {"communication_s", p.communicationTime},
      {"bubble_s", p.bubbleTime},
      {"peak_bytes", static_cast<int64_t>(p.peakBytes())},
      {"memory",
       llvm::json::Object{
           {"parameters", static_cast<int64_t>(m.parameters)},
           {"gradients", static_cast<int64_t>(m.gradients)},
           {"optimizer_state", static_cast<int64_t>(m.optimizerState)},
           {"activations", static_cast<int64_t>(m.activations)},
           {"attention_bias", static_cast<int64_t>(m.attentionBias)},
           {"transient", static_cast<int64_t>(m.transient)},
           {"update", static_cast<int64_t>(m.update)},
           {"io", static_cast<int64_t>(m.io)},
           {"peak_phase", m.peaksInUpdate() ? "update" : "backward"}}},
      {"first_layer_of_stage", std::move(stages)}};
}

llvm::json::Value megagraph::toJSON(const ModelProfile &model) {
  llvm::json::Array units;
  for (const UnitProfile &u : model.units)
    units.push_back(
        llvm::json::Object{{"name", u.name},
                           {"gemm_flops", u.gemmFlops},
                           {"small_gemm_flops", u.smallGemmFlops},
                           {"attention_flops", u.attentionFlops},
                           {"other_bytes", u.otherBytes},
                           {"ops", u.numOps},
                           {"param_bytes", u.paramBytes},
                           {"matrix_params", u.matrixParams},
                           {"activation_bytes", u.activationBytes},
                           {"bias_bytes", u.biasBytes},
                           {"forwarded_bias_bytes", u.forwardedBiasBytes},
                           {"input_bytes", u.inputBytes},
                           {"transient_bytes", u.transientBytes},
                           {"kv_bytes", u.kvBytes}});
  return llvm::json::Object{
      {"name", model.name},
      {"batch", model.batch},
      {"seq_len", model.seqLen},
      {"io_bytes_per_seq", model.ioBytesPerSeq},
      {"optimizer_state_factor", model.optimizerStateFactor},
      {"units_per_sequence", std::move(units)}};
}
