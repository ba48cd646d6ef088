//===- CommGroup.h - Backends of the communication runtime ------*- C++ -*-===//
//
// Internal to the runtime. mgrt_comm_group is the base class of the two
// backends (MpiGroup.cpp, NcclGroup.cpp). The C front end (Comm.cpp) checks
// every argument, fills in the per-rank counts and displacements, and calls
// the virtual methods below, which only move data and report failures
// through commFail.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_COMM_COMMGROUP_H
#define MEGAGRAPH_RUNTIME_COMM_COMMGROUP_H

#include "megagraph/Comm.h"

// The C API only (no MPI C++ bindings to link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

/// A transfer under way. The backend's request owns whatever must outlive
/// the start call (MPI's count arrays).
struct mgrt_comm_request {
  virtual ~mgrt_comm_request() = default;
  /// Drives the transfer on; *done = 1 once complete.
  virtual int test(int *done) = 0;
  /// Returns when the transfer is complete (or the deadline has passed).
  virtual int wait() = 0;
};

struct mgrt_comm_group {
  virtual ~mgrt_comm_group() = default;

  int backend = MGRT_COMM_MPI;
  int rank = 0, size = 1;
  /// The MPI communicator over the members (the NCCL backend keeps one for
  /// its bootstrap and barrier).
  MPI_Comm comm = MPI_COMM_NULL;
  /// World rank of each member, by group rank.
  std::vector<int> worldRanks;

  virtual int allReduce(const void *send, void *recv, int64_t count, int dtype,
                        int op) = 0;
  /// counts/displs: one per rank, in elements.
  virtual int allGather(const void *send, void *recv, const int64_t *counts,
                        const int64_t *displs, bool uniform, int dtype) = 0;
  virtual int reduceScatter(const void *send, void *recv, const int64_t *counts,
                            const int64_t *displs, bool uniform, int dtype,
                            int op) = 0;
  /// reduceScatter of `count` elements per rank, started: *req completes it
  /// (MPI_REQUEST_NULL: it already has). By default it runs at once.
  virtual int reduceScatterStart(const void *send, void *recv, int64_t count,
                                 int dtype, int op, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    std::vector<int64_t> counts(size, count), displs(size);
    for (int r = 0; r < size; ++r)
      displs[r] = r * count;
    return reduceScatter(send, recv, counts.data(), displs.data(), true, dtype,
                         op);
  }
  /// allReduce, started (send == recv: in place): *req completes it
  /// (MPI_REQUEST_NULL: it already has). By default it runs at once.
  virtual int allReduceStart(const void *send, void *recv, int64_t count,
                             int dtype, int op, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    return allReduce(send, recv, count, dtype, op);
  }
  /// allGather of `count` elements from every rank, started: *req
  /// completes it (MPI_REQUEST_NULL: it already has). By default it runs at
  /// once.
  virtual int allGatherStart(const void *send, void *recv, int64_t count,
                             int dtype, MPI_Request *req) {
    *req = MPI_REQUEST_NULL;
    std::vector<int64_t> counts(size, count), displs(size);
    for (int r = 0; r < size; ++r)
      displs[r] = r * count;
    return allGather(send, recv, counts.data(), displs.data(), true, dtype);
  }
  virtual int allToAll(const void *send, const int64_t *sendCounts,
                       const int64_t *sendDispls, void *recv,
                       const int64_t *recvCounts, const int64_t *recvDispls,
                       int dtype) = 0;
  /// allToAll, started: *out is the transfer under way. By default the
  /// blocking allToAll, then a request that is already complete.
  virtual int allToAllStart(const void *send, const int64_t *sendCounts,
                            const int64_t *sendDispls, void *recv,
                            const int64_t *recvCounts,
                            const int64_t *recvDispls, int dtype,
                            mgrt_comm_request **out);
  virtual int broadcast(void *buf, int64_t count, int dtype, int root) = 0;
  /// dest / source -1: that half is skipped.
  virtual int sendRecv(const void *send, int64_t sendCount, int dest,
                       void *recv, int64_t recvCount, int source, int dtype,
                       int tag) = 0;
  virtual int barrier() = 0;
  /// dst = src, `count` elements on this rank, in the memory the backend
  /// moves (host memory for MPI, device memory for NCCL, in order with the
  /// group's transfers).
  virtual int localCopy(void *dst, const void *src, int64_t count,
                        int dtype) = 0;
};

namespace mgrt::comm {

/// Reports a failure of `call`: in abort mode prints "megagraph comm: rank R
/// of W: CALL: MESSAGE" and ends the job (MPI_Abort(3)); in return mode
/// records the message and returns `code`.
int fail(int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// MGRT_OK, or fail(MGRT_ERR_COMM) with MPI's message for `rc`.
int checkMpi(int rc, const char *call);

/// Bytes per element of `dtype` (0 if the comm runtime does not support
/// it) and its MPI datatype.
size_t elementSize(int dtype);
MPI_Datatype mpiType(int dtype);

/// Divides `count` elements of `buf` by `n` (AVG after a SUM).
void divideBy(void *buf, int64_t count, int dtype, int n);

/// The request of a started MPI collective whose result needs no more
/// than the wait (AVG divides `count` elements of `recv` by `groupSize`
/// after the sum). A progress thread tests it until it completes where MPI
/// allows threads (AsyncCollectives.cpp).
/// `keep` holds what MPI reads until the request completes (an
/// all-to-all's count arrays). MPI_REQUEST_NULL: a transfer that completed
/// when it started.
mgrt_comm_request *progressedRequest(MPI_Request request, void *recv,
                                     int64_t count, int dtype, int op,
                                     int groupSize,
                                     std::vector<std::vector<int>> keep = {});

/// Calls poll(done) until it sets done or fails: spinning first, then
/// yielding the core (oversubscribed ranks), and failing `call` after
/// timeoutSeconds() without completion.
int pollUntilDone(const std::function<int(bool &done)> &poll, const char *call);

/// Stops the progress thread (mgrt_comm_finalize; no request may be open)
/// and prints MEGAGRAPH_COMM_ASYNC_STATS.
void stopProgress();

/// The thread support MPI_Init_thread provided (MPI_THREAD_*).
int mpiThreadLevel();

/// The cores a rank needs for its started collectives to run in the
/// background by default (AsyncCollectives.cpp says why).
inline constexpr int kAsyncMinCores = 2;

/// Whether started collectives run in the background: MEGAGRAPH_COMM_ASYNC
/// if set (0 or not), else whether the rank owns kAsyncMinCores cores;
/// otherwise each start waits at once. Read once.
bool asyncCollectives();

/// The environment variable of timeoutSeconds.
inline constexpr const char *kCommTimeoutEnv = "MEGAGRAPH_COMM_TIMEOUT";

/// Seconds a blocking call may wait for its peers before it ends the job
/// (MEGAGRAPH_COMM_TIMEOUT, default 300; 0 = forever).
double timeoutSeconds();

/// Reads the environment variable `name` as seconds into `value` (unset or
/// empty: `value` unchanged). False with `error` set when it is not a
/// finite number of 0 or more.
bool readSecondsEnv(const char *name, double &value, std::string &error);

/// Creates the MPI group over `comm` (takes ownership of it).
mgrt_comm_group *makeMpiGroup(MPI_Comm comm);

} // namespace mgrt::comm

#endif // MEGAGRAPH_RUNTIME_COMM_COMMGROUP_H
