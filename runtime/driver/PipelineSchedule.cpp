//===- PipelineSchedule.cpp - Pipeline schedules as data ------------------===//
//
// Part of MegaGraph. See PipelineSchedule.h.
//
//===----------------------------------------------------------------------===//

#include "driver/PipelineSchedule.h"

#include <algorithm>

namespace mgrt {

bool parsePipelineSchedule(const std::string &text,
                           PipelineScheduleKind &kind) {
  if (text == "1f1b")
    kind = PipelineScheduleKind::OneForwardOneBackward;
  else if (text == "gpipe")
    kind = PipelineScheduleKind::GPipe;
  else
    return false;
  return true;
}

namespace {

/// Appends actions, leaving out the exchanges with stages that do not
/// exist and the forwards of the last stage.
struct Builder {
  int stages, stage;
  std::vector<PipelineAction> actions;

  bool first() const { return stage == 0; }
  bool last() const { return stage + 1 == stages; }
  void add(PipelineAction::Kind kind, int m) { actions.push_back({kind, m}); }

  void recvActivations(int m) {
    if (!first())
      add(PipelineAction::RecvActivations, m);
  }
  /// Forward(m), then its activations to the next stage.
  void forwardAndSend(int m) {
    if (last())
      return;
    add(PipelineAction::Forward, m);
    add(PipelineAction::SendActivations, m);
  }
  void recvGradients(int m) {
    if (!last())
      add(PipelineAction::RecvGradients, m);
  }
  void sendGradients(int m) {
    if (!first())
      add(PipelineAction::SendGradients, m);
  }
};

} // namespace

std::vector<PipelineAction> buildPipelineSchedule(PipelineScheduleKind kind,
                                                  int stages, int stage,
                                                  int microBatches) {
  Builder b{stages, stage, {}};
  const int M = microBatches;
  if (kind == PipelineScheduleKind::GPipe) {
    for (int m = 0; m < M; ++m) {
      b.recvActivations(m);
      b.forwardAndSend(m);
    }
    for (int m = 0; m < M; ++m) {
      b.recvGradients(m);
      b.add(PipelineAction::Backward, m);
      b.sendGradients(m);
    }
    return b.actions;
  }

  // 1F1B: warm-up forwards, steady forward / backward pairs, cool-down.
  const int warmup = std::min(stages - stage - 1, M);
  const int steady = M - warmup;
  for (int m = 0; m < warmup; ++m) {
    b.recvActivations(m);
    b.forwardAndSend(m);
  }
  if (steady > 0)
    b.recvActivations(warmup);
  for (int i = 0; i < steady; ++i) {
    const int mf = warmup + i, mb = i;
    if (!b.last()) {
      // Send forward(mf), receive the gradients for backward(mb).
      b.add(PipelineAction::Forward, mf);
      b.add(PipelineAction::SendActivationsRecvGradients, mb);
    }
    b.add(PipelineAction::Backward, mb);
    if (i + 1 == steady)
      b.sendGradients(mb);
    else if (!b.first())
      // Send backward(mb), receive the activations of forward(mf + 1).
      b.add(PipelineAction::SendGradientsRecvActivations, mf + 1);
  }
  for (int i = 0; i < warmup; ++i) {
    const int mb = steady + i;
    b.recvGradients(mb);
    b.add(PipelineAction::Backward, mb);
    b.sendGradients(mb);
  }
  return b.actions;
}

int pipelineSlots(const std::vector<PipelineAction> &actions) {
  // A micro-batch is held from its input's arrival (or, on the first
  // stage, its forward) to its backward.
  std::vector<bool> held;
  int now = 0, most = 0;
  auto hold = [&](int m) {
    if (m >= static_cast<int>(held.size()))
      held.resize(m + 1, false);
    if (!held[m]) {
      held[m] = true;
      most = std::max(most, ++now);
    }
  };
  for (const PipelineAction &a : actions) {
    switch (a.kind) {
    case PipelineAction::RecvActivations:
    case PipelineAction::SendGradientsRecvActivations:
    case PipelineAction::Forward:
      hold(a.microBatch);
      break;
    case PipelineAction::Backward:
      hold(a.microBatch); // the last stage's first sight of it on stage 0
      --now;
      break;
    default:
      break;
    }
  }
  return std::max(most, 1);
}

std::string toString(const PipelineAction &a) {
  const std::string m = std::to_string(a.microBatch);
  switch (a.kind) {
  case PipelineAction::RecvActivations:
    return "recv-act " + m;
  case PipelineAction::Forward:
    return "F" + m;
  case PipelineAction::SendActivations:
    return "send-act " + m;
  case PipelineAction::RecvGradients:
    return "recv-grad " + m;
  case PipelineAction::Backward:
    return "B" + m;
  case PipelineAction::SendGradients:
    return "send-grad " + m;
  case PipelineAction::SendActivationsRecvGradients:
    return "send-act/recv-grad " + m;
  case PipelineAction::SendGradientsRecvActivations:
    return "send-grad/recv-act " + m;
  }
  return "?";
}

} // namespace mgrt
