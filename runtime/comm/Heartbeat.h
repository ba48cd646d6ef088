//===- Heartbeat.h - Detecting lost ranks -----------------------*- C++ -*-===//
//
// Internal to the runtime. Once MPI is up, every rank of a job of two or
// more keeps a TCP connection to each other rank (loopback when the whole
// job is on one host) and a side thread that sends a small frame on each
// of them every MEGAGRAPH_HEARTBEAT_PERIOD seconds. The thread makes no MPI
// call, so it runs under MPI_THREAD_FUNNELED and while the main thread
// computes or waits in a collective: a long step is never mistaken for a
// lost rank. A peer is lost when
//   * its connection closes without a goodbye (the process died: the
//     kernel closes its sockets, the survivors see it at once), or
//   * nothing came from it for MEGAGRAPH_HEARTBEAT_TIMEOUT seconds (the
//     process is stopped, hung in the kernel, or its host is gone).
// The rank that sees the loss prints
//   megagraph comm: rank R of W: lost peer rank P (REASON); stopping
// tells the other ranks (who print the same with "rank R saw ..."), and
// exits with code 3. While the heartbeat runs, a SIGTERM (Open MPI's
// mpirun sends one to the survivors when a rank dies) is handled by the
// same thread: it names the lost peer if its state shows one, or says that
// the launcher ended the job; mgrt_comm_finalize puts the previous handler
// back.
//
// PeerMonitor is the bookkeeping alone (no sockets, no clock), for the unit
// tests; Heartbeat runs it.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_COMM_HEARTBEAT_H
#define MEGAGRAPH_RUNTIME_COMM_HEARTBEAT_H

// The C API only (no MPI C++ bindings to link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <string>
#include <vector>

namespace mgrt::comm {

/// The environment variables of the heartbeat (seconds).
inline constexpr const char *kHeartbeatPeriodEnv = "MEGAGRAPH_HEARTBEAT_PERIOD";
inline constexpr const char *kHeartbeatTimeoutEnv =
    "MEGAGRAPH_HEARTBEAT_TIMEOUT";

/// Exit code of a rank that stops because a peer is lost (the code of
/// mgrt::comm::fail's MPI_Abort).
inline constexpr int kLostPeerExitCode = 3;

struct HeartbeatConfig {
  double period = 1.0;   ///< seconds between two frames to each peer
  double timeout = 20.0; ///< silence after which a peer is lost; 0 = off
};

/// Reads MEGAGRAPH_HEARTBEAT_PERIOD and MEGAGRAPH_HEARTBEAT_TIMEOUT into
/// `config` (unset or empty: the defaults). False with `error` set for a
/// value that is not a number, is negative, a period of 0, or a timeout
/// that is not at least twice the period.
bool readHeartbeatConfig(HeartbeatConfig &config, std::string &error);

/// What one rank knows about its peers. Times are seconds on any
/// monotonic clock; the caller passes them in.
class PeerMonitor {
public:
  enum class State {
    Alive,   ///< heard from within the timeout
    Left,    ///< said goodbye (finalized)
    Aborted, ///< announced that it ends the job with its own error
    Ended,   ///< the launcher is ending it too (it got a SIGTERM)
    Lost,
  };
  enum class Reason {
    None,
    Silent,   ///< nothing heard for the timeout
    Closed,   ///< the connection closed without a goodbye
    Reported, ///< another rank reported it lost
  };
  struct Loss {
    int peer = -1;
    Reason reason = Reason::None;
    double silence = 0; ///< seconds without a frame (Silent)
    int reportedBy = -1;
    Reason reportedReason = Reason::None; ///< the reporter's reason
  };

  PeerMonitor(int self, int size, double timeout, double now);

  /// A frame from `peer` arrived.
  void heard(int peer, double now);
  void left(int peer);
  void aborted(int peer);
  void ended(int peer);
  /// The connection to `peer` ended; a loss unless it left or aborted.
  void closed(int peer, double now);
  /// `by` reports `subject` lost for `reason` after `silence` seconds.
  void reported(int by, int subject, Reason reason, double silence);
  /// This rank's own thread did not run for a while (the host was
  /// suspended, or this process was stopped): the silence of the peers in
  /// that time says nothing about them, so their clocks restart at `now`.
  void restartClocks(double now);

  /// Marks every peer silent for longer than the timeout as lost; returns
  /// the first loss (peer -1: none).
  const Loss &check(double now);
  const Loss &loss() const { return loss_; }
  /// Nonzero when another rank reported this rank lost (by that rank).
  int reportedSelfBy() const { return selfReportedBy_; }
  const Loss &selfReport() const { return selfReport_; }

  State state(int peer) const { return peers_[peer].state; }
  /// The alive peer heard from least recently and its silence (-1: none).
  int quietest(double now, double &silence) const;
  /// Peers not lost, left or aborted.
  std::vector<int> alivePeers() const;
  /// Whether a peer left or aborted: when the launcher then ends this
  /// rank, that peer's exit (and its own message, if any) is the cause.
  bool anyLeftOrAborted() const;

  /// "lost peer rank P (REASON)", from this rank's point of view.
  std::string describeLoss() const;
  /// The line of a rank that the others reported lost.
  std::string describeSelfReport() const;

private:
  struct Peer {
    State state = State::Alive;
    double lastHeard = 0;
  };
  void lose(int peer, Reason reason, double silence, int by, Reason byReason);

  int self_;
  double timeout_;
  std::vector<Peer> peers_;
  Loss loss_;
  int selfReportedBy_ = -1;
  Loss selfReport_;
};

/// Starts the heartbeat over the ranks of `world` (collective; call with
/// the main thread, after MPI_Init). Does nothing for one rank or a
/// timeout of 0. MGRT_OK, or a failure through mgrt::comm::fail when the
/// configuration is invalid. When the connections cannot be set up on some
/// rank, that rank prints a warning and every rank goes on without a
/// heartbeat (the collective timeout still applies).
int startHeartbeat(MPI_Comm world);
/// Says goodbye to every peer and stops the thread (normal exit).
void stopHeartbeat();
/// Tells every peer that this rank is about to end the job with its own
/// error, so that they stay quiet and let its message stand.
void announceAbort();

} // namespace mgrt::comm

#endif // MEGAGRAPH_RUNTIME_COMM_HEARTBEAT_H
