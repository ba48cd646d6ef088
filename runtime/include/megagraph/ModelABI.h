/*===- megagraph/ModelABI.h - The compiler-runtime contract ---------------===*
 *
 * Everything megagraph-compile and the runtime must spell the same way,
 * declared once and included by both (the compiler through a copy in the
 * build's include directory, include/megagraph/CMakeLists.txt): the names
 * the training passes give their inputs and outputs, the role of each
 * tensor in a compiled model's tables, the names of the pipeline stage
 * entries, the plan a program was compiled for, the tables a compiled
 * model hands the driver, the runtime kernels the lowering calls and the
 * reduction codes of the collectives. Plain C, no other header of the
 * runtime, so the compiler can include it without linking anything.
 *
 * The compiler writes a role into every mgrt_tensor_info of the model's
 * tables (mgrt_role_of_name below, applied to the names the passes gave);
 * the driver binds tensors by role and index. A table written by hand (tests,
 * C models) may leave the role 0 (MGRT_ROLE_UNSPECIFIED): the driver then
 * takes the role the name has by these conventions.
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_MODELABI_H
#define MEGAGRAPH_MODELABI_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Tensor roles
 * -------------------------------------------------------===*/

/** What a tensor of a model's (or a stage entry's) table is to the driver. */
typedef enum mgrt_tensor_role {
  MGRT_ROLE_UNSPECIFIED = 0, /**< not written: take the name's role */
  MGRT_ROLE_OTHER = 1,       /**< no convention (inference I/O, ignored) */
  /* Graph inputs the training driver fills from the data set. */
  MGRT_ROLE_NODE_FEATURES = 2, /**< x | features | node_feat [B,S,F] */
  MGRT_ROLE_IN_DEGREE = 3,     /**< in_degree [B,S] */
  MGRT_ROLE_OUT_DEGREE = 4,    /**< out_degree | degree [B,S] */
  MGRT_ROLE_SPD = 5,           /**< spd [B,S,S] shortest-path distances */
  MGRT_ROLE_ADJ_NORM = 6,      /**< adj_norm [B,S,S] normalized adjacency */
  /* Inputs gt-autodiff adds. */
  MGRT_ROLE_LABELS = 7,     /**< labels [B,S] */
  MGRT_ROLE_LABEL_MASK = 8, /**< label_mask [B,S]: the counted nodes */
  MGRT_ROLE_EVAL_MASK = 9,  /**< eval_mask [B,S]: the test nodes */
  /* Outputs of a training step. */
  MGRT_ROLE_LOSS = 10,         /**< loss, one f32 */
  MGRT_ROLE_CORRECT = 11,      /**< correct, one f32 (metric) */
  MGRT_ROLE_EVAL_CORRECT = 12, /**< eval_correct, one f32 (metric) */
  /* Pipeline stage entries (gt-pipeline-split / gt-pipeline-train). */
  MGRT_ROLE_GRADIENT = 13,        /**< grad:<parameter> */
  MGRT_ROLE_ACTIVATION = 14,      /**< act<index>: a stage boundary value */
  MGRT_ROLE_ACTIVATION_GRAD = 15, /**< dact<index>: its cotangent */
  MGRT_ROLE_SAVED = 16,           /**< saved<index>: kept for the backward */
  /* A full-graph graph input the training driver fills. */
  MGRT_ROLE_EDGE_INDEX = 17, /**< edge_index [2, E]: sources, targets */
  /** loss_seed, one f32: the gradient of the loss the backward starts from
   *  (a pipeline's last stage: the micro-batch's share n_m / N of the
   *  global labelled count, so that context-parallel ranks, which sum each
   *  other's output gradients, are on one scale). */
  MGRT_ROLE_LOSS_SEED = 18
} mgrt_tensor_role;

/* The names behind the roles. */
#define MGRT_NAME_LABELS "labels"
#define MGRT_NAME_LABEL_MASK "label_mask"
#define MGRT_NAME_EVAL_MASK "eval_mask"
#define MGRT_NAME_LOSS "loss"
#define MGRT_NAME_CORRECT "correct"
#define MGRT_NAME_EVAL_CORRECT "eval_correct"
#define MGRT_NAME_LOSS_SEED "loss_seed"
#define MGRT_NAME_ADJ_NORM "adj_norm"
#define MGRT_NAME_EDGE_INDEX "edge_index"
/** Prefix of the gradient of a parameter: "grad:" + parameter name. */
#define MGRT_PREFIX_GRADIENT "grad:"
/** Prefix gt-autodiff gives a cotangent input: "d" + the output's name. */
#define MGRT_PREFIX_COTANGENT "d"
#define MGRT_PREFIX_ACTIVATION "act"
#define MGRT_PREFIX_ACTIVATION_GRAD MGRT_PREFIX_COTANGENT MGRT_PREFIX_ACTIVATION
#define MGRT_PREFIX_SAVED "saved"

/** The graph input names the training driver knows, for messages. */
#define MGRT_NODE_INPUT_NAMES                                                  \
  "x, features, node_feat, in_degree, out_degree, degree, spd, adj_norm, "     \
  "edge_index, labels, label_mask, eval_mask"

/** j of "<prefix><j>" (decimal digits only), or -1. */
static inline int mgrt_index_after(const char *name, const char *prefix) {
  const size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) != 0 || !name[n])
    return -1;
  int v = 0;
  for (const char *c = name + n; *c; ++c) {
    if (*c < '0' || *c > '9')
      return -1;
    v = v * 10 + (*c - '0');
  }
  return v;
}

/** The role of a tensor named `name` by the conventions above; `index`
 *  (may be NULL) receives j of act<j>, dact<j>, saved<j>, else -1. */
static inline mgrt_tensor_role mgrt_role_of_name(const char *name, int *index) {
  static const struct {
    const char *name;
    mgrt_tensor_role role;
  } kNames[] = {{"x", MGRT_ROLE_NODE_FEATURES},
                {"features", MGRT_ROLE_NODE_FEATURES},
                {"node_feat", MGRT_ROLE_NODE_FEATURES},
                {"in_degree", MGRT_ROLE_IN_DEGREE},
                {"out_degree", MGRT_ROLE_OUT_DEGREE},
                {"degree", MGRT_ROLE_OUT_DEGREE},
                {"spd", MGRT_ROLE_SPD},
                {MGRT_NAME_ADJ_NORM, MGRT_ROLE_ADJ_NORM},
                {MGRT_NAME_EDGE_INDEX, MGRT_ROLE_EDGE_INDEX},
                {MGRT_NAME_LABELS, MGRT_ROLE_LABELS},
                {MGRT_NAME_LABEL_MASK, MGRT_ROLE_LABEL_MASK},
                {MGRT_NAME_EVAL_MASK, MGRT_ROLE_EVAL_MASK},
                {MGRT_NAME_LOSS, MGRT_ROLE_LOSS},
                {MGRT_NAME_CORRECT, MGRT_ROLE_CORRECT},
                {MGRT_NAME_EVAL_CORRECT, MGRT_ROLE_EVAL_CORRECT},
                {MGRT_NAME_LOSS_SEED, MGRT_ROLE_LOSS_SEED}};
  int j = -1;
  mgrt_tensor_role role = MGRT_ROLE_OTHER;
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i)
    if (strcmp(name, kNames[i].name) == 0)
      role = kNames[i].role;
  if (role == MGRT_ROLE_OTHER) {
    if (strncmp(name, MGRT_PREFIX_GRADIENT, strlen(MGRT_PREFIX_GRADIENT)) == 0)
      role = MGRT_ROLE_GRADIENT;
    else if ((j = mgrt_index_after(name, MGRT_PREFIX_ACTIVATION)) >= 0)
      role = MGRT_ROLE_ACTIVATION;
    else if ((j = mgrt_index_after(name, MGRT_PREFIX_ACTIVATION_GRAD)) >= 0)
      role = MGRT_ROLE_ACTIVATION_GRAD;
    else if ((j = mgrt_index_after(name, MGRT_PREFIX_SAVED)) >= 0)
      role = MGRT_ROLE_SAVED;
  }
  if (index)
    *index = j;
  return role;
}

/*===-- Entries
 * ------------------------------------------------------------===*/

/** The entry points of a pipelined model, one of each per stage k:
 *  "s<k>.fwd" (all but the last stage), "s<k>.bwd", "s<k>.update". */
typedef enum mgrt_stage_entry_kind {
  MGRT_STAGE_FORWARD = 0,
  MGRT_STAGE_BACKWARD = 1,
  MGRT_STAGE_UPDATE = 2
} mgrt_stage_entry_kind;

/** Writes the name of stage `stage`'s entry of `kind` into buf (size n);
 *  returns buf. 32 bytes always suffice. */
static inline char *mgrt_stage_entry_name(char *buf, size_t n, int stage,
                                          mgrt_stage_entry_kind kind) {
  static const char *const kSuffix[] = {"fwd", "bwd", "update"};
  snprintf(buf, n, "s%d.%s", stage, kSuffix[kind]);
  return buf;
}

/** Symbol of the compiled model function (C interface:
 *  `_mlir_ciface_megagraph_model`); `main` is the executable's. */
#define MGRT_MODEL_SYMBOL "megagraph_model"

/*===-- The plan
 * -----------------------------------------------------------===*/

/** How K/V travel under context parallelism. */
typedef enum mgrt_cp_mode {
  MGRT_CP_ALLGATHER = 0,
  MGRT_CP_RING = 1,
  MGRT_CP_ULYSSES = 2
} mgrt_cp_mode;

/** The parallel plan a program was compiled for (#gt.plan); the process
 *  grid is dp x pp x cp, dp outermost, or mop or gp ranks of full-graph
 *  GCN training (each alone). */
typedef struct mgrt_plan {
  int64_t dp, pp, cp;
  int64_t micro_batches; /**< per dp replica and step (pp > 1) */
  int64_t zero;          /**< ZeRO stage 0-3 of the dp group */
  int32_t recompute;     /**< 1: stages recompute their forward */
  int32_t cp_mode;       /**< an mgrt_cp_mode */
  /** The --plan spelling ("dp=2,pp=2,mb=4"), for messages. */
  const char *text;
  /** Full-graph GCN training: mixture of parallelism / partition
   *  parallelism over this many ranks (0 or 1: not used). */
  int64_t mop, gp;
  /** Mixture of accelerators and its pipeline depth. */
  int32_t moa, chunks;
  /** Under cp: the sequence length S when cp does not divide it (the
   *  blocks of mgrt_cp_block_rows, each padded to ceil(S / cp) compiled
   *  rows); 0 when every rank holds S / cp rows. */
  int64_t cp_seq;
} mgrt_plan;

/** The number of processes of `plan` (NULL: one). */
static inline int64_t mgrt_plan_processes(const mgrt_plan *plan) {
  if (!plan)
    return 1;
  return plan->dp * plan->pp * plan->cp * (plan->mop > 1 ? plan->mop : 1) *
         (plan->gp > 1 ? plan->gp : 1);
}

/** The rows of block c of a sequence of S nodes over C context-parallel
 *  ranks, and its first row: S / C each, the first S % C blocks one more
 *  (the blocks' offsets, as the shard dialect's sharded_dims_offsets). */
static inline int64_t mgrt_cp_block_rows(int64_t S, int64_t C, int64_t c) {
  return S / C + (c < S % C ? 1 : 0);
}
static inline int64_t mgrt_cp_block_first(int64_t S, int64_t C, int64_t c) {
  return c * (S / C) + (c < S % C ? c : S % C);
}

/*===-- The model's tables
 * -------------------------------------------------===*/

/* What an executable tells the driver: LLVM globals megagraph-compile
 * emits into the object file (lib/Target/Common/EntryTable.cpp builds the
 * same layouts), `mgrt_model` the one the generated main() passes to
 * mgrt_main / mgrt_infer_main. */

/** Element types; the values are ONNX's TensorProto.DataType codes. */
typedef enum mgrt_dtype {
  MGRT_F32 = 1,  /**< float,    npy '<f4' */
  MGRT_U8 = 2,   /**< uint8,    npy '|u1' */
  MGRT_I8 = 3,   /**< int8,     npy '|i1' */
  MGRT_I32 = 6,  /**< int32,    npy '<i4' */
  MGRT_I64 = 7,  /**< int64,    npy '<i8' */
  MGRT_BOOL = 9, /**< one byte, 0 or 1, npy '|b1' */
  MGRT_F64 = 11  /**< double,   npy '<f8' */
} mgrt_dtype;

#define MGRT_MAX_RANK 8

/** One input or output of a compiled model (static shape). */
typedef struct mgrt_tensor_info {
  const char *name;
  int dtype; /**< an mgrt_dtype */
  int rank;
  int64_t shape[MGRT_MAX_RANK];
  /** An mgrt_tensor_role (above); 0: the name's role. */
  int role;
  /** j of the act<j> / dact<j> / saved<j> roles; for the labels of a
   *  classification loss the number of classes (the driver refuses labels
   *  outside [0, classes)); for an input indexing an embedding table its
   *  number of rows (mgrt_index_bound); else -1 (ignored when `role` is
   *  0). */
  int index;
} mgrt_tensor_info;

/** One more entry point of a compiled model (same calling convention as
 *  mgrt_model_info::entry). */
typedef struct mgrt_entry_info {
  const char *name;
  int num_inputs;
  const mgrt_tensor_info *inputs;
  int num_outputs;
  const mgrt_tensor_info *outputs;
  void (*fn)(void **descriptors);
} mgrt_entry_info;

/** What a compiled model tells the driver. `entry` receives one memref
 *  descriptor per input, then one per output (outputs preallocated,
 *  row-major); a rank-r descriptor is 3+2r int64 words: allocated, aligned,
 *  offset, sizes[r], strides[r]. */
typedef struct {
  const char *model_name;
  int num_inputs;
  const mgrt_tensor_info *inputs;
  int num_outputs;
  const mgrt_tensor_info *outputs;
  void (*entry)(void **descriptors);
  /** The parallel plan the program was compiled for; NULL for a
   *  one-process program. */
  const mgrt_plan *plan;
  /** Pipeline parallelism: the stage entry points (mgrt_stage_entry_name:
   *  "s<k>.fwd", "s<k>.bwd", "s<k>.update"; runtime/driver/Pipeline.h) the
   *  driver's schedule calls instead of `entry`; 0 / NULL otherwise. */
  int num_entries;
  const struct mgrt_entry_info *entries;
  /** The model's mutable state (mgrt_state_info below): parameters,
   *  optimizer moments, step counter; 0 / NULL in a table written by
   *  hand. */
  int num_state;
  const struct mgrt_state_info *state;
} mgrt_model_info;

/** What a global of the model's state is. */
typedef enum mgrt_state_kind {
  MGRT_STATE_PARAMETER = 1, /**< a trained ONNX initializer (gt.param) */
  MGRT_STATE_OPTIMIZER = 2, /**< an optimizer moment (gt.optimizer_state) */
  MGRT_STATE_OTHER = 3      /**< step counter, ZeRO shards and flags */
} mgrt_state_kind;

/** One mutable global of a compiled model: its name (a parameter's is its
 *  ONNX initializer's), element type and shape as stored on this rank, and
 *  where its values live in the process. Under ZeRO a parameter is
 *  elements [offset, offset + size) of the packed bucket `bucket` (an
 *  index into the state table), which the ranks of the parameter's
 *  pipeline stage (all ranks without pp) share out in ascending rank
 *  order, each 1/n of its padded size; its moments are the same elements
 *  of `<bucket>.<moment>`. Under ZeRO-3 the bucket holds the trained
 *  values and the parameter's own global the initial weights; under
 *  ZeRO-1/2 the bucket has no storage (data NULL): the parameter's global
 *  is current, and only the moments are sharded. */
typedef struct mgrt_state_info {
  mgrt_tensor_info tensor; /**< role and index unused (0, -1) */
  int kind;                /**< an mgrt_state_kind */
  int bucket;              /**< ZeRO: the bucket's state index, else -1 */
  int64_t offset;          /**< ZeRO: first element in the bucket */
  void *data;              /**< NULL: no storage (a ZeRO-1/2 bucket) */
} mgrt_state_info;

/** The i32 flag of a ZeRO-3 program (gt-zero-gather): 0 until the first
 *  step has cut this rank's bucket shards from the initial weights. A
 *  driver that fills the buckets itself (a checkpoint re-sharded for this
 *  plan) sets it to 1. */
#define MGRT_STATE_ZERO_READY "gt.zero.ready"

/** The symbols of the generated entry point: `main` calls the driver
 *  (mgrt_main, or mgrt_infer_main without a training step) with the
 *  mgrt_model_info global `MGRT_MODEL_INFO_SYMBOL`. */
#define MGRT_MODEL_INFO_SYMBOL "mgrt_model"
#define MGRT_TRAIN_MAIN "mgrt_main"
#define MGRT_INFER_MAIN "mgrt_infer_main"
/** The CUDA runtime's staging call (megagraph/RuntimeCuda.h): each entry of
 *  a --target cuda executable runs through it. */
#define MGRT_CUDA_RUN_ENTRY "mgrt_cuda_run_entry"
/** The storage of a pipelined CPU program's mutable globals
 *  (megagraph/Runtime.h, gt-stage-globals): each rank materialises only its
 *  stage's. */
#define MGRT_STAGE_GLOBAL "mgrt_stage_global"

/*===-- Runtime kernels the lowering calls
 * ---------------------------------===*/

/* CPU kernels (megagraph/Runtime.h; called through `_mlir_ciface_<name>`). */
#define MGRT_KERNEL_MATMUL "mgrt_matmul_f32"
#define MGRT_KERNEL_ATTENTION "mgrt_attention_f32"
#define MGRT_KERNEL_ATTENTION_BWD "mgrt_attention_bwd_f32"
#define MGRT_KERNEL_ATTENTION_LSE "mgrt_attention_lse_f32"
#define MGRT_KERNEL_ATTENTION_BWD_LSE "mgrt_attention_bwd_lse_f32"
#define MGRT_KERNEL_ATTENTION_SPATIAL "mgrt_attention_spatial_f32"
#define MGRT_KERNEL_ATTENTION_SPATIAL_BWD "mgrt_attention_spatial_bwd_f32"
/** Bits of the `flags` argument of the attention kernels (megagraph/
 *  Runtime.h), set by the lowering. */
enum {
  MGRT_ATTENTION_BIAS = 1,  /**< `bias` is present */
  MGRT_ATTENTION_MASK = 2,  /**< `mask` is present */
  MGRT_ATTENTION_DBIAS = 4, /**< backward: write the bias gradient `dbias` */
  MGRT_ATTENTION_LSE = 8    /**< spatial forward: write `lse`; spatial
                                 backward: `out` and `lse` are the forward's
                                 (else either may be NULL) */
};
#define MGRT_KERNEL_LAYER_NORM "mgrt_layer_norm_f32"
#define MGRT_KERNEL_SPMM "mgrt_spmm_f32"
#define MGRT_KERNEL_CSR_TRANSPOSE "mgrt_csr_transpose"
#define MGRT_KERNEL_SPARSE_ATTENTION "mgrt_sparse_attention_f32"
/* The same in BF16 (--precision bf16, gt-precision): the operands and
 * results stay float32 (FP32 master weights); GEMM and attention operands
 * are rounded to bfloat16 and every product is accumulated in float32, as
 * tensor cores do; softmax statistics stay float32 (Runtime.h). */
#define MGRT_KERNEL_MATMUL_BF16 "mgrt_matmul_bf16_f32"
#define MGRT_KERNEL_ATTENTION_BF16 "mgrt_attention_bf16_f32"
#define MGRT_KERNEL_ATTENTION_BWD_BF16 "mgrt_attention_bwd_bf16_f32"
#define MGRT_KERNEL_ATTENTION_LSE_BF16 "mgrt_attention_lse_bf16_f32"
#define MGRT_KERNEL_ATTENTION_BWD_LSE_BF16 "mgrt_attention_bwd_lse_bf16_f32"
/* The thread pool entry of the generated code's parallel loop nests
 * (gt-parallel-to-runtime; megagraph/Runtime.h): a plain C call. */
#define MGRT_PARALLEL_FOR "mgrt_parallel_for"
/* Context-parallel attention (megagraph/RuntimeCp.h): the operands of the
 * attention kernels, then grid g0..g3, axes and an mgrt_cp_mode. */
#define MGRT_KERNEL_CP_ATTENTION "mgrt_cp_attention_f32"
#define MGRT_KERNEL_CP_ATTENTION_BWD "mgrt_cp_attention_bwd_f32"
/* The same with the spatial bias read in place (the operands of
 * mgrt_attention_spatial_f32 / _bwd_f32 without out and lse): this rank's
 * distance rows over all S keys and the table. */
#define MGRT_KERNEL_CP_ATTENTION_SPATIAL "mgrt_cp_attention_spatial_f32"
#define MGRT_KERNEL_CP_ATTENTION_SPATIAL_BWD "mgrt_cp_attention_spatial_bwd_f32"
/* Partition-parallel SpMM (megagraph/RuntimeGp.h): the operands of
 * mgrt_spmm_f32, then grid g0..g3 and axes. */
#define MGRT_KERNEL_HALO_SPMM "mgrt_halo_spmm_f32"
/* Their CUDA versions (megagraph/RuntimeCuda.h), same operands. */
#define MGRT_CUDA_KERNEL_MATMUL "mgrt_cuda_matmul_f32"
#define MGRT_CUDA_KERNEL_ATTENTION "mgrt_cuda_attention_f32"
#define MGRT_CUDA_KERNEL_ATTENTION_BWD "mgrt_cuda_attention_bwd_f32"
#define MGRT_CUDA_KERNEL_MATMUL_BF16 "mgrt_cuda_matmul_bf16_f32"
#define MGRT_CUDA_KERNEL_ATTENTION_BF16 "mgrt_cuda_attention_bf16_f32"
#define MGRT_CUDA_KERNEL_ATTENTION_BWD_BF16 "mgrt_cuda_attention_bwd_bf16_f32"
/* Host reads of rank-0 device buffers (a flag the host branches on):
 * MGRT_CUDA_LOAD_PREFIX followed by i32, i64, f32 or f64. */
#define MGRT_CUDA_LOAD_PREFIX "mgrt_cuda_load_"
#define MGRT_CUDA_KERNEL_CP_ATTENTION "mgrt_cuda_cp_attention_f32"
#define MGRT_CUDA_KERNEL_CP_ATTENTION_BWD "mgrt_cuda_cp_attention_bwd_f32"

/*===-- Collectives
 * --------------------------------------------------------===*/

/* The calls gt-shard-to-runtime makes for shard collectives (defined in
 * runtime/comm/ShardCalls.cpp, C interface `_mlir_ciface_<name>`). */
#define MGRT_SHARD_ALL_REDUCE "mgrt_comm_all_reduce_f32"
#define MGRT_SHARD_ALL_GATHER "mgrt_comm_all_gather_f32"
#define MGRT_SHARD_REDUCE_SCATTER "mgrt_comm_reduce_scatter_f32"
#define MGRT_SHARD_REDUCE_SCATTER_START "mgrt_comm_reduce_scatter_start_f32"
#define MGRT_SHARD_ALL_REDUCE_START "mgrt_comm_all_reduce_start_f32"
#define MGRT_SHARD_ALL_GATHER_START "mgrt_comm_all_gather_start_f32"
#define MGRT_SHARD_WAIT "mgrt_comm_wait_f32"
#define MGRT_SHARD_ALL_TO_ALL "mgrt_comm_all_to_all_f32"
#define MGRT_SHARD_ALL_SLICE "mgrt_comm_all_slice_f32"
#define MGRT_SHARD_BROADCAST "mgrt_comm_broadcast_f32"
#define MGRT_SHARD_SEND "mgrt_comm_send_f32"
#define MGRT_SHARD_RECV "mgrt_comm_recv_f32"
#define MGRT_SHARD_SHIFT "mgrt_comm_shift_f32"
/* Their versions on device buffers (--target cuda; NCCL groups). */
#define MGRT_DEVICE_SHARD_ALL_REDUCE "mgrt_comm_device_all_reduce_f32"
#define MGRT_DEVICE_SHARD_ALL_GATHER "mgrt_comm_device_all_gather_f32"
#define MGRT_DEVICE_SHARD_REDUCE_SCATTER "mgrt_comm_device_reduce_scatter_f32"
#define MGRT_DEVICE_SHARD_REDUCE_SCATTER_START                                 \
  "mgrt_comm_device_reduce_scatter_start_f32"
#define MGRT_DEVICE_SHARD_ALL_REDUCE_START                                     \
  "mgrt_comm_device_all_reduce_start_f32"
#define MGRT_DEVICE_SHARD_ALL_GATHER_START                                     \
  "mgrt_comm_device_all_gather_start_f32"
#define MGRT_DEVICE_SHARD_WAIT "mgrt_comm_device_wait_f32"
#define MGRT_DEVICE_SHARD_ALL_TO_ALL "mgrt_comm_device_all_to_all_f32"
#define MGRT_DEVICE_SHARD_ALL_SLICE "mgrt_comm_device_all_slice_f32"
#define MGRT_DEVICE_SHARD_BROADCAST "mgrt_comm_device_broadcast_f32"
#define MGRT_DEVICE_SHARD_SEND "mgrt_comm_device_send_f32"
#define MGRT_DEVICE_SHARD_RECV "mgrt_comm_device_recv_f32"
#define MGRT_DEVICE_SHARD_SHIFT "mgrt_comm_device_shift_f32"
/** shard.process_linear_index: an i64 returned, no memref (no _mlir_ciface_
 *  wrapper). */
#define MGRT_SHARD_GROUP_RANK "mgrt_comm_group_rank"

/** Reductions. AVG divides the sum by the group size (integer division
 *  for integer types). */
typedef enum mgrt_comm_op {
  MGRT_COMM_SUM = 0,
  MGRT_COMM_AVG = 1,
  MGRT_COMM_MAX = 2,
  MGRT_COMM_MIN = 3
} mgrt_comm_op;

/*===-- Embedding table sizes
 * ----------------------------------------------===*/

/* A graph input whose values are row indices of an embedding table
 * (categorical node features, in_degree / out_degree, spd: the ids of
 * gt.node_embedding, gt.degree_embedding, gt.spatial_bias) carries the
 * table's number of rows in mgrt_tensor_info::index, written by the
 * compiler (lib/Target/Common/ModelSignature.cpp); the smallest table when
 * the input indexes several. The driver refuses values outside [0, rows)
 * in the user's data, as torch.nn.Embedding does, and caps the degrees and
 * distances it computes itself at rows - 1 (Graphormer's max_degree and
 * num_spatial). */

/** The number of rows of the embedding table input `t` indexes, or -1 when
 *  unknown (a float input, an input that indexes no table directly, or a
 *  table written by hand). */
static inline int64_t mgrt_index_bound(const mgrt_tensor_info *t) {
  const int indexRole =
      t->role == MGRT_ROLE_NODE_FEATURES || t->role == MGRT_ROLE_IN_DEGREE ||
      t->role == MGRT_ROLE_OUT_DEGREE || t->role == MGRT_ROLE_SPD;
  if (!indexRole || t->index < 1 ||
      (t->dtype != MGRT_I64 && t->dtype != MGRT_I32))
    return -1;
  return t->index;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_MODELABI_H */
