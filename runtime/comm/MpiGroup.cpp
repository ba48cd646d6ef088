//===- MpiGroup.cpp - MPI backend of the communication runtime ------------===//
//
// Host buffers over an MPI communicator whose error handler returns
// (MPI_ERRORS_RETURN): every call is checked, and a failure ends the job
// through mgrt::comm::fail. Collectives are issued nonblocking and waited
// for with a deadline (MEGAGRAPH_COMM_TIMEOUT), so a peer that never joins
// ends the job with a message instead of hanging it. AVG is a SUM divided
// locally.
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"

#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

using namespace mgrt::comm;

namespace {

MPI_Op mpiOp(int op) {
  switch (op) {
  case MGRT_COMM_MAX:
    return MPI_MAX;
  case MGRT_COMM_MIN:
    return MPI_MIN;
  default:
    return MPI_SUM;
  }
}

std::vector<int> toInt(const int64_t *v, int n) {
  return std::vector<int>(v, v + n);
}

struct MpiGroup final : mgrt_comm_group {
  explicit MpiGroup(MPI_Comm c) {
    comm = c;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int world;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    worldRanks.assign(size, 0);
    MPI_Allgather(&world, 1, MPI_INT, worldRanks.data(), 1, MPI_INT, comm);
  }
  ~MpiGroup() override {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }

  /// Waits for `n` requests, ending the job after the deadline.
  int wait(MPI_Request *reqs, int n, const char *call) {
    return pollUntilDone(
        [&](bool &done) {
          int flag = 0;
          const int rc =
              checkMpi(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE), call);
          done = flag != 0;
          return rc;
        },
        call);
  }

  int allReduce(const void *send, void *recv, int64_t count, int dtype,
                int op) override {
    const char *call = "MPI_Iallreduce";
    MPI_Request req;
    const void *s = send == recv ? MPI_IN_PLACE : send;
    if (int rc = checkMpi(MPI_Iallreduce(s, recv, static_cast<int>(count),
                                         mpiType(dtype), mpiOp(op), comm, &req),
                          call))
      return rc;
    if (int rc = wait(&req, 1, call))
      return rc;
    if (op == MGRT_COMM_AVG)
      divideBy(recv, count, dtype, size);
    return MGRT_OK;
  }

  int allGather(const void *send, void *recv, const int64_t *counts,
                const int64_t *displs, bool, int dtype) override {
    const char *call = "MPI_Iallgatherv";
    std::vector<int> c = toInt(counts, size), d = toInt(displs, size);
    MPI_Request req;
    if (int rc = checkMpi(MPI_Iallgatherv(send, c[rank], mpiType(dtype), recv,
                                          c.data(), d.data(), mpiType(dtype),
                                          comm, &req),
                          call))
      return rc;
    return wait(&req, 1, call);
  }

  int reduceScatter(const void *send, void *recv, const int64_t *counts,
                    const int64_t *, bool, int dtype, int op) override {
    const char *call = "MPI_Ireduce_scatter";
    std::vector<int> c = toInt(counts, size);
    MPI_Request req;
    if (int rc =
            checkMpi(MPI_Ireduce_scatter(send, recv, c.data(), mpiType(dtype),
                                         mpiOp(op), comm, &req),
                     call))
      return rc;
    if (int rc = wait(&req, 1, call))
      return rc;
    if (op == MGRT_COMM_AVG)
      divideBy(recv, counts[rank], dtype, size);
    return MGRT_OK;
  }

  int allReduceStart(const void *send, void *recv, int64_t count, int dtype,
                     int op, MPI_Request *req) override {
    return checkMpi(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv,
                                   static_cast<int>(count), mpiType(dtype),
                                   mpiOp(op), comm, req),
                    "MPI_Iallreduce");
  }

  int allGatherStart(const void *send, void *recv, int64_t count, int dtype,
                     MPI_Request *req) override {
    return checkMpi(
        MPI_Iallgather(send, static_cast<int>(count), mpiType(dtype), recv,
                       static_cast<int>(count), mpiType(dtype), comm, req),
        "MPI_Iallgather");
  }

  int reduceScatterStart(const void *send, void *recv, int64_t count, int dtype,
                         int op, MPI_Request *req) override {
    return checkMpi(
        MPI_Ireduce_scatter_block(send, recv, static_cast<int>(count),
                                  mpiType(dtype), mpiOp(op), comm, req),
        "MPI_Ireduce_scatter_block");
  }

  int allToAll(const void *send, const int64_t *sendCounts,
               const int64_t *sendDispls, void *recv, const int64_t *recvCounts,
               const int64_t *recvDispls, int dtype) override {
    const char *call = "MPI_Ialltoallv";
    std::vector<int> sc = toInt(sendCounts, size), sd = toInt(sendDispls, size),
                     rc_ = toInt(recvCounts, size),
                     rd = toInt(recvDispls, size);
    MPI_Request req;
    if (int rc = checkMpi(MPI_Ialltoallv(send, sc.data(), sd.data(),
                                         mpiType(dtype), recv, rc_.data(),
                                         rd.data(), mpiType(dtype), comm, &req),
                          call))
      return rc;
    return wait(&req, 1, call);
  }

  int allToAllStart(const void *send, const int64_t *sendCounts,
                    const int64_t *sendDispls, void *recv,
                    const int64_t *recvCounts, const int64_t *recvDispls,
                    int dtype, mgrt_comm_request **out) override;

  int broadcast(void *buf, int64_t count, int dtype, int root) override {
    const char *call = "MPI_Ibcast";
    MPI_Request req;
    if (int rc = checkMpi(MPI_Ibcast(buf, static_cast<int>(count),
                                     mpiType(dtype), root, comm, &req),
                          call))
      return rc;
    return wait(&req, 1, call);
  }

  int sendRecv(const void *send, int64_t sendCount, int dest, void *recv,
               int64_t recvCount, int source, int dtype, int tag) override {
    const char *call = dest >= 0 && source >= 0 ? "MPI_Sendrecv"
                       : dest >= 0              ? "MPI_Send"
                                                : "MPI_Recv";
    MPI_Request reqs[2];
    int n = 0;
    if (source >= 0)
      if (int rc =
              checkMpi(MPI_Irecv(recv, static_cast<int>(recvCount),
                                 mpiType(dtype), source, tag, comm, &reqs[n++]),
                       call))
        return rc;
    if (dest >= 0)
      if (int rc =
              checkMpi(MPI_Isend(send, static_cast<int>(sendCount),
                                 mpiType(dtype), dest, tag, comm, &reqs[n++]),
                       call))
        return rc;
    return wait(reqs, n, call);
  }

  int barrier() override {
    const char *call = "MPI_Ibarrier";
    MPI_Request req;
    if (int rc = checkMpi(MPI_Ibarrier(comm, &req), call))
      return rc;
    return wait(&req, 1, call);
  }

  int localCopy(void *dst, const void *src, int64_t count, int dtype) override {
    if (dst != src && count > 0)
      std::memmove(dst, src, static_cast<size_t>(count) * elementSize(dtype));
    return MGRT_OK;
  }
};

int MpiGroup::allToAllStart(const void *send, const int64_t *sendCounts,
                            const int64_t *sendDispls, void *recv,
                            const int64_t *recvCounts,
                            const int64_t *recvDispls, int dtype,
                            mgrt_comm_request **out) {
  // MPI reads the count arrays until the transfer completes: the request
  // keeps them.
  std::vector<std::vector<int>> keep = {
      toInt(sendCounts, size), toInt(sendDispls, size), toInt(recvCounts, size),
      toInt(recvDispls, size)};
  MPI_Request req = MPI_REQUEST_NULL;
  if (int rc =
          checkMpi(MPI_Ialltoallv(send, keep[0].data(), keep[1].data(),
                                  mpiType(dtype), recv, keep[2].data(),
                                  keep[3].data(), mpiType(dtype), comm, &req),
                   "MPI_Ialltoallv"))
    return rc;
  *out = progressedRequest(req, recv, 0, dtype, MGRT_COMM_SUM, size,
                           std::move(keep));
  return MGRT_OK;
}

} // namespace

mgrt_comm_group *mgrt::comm::makeMpiGroup(MPI_Comm comm) {
  return new MpiGroup(comm);
}
