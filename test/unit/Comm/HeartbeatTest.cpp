//===- HeartbeatTest.cpp - The lost-rank bookkeeping ----------------------===//
//
// PeerMonitor (runtime/comm/Heartbeat.h) on made-up event sequences, and
// the parsing of MEGAGRAPH_HEARTBEAT_PERIOD / _TIMEOUT and
// MEGAGRAPH_COMM_TIMEOUT. No MPI, no sockets:
// the end-to-end behaviour is test/E2E/failing_rank.test's.
//
//===----------------------------------------------------------------------===//

#include "comm/Heartbeat.h"

#include "comm/CommGroup.h"

#include <gtest/gtest.h>

#include <cstdlib>

using mgrt::comm::HeartbeatConfig;
using mgrt::comm::PeerMonitor;
using Reason = PeerMonitor::Reason;
using State = PeerMonitor::State;

namespace {

TEST(PeerMonitor, SilencePastTheTimeoutIsALoss) {
  PeerMonitor m(/*self=*/0, /*size=*/3, /*timeout=*/5, /*now=*/0);
  for (double t = 1; t <= 4; ++t) {
    m.heard(1, t);
    m.heard(2, t);
  }
  EXPECT_EQ(m.check(8.9).peer, -1); // 4.9 s of silence: still alive
  m.heard(1, 9);
  const PeerMonitor::Loss &loss = m.check(9.5); // rank 2: 5.5 s
  EXPECT_EQ(loss.peer, 2);
  EXPECT_EQ(loss.reason, Reason::Silent);
  EXPECT_DOUBLE_EQ(loss.silence, 5.5);
  EXPECT_EQ(m.state(1), State::Alive);
  EXPECT_EQ(m.state(2), State::Lost);
  EXPECT_EQ(m.describeLoss(), "lost peer rank 2 (no heartbeat for 5.5 s)");
  EXPECT_EQ(m.alivePeers(), std::vector<int>{1});
}

TEST(PeerMonitor, ALongStepWithHeartbeatsIsNoLoss) {
  // The heartbeat comes from a side thread: a peer busy for a minute in
  // one step still sends it.
  PeerMonitor m(1, 2, 5, 0);
  for (double t = 0.5; t < 60; t += 1) {
    m.heard(0, t);
    EXPECT_EQ(m.check(t + 0.9).peer, -1) << "at " << t;
  }
}

TEST(PeerMonitor, AClosedConnectionIsALossUnlessThePeerLeft) {
  PeerMonitor m(0, 5, 5, 0);
  EXPECT_FALSE(m.anyLeftOrAborted());
  m.ended(4); // the launcher ends it too
  EXPECT_FALSE(m.anyLeftOrAborted());
  m.closed(4, 1);
  m.left(1);      // finalized
  m.closed(1, 1); // and then closed: fine
  m.aborted(2);   // ends the job with its own message
  m.closed(2, 1);
  EXPECT_EQ(m.check(1).peer, -1);
  EXPECT_TRUE(m.anyLeftOrAborted());
  EXPECT_EQ(m.state(4), State::Ended);
  m.closed(3, 2);
  EXPECT_EQ(m.loss().peer, 3);
  EXPECT_EQ(m.loss().reason, Reason::Closed);
  EXPECT_EQ(m.describeLoss(), "lost peer rank 3 (its process ended early: "
                              "killed, crashed or exited)");
  // The first loss stays the one reported.
  m.reported(3, 0, Reason::Silent, 9);
  EXPECT_EQ(m.loss().peer, 3);
}

TEST(PeerMonitor, AReportNamesTheReporter) {
  PeerMonitor m(0, 4, 20, 0);
  m.reported(/*by=*/3, /*subject=*/2, Reason::Silent, 20.4);
  EXPECT_EQ(m.loss().peer, 2);
  EXPECT_EQ(m.loss().reason, Reason::Reported);
  EXPECT_EQ(m.describeLoss(),
            "lost peer rank 2 (rank 3 saw no heartbeat for 20.4 s)");
  PeerMonitor k(1, 4, 20, 0);
  k.reported(0, 2, Reason::Closed, 0);
  EXPECT_EQ(k.describeLoss(), "lost peer rank 2 (rank 0 saw its process end)");
  // Out-of-range subjects are ignored.
  PeerMonitor n(1, 2, 20, 0);
  n.reported(0, 7, Reason::Closed, 0);
  n.reported(0, -1, Reason::Closed, 0);
  EXPECT_EQ(n.loss().peer, -1);
}

TEST(PeerMonitor, AReportAboutThisRankIsKeptApart) {
  // A stopped rank that runs again reads that the others lost it.
  PeerMonitor m(2, 3, 5, 0);
  m.reported(0, 2, Reason::Silent, 5.1);
  EXPECT_EQ(m.loss().peer, -1);
  EXPECT_EQ(m.reportedSelfBy(), 0);
  EXPECT_EQ(m.describeSelfReport(),
            "the other ranks lost this one (rank 0 saw no heartbeat for "
            "5.1 s: was this process stopped?)");
}

TEST(PeerMonitor, ThisRanksOwnStallRestartsTheClocks) {
  PeerMonitor m(0, 2, 5, 0);
  m.restartClocks(100); // this process did not run from 0 to 100
  EXPECT_EQ(m.check(104).peer, -1);
  EXPECT_EQ(m.check(105.5).peer, 1);
}

TEST(PeerMonitor, QuietestAlivePeer) {
  PeerMonitor m(0, 3, 5, 0);
  m.heard(1, 3);
  m.heard(2, 1);
  double silence = 0;
  EXPECT_EQ(m.quietest(4, silence), 2);
  EXPECT_DOUBLE_EQ(silence, 3);
  m.left(2);
  EXPECT_EQ(m.quietest(4, silence), 1);
  m.left(1);
  EXPECT_EQ(m.quietest(4, silence), -1);
}

/// readHeartbeatConfig with the two variables set to `period` / `timeout`
/// (nullptr: unset).
bool config(const char *period, const char *timeout, HeartbeatConfig &c,
            std::string &error) {
  const char *names[2] = {mgrt::comm::kHeartbeatPeriodEnv,
                          mgrt::comm::kHeartbeatTimeoutEnv};
  const char *values[2] = {period, timeout};
  for (int i = 0; i < 2; ++i) {
    if (values[i])
      setenv(names[i], values[i], 1);
    else
      unsetenv(names[i]);
  }
  c = HeartbeatConfig();
  error.clear();
  const bool ok = mgrt::comm::readHeartbeatConfig(c, error);
  unsetenv(names[0]);
  unsetenv(names[1]);
  return ok;
}

TEST(HeartbeatConfig, DefaultsAndValues) {
  HeartbeatConfig c;
  std::string error;
  ASSERT_TRUE(config(nullptr, nullptr, c, error)) << error;
  EXPECT_EQ(c.period, 1.0);
  EXPECT_EQ(c.timeout, 20.0);
  ASSERT_TRUE(config("0.5", "5", c, error)) << error;
  EXPECT_EQ(c.period, 0.5);
  EXPECT_EQ(c.timeout, 5.0);
  ASSERT_TRUE(config("", "0", c, error)) << error; // off
  EXPECT_EQ(c.timeout, 0.0);
}

TEST(HeartbeatConfig, BadValuesAreRefused) {
  HeartbeatConfig c;
  std::string error;
  EXPECT_FALSE(config(nullptr, "abc", c, error));
  EXPECT_EQ(error, "MEGAGRAPH_HEARTBEAT_TIMEOUT='abc' is not a number of "
                   "seconds (0 or more)");
  EXPECT_FALSE(config("-1", nullptr, c, error));
  EXPECT_EQ(error, "MEGAGRAPH_HEARTBEAT_PERIOD='-1' is not a number of "
                   "seconds (0 or more)");
  EXPECT_FALSE(config("5s", nullptr, c, error));
  EXPECT_FALSE(config("nan", nullptr, c, error));
  EXPECT_FALSE(config("0", "5", c, error));
  EXPECT_EQ(error, "MEGAGRAPH_HEARTBEAT_PERIOD must be more than 0");
  EXPECT_FALSE(config("3", "5", c, error));
  EXPECT_EQ(error, "MEGAGRAPH_HEARTBEAT_TIMEOUT (5 s) must be at least twice "
                   "MEGAGRAPH_HEARTBEAT_PERIOD (3 s)");
}

TEST(CommTimeout, SecondsOrARefusal) {
  const char *name = mgrt::comm::kCommTimeoutEnv;
  double v = 300;
  std::string error;
  unsetenv(name);
  EXPECT_TRUE(mgrt::comm::readSecondsEnv(name, v, error));
  EXPECT_EQ(v, 300.0);
  setenv(name, "2.5", 1);
  EXPECT_TRUE(mgrt::comm::readSecondsEnv(name, v, error));
  EXPECT_EQ(v, 2.5);
  for (const char *bad : {"abc", "-3", "inf", "10s"}) {
    setenv(name, bad, 1);
    EXPECT_FALSE(mgrt::comm::readSecondsEnv(name, v, error)) << bad;
    EXPECT_EQ(error, std::string("MEGAGRAPH_COMM_TIMEOUT='") + bad +
                         "' is not a number of seconds (0 or more)");
  }
  unsetenv(name);
}

} // namespace
