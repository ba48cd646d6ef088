// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=sgd lr=0.5" | FileCheck %s
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01" | FileCheck %s --check-prefix=ADAM
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3 recompute=false" --gt-pipeline-train="optimizer=sgd lr=0.5 recompute=false" | FileCheck %s --check-prefix=STASH
// Clipping by the global norm needs every stage's gradients: refused.
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=sgd lr=0.5 clip-grad-norm=1" 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: gt-pipeline-train: clip-grad-norm is not supported with pipeline stages (pp > 1): each stage holds only its parameters' gradients, and the global norm needs them all

// ZeRO over dp = 2 replicas of each stage: every update reduce-scatters its
// stage's packed gradients (stage 0: 32 + 8 + 10 = 50 elements) over axis 0
// of the shared 2 x 2 grid, keeps the AdamW moments of its 25-element
// shard (named per stage, so the stages' state stays apart) and
// all-gathers the updated parameters.
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01 dp=2 zero=1" | FileCheck %s --check-prefix=ZERO
// zero=3: each stage's shard globals are its parameters' storage (the
// parameter globals become read-only initial weights). Every entry of a
// stage cuts the shards on the first step (flag @gt.zero.ready) and
// all-gathers the buckets it reads at its start; the update reduce-scatters
// the gradients and writes only the shards, with no all-gather after.
// RUN: megagraph-opt %s --gt-set-plan="plan=dp=2,pp=2,mb=4,zero=3" --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01 dp=2 zero=3" | FileCheck %s --check-prefix=SHARD3
// SHARD3:       ml_program.global private @w0({{.*}}) : tensor<4x8xf32> {gt.param_init}
// SHARD3:       ml_program.global private mutable @gt.zero.ready
// SHARD3-LABEL: func.func @pp_s0_fwd(
// SHARD3:         ml_program.global_load @gt.zero.ready
// SHARD3:         scf.if
// SHARD3:           shard.all_slice {{.*}} : tensor<40xf32> -> tensor<20xf32>
// SHARD3:           ml_program.global_store @gt.zero.s0.bucket0 =
// A stage's entries cut only its own stage's shards.
// SHARD3-NOT:       ml_program.global_store @gt.zero.s1.bucket0
// SHARD3:         %[[S:.*]] = ml_program.global_load @gt.zero.s0.bucket0 : tensor<20xf32>
// SHARD3:         %[[ALL:.*]] = shard.all_gather %[[S]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<20xf32> -> tensor<40xf32>
// SHARD3:         tosa.slice %[[ALL]]
// SHARD3-NOT:     ml_program.global_load @w0
// SHARD3:         gt.linear
// SHARD3:         return
// SHARD3-LABEL: func.func @pp_s0_bwd(
// SHARD3:         shard.all_gather {{.*}} : tensor<20xf32> -> tensor<40xf32>
// SHARD3-NOT:     ml_program.global_load @w0
// SHARD3:         return
// SHARD3:       ml_program.global private mutable @gt.zero.s0.bucket0({{.*}}) : tensor<20xf32> {gt.param_shard, gt.zero_shard = #gt.zero_shard<params = [@w0, @b0], sizes = [32, 8], padded = 40>}
// SHARD3-LABEL: func.func @pp_s0_update(
// SHARD3:         shard.reduce_scatter {{.*}} : tensor<40xf32> -> tensor<20xf32>
// SHARD3-NOT:     shard.all_gather
// SHARD3-NOT:     ml_program.global_store @w0
// SHARD3:         ml_program.global_store @gt.zero.s0.bucket0 = %{{.*}} : tensor<20xf32>
// SHARD3-NOT:     shard.all_gather
// SHARD3:         return
// SHARD3-LABEL: func.func @pp_s1_bwd(
// SHARD3-NOT:       ml_program.global_store @gt.zero.s0.bucket0
// SHARD3:           ml_program.global_store @gt.zero.s1.bucket0 =
// SHARD3:         shard.all_gather {{.*}} : tensor<36xf32> -> tensor<72xf32>
// SHARD3-NOT:     ml_program.global_load @w1
// SHARD3:         return
// SHARD3-LABEL: func.func @pp_s1_update(
// SHARD3-NOT:     shard.all_gather
// SHARD3:         shard.reduce_scatter {{.*}} : tensor<72xf32> -> tensor<36xf32>
// SHARD3-NOT:     shard.all_gather
// SHARD3:         ml_program.global_store @gt.zero.s1.bucket0 = %{{.*}} : tensor<36xf32>
// SHARD3-NOT:     shard.all_gather
// SHARD3:         return
// Context parallelism inside the stages (gt-context-parallel before the
// split, as megagraph-compile runs it for --plan dp=2,pp=2,cp=2): every
// stage entry takes 3 of the 6 rows, its attentions run on the cp axis
// (mask 4) of the runtime grid [dp, pp, cp, 1], and each update
// reduce-scatters over the stage's dp x cp = 4 ranks, axes 0 and 2 of the
// shared grid @gt_dp(2 x 2 x 2).
// RUN: megagraph-opt %s --gt-context-parallel="cp=2 dp=2 pp=2" --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01 dp=2 cp=2 zero=2" | FileCheck %s --check-prefix=PPCP
// PPCP:       shard.grid @gt_dp(shape = 2x2x2)
// PPCP-LABEL: func.func @pp_s0_fwd(
// PPCP-SAME:  %arg0: tensor<2x3x4xf32> {gt.name = "x"}, %arg1: tensor<2x3x6xi64> {gt.name = "spd"}
// PPCP-SAME:  -> (tensor<2x3x8xf32> {gt.name = "act0", gt.send_to = 1 : i64}
// PPCP:       gt.attention {{.*}}gt.cp = #gt.cp<size = 2, mode = allgather, grid = [2, 2, 2, 1], axes = 4>
// PPCP-LABEL: func.func @pp_s0_bwd(
// PPCP:       gt.attention_grad {{.*}}gt.cp = #gt.cp<size = 2, mode = allgather, grid = [2, 2, 2, 1], axes = 4>
// PPCP-LABEL: func.func @pp_s0_update(
// PPCP:       shard.reduce_scatter {{.*}} on @gt_dp grid_axes = [0, 2] scatter_axis = 0 {gt.overlap} : tensor<40xf32> -> tensor<10xf32>
// PPCP:       shard.all_gather {{.*}} on @gt_dp grid_axes = [0, 2] gather_axis = 0 : tensor<10xf32> -> tensor<40xf32>
// PPCP-LABEL: func.func @pp_s1_bwd(
// PPCP-SAME:  {gt.name = "loss_seed"}
// PPCP-LABEL: func.func @pp_s1_update(
// PPCP:       shard.reduce_scatter {{.*}} on @gt_dp grid_axes = [0, 2] scatter_axis = 0 {gt.overlap} : tensor<72xf32> -> tensor<18xf32>
// zero=3 reads the stage from the module's plan (gt-set-plan).
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01 dp=2 zero=3" 2>&1 | FileCheck %s --check-prefix=ZERO3PLAN
// ZERO3PLAN: error: gt-pipeline-train: zero=3 needs the module's gt.plan to say zero = 3 (gt-set-plan)
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,3" --gt-pipeline-train="optimizer=adamw lr=0.01 dp=2 zero=4" 2>&1 | FileCheck %s --check-prefix=ZERO4
// ZERO4: error: gt-pipeline-train: needs dp >= 1, cp >= 1 and zero 0, 1, 2 or 3, got dp=2, cp=1, zero=4
// ZERO:       shard.grid @gt_dp(shape = 2x2)
// ZERO-NOT:   shard.grid
// ZERO:       ml_program.global private mutable @gt.zero.s0.bucket0.adam_m({{.*}}) : tensor<25xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w0, @b0, @sw], sizes = [32, 8, 10], padded = 50>}
// ZERO-LABEL: func.func @pp_s0_update(
// ZERO:         %[[RS:.*]] = shard.reduce_scatter %{{.*}} on @gt_dp grid_axes = [0] scatter_axis = 0 : tensor<50xf32> -> tensor<25xf32>
// ZERO:         shard.all_gather %{{.*}} on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<25xf32> -> tensor<50xf32>
// ZERO:         ml_program.global_store @w0
// ZERO:       ml_program.global private mutable @gt.zero.s1.bucket0.adam_m({{.*}}) : tensor<50xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w1, @b1, @w2, @b2], sizes = [64, 8, 24, 3], padded = 100>}
// ZERO-LABEL: func.func @pp_s1_update(
// ZERO:         shard.reduce_scatter %{{.*}} on @gt_dp grid_axes = [0] scatter_axis = 0 : tensor<100xf32> -> tensor<50xf32>

// Without recomputation stage 0's forward also returns what its backward
// reads (the encoder output and the bias), and the backward takes them
// instead of recomputing: only parameter loads and constants are redone.
// STASH-LABEL: func.func @pp_s0_fwd(
// STASH-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<2x6x8xf32> {gt.name = "act1", gt.send_to = 1 : i64}, tensor<2x6x8xf32> {gt.name = "saved0"}, tensor<2x2x6x6xf32> {gt.name = "saved1"})
// STASH:       %[[ENC:.*]] = gt.linear %arg0
// STASH:       %[[BIAS:.*]] = gt.spatial_bias %arg1
// STASH:       return %[[ENC]], %{{.*}}, %[[ENC]], %[[BIAS]]
// STASH-LABEL: func.func @pp_s0_bwd(
// STASH-SAME: %arg2: tensor<2x6x8xf32> {gt.name = "dact0"}, %arg3: tensor<2x6x8xf32> {gt.name = "dact1"}, %arg4: tensor<2x6x8xf32> {gt.name = "saved0"}, %arg5: tensor<2x2x6x6xf32> {gt.name = "saved1"})
// STASH-NOT:   gt.attention %
// STASH-NOT:   gt.spatial_bias %
// STASH:       gt.attention_grad %arg3, %arg4, %arg4, %arg4 bias(%arg5)
// STASH:       return
// The last stage still runs forward and backward in one call.
// STASH-LABEL: func.func @pp_s1_bwd(
// STASH-NOT:   saved0
// STASH:       gt.cross_entropy

// The stub @main: the driver's view of a step over 4 micro-batches of 2.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<8x6x4xf32> {gt.name = "x"}, %arg1: tensor<8x6x6xi64> {gt.name = "spd"}, %arg2: tensor<8x6xi64> {gt.name = "labels"}, %arg3: tensor<8x6xi1> {gt.name = "label_mask"}, %arg4: tensor<8x6xf32> {gt.name = "eval_mask"})
// CHECK-SAME: -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"})
// CHECK-SAME: attributes {gt.pipeline_stub}
// Stage 0 forward: what it sends.
// CHECK-LABEL: func.func @pp_s0_fwd(
// CHECK-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<2x6x8xf32> {gt.name = "act1", gt.send_to = 1 : i64})
// CHECK-SAME: gt.pipeline_entry = "s0.fwd"
// Stage 0 backward: recomputes the forward, receives the cotangents of
// what it sent, returns its parameter gradients.
// CHECK-LABEL: func.func @pp_s0_bwd(
// CHECK-SAME: %arg2: tensor<2x6x8xf32> {gt.name = "dact0"}, %arg3: tensor<2x6x8xf32> {gt.name = "dact1"})
// CHECK-SAME: -> (tensor<4x8xf32> {gt.name = "grad:w0"}, tensor<8xf32> {gt.name = "grad:b0"}, tensor<5x2xf32> {gt.name = "grad:sw"})
// CHECK-SAME: gt.pipeline_entry = "s0.bwd"
// CHECK:       gt.linear %arg0
// CHECK:       gt.attention
// The attention output's cotangent is the received dact1.
// CHECK:       gt.attention_grad %arg3,
// CHECK:       return
// Stage 0 update: SGD on its own parameters only.
// CHECK-LABEL: func.func @pp_s0_update(
// CHECK-SAME: %arg0: tensor<4x8xf32> {gt.name = "grad:w0"}, %arg1: tensor<8xf32> {gt.name = "grad:b0"}, %arg2: tensor<5x2xf32> {gt.name = "grad:sw"})
// CHECK-SAME: gt.pipeline_entry = "s0.update"
// CHECK-DAG:   ml_program.global_store @w0
// CHECK-DAG:   ml_program.global_store @b0
// CHECK-DAG:   ml_program.global_store @sw
// CHECK-NOT:   global_store @w1
// CHECK:       return
// The last stage's backward: the loss from the received activations, the
// gradients it sends back (d<act>) and its parameter gradients. Its sweep
// starts from the loss seed the driver passes (the micro-batch's weight).
// CHECK-LABEL: func.func @pp_s1_bwd(
// CHECK-SAME: gt.name = "act0", gt.recv_from = 0 : i64}
// CHECK-SAME: gt.name = "act1", gt.recv_from = 0 : i64}
// CHECK-SAME: {gt.name = "labels"}
// CHECK-SAME: %[[SEED:arg[0-9]+]]: tensor<f32> {gt.name = "loss_seed"})
// CHECK-SAME: -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<2x6x8xf32> {gt.name = "dact0"}, tensor<2x6x8xf32> {gt.name = "dact1"}, tensor<8x8xf32> {gt.name = "grad:w1"}
// CHECK-SAME: gt.pipeline_entry = "s1.bwd"
// CHECK:       gt.cross_entropy
// CHECK:       {{.*}} %[[SEED]]
// CHECK-LABEL: func.func @pp_s1_update(
// CHECK-SAME: gt.pipeline_entry = "s1.update"
// CHECK-NOT:   global_store @w0
// CHECK:       ml_program.global_store @w1
// No forward entry for the last stage, no stage functions left.
// CHECK-NOT:   @pp_s1_fwd
// CHECK-NOT:   @pp_stage

// AdamW: moments per parameter; one step counter, which each rank
// increments once per step (it runs one stage's update).
// (gt-optimizer puts the moments of a stage before its update function.)
// ADAM:       ml_program.global private mutable @gt.step
// ADAM:       ml_program.global private mutable @w0.adam_m
// ADAM:       func.func @pp_s0_update(
// ADAM:       ml_program.global_load @gt.step
// ADAM:       ml_program.global_store @gt.step
// ADAM:       ml_program.global private mutable @w2.adam_v
// ADAM:       func.func @pp_s1_update(
// ADAM:       ml_program.global_load @gt.step
// ADAM:       ml_program.global_store @gt.step

ml_program.global private mutable @w0(dense<0.1> : tensor<4x8xf32>) : tensor<4x8xf32> {gt.param}
ml_program.global private mutable @b0(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @sw(dense<0.2> : tensor<5x2xf32>) : tensor<5x2xf32> {gt.param}
ml_program.global private mutable @w1(dense<0.3> : tensor<8x8xf32>) : tensor<8x8xf32> {gt.param}
ml_program.global private mutable @b1(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @w2(dense<0.4> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b2(dense<0.0> : tensor<3xf32>) : tensor<3xf32> {gt.param}
func.func @main(%x: tensor<2x6x4xf32> {gt.name = "x"}, %spd: tensor<2x6x6xi64> {gt.name = "spd"}) -> (tensor<2x6x3xf32> {gt.name = "logits"}) {
  %w0 = ml_program.global_load @w0 : tensor<4x8xf32>
  %b0 = ml_program.global_load @b0 : tensor<8xf32>
  %sw = ml_program.global_load @sw : tensor<5x2xf32>
  %w1 = ml_program.global_load @w1 : tensor<8x8xf32>
  %b1 = ml_program.global_load @b1 : tensor<8xf32>
  %w2 = ml_program.global_load @w2 : tensor<8x3xf32>
  %b2 = ml_program.global_load @b2 : tensor<3xf32>
  %enc = gt.linear %x, %w0, %b0 : (tensor<2x6x4xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
  %bias = gt.spatial_bias %spd, %sw : (tensor<2x6x6xi64>, tensor<5x2xf32>) -> tensor<2x2x6x6xf32>
  %att = gt.attention %enc, %enc, %enc bias(%bias) heads = 2 {scale = 0.5 : f32} : (tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x2x6x6xf32>) -> tensor<2x6x8xf32>
  %r1 = tosa.add %enc, %att : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %h = gt.linear %r1, %w1, %b1 : (tensor<2x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
  %g = gt.gelu %h : tensor<2x6x8xf32>
  %r2 = tosa.add %r1, %g : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %out = gt.linear %r2, %w2, %b2 : (tensor<2x6x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x6x3xf32>
  return %out : tensor<2x6x3xf32>
}
