//===- Pipelines.cpp - The registered pass pipelines ----------------------===//
//
// Part of MegaGraph. See Pipelines.h.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Pipelines/Pipelines.h"

#include "megagraph/Passes/Passes.h"
#include "megagraph/Plan/ParallelPlan.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// The upstream part of the lowering after gt-decompose, up to buffers
/// that are freed after their last use (both targets). Elementwise chains
/// are fused before bufferization: one loop nest and no intermediate
/// buffer per chain (an optimizer update is ~15 TOSA ops per parameter),
/// but never at the price of keeping large tensors alive across other
/// work (gt-fuse-elementwise). The kernels' precision (gt-precision) is
/// chosen once the runtime calls exist.
std::string bufferPipeline(const LowerPipelineOptions &options) {
  return "func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
         "gt-fuse-elementwise,"
         "tosa-to-tensor,canonicalize),"
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "buffer-results-to-out-params{modify-public-functions "
         "hoist-static-allocs},gt-linalg-to-runtime,"
         "gt-precision{precision=" +
         options.precision +
         "},"
         "ownership-based-buffer-deallocation,canonicalize,"
         "buffer-deallocation-simplification,bufferization-lower-deallocations,"
         "cse,canonicalize,gt-early-dealloc";
}

/// lower-cpu: loops on the host. Before it, on the host target proper (not
/// the GPU emulation), the buffer arenas and the thread pool's loop nests
/// (kCpuHostPasses). arith-expand's bf16 patterns turn f32 <-> bf16
/// conversions into integer code (round to nearest even): without them LLVM
/// calls __truncsfbf2 on CPUs without AVX-512 BF16, which GCC 12's libgcc
/// does not define, and the executable does not link. gt-approximate-math
/// inlines f32 erf and tanh before convert-math-to-libm, so that GELU's
/// loops have no calls and LLVM vectorizes them.
constexpr const char *kCpuPipeline =
    "convert-linalg-to-loops,expand-strided-metadata,"
    "lower-affine,convert-scf-to-cf,"
    "finalize-memref-to-llvm{use-generic-functions=true},"
    "gt-approximate-math,arith-expand{include-bf16=true},"
    "convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
    "reconcile-unrealized-casts";

/// Host only: the local buffers of each function in one arena planned by
/// liveness, and the large loop nests on the runtime's thread pool
/// (independent iterations only, so the results do not depend on the
/// thread count).
constexpr const char *kCpuHostPasses =
    "gt-memory-plan,convert-linalg-to-parallel-loops,gt-parallel-to-runtime,";

/// lower-cuda: one kernel per loop nest (gt-gpu-offload), kernels to PTX
/// through NVVM, launches to mgpu* calls, buffers and globals on the
/// device (gt-gpu-device-memory).
std::string cudaPipeline(const LowerPipelineOptions &options) {
  std::string nvvm = "chip=" + options.chip + " O=3";
  std::string libdevice = options.cudaPath + "/nvvm/libdevice/libdevice.10.bc";
  if (llvm::sys::fs::exists(libdevice))
    nvvm += " l=" + libdevice;
  return "gt-gpu-offload,gpu-kernel-outlining,expand-strided-metadata,"
         "lower-affine,convert-scf-to-cf,nvvm-attach-target{" +
         nvvm +
         "},gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
         "reconcile-unrealized-casts),"
         "finalize-memref-to-llvm{use-generic-functions=true},gpu-to-llvm,"
         "convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
         "reconcile-unrealized-casts,gpu-module-to-binary{format=isa},"
         "gt-gpu-device-memory";
}

/// Appends a textual pipeline of fixed upstream passes.
void addTextual(OpPassManager &pm, const std::string &pipeline) {
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error("megagraph: bad built-in pass pipeline");
}

void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

} // namespace

void megagraph::buildImportToGtPassPipeline(
    OpPassManager &pm, const ImportToGtPipelineOptions &options) {
  // The sparse adjacency first: gt-raise then sees its products' operands.
  if (options.sparseAdjacencyEdges >= 0) {
    GTSparseAdjacencyOptions sparse;
    sparse.edges = options.sparseAdjacencyEdges;
    pm.addPass(createGTSparseAdjacency(sparse));
  }
  pm.addPass(createGTRaise());
  addCleanup(pm);
}

void megagraph::buildTrainPassPipeline(OpPassManager &pm,
                                       const TrainPipelineOptions &options) {
  if (options.gradients) {
    // The spatial bias read inside attention: its gradient rule gives the
    // table's gradient without a [B, H, Sq, Sk] tensor either way.
    pm.addPass(createGTFuseSpatialBias());
    GTAutodiffOptions autodiff;
    autodiff.replaceMain = true;
    autodiff.loss = options.loss;
    autodiff.outputName = options.lossOutput;
    pm.addPass(createGTAutodiff(autodiff));
    addCleanup(pm);
    return;
  }
  GTSetPlanOptions setPlan;
  setPlan.plan = options.plan;
  pm.addPass(createGTSetPlan(setPlan));
  ParallelPlan plan;
  if (!options.plan.empty()) {
    llvm::Expected<ParallelPlan> parsed = parseParallelPlan(options.plan);
    if (!parsed) {
      llvm::consumeError(parsed.takeError()); // gt-set-plan reports it
      return;
    }
    plan = *parsed;
  }

  // Stages, or micro-batches whose gradients accumulate (gradient
  // accumulation is the one-stage pipeline); the driver runs their schedule.
  if (plan.pipelined()) {
    // cp inside each stage: the rows are sharded before the split, so the
    // stages (and the activations they send) hold S / cp rows.
    if (plan.cp > 1) {
      GTContextParallelOptions contextParallel;
      contextParallel.cp = plan.cp;
      contextParallel.dp = plan.dp;
      contextParallel.pp = plan.pp;
      contextParallel.mode = plan.cpMode;
      pm.addPass(createGTContextParallel(contextParallel));
    }
    // The spatial bias read inside attention: over several stages every
    // stage's attentions read the one table, which gt-pipeline-split sends
    // from the first stage to the others (and its gradient back), instead
    // of a [B, H, S, S] bias per micro-batch.
    pm.addPass(createGTFuseSpatialBias());
    GTPipelineSplitOptions split;
    split.pp = plan.pp;
    split.microBatches = plan.microBatches;
    split.stages.assign(plan.stages.begin(), plan.stages.end());
    split.balance = options.ppBalance;
    split.recompute = plan.recompute;
    split.profile = options.profile; // unit times at the search's rates
    pm.addPass(createGTPipelineSplit(split));
    GTPipelineTrainOptions stages;
    copyOptimizerRecipe(options, stages);
    stages.recompute = plan.recompute;
    stages.dp = plan.dp;
    stages.cp = plan.cp;
    stages.zero = plan.zero;
    pm.addPass(createGTPipelineTrain(stages));
    addCleanup(pm);
    return;
  }
  if (plan.cp > 1) { // S / cp rows per rank, cp attention
    GTContextParallelOptions contextParallel;
    contextParallel.cp = plan.cp;
    contextParallel.dp = plan.dp;
    contextParallel.mode = plan.cpMode;
    pm.addPass(createGTContextParallel(contextParallel));
  }
  // A full graph's N nodes over mop / gp ranks.
  if (plan.mop > 1) {
    GTMixtureParallelOptions mixture;
    mixture.ranks = plan.mop;
    pm.addPass(createGTMixtureParallel(mixture));
  }
  if (plan.gp > 1) {
    GTPartitionParallelOptions partition;
    partition.ranks = plan.gp;
    pm.addPass(createGTPartitionParallel(partition));
  }
  const int64_t nodeRanks = plan.mop * plan.gp;
  // The spatial bias read inside attention, cp attentions included (they
  // read their rows of the distances): no [B, H, S/cp, S] bias or gradient.
  pm.addPass(createGTFuseSpatialBias());
  GTAutodiffOptions autodiff;
  autodiff.loss = options.loss;
  autodiff.outputName = options.lossOutput;
  pm.addPass(createGTAutodiff(autodiff));
  // Activation checkpoints: the backward recomputes each unit's values.
  if (plan.recompute)
    pm.addPass(createGTRecompute());
  if (plan.dp * plan.cp * nodeRanks > 1) { // gradients summed over all ranks
    GTDataParallelOptions dataParallel;
    dataParallel.dp = plan.dp * plan.cp * nodeRanks;
    dataParallel.presummed = plan.cp > 1 || nodeRanks > 1;
    dataParallel.zero = plan.zero;
    pm.addPass(createGTDataParallel(dataParallel));
  }
  GTOptimizerOptions opt;
  copyOptimizerRecipe(options, opt);
  pm.addPass(createGTOptimizer(opt));
  if (plan.dp * plan.cp > 1 && plan.zero >= 1)
    pm.addPass(createGTZeroGather());
  addCleanup(pm);
  // The mixture of accelerators on the cleaned-up step (forward and
  // backward): aggregations pipelined with the transforms of their rows.
  if (plan.moa) {
    GTMixtureAcceleratorsOptions accelerators;
    accelerators.chunks = plan.chunks;
    pm.addPass(createGTMixtureAccelerators(accelerators));
    addCleanup(pm);
  }
}

void megagraph::buildLowerPassPipeline(OpPassManager &pm,
                                       const LowerPipelineOptions &options,
                                       bool cuda) {
  pm.addPass(createGTExportEntries());
  // shard collectives (data parallelism) become communication runtime calls.
  pm.addPass(createGTShardToRuntime());
  GTDecomposeOptions decompose;
  decompose.keepAttention = !options.referenceAttention;
  // Spatial biases stay inside attention for the CPU FP32 kernels only
  // (the BF16 and GPU attention kernels take the dense bias).
  decompose.keepSpatialBias =
      !cuda && !options.emulateGpu && options.precision == "fp32";
  if (decompose.keepAttention && decompose.keepSpatialBias)
    pm.addPass(createGTFuseSpatialBias()); // inference modules
  pm.addPass(createGTDecompose(decompose));
  // The CPU kernels hand the forward's row statistics to the backward.
  if (decompose.keepAttention && !cuda && !options.emulateGpu)
    pm.addPass(createGTAttentionKeepLse());
  std::string pipeline = bufferPipeline(options) + ",";
  if (cuda)
    pipeline += cudaPipeline(options);
  else
    pipeline +=
        std::string(options.emulateGpu ? "gt-gpu-offload{emulate-on-host},"
                                       : kCpuHostPasses) +
        kCpuPipeline +
        // A pipelined program: each rank materialises its stage's globals.
        ",gt-stage-globals";
  addTextual(pm, pipeline);
}

void megagraph::registerMegaGraphPipelines() {
  PassPipelineRegistration<ImportToGtPipelineOptions>(
      "import-to-gt",
      "Raise an imported module to gt ops (gt-sparse-adjacency, gt-raise, "
      "canonicalize, cse)",
      buildImportToGtPassPipeline);
  PassPipelineRegistration<TrainPipelineOptions>(
      "train",
      "The training step (forward, loss, backward, update) with the "
      "parallel plan applied",
      buildTrainPassPipeline);
  PassPipelineRegistration<LowerPipelineOptions>(
      "lower-cpu", "Lower to the LLVM dialect for the host CPU",
      [](OpPassManager &pm, const LowerPipelineOptions &options) {
        buildLowerPassPipeline(pm, options, /*cuda=*/false);
      });
  PassPipelineRegistration<LowerPipelineOptions>(
      "lower-cuda",
      "Lower to the LLVM dialect with the loop nests as NVVM kernels",
      [](OpPassManager &pm, const LowerPipelineOptions &options) {
        buildLowerPassPipeline(pm, options, /*cuda=*/true);
      });
}
