//===- Heartbeat.cpp - Detecting lost ranks -------------------------------===//
//
// See Heartbeat.h. POSIX sockets, poll and a self-pipe for SIGTERM. Frames
// are 16 bytes: four 32-bit words in network order (type, rank, two
// arguments).
//
//===----------------------------------------------------------------------===//

#include "comm/Heartbeat.h"

#include "comm/CommGroup.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mgrt::comm {

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

bool readHeartbeatConfig(HeartbeatConfig &config, std::string &error) {
  if (!readSecondsEnv(kHeartbeatPeriodEnv, config.period, error) ||
      !readSecondsEnv(kHeartbeatTimeoutEnv, config.timeout, error))
    return false;
  if (config.timeout == 0)
    return true; // off
  if (config.period <= 0) {
    error = std::string(kHeartbeatPeriodEnv) + " must be more than 0";
    return false;
  }
  if (config.timeout < 2 * config.period) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "%s (%g s) must be at least twice %s (%g s)",
                  kHeartbeatTimeoutEnv, config.timeout, kHeartbeatPeriodEnv,
                  config.period);
    error = text;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// PeerMonitor
//===----------------------------------------------------------------------===//

PeerMonitor::PeerMonitor(int self, int size, double timeout, double now)
    : self_(self), timeout_(timeout), peers_(size) {
  for (Peer &p : peers_)
    p.lastHeard = now;
  peers_[self].state = State::Left; // never watched
}

void PeerMonitor::heard(int peer, double now) {
  if (peers_[peer].state == State::Alive)
    peers_[peer].lastHeard = now;
}

void PeerMonitor::left(int peer) {
  if (peers_[peer].state == State::Alive)
    peers_[peer].state = State::Left;
}

void PeerMonitor::aborted(int peer) {
  if (peers_[peer].state == State::Alive)
    peers_[peer].state = State::Aborted;
}

void PeerMonitor::ended(int peer) {
  if (peers_[peer].state == State::Alive)
    peers_[peer].state = State::Ended;
}

void PeerMonitor::closed(int peer, double now) {
  if (peers_[peer].state == State::Alive)
    lose(peer, Reason::Closed, now - peers_[peer].lastHeard, -1, Reason::None);
}

void PeerMonitor::reported(int by, int subject, Reason reason, double silence) {
  if (subject < 0 || subject >= static_cast<int>(peers_.size()))
    return;
  if (subject == self_) {
    if (selfReportedBy_ < 0) {
      selfReportedBy_ = by;
      selfReport_ = {self_, reason, silence, by, reason};
    }
    return;
  }
  if (peers_[subject].state == State::Alive)
    lose(subject, Reason::Reported, silence, by, reason);
}

void PeerMonitor::restartClocks(double now) {
  for (Peer &p : peers_)
    p.lastHeard = now;
}

void PeerMonitor::lose(int peer, Reason reason, double silence, int by,
                       Reason byReason) {
  peers_[peer].state = State::Lost;
  if (loss_.peer < 0)
    loss_ = {peer, reason, silence, by, byReason};
}

const PeerMonitor::Loss &PeerMonitor::check(double now) {
  for (size_t i = 0; i < peers_.size(); ++i)
    if (peers_[i].state == State::Alive && now - peers_[i].lastHeard > timeout_)
      lose(static_cast<int>(i), Reason::Silent, now - peers_[i].lastHeard, -1,
           Reason::None);
  return loss_;
}

int PeerMonitor::quietest(double now, double &silence) const {
  int best = -1;
  silence = -1;
  for (size_t i = 0; i < peers_.size(); ++i)
    if (peers_[i].state == State::Alive &&
        now - peers_[i].lastHeard > silence) {
      best = static_cast<int>(i);
      silence = now - peers_[i].lastHeard;
    }
  return best;
}

std::vector<int> PeerMonitor::alivePeers() const {
  std::vector<int> out;
  for (size_t i = 0; i < peers_.size(); ++i)
    if (peers_[i].state == State::Alive)
      out.push_back(static_cast<int>(i));
  return out;
}

bool PeerMonitor::anyLeftOrAborted() const {
  for (size_t i = 0; i < peers_.size(); ++i)
    if (static_cast<int>(i) != self_ &&
        (peers_[i].state == State::Left || peers_[i].state == State::Aborted))
      return true;
  return false;
}

/// "no heartbeat for 5.0 s" / "its process end" as seen by some rank.
static std::string what(PeerMonitor::Reason reason, double silence,
                        bool seenByOther) {
  char text[96];
  if (reason == PeerMonitor::Reason::Silent)
    std::snprintf(text, sizeof text, "no heartbeat for %.1f s", silence);
  else
    std::snprintf(text, sizeof text, "%s",
                  seenByOther ? "its process end"
                              : "its process ended early: killed, crashed "
                                "or exited");
  return text;
}

std::string PeerMonitor::describeLoss() const {
  if (loss_.peer < 0)
    return "no peer is lost";
  std::string s = "lost peer rank " + std::to_string(loss_.peer) + " (";
  if (loss_.reason == Reason::Reported)
    s += "rank " + std::to_string(loss_.reportedBy) + " saw " +
         what(loss_.reportedReason, loss_.silence, true);
  else
    s += what(loss_.reason, loss_.silence, false);
  return s + ")";
}

std::string PeerMonitor::describeSelfReport() const {
  return "the other ranks lost this one (rank " +
         std::to_string(selfReportedBy_) + " saw " +
         what(selfReport_.reportedReason, selfReport_.silence, true) +
         ": was this process stopped?)";
}

//===----------------------------------------------------------------------===//
// Heartbeat: connections and the thread
//===----------------------------------------------------------------------===//

namespace {

enum FrameType : uint32_t {
  kHello = 0x4d474842, ///< rank, token low, token high
  kBeat = 1,
  kBye = 2,   ///< finalized
  kAbort = 3, ///< ends the job with its own error
  kLost = 4,  ///< subject and reporter, reason and silence (readFrom)
  kTerm = 5,  ///< the launcher ended this rank (SIGTERM)
};

constexpr size_t kFrameBytes = 16;

struct Frame {
  uint32_t type = 0, rank = 0, a = 0, b = 0;
};

void encode(const Frame &f, unsigned char *out) {
  const uint32_t w[4] = {htonl(f.type), htonl(f.rank), htonl(f.a), htonl(f.b)};
  std::memcpy(out, w, kFrameBytes);
}

Frame decode(const unsigned char *in) {
  uint32_t w[4];
  std::memcpy(w, in, kFrameBytes);
  return {ntohl(w[0]), ntohl(w[1]), ntohl(w[2]), ntohl(w[3])};
}

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The self-pipe's write end and the signal, for the SIGTERM handler.
std::atomic<int> gWakeFd{-1};
volatile sig_atomic_t gTermSignal = 0;

extern "C" void onTermSignal(int sig) {
  const int saved = errno;
  gTermSignal = sig;
  const int fd = gWakeFd.load();
  if (fd >= 0) {
    const char c = 'T';
    ssize_t ignored = ::write(fd, &c, 1);
    (void)ignored;
  }
  errno = saved;
}

std::string errnoText() { return std::strerror(errno); }

/// Waits until `fd` has `events` or `deadline` passes.
bool waitFd(int fd, short events, double deadline) {
  for (;;) {
    const double left = deadline - nowSeconds();
    if (left <= 0)
      return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

/// Reads exactly `n` bytes from the nonblocking `fd` before `deadline`.
bool readExact(int fd, unsigned char *buf, size_t n, double deadline) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, buf + got, n - got, 0);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EINTR))
      return false;
    if (!waitFd(fd, POLLIN, deadline))
      return false;
  }
  return true;
}

class Heartbeat {
public:
  Heartbeat(int rank, int size, HeartbeatConfig config)
      : rank_(rank), size_(size), config_(config), fds_(size, -1), inbox_(size),
        stuck_(size, 0), knows_(size, 0),
        monitor_(rank, size, config.timeout, nowSeconds()) {}
  ~Heartbeat() { closeAll(); }

  /// Collective over `world`: the connections; "" or why they failed here.
  std::string connect(MPI_Comm world);
  void start();
  void stop();
  /// Has the thread send kAbort to every peer; waits up to 0.5 s for it.
  void announceAbort();

private:
  void run();
  void readFrom(int peer, double now);
  /// Polls the peers and the wake pipe for up to `ms`; reads what came.
  void pollOnce(int ms);
  void broadcast(const Frame &f);
  [[noreturn]] void stopForLoss();
  [[noreturn]] void stopForSelfReport();
  [[noreturn]] void handleTerm();
  void report(const std::string &line);
  void closeAll();

  int rank_, size_;
  HeartbeatConfig config_;
  std::vector<int> fds_;
  std::vector<std::string> inbox_;
  /// Peers whose socket stopped taking frames (no longer sent to).
  std::vector<char> stuck_;
  /// Peers that reported a loss themselves (they are stopping).
  std::vector<char> knows_;
  PeerMonitor monitor_;
  int wake_[2] = {-1, -1};
  /// The sockets and the monitor belong to the thread; other threads only
  /// set these flags and write to the wake pipe.
  std::atomic<bool> stopping_{false}, abortRequested_{false}, abortSent_{false};
  std::thread thread_;
  struct sigaction oldTerm_ = {};
  bool handlerInstalled_ = false;
};

std::string Heartbeat::connect(MPI_Comm world) {
  std::string error;
  // 0. Room for W - 1 sockets besides what the program opens (the open
  //    file limit raised if it can be), and ranks that fit kLost's 16 bits.
  const rlim_t need = static_cast<rlim_t>(size_) + 256;
  rlimit files{};
  if (size_ > 0xffff) {
    error = "more than 65535 ranks";
  } else if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < need) {
    files.rlim_cur = std::min(need, files.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur < need)
      error = "the open file limit (ulimit -n " +
              std::to_string(files.rlim_cur) + ") is below " +
              std::to_string(need);
  }
  int can = error.empty(), everyone = 0;
  MPI_Allreduce(&can, &everyone, 1, MPI_INT, MPI_MIN, world);
  if (!everyone)
    return error.empty() ? "another rank cannot hold the connections" : error;
  // 1. Hosts (the whole job on one host: loopback only) and a job token
  //    that every hello must carry, so that a stray connection is refused.
  constexpr int kHost = 256;
  std::vector<char> hosts(static_cast<size_t>(kHost) * size_, 0);
  char host[kHost] = {};
  if (::gethostname(host, kHost - 1) != 0)
    std::snprintf(host, sizeof host, "?");
  MPI_Allgather(host, kHost, MPI_CHAR, hosts.data(), kHost, MPI_CHAR, world);
  bool oneHost = true;
  for (int r = 0; r < size_; ++r)
    oneHost = oneHost && !std::strcmp(&hosts[r * kHost], host);
  uint64_t token = 0;
  if (rank_ == 0) {
    std::random_device rd;
    token = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  MPI_Bcast(&token, 1, MPI_UINT64_T, 0, world);

  // 2. A listening socket on each rank; the ports to all.
  int listenFd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  if (listenFd < 0) {
    error = "socket: " + errnoText();
  } else {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(oneHost ? INADDR_LOOPBACK : INADDR_ANY);
    socklen_t len = sizeof addr;
    if (::bind(listenFd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) ||
        ::listen(listenFd, size_) ||
        ::getsockname(listenFd, reinterpret_cast<sockaddr *>(&addr), &len))
      error = "listen: " + errnoText();
    else
      port = ntohs(addr.sin_port);
  }
  std::vector<int> ports(size_);
  MPI_Allgather(&port, 1, MPI_INT, ports.data(), 1, MPI_INT, world);

  // 3. Connect to every lower rank (the kernel completes a connection in
  //    the listener's backlog, so nobody needs to accept first) ...
  const double deadline = nowSeconds() + 30;
  for (int peer = 0; peer < rank_ && error.empty(); ++peer) {
    if (!ports[peer]) {
      error = "rank " + std::to_string(peer) + " has no heartbeat port";
      break;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(ports[peer]));
    if (oneHost || !std::strcmp(&hosts[peer * kHost], host)) {
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
      addrinfo hints{}, *found = nullptr;
      hints.ai_family = AF_INET;
      hints.ai_socktype = SOCK_STREAM;
      if (::getaddrinfo(&hosts[peer * kHost], nullptr, &hints, &found) ||
          !found) {
        error = std::string("cannot resolve host '") + &hosts[peer * kHost] +
                "' of rank " + std::to_string(peer);
        break;
      }
      addr.sin_addr = reinterpret_cast<sockaddr_in *>(found->ai_addr)->sin_addr;
      ::freeaddrinfo(found);
    }
    const int fd =
        ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      error = "socket: " + errnoText();
      break;
    }
    fds_[peer] = fd;
    int soError = 0;
    socklen_t soLen = sizeof soError;
    if ((::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) &&
         errno != EINPROGRESS) ||
        !waitFd(fd, POLLOUT, deadline) ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &soLen) || soError) {
      error = "cannot connect to rank " + std::to_string(peer) + " (" +
              &hosts[peer * kHost] + ":" + std::to_string(ports[peer]) +
              "): " + std::strerror(soError ? soError : errno);
      break;
    }
    unsigned char hello[kFrameBytes];
    encode({kHello, static_cast<uint32_t>(rank_), static_cast<uint32_t>(token),
            static_cast<uint32_t>(token >> 32)},
           hello);
    if (::send(fd, hello, kFrameBytes, MSG_NOSIGNAL) !=
        static_cast<ssize_t>(kFrameBytes)) {
      error = "cannot greet rank " + std::to_string(peer) + ": " + errnoText();
      break;
    }
  }

  // 3b. Everyone connected, or nobody waits for connections that will not
  //     come: a rank that cannot reach a lower one (a host name that does
  //     not resolve, say) fails the setup at once, not after the 30 s of
  //     step 4. (A connection completes in the listener's backlog, so this
  //     needs no accept first.)
  int connected = error.empty(), allConnected = 0;
  MPI_Allreduce(&connected, &allConnected, 1, MPI_INT, MPI_MIN, world);
  if (!allConnected && error.empty())
    error = "another rank could not connect to its peers";

  // 4. ... and accept every higher one.
  for (int left = size_ - 1 - rank_; left > 0 && error.empty();) {
    if (!waitFd(listenFd, POLLIN, deadline)) {
      error = std::to_string(left) + " higher rank(s) did not connect in 30 s";
      break;
    }
    const int fd =
        ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
      continue;
    unsigned char hello[kFrameBytes];
    const Frame f =
        readExact(fd, hello, kFrameBytes, deadline) ? decode(hello) : Frame{};
    const uint64_t got = f.a | static_cast<uint64_t>(f.b) << 32;
    const int peer = static_cast<int>(f.rank);
    if (f.type != kHello || got != token || peer <= rank_ || peer >= size_ ||
        fds_[peer] >= 0) {
      ::close(fd); // not one of this job's ranks
      continue;
    }
    fds_[peer] = fd;
    --left;
  }
  if (listenFd >= 0)
    ::close(listenFd);

  // 5. Everyone or no one.
  int ok = error.empty(), all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, world);
  if (!all && error.empty())
    error = "another rank could not set up its connections";
  if (!error.empty())
    return error;
  const int one = 1;
  for (int fd : fds_)
    if (fd >= 0)
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return "";
}

void Heartbeat::start() {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    wake_[0] = wake_[1] = -1;
  gWakeFd.store(wake_[1]);
  gTermSignal = 0;
  struct sigaction sa = {};
  sa.sa_handler = onTermSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  handlerInstalled_ = ::sigaction(SIGTERM, &sa, &oldTerm_) == 0;
  monitor_.restartClocks(nowSeconds());
  thread_ = std::thread([this] { run(); });
}

void Heartbeat::stop() {
  stopping_.store(true);
  if (wake_[1] >= 0) {
    const char c = 'S';
    ssize_t ignored = ::write(wake_[1], &c, 1);
    (void)ignored;
  }
  if (thread_.joinable())
    thread_.join();
  if (handlerInstalled_)
    ::sigaction(SIGTERM, &oldTerm_, nullptr);
  handlerInstalled_ = false;
  gWakeFd.store(-1);
  closeAll();
}

void Heartbeat::announceAbort() {
  abortRequested_.store(true);
  if (wake_[1] >= 0) {
    const char c = 'A';
    ssize_t ignored = ::write(wake_[1], &c, 1);
    (void)ignored;
  }
  const double deadline = nowSeconds() + 0.5;
  while (!abortSent_.load() && nowSeconds() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void Heartbeat::closeAll() {
  for (int &fd : fds_)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  for (int &fd : wake_)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
}

void Heartbeat::broadcast(const Frame &frame) {
  unsigned char buf[kFrameBytes];
  Frame f = frame;
  f.rank = static_cast<uint32_t>(rank_);
  encode(f, buf);
  for (int peer = 0; peer < size_; ++peer) {
    // Every open connection, whatever the peer's state: a peer that is
    // itself ending must still learn that this one ends too, and a stopped
    // one reads the report of its loss when it runs again.
    if (fds_[peer] < 0 || stuck_[peer])
      continue;
    const ssize_t n =
        ::send(fds_[peer], buf, kFrameBytes, MSG_DONTWAIT | MSG_NOSIGNAL);
    // A full socket (a peer stopped for days) or a partial frame: send it
    // nothing more; its silence is for its own peers to judge.
    if (n != static_cast<ssize_t>(kFrameBytes) && (n >= 0 || errno == EAGAIN))
      stuck_[peer] = 1;
  }
}

void Heartbeat::readFrom(int peer, double now) {
  char buf[4096];
  std::string &in = inbox_[peer];
  bool ended = false;
  for (;;) {
    const ssize_t n = ::recv(fds_[peer], buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    ended = n == 0 || errno != EAGAIN;
    break;
  }
  size_t at = 0;
  for (; at + kFrameBytes <= in.size(); at += kFrameBytes) {
    const Frame f =
        decode(reinterpret_cast<const unsigned char *>(in.data() + at));
    monitor_.heard(peer, now);
    switch (f.type) {
    case kBye:
      monitor_.left(peer);
      break;
    case kTerm:
      monitor_.ended(peer);
      break;
    case kAbort:
      monitor_.aborted(peer);
      break;
    case kLost:
      // a: the subject, and the rank that saw the loss above it; b: its
      // reason, and the silence in tenths of a second above it.
      knows_[peer] = 1;
      monitor_.reported(
          static_cast<int>(f.a >> 16), static_cast<int>(f.a & 0xffff),
          static_cast<PeerMonitor::Reason>(f.b & 0xff), (f.b >> 8) / 10.0);
      break;
    default:
      break;
    }
  }
  in.erase(0, at);
  if (ended) {
    ::close(fds_[peer]);
    fds_[peer] = -1;
    monitor_.closed(peer, now);
  }
}

void Heartbeat::pollOnce(int ms) {
  std::vector<pollfd> pfds;
  std::vector<int> who;
  if (wake_[0] >= 0) {
    pfds.push_back({wake_[0], POLLIN, 0});
    who.push_back(-1);
  }
  for (int peer = 0; peer < size_; ++peer)
    if (fds_[peer] >= 0) {
      pfds.push_back({fds_[peer], POLLIN, 0});
      who.push_back(peer);
    }
  const int n = ::poll(pfds.data(), pfds.size(), ms);
  if (n <= 0)
    return;
  const double now = nowSeconds();
  for (size_t i = 0; i < pfds.size(); ++i) {
    if (!pfds[i].revents)
      continue;
    if (who[i] < 0) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    } else {
      readFrom(who[i], now);
    }
  }
}

void Heartbeat::run() {
  double nextBeat = 0, lastWake = nowSeconds();
  // Longer than one loop can take when this process runs normally.
  const double stall = std::max(config_.timeout / 2, 2 * config_.period);
  while (!stopping_.load()) {
    double now = nowSeconds();
    if (now >= nextBeat) {
      broadcast({kBeat, 0, 0, 0});
      nextBeat = now + config_.period;
    }
    pollOnce(static_cast<int>(std::ceil((nextBeat - now) * 1000)));
    now = nowSeconds();
    if (now - lastWake > stall)
      monitor_.restartClocks(now);
    lastWake = now;
    if (abortRequested_.load() && !abortSent_.load()) {
      broadcast({kAbort, 0, 0, 0});
      abortSent_.store(true);
    }
    if (stopping_.load())
      break;
    if (gTermSignal)
      handleTerm();
    if (monitor_.reportedSelfBy() >= 0)
      stopForSelfReport();
    if (monitor_.check(now).peer >= 0)
      stopForLoss();
  }
  broadcast({kBye, 0, 0, 0});
}

void Heartbeat::report(const std::string &line) {
  std::fprintf(stderr, "megagraph comm: rank %d of %d: %s\n", rank_, size_,
               line.c_str());
  std::fflush(stderr);
}

void Heartbeat::stopForLoss() {
  const PeerMonitor::Loss loss = monitor_.loss();
  report(monitor_.describeLoss() + "; stopping");
  // Passed on even when it came from another rank: each peer then knows
  // that this one knows, and stops waiting for it.
  const bool seen = loss.reason != PeerMonitor::Reason::Reported;
  const uint32_t by = static_cast<uint32_t>(seen ? rank_ : loss.reportedBy);
  const uint32_t reason =
      static_cast<uint32_t>(seen ? loss.reason : loss.reportedReason);
  broadcast(
      {kLost, 0, static_cast<uint32_t>(loss.peer) | by << 16,
       reason | static_cast<uint32_t>(std::lround(loss.silence * 10)) << 8});
  // Give the other ranks up to 2 s to print their line before this exit
  // makes the launcher end them: until each has closed or reported.
  const double deadline = nowSeconds() + 2;
  for (;;) {
    bool waiting = false;
    for (int peer : monitor_.alivePeers())
      waiting = waiting || (fds_[peer] >= 0 && !knows_[peer]);
    const double left = deadline - nowSeconds();
    if (!waiting || left <= 0)
      break;
    pollOnce(static_cast<int>(std::ceil(left * 1000)));
  }
  std::_Exit(kLostPeerExitCode);
}

void Heartbeat::stopForSelfReport() {
  report(monitor_.describeSelfReport() + "; stopping");
  std::_Exit(kLostPeerExitCode);
}

void Heartbeat::handleTerm() {
  const int sig = gTermSignal;
  // Not to be blamed by the peers that see this rank's connections close.
  broadcast({kTerm, 0, 0, 0});
  // A dead peer's closed connection or another rank's report may still be
  // on its way: read for a moment (the launcher's SIGKILL follows in about
  // a second), until every peer is accounted for.
  const double deadline = nowSeconds() + 0.5;
  for (double left; (left = deadline - nowSeconds()) > 0 &&
                    monitor_.loss().peer < 0 && monitor_.reportedSelfBy() < 0 &&
                    !monitor_.alivePeers().empty();)
    pollOnce(static_cast<int>(std::ceil(left * 1000)));
  if (monitor_.reportedSelfBy() >= 0)
    stopForSelfReport();
  if (monitor_.loss().peer >= 0) {
    report(monitor_.describeLoss() +
           "; stopping (the launcher is ending the job)");
    std::_Exit(kLostPeerExitCode);
  }
  if (monitor_.anyLeftOrAborted())
    std::_Exit(kLostPeerExitCode); // that rank's exit is the cause
  double silence = 0;
  const int quiet = monitor_.quietest(nowSeconds(), silence);
  if (quiet >= 0 && silence > 2 * config_.period + 0.5) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "lost peer rank %d (no heartbeat for %.1f s); stopping (the "
                  "launcher is ending the job)",
                  quiet, silence);
    report(text);
    std::_Exit(kLostPeerExitCode);
  }
  report("the launcher ended the job (signal " + std::to_string(sig) +
         ") while every peer was alive: a rank failed outside the heartbeat "
         "or the job was cancelled; stopping");
  std::_Exit(128 + sig);
}

Heartbeat *gHeartbeat = nullptr;

} // namespace

int startHeartbeat(MPI_Comm world) {
  if (gHeartbeat)
    return MGRT_OK;
  HeartbeatConfig config;
  std::string error;
  if (!readHeartbeatConfig(config, error))
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_init", "%s", error.c_str());
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (size < 2 || config.timeout == 0)
    return MGRT_OK;
  auto *hb = new Heartbeat(rank, size, config);
  error = hb->connect(world);
  if (!error.empty()) {
    std::fprintf(stderr,
                 "megagraph comm: rank %d of %d: warning: no heartbeat (%s): "
                 "a lost peer is only noticed by the launcher or after "
                 "MEGAGRAPH_COMM_TIMEOUT\n",
                 rank, size, error.c_str());
    delete hb;
    return MGRT_OK;
  }
  hb->start();
  gHeartbeat = hb;
  return MGRT_OK;
}

void stopHeartbeat() {
  if (!gHeartbeat)
    return;
  gHeartbeat->stop();
  delete gHeartbeat;
  gHeartbeat = nullptr;
}

void announceAbort() {
  if (gHeartbeat)
    gHeartbeat->announceAbort();
}

} // namespace mgrt::comm
