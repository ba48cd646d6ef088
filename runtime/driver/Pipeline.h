//===- Pipeline.h - Pipeline-parallel training steps ------------*- C++ -*-===//
//
// Internal to the runtime. A model compiled with --plan pp=K,mb=M (the
// gt-pipeline-split / gt-pipeline-train passes) has per-stage entry points
// (mgrt_model_info::entries): "s<k>.fwd" (stage forward, all but the last
// stage), "s<k>.bwd" (recomputes the forward from the stage inputs, then the
// backward: from the loss on the last stage, from the cotangents of the
// stage outputs elsewhere), "s<k>.update" (the optimizer on the stage's
// parameters from gradients accumulated over the step). The process grid is
// dp x pp (x cp = 1): rank r has coordinates (d, k) and runs stage k of
// replica d. The driver fills the replica's whole batch (M micro-batches,
// the stub @main's shapes) as usual; pipelineStep slices it into
// micro-batches and runs the stage's list of actions of the 1F1B (or GPipe)
// schedule (PipelineSchedule.h), with activations sent to stage k+1 and
// their gradients to stage k-1 by mgrt_comm send/recv/sendrecv over the pp
// group. Micro-batch m's loss and gradients are
// weighted by n_m / N (labelled nodes in m over the global batch), so the
// step equals the one-process masked mean; gradients are summed over the dp
// group before the update (by the update itself with zero=1|2); loss and
// counts are broadcast from the last
// stage.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_PIPELINE_H
#define MEGAGRAPH_RUNTIME_DRIVER_PIPELINE_H

#include "comm/DriverComm.h"
#include "driver/PipelineSchedule.h"
#include "megagraph/Runtime.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct mgrt_comm_group;

namespace mgrt {

struct PipelineState;

struct Pipeline {
  /// The grid dp x pp x cp (cp innermost): cp ranks of a stage replica
  /// each hold their rows of every sequence (gt-context-parallel).
  int pp = 1, mb = 1, dp = 1, cp = 1;
  /// ZeRO stage of the stages' updates: above 0 they reduce-scatter the
  /// gradients over dp themselves (gt-pipeline-train).
  int zero = 0;
  int stage = 0, replica = 0, cpRank = 0, worldRank = 0;
  /// 1F1B (default) or GPipe (all forwards, then all backwards; every
  /// stage keeps all M micro-batches' inputs): MEGAGRAPH_PP_SCHEDULE=gpipe.
  PipelineScheduleKind schedule = PipelineScheduleKind::OneForwardOneBackward;
  mgrt_comm_group *ppGroup = nullptr, *dpGroup = nullptr;
  /// Seconds spent inside this rank's stage forward and backward entries
  /// during the last pipelineStep (no waits, sends or the update): the
  /// measured counterpart of gt.pipeline's stage_time x mb; and the
  /// process CPU seconds over the same intervals (less than the wall time
  /// when more ranks than cores share the machine).
  double computeSeconds = 0, computeCpuSeconds = 0;
  /// Bytes of the tracked buffers the schedule holds across steps
  /// (setupPipeline): the stage-input and saved-value slots of the
  /// micro-batches in flight, the gradient accumulators and the backward's
  /// outputs. They are allocated before the first step, so a step's
  /// peak_bytes - base_bytes does not see them; the step log reports them
  /// as schedule_bytes.
  size_t heldBytes = 0;
  const mgrt_entry_info *fwd = nullptr, *bwd = nullptr, *update = nullptr;
  /// Buffers: stashed stage inputs, gradient accumulators, entry outputs.
  std::unique_ptr<PipelineState> state;

  Pipeline();
  ~Pipeline();
};

/// Whether the model is pipelined (has stage entries).
bool isPipelined(const mgrt_model_info &model);

/// Initializes MPI, checks the job size against the plan (model.plan), picks
/// this rank's stage entries; dp gets the replica's rank and size.
bool setupPipeline(const mgrt_model_info &model, Pipeline &pipe,
                   DataParallel &dp, std::string &error);

/// One training step on the replica's batch `inputs` (model.inputs order);
/// fills the outputs named loss / correct / eval_correct (global values on
/// every rank).
bool pipelineStep(Pipeline &pipe, const mgrt_model_info &model,
                  std::vector<mgrt_tensor> &inputs,
                  std::vector<mgrt_tensor> &outputs, std::string &error);

/// Sum of `v` over the dp group.
double pipelineSumOverReplicas(const Pipeline &pipe, double v);

/// `v` of every process, by world rank.
std::vector<size_t> pipelineGather(const Pipeline &pipe, size_t v);
std::vector<double> pipelineGatherSeconds(const Pipeline &pipe, double v);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_PIPELINE_H
