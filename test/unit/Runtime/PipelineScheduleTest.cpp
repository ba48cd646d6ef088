//===- PipelineScheduleTest.cpp - Pipeline schedules as data --------------===//
//
// The per-stage action lists of driver/PipelineSchedule.h, checked without
// any transport: the lists of small cases spelled out, and for many
// (stages, micro-batches) a simulation of all stages against each other
// (every send meets its receive, in order, and no stage waits forever),
// the order of each micro-batch's work and the slots each stage needs.
//
//===----------------------------------------------------------------------===//

#include "driver/PipelineSchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

using namespace mgrt;

namespace {

using Kind = PipelineScheduleKind;

std::string spell(const std::vector<PipelineAction> &actions) {
  std::string s;
  for (const PipelineAction &a : actions)
    s += (s.empty() ? "" : ", ") + toString(a);
  return s;
}

/// The micro-batch a message carries, per channel: activations from stage
/// s to s + 1 (act[s]) and gradients from s + 1 to s (grad[s]).
struct Channels {
  std::vector<std::deque<int>> act, grad;
  explicit Channels(int stages) : act(stages), grad(stages) {}
};

/// Runs every stage's list until all are done or none can move (a
/// deadlock). A combined exchange sends first, then waits for its receive,
/// as MPI_Sendrecv may. Records per stage the micro-batches run forward
/// and backward, in order.
struct Simulation {
  int stages;
  std::vector<std::vector<PipelineAction>> lists;
  std::vector<std::vector<int>> forwards, backwards;
  std::string error;

  Simulation(Kind kind, int K, int M)
      : stages(K), lists(K), forwards(K), backwards(K) {
    for (int s = 0; s < K; ++s)
      lists[s] = buildPipelineSchedule(kind, K, s, M);
  }

  bool run() {
    Channels ch(stages);
    std::vector<size_t> pc(stages, 0);
    std::vector<bool> sentHalf(stages, false); // combined: send part done
    // The micro-batch of the last forward / backward of each stage.
    std::vector<int> lastF(stages, -1), lastB(stages, -1);
    for (;;) {
      bool moved = false, done = true;
      for (int s = 0; s < stages; ++s) {
        while (pc[s] < lists[s].size()) {
          done = false;
          const PipelineAction &a = lists[s][pc[s]];
          auto recv = [&](std::deque<int> &q, int want) {
            if (q.empty())
              return false;
            if (q.front() != want) {
              error = "stage " + std::to_string(s) + " expects " +
                      std::to_string(want) + ", got " +
                      std::to_string(q.front());
            }
            q.pop_front();
            return true;
          };
          bool ok = true;
          switch (a.kind) {
          case PipelineAction::RecvActivations:
            ok = recv(ch.act[s - 1], a.microBatch);
            break;
          case PipelineAction::Forward:
            forwards[s].push_back(a.microBatch);
            lastF[s] = a.microBatch;
            break;
          case PipelineAction::SendActivations:
            ch.act[s].push_back(lastF[s]);
            break;
          case PipelineAction::RecvGradients:
            ok = recv(ch.grad[s], a.microBatch);
            break;
          case PipelineAction::Backward:
            backwards[s].push_back(a.microBatch);
            lastB[s] = a.microBatch;
            break;
          case PipelineAction::SendGradients:
            ch.grad[s - 1].push_back(lastB[s]);
            break;
          case PipelineAction::SendActivationsRecvGradients:
            if (!sentHalf[s])
              ch.act[s].push_back(lastF[s]), sentHalf[s] = true;
            ok = recv(ch.grad[s], a.microBatch);
            break;
          case PipelineAction::SendGradientsRecvActivations:
            if (!sentHalf[s])
              ch.grad[s - 1].push_back(lastB[s]), sentHalf[s] = true;
            ok = recv(ch.act[s - 1], a.microBatch);
            break;
          }
          if (!ok)
            break;
          sentHalf[s] = false;
          ++pc[s];
          moved = true;
        }
      }
      if (!error.empty())
        return false;
      if (done)
        break;
      if (!moved) {
        error = "deadlock";
        return false;
      }
    }
    for (int s = 0; s < stages; ++s)
      if (!ch.act[s].empty() || !ch.grad[s].empty()) {
        error = "messages left over at stage " + std::to_string(s);
        return false;
      }
    return true;
  }
};

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

TEST(PipelineSchedule, Parse) {
  PipelineScheduleKind kind = Kind::GPipe;
  EXPECT_TRUE(parsePipelineSchedule("1f1b", kind));
  EXPECT_EQ(kind, Kind::OneForwardOneBackward);
  EXPECT_TRUE(parsePipelineSchedule("gpipe", kind));
  EXPECT_EQ(kind, Kind::GPipe);
  EXPECT_FALSE(parsePipelineSchedule("interleaved", kind));
}

TEST(PipelineSchedule, OneForwardOneBackwardTwoStages) {
  // Stage 0: one warm-up forward, then pairs, then the last backward.
  EXPECT_EQ(spell(buildPipelineSchedule(Kind::OneForwardOneBackward, 2, 0, 3)),
            "F0, send-act 0, F1, send-act/recv-grad 0, B0, F2, "
            "send-act/recv-grad 1, B1, recv-grad 2, B2");
  // The last stage: no forward entry and nothing to send forward.
  EXPECT_EQ(spell(buildPipelineSchedule(Kind::OneForwardOneBackward, 2, 1, 3)),
            "recv-act 0, B0, send-grad/recv-act 1, B1, send-grad/recv-act 2, "
            "B2, send-grad 2");
}

TEST(PipelineSchedule, GPipeTwoStages) {
  EXPECT_EQ(spell(buildPipelineSchedule(Kind::GPipe, 2, 0, 2)),
            "F0, send-act 0, F1, send-act 1, recv-grad 0, B0, recv-grad 1, B1");
  EXPECT_EQ(spell(buildPipelineSchedule(Kind::GPipe, 2, 1, 2)),
            "recv-act 0, recv-act 1, B0, send-grad 0, B1, send-grad 1");
}

TEST(PipelineSchedule, SlotsAreTheMicroBatchesInFlight) {
  for (int K = 2; K <= 6; ++K)
    for (int M = 1; M <= 9; ++M)
      for (int s = 0; s < K; ++s) {
        EXPECT_EQ(pipelineSlots(buildPipelineSchedule(
                      Kind::OneForwardOneBackward, K, s, M)),
                  std::min(K - s, M))
            << "K=" << K << " M=" << M << " s=" << s;
        EXPECT_EQ(pipelineSlots(buildPipelineSchedule(Kind::GPipe, K, s, M)), M)
            << "K=" << K << " M=" << M << " s=" << s;
      }
}

TEST(PipelineSchedule, EveryStageRunsToTheEnd) {
  for (Kind kind : {Kind::OneForwardOneBackward, Kind::GPipe})
    for (int K = 2; K <= 6; ++K)
      for (int M = 1; M <= 9; ++M) {
        Simulation sim(kind, K, M);
        ASSERT_TRUE(sim.run()) << sim.error << " (K=" << K << " M=" << M
                               << (kind == Kind::GPipe ? " gpipe)" : " 1f1b)");
        for (int s = 0; s < K; ++s) {
          // Each micro-batch once forward (but on the last stage, whose
          // backward recomputes it) and once backward, in order.
          EXPECT_EQ(sim.forwards[s], s + 1 == K ? std::vector<int>{} : iota(M))
              << "K=" << K << " M=" << M << " s=" << s;
          EXPECT_EQ(sim.backwards[s], iota(M))
              << "K=" << K << " M=" << M << " s=" << s;
        }
      }
}

TEST(PipelineSchedule, OneForwardOneBackwardInterleavesOnceWarm) {
  // Stage s of K runs K - s - 1 forwards before its first backward.
  const int K = 4, M = 8;
  for (int s = 0; s + 1 < K; ++s) {
    const std::vector<PipelineAction> actions =
        buildPipelineSchedule(Kind::OneForwardOneBackward, K, s, M);
    int forwardsBeforeBackward = 0;
    for (const PipelineAction &a : actions) {
      if (a.kind == PipelineAction::Backward)
        break;
      forwardsBeforeBackward += a.kind == PipelineAction::Forward;
    }
    EXPECT_EQ(forwardsBeforeBackward, K - s) << "s=" << s;
  }
}

} // namespace
