/*===- RuntimeCuda.h - C interface of the CUDA runtime ------------*- C -*-===*
 *
 * The GPU half of the MegaGraph runtime (libmegagraph_cuda, built when
 * MEGAGRAPH_ENABLE_CUDA is on): device memory with peak tracking, and the
 * kernels a compiled training step needs on an NVIDIA GPU. Every pointer
 * named `d_*` or documented as "device" is device memory from
 * mgrt_cuda_alloc (or any cudaMalloc); nothing here uses managed memory.
 *
 * Element types: MGRT_CUDA_F32 (the default, bit-for-bit the CPU contract
 * up to summation order) and MGRT_CUDA_BF16 (inputs and outputs in bfloat16,
 * every accumulation in float32). Attention biases, log-sum-exp statistics
 * and bias gradients are always float32.
 *
 * Contract violations (shapes, strides, unsupported head sizes) abort with
 * "megagraph runtime: KERNEL: MESSAGE", as the CPU kernels do; CUDA errors
 * abort with the CUDA error string. Kernels are asynchronous on `stream`
 * (NULL = the default stream).
 *===----------------------------------------------------------------------===*/

#ifndef MEGAGRAPH_RUNTIME_CUDA_H
#define MEGAGRAPH_RUNTIME_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mgrt_cuda_dtype {
  MGRT_CUDA_F32 = 0,
  MGRT_CUDA_BF16 = 1
} mgrt_cuda_dtype;

/*===-- Devices and memory ------------------------------------------------===*/

/** Number of usable CUDA devices; 0 when there is no driver or no GPU. */
int mgrt_cuda_device_count(void);
/** Name of device 0 (e.g. "NVIDIA H200"), or "none". */
const char *mgrt_cuda_device_name(void);
/** cudaMalloc with accounting; NULL (and a message on stderr) on failure. */
void *mgrt_cuda_alloc(size_t bytes);
/** Frees memory from mgrt_cuda_alloc; NULL is ignored. */
void mgrt_cuda_free(void *d_ptr);
/** Device bytes currently allocated through mgrt_cuda_alloc. */
size_t mgrt_cuda_current_bytes(void);
/** Highest mgrt_cuda_current_bytes() since start or mgrt_cuda_reset_peak. */
size_t mgrt_cuda_peak_bytes(void);
void mgrt_cuda_reset_peak(void);
/** Host <-> device copies (synchronous) and a device synchronize. */
void mgrt_cuda_copy_to_device(void *d_dst, const void *src, size_t bytes);
void mgrt_cuda_copy_to_host(void *dst, const void *d_src, size_t bytes);
void mgrt_cuda_synchronize(void);
/** float32 <-> bfloat16 (round to nearest even) on the device. */
void mgrt_cuda_f32_to_bf16(void *d_dst, const float *d_src, int64_t n,
                           void *stream);
void mgrt_cuda_bf16_to_f32(float *d_dst, const void *d_src, int64_t n,
                           void *stream);

/*===-- Attention ---------------------------------------------------------===*/

/** Operands of the fused attention, heads packed in the hidden dimension as
 *  in mgrt_attention_f32: q [B,Sq,H*dh], k [B,Sk,H*dh], v [B,Sk,H*dvh], out
 *  [B,Sq,H*dvh]; head h reads columns [h*dh, (h+1)*dh). The *_stride pairs
 *  are (batch, row) strides in elements; columns are contiguous.
 *    out[b,i,h] = sum_j softmax_j(scale q_h[i].k_h[j] + bias[b,h,i,j]) v_h[j]
 *  over the keys j with mask[b,h,i,j] != 0. bias (float32) and mask
 *  (uint8) are seen as [B,H,Sq,Sk] through element strides; a zero stride
 *  broadcasts. A query row that keeps no key yields zeros. Supported head
 *  sizes: dh, dvh <= 128. */
typedef struct mgrt_cuda_attention {
  int dtype; /**< mgrt_cuda_dtype of q, k, v, out (and of the gradients) */
  int64_t B, Sq, Sk, H, dh, dvh;
  float scale;
  const void *q, *k, *v;
  int64_t q_stride[2], k_stride[2], v_stride[2];
  const float *bias; /**< NULL: no bias */
  int64_t bias_stride[4];
  const uint8_t *mask; /**< NULL: keep every key */
  int64_t mask_stride[4];
  void *out;
  int64_t out_stride[2];
  float *lse; /**< [B,H,Sq] row log-sum-exp (written by the forward when not
                   NULL, read by the backward when not NULL); +inf for a row
                   that keeps no key */
} mgrt_cuda_attention;

/** Gradients of mgrt_cuda_attention: dout has out's strides, dq/dk/dv have
 *  q/k/v's strides (all overwritten). dbias (float32, may be NULL) is
 *  [B,H,Sq,Sk] seen through its strides; where a stride is zero the
 *  gradient is summed over that dimension (the bias was broadcast). */
typedef struct mgrt_cuda_attention_grad {
  const void *dout;
  void *dq, *dk, *dv;
  float *dbias;
  int64_t dbias_stride[4];
} mgrt_cuda_attention_grad;

/** Fused blockwise-online-softmax forward: no [Sq,Sk] matrix is stored.
 *  BF16 with dh = dvh = 64 runs on tensor cores (WMMA, here and in the
 *  backward); other cases run
 *  the general CUDA-core kernel. */
void mgrt_cuda_attention_forward(const mgrt_cuda_attention *a, void *stream);
/** Flash-attention-2 backward: recomputes the scores block by block from
 *  q, k and a->lse (when a->lse is NULL the forward is run first into a
 *  temporary), and needs a->out for rowsum(dout * out). */
void mgrt_cuda_attention_backward(const mgrt_cuda_attention *a,
                                  const mgrt_cuda_attention_grad *g,
                                  void *stream);

/*===-- Dense kernels -----------------------------------------------------===*/

/** GEMM precision of mgrt_cuda_matmul: FP32 (default), TF32 tensor cores
 *  on float32 data, BF16 data with float32 accumulation, or BF16 operands
 *  with float32 accumulation and a float32 result (mixed precision). */
typedef enum mgrt_cuda_math {
  MGRT_CUDA_MATH_FP32 = 0,
  MGRT_CUDA_MATH_TF32 = 1,
  MGRT_CUDA_MATH_BF16 = 2,
  MGRT_CUDA_MATH_BF16_F32 = 3
} mgrt_cuda_math;

/** Row-major batched GEMM through cuBLAS: out[g] = op(a[g]) @ op(b[g]) with
 *  a [G,M,K] (or [G,K,M] when trans_a), b [G,K,N] (or [G,N,K] when
 *  trans_b), out [G,M,N], all contiguous; b_batch_stride 0 shares b. Data
 *  is float32 for FP32/TF32, bfloat16 for BF16 (out too); BF16_F32 reads
 *  bfloat16 a and b and writes float32 out. */
void mgrt_cuda_matmul(void *d_out, const void *d_a, const void *d_b, int64_t G,
                      int64_t M, int64_t N, int64_t K, int trans_a, int trans_b,
                      int64_t b_batch_stride, int math, void *stream);

/** Layer norm over rows of x [R,C] (float32), biased variance:
 *  out = (x - mean) * rstd * gamma + beta (beta may be NULL); mean and rstd
 *  [R] are written when not NULL (the backward reads them). */
void mgrt_cuda_layer_norm_forward(float *d_out, float *d_mean, float *d_rstd,
                                  const float *d_x, const float *d_gamma,
                                  const float *d_beta, int64_t R, int64_t C,
                                  float epsilon, void *stream);
/** dx [R,C] (overwritten), dgamma and dbeta [C] (overwritten; dbeta may be
 *  NULL) from dout, x, gamma and the forward's mean and rstd. */
void mgrt_cuda_layer_norm_backward(float *d_dx, float *d_dgamma, float *d_dbeta,
                                   const float *d_dout, const float *d_x,
                                   const float *d_gamma, const float *d_mean,
                                   const float *d_rstd, int64_t R, int64_t C,
                                   void *stream);

/** out[i,:] = table[index[i],:] for i < N (table [V,C], float32); an
 *  index outside [0,V) yields a zero row. */
void mgrt_cuda_embedding_forward(float *d_out, const float *d_table,
                                 const int64_t *d_index, int64_t N, int64_t V,
                                 int64_t C, void *stream);
/** dtable[index[i],:] += dout[i,:] (float32 atomics; dtable is accumulated
 *  into, not cleared). Indices outside [0,V) are skipped. */
void mgrt_cuda_embedding_backward(float *d_dtable, const float *d_dout,
                                  const int64_t *d_index, int64_t N, int64_t V,
                                  int64_t C, void *stream);

/** Row softmax of x [R,C] (float32), in place allowed. */
void mgrt_cuda_softmax(float *d_out, const float *d_x, int64_t R, int64_t C,
                       void *stream);

/*===-- Compiled programs (megagraph-compile --target cuda) ---------------===*/

/** Device buffers of a compiled step (gt-gpu-device-memory routes the
 *  step's allocations here): mgrt_cuda_alloc, ending the program with a
 *  message when device memory runs out. */
void *mgrt_cuda_memref_alloc(size_t bytes);
void *mgrt_cuda_memref_aligned_alloc(size_t alignment, size_t bytes);
void mgrt_cuda_memref_free(void *d_ptr);
/** The device copy of a global of the program (parameters, optimizer
 *  state, constants): allocated and copied from `host` on first use, then
 *  the same pointer for the life of the process. */
void *mgrt_cuda_global(const void *host, int64_t bytes);
/** The element of a rank-0 device buffer, read by the host (a flag a
 *  compiled step branches on; gt-gpu-offload turns such host loads into
 *  these calls, MGRT_CUDA_LOAD_PREFIX of megagraph/ModelABI.h): a
 *  synchronous device-to-host copy after the work queued so far. `m` is
 *  the buffer's memref descriptor. */
typedef struct mgrt_cuda_scalar_ref {
  void *allocated, *aligned;
  int64_t offset;
} mgrt_cuda_scalar_ref;
int32_t _mlir_ciface_mgrt_cuda_load_i32(const mgrt_cuda_scalar_ref *m);
int64_t _mlir_ciface_mgrt_cuda_load_i64(const mgrt_cuda_scalar_ref *m);
float _mlir_ciface_mgrt_cuda_load_f32(const mgrt_cuda_scalar_ref *m);
double _mlir_ciface_mgrt_cuda_load_f64(const mgrt_cuda_scalar_ref *m);

/** Runs a compiled entry point on the GPU: copies the driver's host inputs
 *  (descriptors as in mgrt_model_info::entry, row-major) to device buffers
 *  kept across calls, calls `fn` with device descriptors, and copies the
 *  outputs back. Without a usable GPU it prints why and exits with 1.
 *  MEGAGRAPH_CUDA_SYNC=1 synchronizes and checks after every kernel. */
void mgrt_cuda_run_entry(void (*fn)(void **), void **descriptors,
                         int num_inputs, const struct mgrt_tensor_info *inputs,
                         int num_outputs,
                         const struct mgrt_tensor_info *outputs);

#ifdef __cplusplus
}
#endif

#endif /* MEGAGRAPH_RUNTIME_CUDA_H */
