//===- Pipelines.h - The registered pass pipelines --------------*- C++ -*-===//
//
// Part of MegaGraph. Each phase of megagraph-compile is a pass pipeline
// built here and registered under a name, so megagraph-opt reproduces any
// stage of a compile:
//
//   import-to-gt  raise the imported module to gt ops (--emit=gt); with
//                 sparse-adjacency-edges=E, Kipf's dense adj_norm input
//                 becomes edge_index [2, E] first
//   train         the training step with the plan applied: gt-set-plan,
//                 then gt-pipeline-split / gt-pipeline-train for pp > 1,
//                 else gt-context-parallel (cp > 1), gt-autodiff,
//                 gt-data-parallel (dp x cp > 1), gt-optimizer,
//                 gt-zero-gather (zero >= 1); or the loss gradients alone
//                 (gradients=1, megagraph-compile --gradients). The plan's
//                 passes interleave with autodiff and the optimizer, so
//                 applying the plan is part of this pipeline.
//   lower-cpu     gt / TOSA / linalg to the LLVM dialect for the host
//   lower-cuda    the same with the loop nests as NVVM kernels
//
//   megagraph-opt m.mlir --pass-pipeline='builtin.module(import-to-gt,
//       train{plan="dp=2,zero=1" optimizer=sgd},lower-cpu)'
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PIPELINES_PIPELINES_H
#define MEGAGRAPH_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace megagraph {

/// Options of the `train` pipeline (megagraph-compile's --train flags).
struct TrainPipelineOptions
    : public mlir::PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> plan{*this, "plan",
                           llvm::cl::desc("The parallel plan in --plan "
                                          "syntax (default: one process)"),
                           llvm::cl::init("")};
  Option<bool> gradients{
      *this, "gradients",
      llvm::cl::desc("Only the loss and its gradients (no plan, no update)"),
      llvm::cl::init(false)};
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("cross_entropy, nll, mse, l1 or bce_with_logits"),
      llvm::cl::init("cross_entropy")};
  Option<std::string> lossOutput{
      *this, "loss-output",
      llvm::cl::desc("The @main result (gt.name) the loss applies to "
                     "(default: the first)"),
      llvm::cl::init("")};
  // gt-optimizer's recipe (Passes.td, GTOptimizerRecipeOptions), under the
  // same names.
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adam or adamw"),
                                llvm::cl::init("adamw")};
  Option<double> learningRate{*this, "lr", llvm::cl::desc("Learning rate"),
                              llvm::cl::init(1e-3)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay"),
                             llvm::cl::init(0.0)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("sgd: momentum"),
                          llvm::cl::init(0.0)};
  Option<double> dampening{*this, "dampening", llvm::cl::desc("sgd: dampening"),
                           llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("sgd: Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("adam/adamw: beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("adam/adamw: beta2"),
                       llvm::cl::init(0.999)};
  Option<double> epsilon{*this, "eps", llvm::cl::desc("adam/adamw: eps"),
                         llvm::cl::init(1e-8)};
  Option<std::string> lrSchedule{
      *this, "lr-schedule",
      llvm::cl::desc("constant, linear, cosine or polynomial"),
      llvm::cl::init("constant")};
  Option<int64_t> warmupSteps{*this, "warmup-steps",
                              llvm::cl::desc("Linear warmup steps"),
                              llvm::cl::init(0)};
  Option<int64_t> totalSteps{*this, "total-steps",
                             llvm::cl::desc("Step at which the decay ends"),
                             llvm::cl::init(0)};
  Option<double> minLr{*this, "min-lr",
                       llvm::cl::desc("Learning rate at the end of the decay"),
                       llvm::cl::init(0.0)};
  Option<double> power{*this, "power",
                       llvm::cl::desc("polynomial: exponent of the decay"),
                       llvm::cl::init(1.0)};
  Option<double> clipGradNorm{
      *this, "clip-grad-norm",
      llvm::cl::desc("Clip the gradients' global 2-norm (0: off)"),
      llvm::cl::init(0.0)};
  Option<std::string> ppBalance{
      *this, "pp-balance",
      llvm::cl::desc("Pipeline stage boundaries without the plan's stages: "
                     "cost or even"),
      llvm::cl::init("cost")};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("Hardware profile of the stage split's unit costs"),
      llvm::cl::init("cpu-here")};
};

/// Options of the `lower-cpu` and `lower-cuda` pipelines.
struct LowerPipelineOptions
    : public mlir::PassPipelineOptions<LowerPipelineOptions> {
  Option<bool> referenceAttention{
      *this, "reference-attention",
      llvm::cl::desc("Decompose gt.attention into explicit scores instead "
                     "of calling the fused runtime kernel"),
      llvm::cl::init(false)};
  Option<bool> emulateGpu{
      *this, "emulate-gpu",
      llvm::cl::desc("lower-cpu: run the loop nests as lower-cuda's "
                     "kernels, emulated by host loops (testing)"),
      llvm::cl::init(false)};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("lower-cuda: the PTX target chip"),
                           llvm::cl::init("sm_80")};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("lower-cuda: the CUDA toolkit (for libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("GEMM and attention precision: fp32 or bf16 (FP32 "
                     "master weights, optimizer state and statistics)"),
      llvm::cl::init("fp32")};
};

/// Options of the `import-to-gt` pipeline.
struct ImportToGtPipelineOptions
    : public mlir::PassPipelineOptions<ImportToGtPipelineOptions> {
  Option<int64_t> sparseAdjacencyEdges{
      *this, "sparse-adjacency-edges",
      llvm::cl::desc("gt-sparse-adjacency's edges: replace a dense adj_norm "
                     "input by edge_index [2, E] (megagraph-compile "
                     "--input-shape edge_index=2xE; -1: keep it dense)"),
      llvm::cl::init(-1)};
};

/// gt-sparse-adjacency (with sparse-adjacency-edges >= 0), gt-raise,
/// canonicalize, cse.
void buildImportToGtPassPipeline(mlir::OpPassManager &pm,
                                 const ImportToGtPipelineOptions &options);

/// The training step (see the file comment). A plan that does not parse
/// leaves only gt-set-plan, which reports it.
void buildTrainPassPipeline(mlir::OpPassManager &pm,
                            const TrainPipelineOptions &options);

/// To the LLVM dialect: gt-export-entries, gt-shard-to-runtime,
/// gt-decompose, bufferization with early deallocation, then host loops
/// (`cuda` false) or NVVM kernels with device memory (`cuda` true).
void buildLowerPassPipeline(mlir::OpPassManager &pm,
                            const LowerPipelineOptions &options, bool cuda);

/// Registers import-to-gt, train, lower-cpu and lower-cuda.
void registerMegaGraphPipelines();

} // namespace megagraph

#endif // MEGAGRAPH_PIPELINES_PIPELINES_H
