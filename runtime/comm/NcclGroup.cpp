//===- NcclGroup.cpp - NCCL backend of the communication runtime ----------===//
//
// Device buffers. Built into libmegagraph_rt_nccl only when CMake finds CUDA
// and NCCL. A group is created from an MPI group: its rank 0 makes the NCCL
// unique id, MPI broadcasts it, every member calls ncclCommInitRank on its
// device. Calls enqueue on the group's stream and then wait for it while
// polling ncclCommGetAsyncError, so a failed peer or collective ends the job
// (ncclCommAbort, then MPI_Abort) instead of hanging it. Uneven all-gather
// and reduce-scatter are grouped broadcasts / reduces; all-to-all and
// send/recv are grouped ncclSend/ncclRecv.
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <thread>

using namespace mgrt::comm;

namespace {

ncclDataType_t ncclType(int dtype) {
  switch (dtype) {
  case MGRT_F32:
    return ncclFloat32;
  case MGRT_F64:
    return ncclFloat64;
  case MGRT_I32:
    return ncclInt32;
  case MGRT_I64:
    return ncclInt64;
  case MGRT_I8:
    return ncclInt8;
  default:
    return ncclUint8;
  }
}

ncclRedOp_t ncclOp(int op) {
  switch (op) {
  case MGRT_COMM_AVG:
    return ncclAvg;
  case MGRT_COMM_MAX:
    return ncclMax;
  case MGRT_COMM_MIN:
    return ncclMin;
  default:
    return ncclSum;
  }
}

int checkCuda(cudaError_t e, const char *call) {
  if (e == cudaSuccess)
    return MGRT_OK;
  return fail(MGRT_ERR_COMM, call, "%s", cudaGetErrorString(e));
}

struct NcclGroup final : mgrt_comm_group {
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr;
  int device = 0;

  ~NcclGroup() override {
    if (nccl)
      ncclCommDestroy(nccl);
    if (stream)
      cudaStreamDestroy(stream);
    if (ready)
      cudaEventDestroy(ready);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }

  int check(ncclResult_t r, const char *call) {
    if (r == ncclSuccess || r == ncclInProgress)
      return MGRT_OK;
    if (nccl)
      ncclCommAbort(nccl), nccl = nullptr;
    return fail(MGRT_ERR_COMM, call, "%s (%s)", ncclGetErrorString(r),
                ncclGetLastError(nullptr));
  }

  /// Checks that `p` is device (or managed) memory.
  int checkDevice(const void *p, const char *call) {
    if (!p)
      return MGRT_OK;
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess ||
        (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)) {
      cudaGetLastError();
      return fail(MGRT_ERR_ARGUMENT, call,
                  "the NCCL backend needs device buffers; %p is host memory "
                  "(use an MPI group for host buffers)",
                  p);
    }
    return MGRT_OK;
  }

  /// Waits for the stream, polling NCCL's asynchronous error state.
  int wait(const char *call) {
    const double limit = timeoutSeconds();
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess)
        return MGRT_OK;
      if (e != cudaErrorNotReady)
        return checkCuda(e, call);
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(nccl, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        return check(async, call);
      if (limit > 0 && std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                               .count() > limit) {
        ncclCommAbort(nccl), nccl = nullptr;
        return fail(MGRT_ERR_COMM, call,
                    "no progress for %.0f s: a peer failed, skipped this "
                    "call or is stuck (MEGAGRAPH_COMM_TIMEOUT sets the limit)",
                    limit);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  /// Makes `device` current and orders the group's stream after all work
  /// already queued on the legacy default stream, where compiled steps,
  /// cuBLAS and the attention kernels run: a collective reads their
  /// results. (Work queued after the call is ordered by the host, which
  /// waits for the group's stream before returning.)
  int enter(const char *call) {
    if (int rc = checkCuda(cudaSetDevice(device), call))
      return rc;
    if (!ready)
      if (int rc = checkCuda(
              cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), call))
        return rc;
    if (int rc = checkCuda(cudaEventRecord(ready, cudaStreamLegacy), call))
      return rc;
    return checkCuda(cudaStreamWaitEvent(stream, ready, 0), call);
  }

  int allReduce(const void *send, void *recv, int64_t count, int dtype,
                int op) override {
    const char *call = "ncclAllReduce";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkDevice(send, call))
      return rc;
    if (int rc = checkDevice(recv, call))
      return rc;
    if (int rc = check(ncclAllReduce(send, recv, count, ncclType(dtype),
                                     ncclOp(op), nccl, stream),
                       call))
      return rc;
    return wait(call);
  }

  int allGather(const void *send, void *recv, const int64_t *counts,
                const int64_t *displs, bool uniform, int dtype) override {
    const char *call = uniform ? "ncclAllGather" : "ncclBroadcast (gatherv)";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkDevice(send, call))
      return rc;
    if (int rc = checkDevice(recv, call))
      return rc;
    char *out = static_cast<char *>(recv);
    const size_t es = elementSize(dtype);
    if (uniform) {
      if (int rc = check(ncclAllGather(send, recv, counts[0], ncclType(dtype),
                                       nccl, stream),
                         call))
        return rc;
    } else {
      if (int rc = check(ncclGroupStart(), call))
        return rc;
      for (int r = 0; r < size; ++r)
        if (int rc = check(ncclBroadcast(r == rank ? send : nullptr,
                                         out + displs[r] * es, counts[r],
                                         ncclType(dtype), r, nccl, stream),
                           call))
          return rc;
      if (int rc = check(ncclGroupEnd(), call))
        return rc;
    }
    return wait(call);
  }

  int reduceScatter(const void *send, void *recv, const int64_t *counts,
                    const int64_t *displs, bool uniform, int dtype,
                    int op) override {
    const char *call =
        uniform ? "ncclReduceScatter" : "ncclReduce (reduce-scatterv)";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkDevice(send, call))
      return rc;
    if (int rc = checkDevice(recv, call))
      return rc;
    const char *in = static_cast<const char *>(send);
    const size_t es = elementSize(dtype);
    if (uniform) {
      if (int rc =
              check(ncclReduceScatter(send, recv, counts[0], ncclType(dtype),
                                      ncclOp(op), nccl, stream),
                    call))
        return rc;
    } else {
      if (int rc = check(ncclGroupStart(), call))
        return rc;
      for (int r = 0; r < size; ++r)
        if (int rc =
                check(ncclReduce(in + displs[r] * es,
                                 r == rank ? recv : nullptr, counts[r],
                                 ncclType(dtype), ncclOp(op), r, nccl, stream),
                      call))
          return rc;
      if (int rc = check(ncclGroupEnd(), call))
        return rc;
    }
    return wait(call);
  }

  int allToAll(const void *send, const int64_t *sendCounts,
               const int64_t *sendDispls, void *recv, const int64_t *recvCounts,
               const int64_t *recvDispls, int dtype) override {
    const char *call = "ncclSend/ncclRecv (all-to-all)";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkDevice(send, call))
      return rc;
    if (int rc = checkDevice(recv, call))
      return rc;
    const size_t es = elementSize(dtype);
    const char *in = static_cast<const char *>(send);
    char *out = static_cast<char *>(recv);
    if (int rc = check(ncclGroupStart(), call))
      return rc;
    for (int r = 0; r < size; ++r) {
      if (sendCounts[r])
        if (int rc = check(ncclSend(in + sendDispls[r] * es, sendCounts[r],
                                    ncclType(dtype), r, nccl, stream),
                           call))
          return rc;
      if (recvCounts[r])
        if (int rc = check(ncclRecv(out + recvDispls[r] * es, recvCounts[r],
                                    ncclType(dtype), r, nccl, stream),
                           call))
          return rc;
    }
    if (int rc = check(ncclGroupEnd(), call))
      return rc;
    return wait(call);
  }

  int broadcast(void *buf, int64_t count, int dtype, int root) override {
    const char *call = "ncclBroadcast";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkDevice(buf, call))
      return rc;
    if (int rc = check(
            ncclBroadcast(buf, buf, count, ncclType(dtype), root, nccl, stream),
            call))
      return rc;
    return wait(call);
  }

  int sendRecv(const void *send, int64_t sendCount, int dest, void *recv,
               int64_t recvCount, int source, int dtype, int) override {
    const char *call = "ncclSend/ncclRecv";
    if (int rc = enter(call))
      return rc;
    if (dest >= 0)
      if (int rc = checkDevice(send, call))
        return rc;
    if (source >= 0)
      if (int rc = checkDevice(recv, call))
        return rc;
    if (int rc = check(ncclGroupStart(), call))
      return rc;
    if (dest >= 0)
      if (int rc = check(
              ncclSend(send, sendCount, ncclType(dtype), dest, nccl, stream),
              call))
        return rc;
    if (source >= 0)
      if (int rc = check(
              ncclRecv(recv, recvCount, ncclType(dtype), source, nccl, stream),
              call))
        return rc;
    if (int rc = check(ncclGroupEnd(), call))
      return rc;
    return wait(call);
  }

  int barrier() override {
    const char *call = "barrier (NCCL group)";
    if (int rc = enter(call))
      return rc;
    if (int rc = checkCuda(cudaStreamSynchronize(stream), call))
      return rc;
    return checkMpi(MPI_Barrier(comm), call);
  }

  int localCopy(void *dst, const void *src, int64_t count, int dtype) override {
    const char *call = "cudaMemcpyAsync (local copy)";
    if (dst == src || count <= 0)
      return MGRT_OK;
    if (int rc = enter(call))
      return rc;
    if (int rc = checkCuda(
            cudaMemcpyAsync(dst, src,
                            static_cast<size_t>(count) * elementSize(dtype),
                            cudaMemcpyDeviceToDevice, stream),
            call))
      return rc;
    return wait(call);
  }
};

} // namespace

extern "C" int mgrt_comm_nccl_group_create(const mgrt_comm_group *mpiGroup,
                                           int device, mgrt_comm_group **out) {
  const char *call = "mgrt_comm_nccl_group_create";
  if (!out)
    return fail(MGRT_ERR_ARGUMENT, call, "out is NULL");
  *out = nullptr;
  if (!mpiGroup || mpiGroup->backend != MGRT_COMM_MPI)
    return fail(MGRT_ERR_ARGUMENT, call, "needs an MPI group to bootstrap");
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return fail(MGRT_ERR_COMM_STATE, call, "no CUDA device (%s)",
                e != cudaSuccess ? cudaGetErrorString(e) : "count is 0");
  }
  if (device < 0) {
    // Node-local rank modulo the device count.
    MPI_Comm local;
    if (int rc =
            checkMpi(MPI_Comm_split_type(mpiGroup->comm, MPI_COMM_TYPE_SHARED,
                                         0, MPI_INFO_NULL, &local),
                     call))
      return rc;
    int localRank = 0;
    MPI_Comm_rank(local, &localRank);
    MPI_Comm_free(&local);
    device = localRank % devices;
  }
  if (device >= devices)
    return fail(MGRT_ERR_ARGUMENT, call, "device %d of %d", device, devices);
  auto *g = new NcclGroup();
  g->backend = MGRT_COMM_NCCL;
  g->device = device;
  g->rank = mpiGroup->rank;
  g->size = mpiGroup->size;
  g->worldRanks = mpiGroup->worldRanks;
  if (int rc = checkMpi(MPI_Comm_dup(mpiGroup->comm, &g->comm), call)) {
    delete g;
    return rc;
  }
  ncclUniqueId id;
  if (g->rank == 0)
    if (int rc = g->check(ncclGetUniqueId(&id), call)) {
      delete g;
      return rc;
    }
  if (int rc =
          checkMpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g->comm), call)) {
    delete g;
    return rc;
  }
  if (int rc = checkCuda(cudaSetDevice(device), call)) {
    delete g;
    return rc;
  }
  if (int rc = checkCuda(
          cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), call)) {
    delete g;
    return rc;
  }
  if (int rc =
          g->check(ncclCommInitRank(&g->nccl, g->size, id, g->rank), call)) {
    delete g;
    return rc;
  }
  *out = g;
  return MGRT_OK;
}
