/*===- megagraph/RuntimeCp.h - Context-parallel attention C ABI -----------===*
 *
 * Attention with the sequence (node) dimension sharded over the ranks of a
 * context-parallel (cp) group of the communication runtime (Comm.h, MPI
 * backend, host buffers). Rank r of the C ranks holds a contiguous block of
 * S_r rows of every sequence (uneven blocks allowed, S_r may be 0); the
 * blocks are in rank order, so rank r's first row is the global row
 * sum_{s<r} S_s and S = sum_r S_r. Every operand is this rank's rows only:
 *
 *   q [B,S_r,D], k [B,S_r,D], v [B,S_r,Dv], out / dout [B,S_r,Dv]
 *   bias  [B|1, H|1, S_r|1, S|1]    this rank's query rows, ALL key columns
 *   mask  [B|1, H|1, S_r|1, S|1]    uint8, nonzero = keep, same layout
 *   dq [B,S_r,D], dk [B,S_r,D], dv [B,S_r,Dv], dbias shaped as bias
 *
 * with the heads, scale, flags (MGRT_ATTENTION_BIAS / _MASK / _DBIAS) and
 * results of _mlir_ciface_mgrt_attention_f32 / _bwd_f32 (Runtime.h) on the
 * full sequence: out and dq are this rank's rows of the full results, dk
 * and dv the gradients of this rank's keys and values (summed over every
 * rank's queries), dbias this rank's rows of the full dbias. Each rank
 * holds and computes 1/C of every [S,S] quantity; the all-gather and ring
 * variants never communicate the bias, the mask or dbias (Ulysses does).
 * A dbias broadcast over the query dimension (size 1) comes back as a
 * per-rank partial (the sum over this rank's queries; under Ulysses over
 * all queries of this rank's heads); the caller sums it over the group.
 *
 * Three ways to meet the keys of the other ranks (the same results):
 *   MGRT_CP_ALLGATHER  K and V are all-gathered, the local queries attend
 *       to all S keys in one kernel call; the backward computes dK / dV for
 *       all S keys and reduce-scatters them to their owners. Working memory
 *       O(B S (D + Dv)) for the gathered K, V (and dK, dV).
 *   MGRT_CP_RING  the K / V blocks travel around the ring r -> r+1 in C
 *       steps; each step attends to one block and merges the partial output
 *       through the row log-sum-exps (online-softmax merge). The next
 *       block's transfer overlaps the current block's attention. The
 *       backward reruns the ring forward for the row statistics, then passes
 *       each block with its dK / dV accumulator around the ring; after C
 *       steps the accumulators are back at their owners. No rank holds more
 *       than two blocks: O(B max_r S_r (D + Dv)) working memory.
 *   MGRT_CP_ULYSSES  q, k, v (and dO) move from rows to all S rows of
 *       H / C heads by one all-to-all each, the single-process kernel runs
 *       on those heads, and the output (dq, dk, dv) moves back. The bias
 *       and mask rows move to heads too ([B|1, H/C, S, S]; an operand
 *       broadcast over the heads goes whole to every rank), dbias back to
 *       rows; the spatial entries all-gather the distance rows, and dtable
 *       holds this rank's heads' columns (zero elsewhere: the caller sums
 *       it over the group, as with the other variants). C must divide the
 *       heads (MGRT_ERR_ARGUMENT otherwise).
 *
 * Collective over the group: every rank calls with the same mode, B, D, Dv,
 * heads, scale and flags. Returns MGRT_OK, MGRT_ERR_ARGUMENT (bad mode, an
 * NCCL group, a bias / mask / dbias key dimension that is neither S nor 1)
 * or a comm error, reported through the comm runtime's error mode (by
 * default the job ends). Kernel contract violations (shapes, innermost
 * strides) abort as in Runtime.h. Working buffers are tracked by
 * mgrt_alloc (mgrt_peak_bytes).
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_RUNTIMECP_H
#define MEGAGRAPH_RUNTIMECP_H

#include "megagraph/Comm.h"
#include "megagraph/Runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the keys reach the queries (`mode` argument): mgrt_cp_mode of
 * megagraph/ModelABI.h, MGRT_CP_ALLGATHER, MGRT_CP_RING or
 * MGRT_CP_ULYSSES. */

/** Forward: this rank's rows of mgrt_attention_f32 on the full sequence. */
int mgrt_cp_attention_f32(mgrt_comm_group *group, int mode,
                          mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                          mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                          mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                          int64_t num_heads, float scale, int64_t flags);

/** Backward: this rank's dq, dk, dv (and dbias rows with
 *  MGRT_ATTENTION_DBIAS) of mgrt_attention_bwd_f32 on the full sequence. */
int mgrt_cp_attention_bwd_f32(mgrt_comm_group *group, int mode,
                              mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                              mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                              mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                              mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                              mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                              int64_t num_heads, float scale, int64_t flags);

/** The same with Graphormer's spatial bias read in place (as
 *  mgrt_attention_spatial_f32 / _bwd_f32 of Runtime.h): `distance` is the
 *  int16 [B|1, S_r, S] distances of this rank's query rows to ALL S keys
 *  (innermost stride 1), `table` the [V,H] table, the same on every rank.
 *  Each key block reads its columns of the distance rows (the block of rank
 *  s: columns sum_{t<s} S_t ..); nothing about them is communicated. The
 *  backward writes dtable [V,H] (overwritten): the table gradient of this
 *  rank's query rows, which the caller sums over the group (the table is a
 *  replicated parameter). No [B,H,S_r,S] bias or gradient exists. */
int mgrt_cp_attention_spatial_f32(mgrt_comm_group *group, int mode,
                                  mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                                  mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                                  mgrt_memref_f32_4 *bias,
                                  mgrt_memref_i8_4 *mask,
                                  mgrt_memref_i16_3 *distance,
                                  mgrt_memref_f32_2 *table, int64_t num_heads,
                                  float scale, int64_t flags);
int mgrt_cp_attention_spatial_bwd_f32(
    mgrt_comm_group *group, int mode, mgrt_memref_f32_3 *dq,
    mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
    mgrt_memref_f32_2 *dtable, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_i16_3 *distance,
    mgrt_memref_f32_2 *table, int64_t num_heads, float scale, int64_t flags);

/** The same, called from compiled code: the cp group is the group over the
 *  axes bit mask `axes` of the grid g0 x g1 x g2 x g3 (as in Comm.h's shard
 *  calls; created on first use and cached). Failures end the job.
 *  `seq` > 0: uneven blocks of a sequence of `seq` rows. Every rank's
 *  operands then hold ceil(seq / C) rows, of which the first
 *  mgrt_cp_block_rows(seq, C, c) (megagraph/ModelABI.h) are its block and
 *  the rest padding: the padding rows are neither read nor keys, and the
 *  results' padding rows (out; dq, dk, dv, dbias) are zeroed. 0: the rows
 *  the operands hold are the block. */
void _mlir_ciface_mgrt_cp_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t num_heads, float scale, int64_t flags, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t mode, int64_t seq);
void _mlir_ciface_mgrt_cp_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes, int64_t mode,
    int64_t seq);
/* The spatial entries from compiled code: the distance rows are padded as q
 * (ceil(seq / C) rows; the padding rows are not read). */
void _mlir_ciface_mgrt_cp_attention_spatial_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table, int64_t num_heads,
    float scale, int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t mode, int64_t seq);
void _mlir_ciface_mgrt_cp_attention_spatial_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table, int64_t num_heads,
    float scale, int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t mode, int64_t seq);

/** The same on CUDA device buffers (--target cuda; libmegagraph_cuda with
 *  the NCCL backend): the keys and values move over the NCCL group of the
 *  axes, the row counts over its MPI group, every block's attention runs on
 *  the fused CUDA kernels. Results as above up to summation order. */
void _mlir_ciface_mgrt_cuda_cp_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t num_heads, float scale, int64_t flags, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t mode, int64_t seq);
void _mlir_ciface_mgrt_cuda_cp_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes, int64_t mode,
    int64_t seq);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_RUNTIMECP_H */
