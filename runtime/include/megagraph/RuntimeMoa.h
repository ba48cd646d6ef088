/*===- megagraph/RuntimeMoa.h - Mixture of accelerators C ABI -------------===*
 *
 * The kernels of gt.spmm_linear and gt.linear_spmm (gt-mixture-accelerators,
 * --plan moa=1,chunks=K): MixGCN's aggregation and transform pipelined over
 * row chunks on two groups of the runtime's threads, in either order. Their
 * names are shared by the compiler (the calls it emits) and the runtime,
 * here.
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_RUNTIMEMOA_H
#define MEGAGRAPH_RUNTIMEMOA_H

#include "megagraph/Runtime.h"

#include <stdint.h>

/* The C symbol is _mlir_ciface_ + this. */
#define MGRT_KERNEL_MOA_SPMM_LINEAR "mgrt_moa_spmm_linear_f32"
#define MGRT_KERNEL_MOA_LINEAR_SPMM "mgrt_moa_linear_spmm_f32"
/* The same under partition parallelism (#gt.halo, runtime/gp/HaloMoa.cpp). */
#define MGRT_KERNEL_HALO_MOA_SPMM_LINEAR "mgrt_halo_moa_spmm_linear_f32"
#define MGRT_KERNEL_HALO_MOA_LINEAR_SPMM "mgrt_halo_moa_linear_spmm_f32"
/* Under the mixture of parallelism (gt.mop_switch, runtime/mop/MopMoa.cpp). */
#define MGRT_KERNEL_MOP_MOA_SPMM_LINEAR "mgrt_mop_moa_spmm_linear_f32"
#define MGRT_KERNEL_MOP_MOA_LINEAR_SPMM "mgrt_mop_moa_linear_spmm_f32"

#ifdef __cplusplus
extern "C" {
#endif

/** agg = scale * (A x) and out = agg @ weight + bias, with A the CSR of
 *  mgrt_spmm_f32 (same contract; row_ptr [N+1], x [M,D]), scale [N,1]
 *  (flags bit 0, else a placeholder), weight [D,F] (any strides) and bias
 *  [F] (flags bit 1, else a placeholder). The N rows are cut into `chunks`
 *  contiguous chunks (1 <= chunks <= N) pipelined over two disjoint groups
 *  of the pool's threads: one aggregates chunk after chunk, the other
 *  multiplies each chunk by the weight as soon as its rows are aggregated,
 *  so chunk i's transform overlaps chunk i+1's aggregation. A thread whose
 *  group has no ready work takes the other group's, so the call finishes
 *  whichever threads of the pool run. agg and out need innermost stride 1.
 *  MEGAGRAPH_MOA_SPMM_THREADS=T fixes the aggregation group's size
 *  (default: by the two parts' estimated work). The result does not depend
 *  on the thread count. */
void _mlir_ciface_mgrt_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *row_ptr,
    mgrt_memref_i64_1 *col_idx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags);

/** The transform first: transformed = scale * (x @ weight + bias) with x
 *  [M,D], weight [D,F] (any strides), bias [F] (flags bit 1, else a
 *  placeholder) and scale [M,1] (flags bit 0, else a placeholder), and
 *  out = A transformed with A the CSR of mgrt_spmm_f32 (row_ptr [N+1],
 *  col_idx < M). The M transformed rows are cut into `chunks` contiguous
 *  chunks (1 <= chunks <= M) computed in order by one group of the pool's
 *  threads; the N output rows are ordered by the chunk of their largest
 *  column (a counting sort, O(E) per call; rows without edges go with
 *  chunk 0), and the other group aggregates the rows of chunk k's group as
 *  soon as chunks 0..k are transformed. Each output row is the SpMM
 *  kernel's arithmetic over its edges in order, so out is bit-identical to
 *  mgrt_spmm_f32 on `transformed` whatever the chunks and threads. A
 *  thread whose group has no ready work takes the other group's, so the
 *  call finishes whichever threads of the pool run. transformed and out
 *  need innermost stride 1. MEGAGRAPH_MOA_SPMM_THREADS=T fixes the
 *  aggregation group's size; MEGAGRAPH_MOA_STATS=1 prints, at the first
 *  call, how many output rows wait for each chunk. */
void _mlir_ciface_mgrt_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *row_ptr, mgrt_memref_i64_1 *col_idx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags);

/** Partition parallelism (gt.spmm_linear / gt.linear_spmm with #gt.halo,
 *  --plan gp=P,moa=1,chunks=K): the two kernels above on this rank's block
 *  of n = N / P rows, over the group on the axes bit mask `axes` of the
 *  grid g0 x g1 x g2 x g3 (as in Comm.h's shard calls). The CSR is the
 *  whole graph's (row_ptr [N+1]); x, scale, agg, transformed and out hold
 *  the block's n rows, as mgrt_halo_spmm_f32's operands do (RuntimeGp.h).
 *  The halo rows the block's rows reference come from their owners in one
 *  all-to-all on the calling thread, the bytes of mgrt_halo_spmm_f32 on
 *  the same operand: x's rows before the spmm_linear pipeline, which then
 *  runs over the n rows in `chunks` chunks (1 <= chunks <= n); the
 *  transformed rows after the linear_spmm pipeline, which transforms the
 *  n rows in `chunks` chunks and aggregates the rows whose neighbours are
 *  all local as their chunks finish; the rows with a halo neighbour are
 *  aggregated after the exchange. Collective over the group. */
void _mlir_ciface_mgrt_halo_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *row_ptr,
    mgrt_memref_i64_1 *col_idx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags, int64_t g0,
    int64_t g1, int64_t g2, int64_t g3, int64_t axes);
void _mlir_ciface_mgrt_halo_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *row_ptr, mgrt_memref_i64_1 *col_idx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes);

/** Mixture of parallelism (gt.spmm_linear with gt.mop_switch, --plan
 *  mop=P,moa=1,chunks=K) over the group on `axes` of the grid g0 x .. x g3
 *  (P ranks, rank r): the aggregation is feature-parallel, x [M, D / P]
 *  this rank's columns, all N rows of A x (row_ptr [N+1]) scaled by scale
 *  [N, 1] (flags bit 0); an all-to-all switches them to agg [N / P, D],
 *  block r's rows with every rank's columns (rank q's at q D / P), and out
 *  = agg @ weight (+ bias) [N / P, F]. Each block's rows are cut into
 *  `chunks` chunks (1 <= chunks <= N / P); chunk c of every block is
 *  aggregated, exchanged with one all-to-all (by the calling thread, the
 *  one that initialised MPI; the chunks' messages add up to the unchunked
 *  all-to-all's bytes) and transformed, in a pipeline: chunk c's exchange
 *  and chunk c - 1's transform run while chunk c + 1 is aggregated (one
 *  parallel region of the pool for the three). Collective over the
 *  group. */
void _mlir_ciface_mgrt_mop_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *row_ptr,
    mgrt_memref_i64_1 *col_idx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags, int64_t g0,
    int64_t g1, int64_t g2, int64_t g3, int64_t axes);

/** The transform first under the mixture of parallelism (gt.linear_spmm
 *  with gt.mop_switch): transformed = scale * (x @ weight + bias) for this
 *  rank's block, x [N / P, D], scale [N / P, 1] (flags bit 0), transformed
 *  [N / P, F] with F a multiple of P; an all-to-all switches it to all N
 *  rows of this rank's F / P columns (rank q's block at rows q N / P), and
 *  out = A (switched) [N, F / P]. A scale of [N, 1] (P > 1) multiplies the
 *  switched rows instead (transformed is then unscaled). Each block's rows
 *  are cut into `chunks` chunks (1 <= chunks <= N / P); chunk c of every
 *  block is transformed, exchanged (by the calling thread; the messages
 *  add up to the unchunked all-to-all's bytes), and the output rows whose
 *  neighbours all lie in chunks 0..c of their blocks are aggregated, in a
 *  pipeline: chunk c's exchange and the aggregation of the rows ready
 *  after chunk c - 1 run while chunk c + 1 is transformed. Each output
 *  row is the SpMM kernel's loop over its edges. Collective over the
 *  group. */
void _mlir_ciface_mgrt_mop_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *row_ptr, mgrt_memref_i64_1 *col_idx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_RUNTIMEMOA_H */
