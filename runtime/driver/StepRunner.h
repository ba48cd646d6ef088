//===- StepRunner.h - How a training step runs ------------------*- C++ -*-===//
//
// Internal to the runtime. The step runners of the training loop:
//   EntryRunner     the model's entry: one process, data parallelism (with
//                   ZeRO: the compiled step holds its shards) and context
//                   parallelism (the compiled step talks to its cp peers);
//                   the dp x cp world is one DataParallel group here
//                   (comm/DriverComm.h)
//   PipelineRunner  the stage entries under a pipeline schedule
//                   (Pipeline.h, PipelineSchedule.h)
// Besides the step, a runner gathers the per-rank figures the metrics log
// reports.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_STEPRUNNER_H
#define MEGAGRAPH_RUNTIME_DRIVER_STEPRUNNER_H

#include "megagraph/Runtime.h"

#include "comm/DriverComm.h"
#include "driver/MetricsLog.h"

#include <memory>
#include <string>
#include <vector>

namespace mgrt {

class StepRunner {
public:
  virtual ~StepRunner() = default;

  /// Binds the step's tensors (model.inputs / model.outputs order); they
  /// must stay where they are for every later step().
  virtual void bind(std::vector<mgrt_tensor> &inputs,
                    std::vector<mgrt_tensor> &outputs) = 0;
  /// One training step on the bound tensors; false with `error`.
  virtual bool step(std::string &error) = 0;

  /// The data-parallel group: rank and size of this replica's world.
  const DataParallel &dataParallel() const { return dp; }
  /// Whether this rank prints and logs.
  virtual bool lead() const { return dp.rank == 0; }

  /// `v` of every rank, by rank.
  virtual std::vector<size_t> gather(size_t v) const = 0;
  /// Sum of `v` over the dp replicas (v itself with one replica).
  virtual double sumOverReplicas(double v) const = 0;
  /// Adds what this runner measures besides time and host memory.
  virtual void addMetrics(StepMetrics &m) const {}

protected:
  DataParallel dp;
};

/// The runner of `model`: a PipelineRunner for a pipelined model, else an
/// EntryRunner (which initializes MPI only for a parallel plan). Null with
/// `error` when the job does not match the plan.
std::unique_ptr<StepRunner> makeStepRunner(const mgrt_model_info &model,
                                           std::string &error);

/// An EntryRunner of one process, with no communication (--data npy:).
std::unique_ptr<StepRunner>
makeSingleProcessRunner(const mgrt_model_info &model);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_STEPRUNNER_H
