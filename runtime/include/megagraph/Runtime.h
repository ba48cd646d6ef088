/*===- megagraph/Runtime.h - MegaGraph CPU runtime C ABI ------------------===*
 *
 * The C ABI of libmegagraph_rt, the library that executables produced by
 * megagraph-compile link against. Plain C (usable from C and C++), no
 * exceptions cross it, every fallible call returns an mgrt_status.
 *
 *   memory   tracked 64-byte aligned allocation (current / peak bytes), and
 *            the allocation hooks MLIR's finalize-memref-to-llvm
 *            {use-generic-functions=true} emits calls to.
 *   kernels  float32 CPU kernels called through MLIR's C interface
 *            (`_mlir_ciface_*`, arguments are pointers to memref descriptors).
 *            Outputs are preallocated by the caller. A kernel whose operands
 *            break its contract (shapes, innermost stride) is a compiler bug:
 *            it prints the reason to stderr and aborts.
 *   tensors  a host tensor and .npy (format v1/v2/v3) read / write.
 *   driver   mgrt_main / mgrt_infer_main, the command line of a compiled
 *            model (libmegagraph_driver).
 *
 * Link line for an inference model: -lmegagraph_driver -lmegagraph_rt
 * -lopenblas -lpthread -lstdc++ -lm; a training model adds METIS, zlib and
 * MPI (or the CMake targets `megagraph_driver`, `megagraph_rt`).
 *
 * Threads: kernels run on one process-wide pool of MEGAGRAPH_NUM_THREADS
 * threads (default: hardware concurrency); OpenBLAS itself is set to one
 * thread, the pool owns all parallelism. Kernels may be called from any
 * thread; concurrent calls are serialized.
 *
 * Environment: MEGAGRAPH_NUM_THREADS (above); MEGAGRAPH_GEMM=blas|native
 * forces the matmul backend (default: OpenBLAS, or the runtime's own GEMM
 * when OpenBLAS runs kernels older than the CPU, as 0.3.21 does on Sapphire
 * Rapids unless OPENBLAS_CORETYPE is set).
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_RUNTIME_H
#define MEGAGRAPH_RUNTIME_H

#include "megagraph/ModelABI.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Status and version ------------------------------------------------===*/

/** Return codes of the fallible calls; 0 is success. */
typedef enum mgrt_status {
  MGRT_OK = 0,
  MGRT_ERR_IO = 1,          /**< file cannot be opened, read or written */
  MGRT_ERR_FORMAT = 2,      /**< malformed or truncated file */
  MGRT_ERR_UNSUPPORTED = 3, /**< valid file, unsupported feature (dtype...) */
  MGRT_ERR_ARGUMENT = 4,    /**< bad argument (rank > 8, null pointer...) */
  MGRT_ERR_NOMEM = 5        /**< allocation failed */
} mgrt_status;

/** Version of the runtime, "MAJOR.MINOR.PATCH". */
const char *mgrt_version(void);

/*===-- Memory ------------------------------------------------------------===*/

/** Tracked allocation, 64-byte aligned; NULL on failure. `bytes` may be 0. */
void *mgrt_alloc(size_t bytes);
/** Frees a block from any allocator of this section; NULL is a no-op. */
void mgrt_free(void *p);
/** Bytes currently allocated through this section (requested sizes). */
size_t mgrt_current_bytes(void);
/** Highest mgrt_current_bytes() since start or the last mgrt_reset_peak. */
size_t mgrt_peak_bytes(void);
/** Sets the peak to the current byte count. */
void mgrt_reset_peak(void);
/** Bytes of freed large blocks the allocator keeps mapped for reuse (never
 *  more than the high-water mark of large blocks in use; not counted by
 *  mgrt_current_bytes). MEGAGRAPH_ALLOC_CACHE=0 turns the cache off. */
size_t mgrt_cached_bytes(void);
/** Returns the cached blocks to the system. */
void mgrt_release_cached(void);
/** Per-rank cap of the tracked bytes (0: none, the default; the environment
 *  variable MEGAGRAPH_DEVICE_MEMORY sets it when the runtime is loaded). An
 *  allocation that would exceed it prints "megagraph: out of device memory:
 *  requested X, in use Y, cap Z" and exits with MGRT_EXIT_OUT_OF_MEMORY. */
void mgrt_set_memory_cap(size_t bytes);
size_t mgrt_memory_cap(void);
/** A pipelined program's storage of mutable global `host` (`bytes` long):
 *  the program's functions reach each of their mutable globals through this
 *  call (gt-stage-globals), so a rank materialises only the globals its own
 *  stage's entries use (its parameters, gradients' shards and moments), on
 *  first use, as a copy of the global's initial bytes; the static global
 *  keeps the initial values and is otherwise not touched. The same `host`
 *  always gives the same storage (64-byte aligned, not counted by
 *  mgrt_current_bytes). Aborts with one line when out of memory. */
void *mgrt_stage_global(const void *host, int64_t bytes);
/** The storage mgrt_stage_global gave `host`, or NULL when this process has
 *  not materialised it. */
void *mgrt_stage_global_find(const void *host);
/** Bytes of the globals mgrt_stage_global has materialised. */
size_t mgrt_stage_global_bytes(void);
/** Exit code of a process stopped by the memory cap. */
#define MGRT_EXIT_OUT_OF_MEMORY 3
/** Parses a byte count: "1073741824", "512MiB", "2GiB", "1.5G" (K/M/G/T and
 *  KiB..TiB: powers of 1024; KB/MB/GB/TB: powers of 1000). MGRT_OK or
 *  MGRT_ERR_ARGUMENT. */
int mgrt_parse_bytes(const char *text, size_t *bytes);

/* Hooks of MLIR's finalize-memref-to-llvm{use-generic-functions=true}; both
 * allocators are tracked and their blocks may be released by either free. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/*===-- Memref descriptors (MLIR C interface layout) ----------------------===*/

/** Descriptor of a rank-N memref of T: element (i0..iN-1) lives at
 *  aligned[offset + sum_k ik * strides[k]]. */
#define MGRT_MEMREF(T, N)                                                      \
  struct {                                                                     \
    T *allocated;                                                              \
    T *aligned;                                                                \
    int64_t offset;                                                            \
    int64_t sizes[N];                                                          \
    int64_t strides[N];                                                        \
  }

typedef MGRT_MEMREF(float, 1) mgrt_memref_f32_1;
typedef MGRT_MEMREF(float, 2) mgrt_memref_f32_2;
typedef MGRT_MEMREF(float, 3) mgrt_memref_f32_3;
typedef MGRT_MEMREF(float, 4) mgrt_memref_f32_4;
typedef MGRT_MEMREF(int8_t, 4) mgrt_memref_i8_4;
typedef MGRT_MEMREF(int16_t, 3) mgrt_memref_i16_3;
typedef MGRT_MEMREF(int64_t, 1) mgrt_memref_i64_1;

/*===-- Kernels (float32) -------------------------------------------------===*/

/* The bits of the attention kernels' `flags` (MGRT_ATTENTION_BIAS, _MASK,
 * _DBIAS, _LSE) are in megagraph/ModelABI.h: the lowering sets them. */

/** Multi-head attention, heads packed in the hidden dimension:
 *  q [B,Sq,D], k [B,Sk,D], v [B,Sk,Dv], out [B,Sq,Dv]; head h reads columns
 *  [h*D/H, (h+1)*D/H) of q and k and [h*Dv/H, (h+1)*Dv/H) of v and out.
 *    out[b,i,h] = sum_j softmax_j(scale * q_h[i].k_h[j] + bias[b,h,i,j]) v_h[j]
 *  over the kept keys j. bias [Bb,Hb,Sq,Sk] and the uint8 mask [Mb,Mh,Sq,Sk]
 *  (nonzero = keep) broadcast every dimension of size 1; a query row that
 *  keeps no key yields zeros. Either pointer may be NULL when its flag is
 *  clear. Blockwise online softmax: no [Sq,Sk] score matrix is allocated;
 *  working memory is a packed copy of k and v plus O(block) per thread.
 *  Innermost strides of q, k, v, out must be 1. */
void _mlir_ciface_mgrt_attention_f32(mgrt_memref_f32_3 *out,
                                     mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                                     mgrt_memref_f32_3 *v,
                                     mgrt_memref_f32_4 *bias,
                                     mgrt_memref_i8_4 *mask, int64_t num_heads,
                                     float scale, int64_t flags);

/** Backward of mgrt_attention_f32, same operands, layout, heads, broadcast
 *  and flags (MGRT_ATTENTION_BIAS, MGRT_ATTENTION_MASK), given dout
 *  [B,Sq,Dv] = dLoss/dout. Writes (overwrites) dq [B,Sq,D], dk [B,Sk,D],
 *  dv [B,Sk,Dv] and, when MGRT_ATTENTION_DBIAS is set, dbias: with
 *  P = softmax(scale q_h k_h^T + bias, masked) and dS = P * (dP - rowsum(P *
 *  dP)), dP = dout_h v_h^T,
 *    dq_h = scale dS k_h,  dk_h = scale dS^T q_h,  dv_h = P^T dout_h,
 *    dbias = dS summed over the dimensions where dbias has size 1.
 *  dbias has the bias's own shape [Bb,Hb,Sq or 1,Sk or 1] (any strides; it
 *  may be NULL when its flag is clear; it must not alias an input). Masked
 *  pairs and query rows that keep no key contribute nothing. The forward
 *  output is not needed: flash-attention-2 style, the scores are recomputed
 *  block by block (a statistics pass for the row log-sum-exp and
 *  rowsum(P * dP), then one pass per key block for dk, dv and one per query
 *  block for dq, dbias); no [Sq,Sk] matrix is allocated, working memory is
 *  a padded copy of q, k, v, dout and their transposes plus O(block) per
 *  thread. Innermost strides of q, k, v, dout, dq, dk, dv must be 1. */
void _mlir_ciface_mgrt_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags);

/** mgrt_attention_f32 that also writes lse [B,H,Sq] (contiguous): the
 *  natural log of sum_j exp(scale q_h[i].k_h[j] + bias[b,h,i,j]) over the
 *  kept keys of each query row, -inf for a row that keeps none. */
void _mlir_ciface_mgrt_attention_lse_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags);

/** mgrt_attention_bwd_f32 given the forward's out [B,Sq,Dv] and lse
 *  [B,H,Sq] (as mgrt_attention_lse_f32 writes them): the row statistics
 *  are lse and rowsum(dout_h * out_h) instead of a pass over the scores, so
 *  the scores are computed once, not twice. The environment variable
 *  MEGAGRAPH_ATTENTION_BWD=recompute ignores out and lse (A/B runs). */
void _mlir_ciface_mgrt_attention_bwd_lse_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse,
    int64_t num_heads, float scale, int64_t flags);

/** mgrt_attention_f32 with Graphormer's spatial encoding read in place:
 *  score (b,h,i,j) also gets table[clamp(distance[b,i,j], 0, V-1), h]
 *  (added to bias[b,h,i,j] when MGRT_ATTENTION_BIAS is set too), for the
 *  int16 distance [Db,Sq,Sk] (Db = B or 1, broadcast; innermost stride 1)
 *  and table [V,H]. No [B,H,Sq,Sk] bias exists. With MGRT_ATTENTION_LSE it
 *  also writes lse as mgrt_attention_lse_f32 does (else lse may be NULL). */
void _mlir_ciface_mgrt_attention_spatial_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_i16_3 *distance,
    mgrt_memref_f32_2 *table, int64_t num_heads, float scale, int64_t flags);

/** Backward of mgrt_attention_spatial_f32: dq, dk, dv and (with
 *  MGRT_ATTENTION_DBIAS) dbias as mgrt_attention_bwd_f32 computes them,
 *  and dtable [V,H] (overwritten), dtable[v,h] = sum of dS[b,h,i,j] over
 *  the pairs with clamp(distance[b,i,j], 0, V-1) = v: accumulated per task
 *  while the scores are recomputed (double partial tables, summed in task
 *  order), never a [B,H,Sq,Sk] gradient. With MGRT_ATTENTION_LSE, out and
 *  lse are the forward's, as for mgrt_attention_bwd_lse_f32. */
void _mlir_ciface_mgrt_attention_spatial_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table,
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, int64_t num_heads,
    float scale, int64_t flags);

/** Batched matmul out[g] = a[g] @ b[g]: a [G,M,K], b [G,K,N] or [1,K,N]
 *  (shared), out [G,M,N]. Any strides for a and b (transposed views are
 *  read as such, other layouts copied); out needs innermost stride 1. */
void _mlir_ciface_mgrt_matmul_f32(mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *a,
                                  mgrt_memref_f32_3 *b);

/** BF16 versions (--precision bf16): the operands and contracts of the
 *  float32 calls above, with the GEMM operands (a, b) and the attention
 *  operands (q, k, v, and dout in the backward) rounded to bfloat16 (round
 *  to nearest even) before the kernel runs; products of bfloat16 values
 *  are exact in float32, so the float32 kernel then computes exactly
 *  "bfloat16 multiply, float32 accumulate", the tensor-core contract.
 *  Biases, masks, softmax statistics, outputs and gradients stay float32.
 *  The rounding uses AVX-512 BF16 (VCVTNE2PS2BF16) where the CPU has it. */
void _mlir_ciface_mgrt_matmul_bf16_f32(mgrt_memref_f32_3 *out,
                                       mgrt_memref_f32_3 *a,
                                       mgrt_memref_f32_3 *b);
void _mlir_ciface_mgrt_attention_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t num_heads, float scale, int64_t flags);
void _mlir_ciface_mgrt_attention_bwd_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags);
void _mlir_ciface_mgrt_attention_lse_bf16_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t num_heads, float scale, int64_t flags);
void _mlir_ciface_mgrt_attention_bwd_lse_bf16_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *lse,
    int64_t num_heads, float scale, int64_t flags);

/** x rounded to the nearest bfloat16 (ties to even; NaN stays NaN), as a
 *  float32: what the BF16 kernels do to their operands. */
float mgrt_round_bf16(float x);

/** Layer normalization of the rows of x [R,C] (biased variance):
 *  out = (x - mean) / sqrt(var + epsilon) * gamma [+ beta]; gamma, beta [C];
 *  beta is read only when has_beta != 0 (it may be NULL otherwise). */
void _mlir_ciface_mgrt_layer_norm_f32(mgrt_memref_f32_2 *out,
                                      mgrt_memref_f32_2 *x,
                                      mgrt_memref_f32_1 *gamma,
                                      mgrt_memref_f32_1 *beta, float epsilon,
                                      int64_t has_beta);

/** Sparse (CSR) times dense: out[i] = sum_e values[e] * x[col_idx[e]] over
 *  the edges e in [row_ptr[i], row_ptr[i+1]); row_ptr [N+1], col_idx and
 *  values [E], x [M,D], out [N,D]. A row without edges yields zeros and
 *  duplicate edges add up. Requires 0 <= row_ptr[0] <= ... <= row_ptr[N] <=
 *  E (so a row block of a larger graph may be passed with the whole col_idx)
 *  and 0 <= col_idx[e] < M for every edge read; otherwise the kernel
 *  aborts. Any strides for the rank-1 operands; innermost strides of x and
 *  out must be 1. Rows are spread over the pool. */
void _mlir_ciface_mgrt_spmm_f32(mgrt_memref_f32_2 *out,
                                mgrt_memref_i64_1 *row_ptr,
                                mgrt_memref_i64_1 *col_idx,
                                mgrt_memref_f32_1 *values,
                                mgrt_memref_f32_2 *x);

/** Transposes the sparsity pattern of an N x M matrix: CSR row_ptr [N+1]
 *  and col_idx [E], or, when row_ptr has no entries, the COO pattern where
 *  entry e is its own row e (N = E). Writes the M x N pattern: row_ptr_t
 *  [M+1], col_idx_t [E] (the source row of each entry) and perm [E] (its
 *  position in col_idx); entries of a row keep their input order. Aborts
 *  unless 0 <= col_idx[e] < M and row_ptr is a CSR row pointer of E. */
void _mlir_ciface_mgrt_csr_transpose(mgrt_memref_i64_1 *row_ptr_t,
                                     mgrt_memref_i64_1 *col_idx_t,
                                     mgrt_memref_i64_1 *perm,
                                     mgrt_memref_i64_1 *row_ptr,
                                     mgrt_memref_i64_1 *col_idx);

/** Bits of the `flags` argument of the sparse attention kernel. */
enum {
  MGRT_SPARSE_ATTENTION_EDGE_BIAS = 1 /**< `edge_bias` is present */
};

/** Multi-head attention over the edges of a CSR graph, heads packed in the
 *  hidden dimension as in mgrt_attention_f32: q [N,D], k [M,D], v [M,Dv],
 *  out [N,Dv], row_ptr [N+1], col_idx [E], edge_bias [E,H]. For row i and
 *  head h, over the edges e in [row_ptr[i], row_ptr[i+1]) with j = col_idx[e]:
 *    s_e = scale * q_h[i].k_h[j] (+ edge_bias[e,h])
 *    out_h[i] = sum_e softmax_e(s_e) v_h[j]
 *  Duplicate edges count once each; a row without edges (or whose scores
 *  are all -inf) yields zeros. Online softmax per row and head, a chunk of
 *  one row's scores per thread at most. edge_bias may be NULL when its flag
 *  is clear. Index contract as mgrt_spmm_f32 (aborts otherwise); any
 *  strides for row_ptr, col_idx, edge_bias; innermost strides of q, k, v,
 *  out must be 1. Rows are spread over the pool. */
void _mlir_ciface_mgrt_sparse_attention_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *q, mgrt_memref_f32_2 *k,
    mgrt_memref_f32_2 *v, mgrt_memref_i64_1 *row_ptr,
    mgrt_memref_i64_1 *col_idx, mgrt_memref_f32_2 *edge_bias, int64_t num_heads,
    float scale, int64_t flags);

/*===-- Parallel loops of the generated code ------------------------------===*/

/** One range of a parallel loop nest outlined by gt-parallel-to-runtime:
 *  runs iterations [begin, end) with the captured values `ctx` points to. */
typedef void (*mgrt_loop_body)(void *ctx, int64_t begin, int64_t end);

/** Runs body(ctx, begin, end) over disjoint ranges that cover [0, n), each
 *  of at least `grain` iterations (but the last), on the kernels' pool; the
 *  calling thread works too and the call returns when all ranges are done.
 *  The iterations must be independent: which thread runs a range does not
 *  change what it computes. Called from inside a pool task, it runs the
 *  whole range on the caller. (MGRT_PARALLEL_FOR in ModelABI.h) */
void mgrt_parallel_for(mgrt_loop_body body, void *ctx, int64_t n,
                       int64_t grain);

/*===-- Tensors and .npy --------------------------------------------------===*/

/* mgrt_dtype and MGRT_MAX_RANK: megagraph/ModelABI.h. */

/** A dense row-major host tensor owning `data` (a tracked allocation). */
typedef struct mgrt_tensor {
  int dtype; /**< an mgrt_dtype */
  int rank;  /**< 0..MGRT_MAX_RANK */
  int64_t shape[MGRT_MAX_RANK];
  void *data;
} mgrt_tensor;

/** Bytes per element of `dtype`, 0 for an unknown code. */
size_t mgrt_dtype_size(int dtype);
/** Short name of `dtype` ("f32", "i64", "bool"...), "?" for unknown codes. */
const char *mgrt_dtype_name(int dtype);
/** Number of elements of `t` (1 for rank 0). */
int64_t mgrt_tensor_numel(const mgrt_tensor *t);
/** Fills `t` and allocates zeroed storage for it. */
mgrt_status mgrt_tensor_alloc(mgrt_tensor *t, int dtype, int rank,
                              const int64_t *shape);
/** Releases the storage of `t` and zeroes it; NULL is a no-op. */
void mgrt_tensor_free(mgrt_tensor *t);

/** Reads a little-endian C-order .npy file into `out` (allocated here; free
 *  with mgrt_tensor_free). On failure `out` is left empty and a message is
 *  written to `err` (if errlen > 0). */
int mgrt_npy_read(const char *path, mgrt_tensor *out, char *err, size_t errlen);
/** Writes `t` as a .npy file (format 1.0, or 2.0 for very long headers). */
int mgrt_npy_write(const char *path, const mgrt_tensor *t, char *err,
                   size_t errlen);

/*===-- Driver ------------------------------------------------------------===*/

/* The model's tables (mgrt_tensor_info, mgrt_entry_info, mgrt_model_info)
 * are part of the compiler-runtime contract: megagraph/ModelABI.h. */

/** The command line of a compiled model:
 *    PROG --mode infer --input NAME=FILE.npy ... --output-dir DIR
 *         [--repeat N] [--quiet]
 *    PROG --mode train --data SPEC --steps K [--batch B] [--seq-len S]
 *         [--log-json FILE] [--seed N] [--max-distance D]
 *         [--train-fraction F] [--quiet]
 *    PROG --help
 *  Training needs a model whose entry is a training step: inputs of the
 *  roles of megagraph/ModelABI.h (node features, degrees, spd, adj_norm,
 *  labels, label_mask...; B and S from their static [B, S, ...] shapes),
 *  outputs of the roles loss and correct (f32, one element each); SPEC is a
 *  generator "synthetic:sbm,..." (see mgrt_sbm_generate). Returns the
 *  process exit code: 0 ok, 1 usage / input / output / data error, 2 train
 *  on a model without a training step (no output `loss`). In
 *  libmegagraph_driver with the training driver, so it links METIS, zlib
 *  and MPI. */
int mgrt_main(int argc, char **argv, const mgrt_model_info *model);

/** mgrt_main without the training driver, what models compiled without
 *  --train call: the same command line, and --mode train exits with 2 (no
 *  training step). Links neither METIS, zlib nor MPI. */
int mgrt_infer_main(int argc, char **argv, const mgrt_model_info *model);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_RUNTIME_H */
