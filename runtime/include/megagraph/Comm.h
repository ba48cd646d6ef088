/*===- megagraph/Comm.h - MegaGraph communication runtime C ABI -----------===*
 *
 * Collectives and point-to-point transfers over groups of processes, one
 * API for two backends:
 *   MPI   host buffers (Open MPI); part of libmegagraph_rt.
 *   NCCL  device buffers; libmegagraph_rt_nccl, built only when CMake finds
 *         CUDA and NCCL. An NCCL group is created from an MPI group (the
 *         NCCL unique id is broadcast over MPI) and then used through the
 *         same mgrt_comm_* calls.
 *
 * Groups come from a device grid: `ndims` axis sizes whose product is the
 * number of processes, ranks numbered row-major (the last axis varies
 * fastest). The standard grid of a parallel plan is dp x pp x cp
 * (MGRT_COMM_AXIS_DP = 0, _PP = 1, _CP = 2). A group over a set of axes
 * holds the processes that share their coordinates on every other axis; in
 * the group they are numbered row-major over the chosen axes.
 *
 * Collectives are blocking: when a call returns, its buffers may be reused
 * (the NCCL backend waits for its stream); the one exception,
 * mgrt_comm_all_to_all_start, returns a request to test and wait for.
 * Counts are in elements of `dtype` (an mgrt_dtype: F32, F64, I32, I64,
 * I8, U8, BOOL). A send and a receive buffer may be the same pointer (in
 * place) for all-reduce and broadcast; all-gather, reduce-scatter and
 * all-to-all need distinct buffers.
 *
 * Errors: by default (MGRT_COMM_ERRORS_ABORT) any failure - a bad argument,
 * a failed MPI or NCCL call, a lost peer - prints
 *   megagraph comm: rank R of W: CALL: MESSAGE
 * to stderr and ends the whole job with MPI_Abort (exit code 3), so no rank
 * is left waiting in a collective. MGRT_COMM_ERRORS_RETURN makes calls
 * return the error code instead (for tests of argument checks; after a
 * failed collective the group's state is undefined).
 *
 * Lost ranks: in a job of two or more, mgrt_comm_init also starts a
 * heartbeat (a side thread and a TCP connection to each other rank, no MPI
 * calls). A rank that dies, or sends nothing for
 * MEGAGRAPH_HEARTBEAT_TIMEOUT seconds (default 20; 0 = off; one frame every
 * MEGAGRAPH_HEARTBEAT_PERIOD, default 1) because it is stopped, ends every
 * other rank with
 *   megagraph comm: rank R of W: lost peer rank P (REASON); stopping
 * and exit code 3, however long the current step or collective takes. The
 * heartbeat handles SIGTERM (what the launcher sends the survivors when a
 * rank dies), naming the lost peer when it knows one.
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_COMM_H
#define MEGAGRAPH_COMM_H

#include "megagraph/Runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes beyond mgrt_status. */
enum {
  MGRT_ERR_COMM = 16,       /**< an MPI or NCCL call failed */
  MGRT_ERR_COMM_STATE = 17, /**< not initialized, or backend unavailable */
};

/* Reductions: mgrt_comm_op (MGRT_COMM_SUM, _AVG, _MAX, _MIN) in
 * megagraph/ModelABI.h, where the compiler's lowering reads them too. */

typedef enum mgrt_comm_backend {
  MGRT_COMM_MPI = 0, /**< host buffers */
  MGRT_COMM_NCCL = 1 /**< device buffers */
} mgrt_comm_backend;

/** Axes of the standard dp x pp x cp grid. */
enum { MGRT_COMM_AXIS_DP = 0, MGRT_COMM_AXIS_PP = 1, MGRT_COMM_AXIS_CP = 2 };

/** Error modes (mgrt_comm_set_error_mode). */
enum { MGRT_COMM_ERRORS_ABORT = 0, MGRT_COMM_ERRORS_RETURN = 1 };

/** The most grid axes. */
#define MGRT_COMM_MAX_AXES 8

/** A group of processes with a backend; opaque. */
typedef struct mgrt_comm_group mgrt_comm_group;

/*===-- Setup -------------------------------------------------------------===*/

/** Initializes MPI (thread level FUNNELED) unless it already is, makes MPI
 *  errors return to the runtime, and arranges MPI_Finalize at exit when
 *  this call initialized it. argc/argv may be NULL. Idempotent. */
int mgrt_comm_init(int *argc, char ***argv);
/** Nonzero once mgrt_comm_init succeeded (and MPI is not finalized). */
int mgrt_comm_initialized(void);
/** Nonzero when the process was started by a launcher (mpirun, srun, a
 *  PMI/PMIx environment), i.e. when mgrt_comm_init is worth calling. */
int mgrt_comm_launched(void);
/** Finalizes MPI if this runtime initialized it (after freeing groups). */
int mgrt_comm_finalize(void);

/** MGRT_COMM_ERRORS_ABORT (default) or MGRT_COMM_ERRORS_RETURN; returns
 *  the previous mode. */
int mgrt_comm_set_error_mode(int mode);
/** The message of the last error of this process ("" if none). */
const char *mgrt_comm_last_error(void);
/** Ends the job on every rank: prints "megagraph comm: rank R of W:
 *  MESSAGE" and calls MPI_Abort(code) (exit(code) without MPI). */
void mgrt_comm_abort(const char *message, int code);

/** The group of all processes (MPI backend); NULL before mgrt_comm_init.
 *  Owned by the runtime: do not free. */
mgrt_comm_group *mgrt_comm_world(void);

/** The group over axes `axes_mask` (bit i = axis i) of the grid `shape`
 *  [ndims], which must multiply to the number of processes; MPI backend.
 *  mask 0 gives a group of one. Free with mgrt_comm_group_free. */
int mgrt_comm_grid_group(int ndims, const int64_t *shape, uint32_t axes_mask,
                         mgrt_comm_group **out);
/** Grid coordinates of world rank `rank` in `shape` [ndims]. */
int mgrt_comm_grid_coords(int ndims, const int64_t *shape, int rank,
                          int64_t *coords);
/** A group over the same processes using NCCL on CUDA device `device`
 *  (-1: the node-local rank modulo the device count). Defined in
 *  libmegagraph_rt_nccl; collective over `mpi_group`. */
int mgrt_comm_nccl_group_create(const mgrt_comm_group *mpi_group, int device,
                                mgrt_comm_group **out);
/** Frees a group (collective over its members for NCCL); NULL is a no-op;
 *  the world group is never freed. */
int mgrt_comm_group_free(mgrt_comm_group *group);

/** This process's rank in `group`, -1 for NULL. */
int mgrt_comm_rank(const mgrt_comm_group *group);
/** Number of processes in `group`, 0 for NULL. */
int mgrt_comm_size(const mgrt_comm_group *group);
/** The world rank of the process with rank `rank` in `group`, -1 if out of
 *  range. */
int mgrt_comm_world_rank_of(const mgrt_comm_group *group, int rank);
/** MGRT_COMM_MPI or MGRT_COMM_NCCL, -1 for NULL. */
int mgrt_comm_backend_of(const mgrt_comm_group *group);

/*===-- Collectives -------------------------------------------------------===*/

/** recv[i] = op over ranks of send[i], i < count, on every rank. */
int mgrt_comm_all_reduce(mgrt_comm_group *group, const void *send, void *recv,
                         int64_t count, int dtype, int op);

/** recv = the concatenation, in rank order, of every rank's `send`. Rank r
 *  contributes recv_counts[r] elements (send_count must equal
 *  recv_counts[rank]); recv_counts NULL means send_count for every rank. */
int mgrt_comm_all_gather(mgrt_comm_group *group, const void *send,
                         int64_t send_count, void *recv,
                         const int64_t *recv_counts, int dtype);

/** `send` is the concatenation of size pieces, piece r of recv_counts[r]
 *  elements (all recv_count when recv_counts is NULL); rank r receives the
 *  reduction over ranks of piece r. */
int mgrt_comm_reduce_scatter(mgrt_comm_group *group, const void *send,
                             void *recv, int64_t recv_count,
                             const int64_t *recv_counts, int dtype, int op);

/** Piece r of `send` (send_counts[r] elements) goes to rank r; `recv` is
 *  the concatenation of the pieces received from every rank
 *  (recv_counts[r] from rank r). NULL counts mean `count` per rank. */
int mgrt_comm_all_to_all(mgrt_comm_group *group, const void *send,
                         const int64_t *send_counts, void *recv,
                         const int64_t *recv_counts, int64_t count, int dtype);

/** A transfer under way (mgrt_comm_all_to_all_start,
 *  mgrt_comm_reduce_scatter_start, mgrt_comm_all_reduce_start,
 *  mgrt_comm_all_gather_start). */
typedef struct mgrt_comm_request mgrt_comm_request;

/** mgrt_comm_all_to_all, started: returns once the transfer is under way,
 *  with *request set. The buffers must stay untouched until mgrt_comm_wait
 *  returns; the bytes are counted (as mgrt_comm_all_to_all counts them)
 *  when it starts. The transfer progresses inside mgrt_comm_test and
 *  mgrt_comm_wait: call them, like every mgrt_comm_* call, from the thread
 *  that initialised the runtime. The NCCL backend completes it before
 *  returning. On failure *request is NULL. */
int mgrt_comm_all_to_all_start(mgrt_comm_group *group, const void *send,
                               const int64_t *send_counts, void *recv,
                               const int64_t *recv_counts, int64_t count,
                               int dtype, mgrt_comm_request **request);
/** Drives the transfer on; *done = 1 once it is complete (the request
 *  stays valid until mgrt_comm_wait). */
int mgrt_comm_test(mgrt_comm_request *request, int *done);
/** Waits for the transfer (with the blocking calls' deadline,
 *  MEGAGRAPH_COMM_TIMEOUT) and frees the request. */
int mgrt_comm_wait(mgrt_comm_request *request);

/** mgrt_comm_reduce_scatter of `recv_count` elements per rank, started, as
 *  mgrt_comm_all_to_all_start: the buffers stay untouched until
 *  mgrt_comm_wait, the bytes are counted at the start. On MPI it is one
 *  non-blocking collective that a progress thread moves while the caller
 *  computes (where MPI_Init_thread provided MPI_THREAD_MULTIPLE; otherwise
 *  the caller's mgrt_comm_test and mgrt_comm_wait move it); the NCCL
 *  backend, MEGAGRAPH_COMM_ASYNC=0, and by default a rank with fewer than
 *  two cores of its own, complete it before returning. */
int mgrt_comm_reduce_scatter_start(mgrt_comm_group *group, const void *send,
                                   void *recv, int64_t recv_count, int dtype,
                                   int op, mgrt_comm_request **request);
/** mgrt_comm_all_reduce, started the same way. */
int mgrt_comm_all_reduce_start(mgrt_comm_group *group, const void *send,
                               void *recv, int64_t count, int dtype, int op,
                               mgrt_comm_request **request);
/** mgrt_comm_all_gather of `send_count` elements from every rank, started
 *  the same way (one MPI_Iallgather). */
int mgrt_comm_all_gather_start(mgrt_comm_group *group, const void *send,
                               int64_t send_count, void *recv, int dtype,
                               mgrt_comm_request **request);

/** Copies `count` elements of `buf` on rank `root` to `buf` on every
 *  rank. */
int mgrt_comm_broadcast(mgrt_comm_group *group, void *buf, int64_t count,
                        int dtype, int root);

/** Point to point (blocking; `tag` >= 0, ignored by NCCL, which matches
 *  transfers in order). */
int mgrt_comm_send(mgrt_comm_group *group, const void *buf, int64_t count,
                   int dtype, int peer, int tag);
int mgrt_comm_recv(mgrt_comm_group *group, void *buf, int64_t count, int dtype,
                   int peer, int tag);
/** Sends to `dest` and receives from `source` at once (no deadlock in a
 *  ring); either peer may be -1 to skip that half. */
int mgrt_comm_sendrecv(mgrt_comm_group *group, const void *send,
                       int64_t send_count, int dest, void *recv,
                       int64_t recv_count, int source, int dtype, int tag);

/** Returns when every rank of `group` has called it. */
int mgrt_comm_barrier(mgrt_comm_group *group);

/** Bytes this process has sent since it started, over every group and
 *  backend: the exact payload of send / sendrecv, and for a collective
 *  the volume of the bandwidth-optimal ring algorithm over its n ranks:
 *  all_reduce 2 (n-1)/n of the buffer, all_gather every piece but the
 *  successor's, reduce_scatter every piece but its own, all_to_all what
 *  goes to the other ranks, broadcast the buffer on every rank but the
 *  root's predecessor (pipelined ring). What the backend actually moves
 *  may differ (MPI picks its algorithm); this is the figure plans are
 *  compared by (the per-step `comm_bytes` of the training log). */
uint64_t mgrt_comm_bytes_sent(void);

/*===-- Calls from compiled code (shard collectives, gt-shard-to-runtime) -===*/
/* f32 buffers as rank-1 memref descriptors; the grid is `g0 x g1 x g2 x g3`
 * (unused axes 1), `axes` a bit mask of its axes; groups are created on
 * first use and cached. A grid that does not match the number of processes
 * ends the job with a message naming both. */

void _mlir_ciface_mgrt_comm_all_reduce_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes, int64_t op);
void _mlir_ciface_mgrt_comm_all_gather_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes);
void _mlir_ciface_mgrt_comm_reduce_scatter_f32(mgrt_memref_f32_1 *out,
                                               mgrt_memref_f32_1 *in,
                                               int64_t g0, int64_t g1,
                                               int64_t g2, int64_t g3,
                                               int64_t axes, int64_t op);
/** mgrt_comm_reduce_scatter_f32, started (mgrt_comm_reduce_scatter_start):
 *  returns the request (as an integer; 0 when it is already complete)
 *  that _mlir_ciface_mgrt_comm_wait_f32 completes. */
int64_t _mlir_ciface_mgrt_comm_reduce_scatter_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t op);
/** mgrt_comm_all_reduce_f32 (in place on `buf`), started. */
int64_t _mlir_ciface_mgrt_comm_all_reduce_start_f32(mgrt_memref_f32_1 *buf,
                                                    int64_t g0, int64_t g1,
                                                    int64_t g2, int64_t g3,
                                                    int64_t axes, int64_t op);
/** mgrt_comm_all_gather_f32, started (mgrt_comm_all_gather_start). */
int64_t _mlir_ciface_mgrt_comm_all_gather_start_f32(mgrt_memref_f32_1 *out,
                                                    mgrt_memref_f32_1 *in,
                                                    int64_t g0, int64_t g1,
                                                    int64_t g2, int64_t g3,
                                                    int64_t axes);
/** Completes `request`. out and in are its buffers: passing them makes the
 *  compiled code keep them alive until here. */
void _mlir_ciface_mgrt_comm_wait_f32(mgrt_memref_f32_1 *out,
                                     mgrt_memref_f32_1 *in, int64_t request);
void _mlir_ciface_mgrt_comm_all_to_all_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes);
/** out = piece `rank` of `in` (no communication; shard.all_slice). */
void _mlir_ciface_mgrt_comm_all_slice_f32(mgrt_memref_f32_1 *out,
                                          mgrt_memref_f32_1 *in, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes);
void _mlir_ciface_mgrt_comm_broadcast_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes, int64_t root);
void _mlir_ciface_mgrt_comm_send_f32(mgrt_memref_f32_1 *in, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t dest);
void _mlir_ciface_mgrt_comm_recv_f32(mgrt_memref_f32_1 *out, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t source);
/** This process's rank in the group (shard.process_linear_index). */
int64_t mgrt_comm_group_rank(int64_t g0, int64_t g1, int64_t g2, int64_t g3,
                             int64_t axes);
/** out = in of the group rank `offset` below (modulo the size with
 *  `rotate`; without it ranks with no source keep `in`). */
void _mlir_ciface_mgrt_comm_shift_f32(mgrt_memref_f32_1 *out,
                                      mgrt_memref_f32_1 *in, int64_t g0,
                                      int64_t g1, int64_t g2, int64_t g3,
                                      int64_t axes, int64_t offset,
                                      int64_t rotate);

/*===-- The same on device buffers (--target cuda) ------------------------===*/
/* The operands, grid and semantics of the calls above, with buffers in CUDA
 * device memory: the group is an NCCL group over the processes of the same
 * (grid, axes), bootstrapped over MPI on first use and bound to the CUDA
 * device current on the calling thread. Each call is ordered after the
 * work queued on the legacy default stream and returns when its transfer
 * is done. Defined in libmegagraph_rt_nccl. */

void _mlir_ciface_mgrt_comm_device_all_reduce_f32(mgrt_memref_f32_1 *buf,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes, int64_t op);
void _mlir_ciface_mgrt_comm_device_all_gather_f32(mgrt_memref_f32_1 *out,
                                                  mgrt_memref_f32_1 *in,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes);
void _mlir_ciface_mgrt_comm_device_reduce_scatter_f32(mgrt_memref_f32_1 *out,
                                                      mgrt_memref_f32_1 *in,
                                                      int64_t g0, int64_t g1,
                                                      int64_t g2, int64_t g3,
                                                      int64_t axes, int64_t op);
int64_t _mlir_ciface_mgrt_comm_device_reduce_scatter_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t op);
int64_t _mlir_ciface_mgrt_comm_device_all_reduce_start_f32(
    mgrt_memref_f32_1 *buf, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t op);
int64_t _mlir_ciface_mgrt_comm_device_all_gather_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes);
void _mlir_ciface_mgrt_comm_device_wait_f32(mgrt_memref_f32_1 *out,
                                            mgrt_memref_f32_1 *in,
                                            int64_t request);
void _mlir_ciface_mgrt_comm_device_all_to_all_f32(mgrt_memref_f32_1 *out,
                                                  mgrt_memref_f32_1 *in,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes);
void _mlir_ciface_mgrt_comm_device_all_slice_f32(mgrt_memref_f32_1 *out,
                                                 mgrt_memref_f32_1 *in,
                                                 int64_t g0, int64_t g1,
                                                 int64_t g2, int64_t g3,
                                                 int64_t axes);
void _mlir_ciface_mgrt_comm_device_broadcast_f32(mgrt_memref_f32_1 *buf,
                                                 int64_t g0, int64_t g1,
                                                 int64_t g2, int64_t g3,
                                                 int64_t axes, int64_t root);
void _mlir_ciface_mgrt_comm_device_send_f32(mgrt_memref_f32_1 *in, int64_t g0,
                                            int64_t g1, int64_t g2, int64_t g3,
                                            int64_t axes, int64_t dest);
void _mlir_ciface_mgrt_comm_device_recv_f32(mgrt_memref_f32_1 *out, int64_t g0,
                                            int64_t g1, int64_t g2, int64_t g3,
                                            int64_t axes, int64_t source);
void _mlir_ciface_mgrt_comm_device_shift_f32(mgrt_memref_f32_1 *out,
                                             mgrt_memref_f32_1 *in, int64_t g0,
                                             int64_t g1, int64_t g2, int64_t g3,
                                             int64_t axes, int64_t offset,
                                             int64_t rotate);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_COMM_H */
