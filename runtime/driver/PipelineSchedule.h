//===- PipelineSchedule.h - Pipeline schedules as data ----------*- C++ -*-===//
//
// Internal to the runtime. A pipeline schedule is, for each stage, the list
// of what it does in one training step: run the stage forward or backward
// on a micro-batch, and send or receive activations (to / from the next
// stage) and their gradients (to / from the previous one). The lists are
// built here, without any transport, and one loop (pipelineStep,
// Pipeline.cpp) runs them, so a schedule is checked by simulating the
// stages' lists against each other (test/unit/Runtime/
// PipelineScheduleTest.cpp).
//
//   1F1B   (the non-interleaved schedule of Megatron-LM) stage s of K runs
//          min(K - s - 1, M) warm-up forwards, then forward(m + w) /
//          backward(m) pairs, then the remaining backwards; it keeps at
//          most min(K - s, M) micro-batches' inputs.
//   GPipe  every forward, then every backward in the same order; every
//          stage keeps all M micro-batches' inputs.
//
// The last stage has no forward entry (its backward recomputes the forward
// from the received activations), and neither end talks to a stage that
// does not exist: the lists hold only the actions a stage really takes.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_PIPELINESCHEDULE_H
#define MEGAGRAPH_RUNTIME_DRIVER_PIPELINESCHEDULE_H

#include <string>
#include <vector>

namespace mgrt {

enum class PipelineScheduleKind { OneForwardOneBackward, GPipe };

/// Parses MEGAGRAPH_PP_SCHEDULE's values "1f1b" and "gpipe".
bool parsePipelineSchedule(const std::string &text, PipelineScheduleKind &kind);

/// One step of a stage. `microBatch` is the micro-batch the action's data
/// belongs to (for the combined exchanges: the one received).
struct PipelineAction {
  enum Kind {
    /// Receive micro-batch m's activations from stage s - 1.
    RecvActivations,
    /// Run the stage forward on micro-batch m.
    Forward,
    /// Send the last forward's activations to stage s + 1.
    SendActivations,
    /// Receive the gradients of the last sent activations from stage s + 1.
    RecvGradients,
    /// Run the stage backward on micro-batch m (and accumulate).
    Backward,
    /// Send the last backward's input gradients to stage s - 1.
    SendGradients,
    /// SendActivations and RecvGradients as one exchange with stage s + 1.
    SendActivationsRecvGradients,
    /// SendGradients and RecvActivations(m) as one exchange with s - 1.
    SendGradientsRecvActivations,
  };
  Kind kind;
  int microBatch;

  bool operator==(const PipelineAction &o) const {
    return kind == o.kind && microBatch == o.microBatch;
  }
};

/// The actions of stage `stage` of `stages` over `microBatches`
/// micro-batches, in order.
std::vector<PipelineAction> buildPipelineSchedule(PipelineScheduleKind kind,
                                                  int stages, int stage,
                                                  int microBatches);

/// The most micro-batches whose inputs `actions` holds at once (received,
/// backward not yet run): the input slots the stage needs. Micro-batch m
/// may use slot m % slots, since every schedule here finishes micro-batches
/// in the order it receives them.
int pipelineSlots(const std::vector<PipelineAction> &actions);

/// "F3", "B0", "recv-act 2", ... for messages and tests.
std::string toString(const PipelineAction &action);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_PIPELINESCHEDULE_H
