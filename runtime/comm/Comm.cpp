//===- Comm.cpp - The mgrt_comm_* C front end -----------------------------===//
//
// Setup (MPI init, the world group, grid groups), the error policy, and
// argument checks of every collective before it reaches a backend
// (CommGroup.h). Checks run on each rank independently; in abort mode a bad
// argument on one rank ends the whole job, so its peers never wait for it.
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"
#include "comm/Heartbeat.h"
#include "support/Error.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace mgrt::comm;

namespace {

int gErrorMode = MGRT_COMM_ERRORS_ABORT;
/// mgrt_comm_bytes_sent's counter (atomic: any thread may send).
std::atomic<uint64_t> gBytesSent{0};
/// What MPI_Init_thread provided (FUNNELED when MPI was initialized by
/// someone else: the least this runtime assumes).
int gThreadLevel = MPI_THREAD_FUNNELED;

/// Counts `elements` of `dtype` as sent if the call `rc` succeeded, and
/// passes `rc` on.
int countSent(int rc, double elements, int dtype) {
  if (rc == MGRT_OK && elements > 0)
    gBytesSent.fetch_add(
        static_cast<uint64_t>(elements *
                              static_cast<double>(elementSize(dtype))),
        std::memory_order_relaxed);
  return rc;
}
thread_local std::string gLastError;
bool gInitializedHere = false;
mgrt_comm_group *gWorld = nullptr;

int worldRank() {
  int init = 0, fin = 0, r = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int init = 0, fin = 0, n = 1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void finalizeAtExit() { mgrt_comm_finalize(); }

bool validOp(int op) { return op >= MGRT_COMM_SUM && op <= MGRT_COMM_MIN; }

/// Common checks; returns MGRT_OK or the failure.
int checkGroup(const mgrt_comm_group *g, const char *call) {
  if (!g)
    return fail(MGRT_ERR_ARGUMENT, call, "group is NULL");
  return MGRT_OK;
}

int checkType(int dtype, const char *call) {
  if (!elementSize(dtype))
    return fail(MGRT_ERR_ARGUMENT, call,
                "unsupported dtype %d (use f32, f64, i32, i64, i8, u8, bool)",
                dtype);
  return MGRT_OK;
}

int checkCount(int64_t count, const void *p, const char *what,
               const char *call) {
  if (count < 0)
    return fail(MGRT_ERR_ARGUMENT, call, "%s count %lld is negative", what,
                (long long)count);
  if (count > INT_MAX)
    return fail(MGRT_ERR_ARGUMENT, call,
                "%s count %lld exceeds %d elements per call", what,
                (long long)count, INT_MAX);
  if (count > 0 && !p)
    return fail(MGRT_ERR_ARGUMENT, call, "%s buffer is NULL", what);
  return MGRT_OK;
}

/// Fills per-rank counts (from `given` or `uniform`) and displacements;
/// checks them; returns the total through `total`.
int fillCounts(const mgrt_comm_group *g, const int64_t *given, int64_t uniform,
               std::vector<int64_t> &counts, std::vector<int64_t> &displs,
               int64_t &total, const char *what, const char *call) {
  counts.assign(g->size, uniform);
  displs.assign(g->size, 0);
  total = 0;
  for (int r = 0; r < g->size; ++r) {
    if (given)
      counts[r] = given[r];
    if (counts[r] < 0)
      return fail(MGRT_ERR_ARGUMENT, call, "%s[%d] = %lld is negative", what, r,
                  (long long)counts[r]);
    displs[r] = total;
    total += counts[r];
  }
  if (total > INT_MAX)
    return fail(MGRT_ERR_ARGUMENT, call,
                "%s add up to %lld elements, more than %d per call", what,
                (long long)total, INT_MAX);
  return MGRT_OK;
}

/// The checks every reduction starts with: the group, the dtype and the
/// operation.
int checkReductionKind(const mgrt_comm_group *g, int dtype, int op,
                       const char *call) {
  if (int rc = checkGroup(g, call))
    return rc;
  if (int rc = checkType(dtype, call))
    return rc;
  if (!validOp(op))
    return fail(MGRT_ERR_ARGUMENT, call, "unknown reduction %d", op);
  return MGRT_OK;
}

/// The common checks of a reduction: its kind and the two buffers' counts.
int checkReduction(const mgrt_comm_group *g, int dtype, int op,
                   const void *send, int64_t sendCount, const void *recv,
                   int64_t recvCount, const char *call) {
  if (int rc = checkReductionKind(g, dtype, op, call))
    return rc;
  if (int rc = checkCount(sendCount, send, "send", call))
    return rc;
  return checkCount(recvCount, recv, "recv", call);
}

/// The checks every all-gather starts with: the group, the dtype and this
/// rank's piece.
int checkGather(const mgrt_comm_group *g, int dtype, const void *send,
                int64_t sendCount, const char *call) {
  if (int rc = checkGroup(g, call))
    return rc;
  if (int rc = checkType(dtype, call))
    return rc;
  return checkCount(sendCount, send, "send", call);
}

/// The per-rank counts and displacements of an all-to-all, checked.
struct AllToAllCounts {
  std::vector<int64_t> sc, sd, rc, rd;
  int64_t st = 0, rt = 0;
};

int allToAllCounts(const mgrt_comm_group *g, const void *send,
                   const int64_t *send_counts, const void *recv,
                   const int64_t *recv_counts, int64_t count, int dtype,
                   const char *call, AllToAllCounts &c) {
  if (int rc = checkGroup(g, call))
    return rc;
  if (int rc = checkType(dtype, call))
    return rc;
  if ((!send_counts || !recv_counts) && count < 0)
    return fail(MGRT_ERR_ARGUMENT, call, "count %lld is negative",
                (long long)count);
  if (int rc = fillCounts(g, send_counts, count, c.sc, c.sd, c.st,
                          "send_counts", call))
    return rc;
  if (int rc = fillCounts(g, recv_counts, count, c.rc, c.rd, c.rt,
                          "recv_counts", call))
    return rc;
  if (int rc = checkCount(c.st, send, "send", call))
    return rc;
  if (int rc = checkCount(c.rt, recv, "recv", call))
    return rc;
  if (c.st > 0 && send == recv)
    return fail(MGRT_ERR_ARGUMENT, call, "send and recv must differ");
  return MGRT_OK;
}

} // namespace

namespace mgrt::comm {

int fail(int code, const char *call, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  gLastError = std::string(call) + ": " + formatMessage(fmt, args);
  va_end(args);
  if (gErrorMode == MGRT_COMM_ERRORS_RETURN)
    return code;
  mgrt_comm_abort(gLastError.c_str(), 3);
  return code; // not reached
}

int checkMpi(int rc, const char *call) {
  if (rc == MPI_SUCCESS)
    return MGRT_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    std::snprintf(text, sizeof text, "MPI error %d", rc);
  return fail(MGRT_ERR_COMM, call, "%s", text);
}

size_t elementSize(int dtype) {
  switch (dtype) {
  case MGRT_F32:
  case MGRT_I32:
    return 4;
  case MGRT_F64:
  case MGRT_I64:
    return 8;
  case MGRT_I8:
  case MGRT_U8:
  case MGRT_BOOL:
    return 1;
  default:
    return 0;
  }
}

MPI_Datatype mpiType(int dtype) {
  switch (dtype) {
  case MGRT_F32:
    return MPI_FLOAT;
  case MGRT_F64:
    return MPI_DOUBLE;
  case MGRT_I32:
    return MPI_INT32_T;
  case MGRT_I64:
    return MPI_INT64_T;
  case MGRT_I8:
    return MPI_INT8_T;
  default:
    return MPI_UINT8_T;
  }
}

template <typename T> static void divideAll(void *buf, int64_t count, int n) {
  T *p = static_cast<T *>(buf);
  for (int64_t i = 0; i < count; ++i)
    p[i] = static_cast<T>(p[i] / static_cast<T>(n));
}

void divideBy(void *buf, int64_t count, int dtype, int n) {
  switch (dtype) {
  case MGRT_F32:
    return divideAll<float>(buf, count, n);
  case MGRT_F64:
    return divideAll<double>(buf, count, n);
  case MGRT_I32:
    return divideAll<int32_t>(buf, count, n);
  case MGRT_I64:
    return divideAll<int64_t>(buf, count, n);
  case MGRT_I8:
    return divideAll<int8_t>(buf, count, n);
  default:
    return divideAll<uint8_t>(buf, count, n);
  }
}

bool readSecondsEnv(const char *name, double &value, std::string &error) {
  const char *s = std::getenv(name);
  if (!s || !*s)
    return true;
  char *end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno || !end || *end || !std::isfinite(v) || v < 0) {
    error = std::string(name) + "='" + s +
            "' is not a number of seconds (0 or more)";
    return false;
  }
  value = v;
  return true;
}

int mpiThreadLevel() { return gThreadLevel; }

int pollUntilDone(const std::function<int(bool &done)> &poll,
                  const char *call) {
  const double limit = timeoutSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (long spins = 0;; ++spins) {
    bool done = false;
    if (int rc = poll(done))
      return rc;
    if (done)
      return MGRT_OK;
    if (spins > 2000) {
      // Oversubscribed ranks (more ranks than cores) must yield the core.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (limit > 0 && std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                               .count() > limit)
        return fail(MGRT_ERR_COMM, call,
                    "no progress for %.0f s: a peer failed, skipped this "
                    "call or is stuck (MEGAGRAPH_COMM_TIMEOUT sets the "
                    "limit)",
                    limit);
    }
  }
}

double timeoutSeconds() {
  // mgrt_comm_init refuses a bad value; the default covers a call before.
  static double t = [] {
    double v = 300.0;
    std::string error;
    return readSecondsEnv(kCommTimeoutEnv, v, error) ? v : 300.0;
  }();
  return t;
}

} // namespace mgrt::comm

int mgrt_comm_group::allToAllStart(const void *send, const int64_t *sendCounts,
                                   const int64_t *sendDispls, void *recv,
                                   const int64_t *recvCounts,
                                   const int64_t *recvDispls, int dtype,
                                   mgrt_comm_request **out) {
  if (int rc = allToAll(send, sendCounts, sendDispls, recv, recvCounts,
                        recvDispls, dtype))
    return rc;
  *out = progressedRequest(MPI_REQUEST_NULL, recv, 0, dtype, MGRT_COMM_SUM, 1);
  return MGRT_OK;
}

extern "C" {

int mgrt_comm_set_error_mode(int mode) {
  int old = gErrorMode;
  if (mode == MGRT_COMM_ERRORS_ABORT || mode == MGRT_COMM_ERRORS_RETURN)
    gErrorMode = mode;
  return old;
}

const char *mgrt_comm_last_error(void) { return gLastError.c_str(); }

void mgrt_comm_abort(const char *message, int code) {
  std::fprintf(stderr, "megagraph comm: rank %d of %d: %s\n", worldRank(),
               worldSize(), message ? message : "");
  std::fflush(stderr);
  announceAbort();
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

int mgrt_comm_launched(void) {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                        "PMI_RANK", "MPI_LOCALNRANKS", "SLURM_PROCID"})
    if (std::getenv(v))
      return 1;
  return 0;
}

int mgrt_comm_init(int *argc, char ***argv) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin)
    return fail(MGRT_ERR_COMM_STATE, "mgrt_comm_init",
                "MPI was already finalized");
  if (!init) {
    int provided = 0;
    // MULTIPLE lets the progress thread of the started collectives test
    // their requests (AsyncCollectives.cpp); every other call comes from
    // the main thread (FUNNELED), which is all that is required.
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "megagraph comm: MPI_Init_thread failed\n");
      std::_Exit(3);
    }
    gInitializedHere = true;
    gThreadLevel = provided;
    std::atexit(finalizeAtExit);
  }
  double seconds = 0;
  std::string error;
  if (!readSecondsEnv(kCommTimeoutEnv, seconds, error))
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_init", "%s", error.c_str());
  if (!gWorld) {
    if (int rc =
            checkMpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                     "mgrt_comm_init"))
      return rc;
    MPI_Comm dup;
    if (int rc = checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "mgrt_comm_init"))
      return rc;
    gWorld = makeMpiGroup(dup);
    // Lost ranks end the job with a message naming them (Heartbeat.h).
    if (int rc = startHeartbeat(gWorld->comm))
      return rc;
  }
  return MGRT_OK;
}

int mgrt_comm_initialized(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return gWorld && init && !fin;
}

int mgrt_comm_finalize(void) {
  // First, even when someone else finalized MPI: the peers must get this
  // rank's goodbye before its sockets close.
  stopHeartbeat();
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin)
    return MGRT_OK;
  stopProgress();
  delete gWorld;
  gWorld = nullptr;
  if (gInitializedHere) {
    gInitializedHere = false;
    MPI_Finalize();
  }
  return MGRT_OK;
}

mgrt_comm_group *mgrt_comm_world(void) { return gWorld; }

int mgrt_comm_grid_coords(int ndims, const int64_t *shape, int rank,
                          int64_t *coords) {
  const char *call = "mgrt_comm_grid_coords";
  if (ndims < 1 || ndims > MGRT_COMM_MAX_AXES || !shape || !coords)
    return fail(MGRT_ERR_ARGUMENT, call, "bad grid (ndims %d)", ndims);
  int64_t rest = rank;
  for (int i = ndims - 1; i >= 0; --i) {
    if (shape[i] < 1)
      return fail(MGRT_ERR_ARGUMENT, call, "grid axis %d has size %lld", i,
                  (long long)shape[i]);
    coords[i] = rest % shape[i];
    rest /= shape[i];
  }
  if (rest != 0 || rank < 0)
    return fail(MGRT_ERR_ARGUMENT, call, "rank %d is outside the grid", rank);
  return MGRT_OK;
}

int mgrt_comm_grid_group(int ndims, const int64_t *shape, uint32_t axes_mask,
                         mgrt_comm_group **out) {
  const char *call = "mgrt_comm_grid_group";
  if (!out)
    return fail(MGRT_ERR_ARGUMENT, call, "out is NULL");
  *out = nullptr;
  if (!gWorld)
    return fail(MGRT_ERR_COMM_STATE, call,
                "call mgrt_comm_init first (MPI is not initialized)");
  if (ndims < 1 || ndims > MGRT_COMM_MAX_AXES || !shape)
    return fail(MGRT_ERR_ARGUMENT, call, "a grid needs 1 to %d axes, got %d",
                MGRT_COMM_MAX_AXES, ndims);
  if (axes_mask >> ndims)
    return fail(MGRT_ERR_ARGUMENT, call,
                "axes mask 0x%x names an axis beyond the grid's %d", axes_mask,
                ndims);
  int64_t product = 1;
  std::string text;
  for (int i = 0; i < ndims; ++i) {
    if (shape[i] < 1)
      return fail(MGRT_ERR_ARGUMENT, call, "grid axis %d has size %lld", i,
                  (long long)shape[i]);
    product *= shape[i];
    text += (i ? "x" : "") + std::to_string(shape[i]);
  }
  if (product != gWorld->size)
    return fail(MGRT_ERR_ARGUMENT, call,
                "the grid %s has %lld processes but the job has %d (launch "
                "with mpirun -np %lld)",
                text.c_str(), (long long)product, gWorld->size,
                (long long)product);
  int64_t coords[MGRT_COMM_MAX_AXES];
  mgrt_comm_grid_coords(ndims, shape, gWorld->rank, coords);
  // color: row-major index over the other axes.
  int64_t color = 0;
  for (int i = 0; i < ndims; ++i)
    if (!(axes_mask & (1u << i)))
      color = color * shape[i] + coords[i];
  // The members, in row-major order over the chosen axes (ascending world
  // rank). MPI_Comm_create_group is collective over them only: a pipeline stage
  // can create its dp group while the other stages are elsewhere
  // (MPI_Comm_split would need every rank).
  std::vector<int> members;
  for (int r = 0; r < gWorld->size; ++r) {
    int64_t c[MGRT_COMM_MAX_AXES];
    mgrt_comm_grid_coords(ndims, shape, r, c);
    int64_t other = 0;
    for (int i = 0; i < ndims; ++i)
      if (!(axes_mask & (1u << i)))
        other = other * shape[i] + c[i];
    if (other == color)
      members.push_back(r);
  }
  MPI_Group world, group;
  MPI_Comm comm;
  if (int rc = checkMpi(MPI_Comm_group(gWorld->comm, &world), call))
    return rc;
  int rc = checkMpi(MPI_Group_incl(world, static_cast<int>(members.size()),
                                   members.data(), &group),
                    call);
  MPI_Group_free(&world);
  if (rc)
    return rc;
  rc = checkMpi(MPI_Comm_create_group(gWorld->comm, group,
                                      static_cast<int>(axes_mask), &comm),
                call);
  MPI_Group_free(&group);
  if (rc)
    return rc;
  *out = makeMpiGroup(comm);
  return MGRT_OK;
}

int mgrt_comm_group_free(mgrt_comm_group *group) {
  if (group && group != gWorld)
    delete group;
  return MGRT_OK;
}

int mgrt_comm_rank(const mgrt_comm_group *g) { return g ? g->rank : -1; }
int mgrt_comm_size(const mgrt_comm_group *g) { return g ? g->size : 0; }
int mgrt_comm_backend_of(const mgrt_comm_group *g) {
  return g ? g->backend : -1;
}
int mgrt_comm_world_rank_of(const mgrt_comm_group *g, int rank) {
  return g && rank >= 0 && rank < g->size ? g->worldRanks[rank] : -1;
}

int mgrt_comm_all_reduce(mgrt_comm_group *g, const void *send, void *recv,
                         int64_t count, int dtype, int op) {
  const char *call = "mgrt_comm_all_reduce";
  if (int rc = checkReduction(g, dtype, op, send, count, recv, count, call))
    return rc;
  const int n = g->size;
  return countSent(g->allReduce(send, recv, count, dtype, op),
                   2.0 * (n - 1) * static_cast<double>(count) / n, dtype);
}

int mgrt_comm_all_gather(mgrt_comm_group *g, const void *send,
                         int64_t send_count, void *recv,
                         const int64_t *recv_counts, int dtype) {
  const char *call = "mgrt_comm_all_gather";
  if (int rc = checkGather(g, dtype, send, send_count, call))
    return rc;
  std::vector<int64_t> counts, displs;
  int64_t total;
  if (int rc = fillCounts(g, recv_counts, send_count, counts, displs, total,
                          "recv_counts", call))
    return rc;
  if (counts[g->rank] != send_count)
    return fail(MGRT_ERR_ARGUMENT, call,
                "send_count %lld differs from recv_counts[%d] = %lld",
                (long long)send_count, g->rank, (long long)counts[g->rank]);
  if (int rc = checkCount(total, recv, "recv", call))
    return rc;
  if (total > 0 && send == recv)
    return fail(MGRT_ERR_ARGUMENT, call, "send and recv must differ");
  return countSent(g->allGather(send, recv, counts.data(), displs.data(),
                                !recv_counts, dtype),
                   static_cast<double>(total - counts[(g->rank + 1) % g->size]),
                   dtype);
}

int mgrt_comm_reduce_scatter(mgrt_comm_group *g, const void *send, void *recv,
                             int64_t recv_count, const int64_t *recv_counts,
                             int dtype, int op) {
  const char *call = "mgrt_comm_reduce_scatter";
  if (int rc = checkReductionKind(g, dtype, op, call))
    return rc;
  std::vector<int64_t> counts, displs;
  int64_t total;
  if (int rc = fillCounts(g, recv_counts, recv_count, counts, displs, total,
                          "recv_counts", call))
    return rc;
  if (int rc = checkCount(total, send, "send", call))
    return rc;
  if (int rc = checkCount(counts[g->rank], recv, "recv", call))
    return rc;
  if (total > 0 && send == recv)
    return fail(MGRT_ERR_ARGUMENT, call, "send and recv must differ");
  return countSent(g->reduceScatter(send, recv, counts.data(), displs.data(),
                                    !recv_counts, dtype, op),
                   static_cast<double>(total - counts[g->rank]), dtype);
}

int mgrt_comm_all_to_all(mgrt_comm_group *g, const void *send,
                         const int64_t *send_counts, void *recv,
                         const int64_t *recv_counts, int64_t count, int dtype) {
  const char *call = "mgrt_comm_all_to_all";
  AllToAllCounts c;
  if (int rc = allToAllCounts(g, send, send_counts, recv, recv_counts, count,
                              dtype, call, c))
    return rc;
  return countSent(g->allToAll(send, c.sc.data(), c.sd.data(), recv,
                               c.rc.data(), c.rd.data(), dtype),
                   static_cast<double>(c.st - c.sc[g->rank]), dtype);
}

int mgrt_comm_all_to_all_start(mgrt_comm_group *g, const void *send,
                               const int64_t *send_counts, void *recv,
                               const int64_t *recv_counts, int64_t count,
                               int dtype, mgrt_comm_request **request) {
  const char *call = "mgrt_comm_all_to_all_start";
  if (!request)
    return fail(MGRT_ERR_ARGUMENT, call, "request is NULL");
  *request = nullptr;
  AllToAllCounts c;
  if (int rc = allToAllCounts(g, send, send_counts, recv, recv_counts, count,
                              dtype, call, c))
    return rc;
  return countSent(g->allToAllStart(send, c.sc.data(), c.sd.data(), recv,
                                    c.rc.data(), c.rd.data(), dtype, request),
                   static_cast<double>(c.st - c.sc[g->rank]), dtype);
}

int mgrt_comm_reduce_scatter_start(mgrt_comm_group *g, const void *send,
                                   void *recv, int64_t recv_count, int dtype,
                                   int op, mgrt_comm_request **request) {
  const char *call = "mgrt_comm_reduce_scatter_start";
  if (!request)
    return fail(MGRT_ERR_ARGUMENT, call, "request is NULL");
  *request = nullptr;
  if (int rc = checkReduction(g, dtype, op, send, g ? recv_count * g->size : 0,
                              recv, recv_count, call))
    return rc;
  if (recv_count > 0 && send == recv)
    return fail(MGRT_ERR_ARGUMENT, call, "send and recv must differ");
  if (!asyncCollectives()) {
    if (int rc = mgrt_comm_reduce_scatter(g, send, recv, recv_count, nullptr,
                                          dtype, op))
      return rc;
    *request =
        progressedRequest(MPI_REQUEST_NULL, recv, 0, dtype, MGRT_COMM_SUM, 1);
    return MGRT_OK;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  if (int rc = countSent(
          g->reduceScatterStart(send, recv, recv_count, dtype, op, &req),
          static_cast<double>(recv_count) * (g->size - 1), dtype))
    return rc;
  // A backend that ran it at once (req NULL) has divided an AVG already.
  *request =
      progressedRequest(req, recv, recv_count, dtype,
                        req == MPI_REQUEST_NULL ? MGRT_COMM_SUM : op, g->size);
  return MGRT_OK;
}

int mgrt_comm_all_reduce_start(mgrt_comm_group *g, const void *send, void *recv,
                               int64_t count, int dtype, int op,
                               mgrt_comm_request **request) {
  const char *call = "mgrt_comm_all_reduce_start";
  if (!request)
    return fail(MGRT_ERR_ARGUMENT, call, "request is NULL");
  *request = nullptr;
  if (int rc = checkReduction(g, dtype, op, send, count, recv, count, call))
    return rc;
  if (!asyncCollectives()) {
    if (int rc = mgrt_comm_all_reduce(g, send, recv, count, dtype, op))
      return rc;
    *request =
        progressedRequest(MPI_REQUEST_NULL, recv, 0, dtype, MGRT_COMM_SUM, 1);
    return MGRT_OK;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  // The bytes of the blocking all_reduce: 2 (n-1)/n of the buffer.
  const int n = g->size;
  if (int rc = countSent(g->allReduceStart(send, recv, count, dtype, op, &req),
                         2.0 * (n - 1) * static_cast<double>(count) / n, dtype))
    return rc;
  *request =
      progressedRequest(req, recv, count, dtype,
                        req == MPI_REQUEST_NULL ? MGRT_COMM_SUM : op, g->size);
  return MGRT_OK;
}

int mgrt_comm_all_gather_start(mgrt_comm_group *g, const void *send,
                               int64_t send_count, void *recv, int dtype,
                               mgrt_comm_request **request) {
  const char *call = "mgrt_comm_all_gather_start";
  if (!request)
    return fail(MGRT_ERR_ARGUMENT, call, "request is NULL");
  *request = nullptr;
  if (int rc = checkGather(g, dtype, send, send_count, call))
    return rc;
  if (int rc = checkCount(send_count * g->size, recv, "recv", call))
    return rc;
  if (send_count > 0 && send == recv)
    return fail(MGRT_ERR_ARGUMENT, call, "send and recv must differ");
  if (!asyncCollectives()) {
    if (int rc =
            mgrt_comm_all_gather(g, send, send_count, recv, nullptr, dtype))
      return rc;
    *request =
        progressedRequest(MPI_REQUEST_NULL, recv, 0, dtype, MGRT_COMM_SUM, 1);
    return MGRT_OK;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  // The bytes of the blocking all_gather: every piece but the successor's.
  if (int rc =
          countSent(g->allGatherStart(send, recv, send_count, dtype, &req),
                    static_cast<double>(send_count) * (g->size - 1), dtype))
    return rc;
  // Nothing to do at the wait but the completion (no reduction).
  *request = progressedRequest(req, recv, send_count * g->size, dtype,
                               MGRT_COMM_SUM, g->size);
  return MGRT_OK;
}

int mgrt_comm_test(mgrt_comm_request *request, int *done) {
  if (!request || !done)
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_test", "request or done is NULL");
  return request->test(done);
}

int mgrt_comm_wait(mgrt_comm_request *request) {
  if (!request)
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_wait", "request is NULL");
  const int rc = request->wait();
  delete request;
  return rc;
}

int mgrt_comm_broadcast(mgrt_comm_group *g, void *buf, int64_t count, int dtype,
                        int root) {
  const char *call = "mgrt_comm_broadcast";
  if (int rc = checkGroup(g, call))
    return rc;
  if (int rc = checkType(dtype, call))
    return rc;
  if (int rc = checkCount(count, buf, "buf", call))
    return rc;
  if (root < 0 || root >= g->size)
    return fail(MGRT_ERR_ARGUMENT, call,
                "root %d is not a rank of the group "
                "of %d",
                root, g->size);
  const bool last = g->rank == (root + g->size - 1) % g->size;
  return countSent(g->broadcast(buf, count, dtype, root),
                   last ? 0.0 : static_cast<double>(count), dtype);
}

int mgrt_comm_sendrecv(mgrt_comm_group *g, const void *send, int64_t send_count,
                       int dest, void *recv, int64_t recv_count, int source,
                       int dtype, int tag) {
  const char *call = "mgrt_comm_sendrecv";
  if (int rc = checkGroup(g, call))
    return rc;
  if (int rc = checkType(dtype, call))
    return rc;
  if (dest < -1 || dest >= g->size || source < -1 || source >= g->size)
    return fail(MGRT_ERR_ARGUMENT, call,
                "peer %d is not a rank of the group of %d",
                dest < -1 || dest >= g->size ? dest : source, g->size);
  if (tag < 0)
    return fail(MGRT_ERR_ARGUMENT, call, "tag %d is negative", tag);
  if (dest >= 0)
    if (int rc = checkCount(send_count, send, "send", call))
      return rc;
  if (source >= 0)
    if (int rc = checkCount(recv_count, recv, "recv", call))
      return rc;
  return countSent(
      g->sendRecv(send, send_count, dest, recv, recv_count, source, dtype, tag),
      dest >= 0 ? static_cast<double>(send_count) : 0.0, dtype);
}

int mgrt_comm_send(mgrt_comm_group *g, const void *buf, int64_t count,
                   int dtype, int peer, int tag) {
  if (peer < 0 && g)
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_send",
                "peer %d is not a rank of the group of %d", peer, g->size);
  return mgrt_comm_sendrecv(g, buf, count, peer, nullptr, 0, -1, dtype, tag);
}

int mgrt_comm_recv(mgrt_comm_group *g, void *buf, int64_t count, int dtype,
                   int peer, int tag) {
  if (peer < 0 && g)
    return fail(MGRT_ERR_ARGUMENT, "mgrt_comm_recv",
                "peer %d is not a rank of the group of %d", peer, g->size);
  return mgrt_comm_sendrecv(g, nullptr, 0, -1, buf, count, peer, dtype, tag);
}

int mgrt_comm_barrier(mgrt_comm_group *g) {
  if (int rc = checkGroup(g, "mgrt_comm_barrier"))
    return rc;
  return g->barrier();
}

uint64_t mgrt_comm_bytes_sent(void) {
  return gBytesSent.load(std::memory_order_relaxed);
}

} // extern "C"
