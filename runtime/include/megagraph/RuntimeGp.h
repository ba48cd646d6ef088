/*===- megagraph/RuntimeGp.h - Partition-parallel SpMM C ABI --------------===*
 *
 * The aggregation of partition parallelism (gt.spmm with #gt.halo): the N
 * nodes of a graph are split into P equal row blocks, block r (rows
 * [r N / P, (r + 1) N / P)) on rank r of a group of the communication
 * runtime (Comm.h, MPI backend, host buffers). Every rank holds the whole
 * CSR of the N x N sparse matrix (row_ptr [N+1], col_idx and values [E]),
 * but only its block of the dense operand and of the result:
 *
 *   x [N / P, D], out [N / P, D]: this rank's rows of x and of A x
 *
 * Rank r computes out = rows of block r of A x. The rows of x those rows
 * reference in other blocks (the halo) come from their owners: since every
 * rank has the whole CSR, each computes both what it receives (the other
 * blocks' columns its rows reference) and what it sends (its columns the
 * other blocks' rows reference), without exchanging indices; one
 * all-to-all with per-pair counts moves the rows (counted by
 * mgrt_comm_bytes_sent). This plan is computed once per distinct CSR (a
 * hash of row_ptr and col_idx) and kept. The backward of such an SpMM is
 * the same call over the transposed CSR.
 *
 * Collective over the group: every rank calls with the same CSR and D.
 * Kernel contract violations (shapes, indices) abort as in Runtime.h's
 * mgrt_spmm_f32; communication failures end the job. The halo buffer is a
 * tracked allocation (mgrt_peak_bytes).
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_RUNTIMEGP_H
#define MEGAGRAPH_RUNTIMEGP_H

#include "megagraph/Comm.h"
#include "megagraph/Runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** This rank's rows of A x over `group` (see above). */
void mgrt_halo_spmm_f32(mgrt_comm_group *group, mgrt_memref_f32_2 *out,
                        mgrt_memref_i64_1 *row_ptr, mgrt_memref_i64_1 *col_idx,
                        mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x);

/** The same, called from compiled code: the group over the axes bit mask
 *  `axes` of the grid g0 x g1 x g2 x g3 (as in Comm.h's shard calls). */
void _mlir_ciface_mgrt_halo_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_i64_1 *row_ptr,
    mgrt_memref_i64_1 *col_idx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_RUNTIMEGP_H */
