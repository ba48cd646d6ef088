// The cost runs use an attention-bound hardware profile (a slow attention,
// no per-op overhead: at these tiny shapes the built-in profiles' per-op
// overhead would make every unit cost the same; gt-pipeline-split-profile.mlir
// tests the pricing itself).
// RUN: echo '{"gemm_flops": 1e9, "attention_flops": 1e6, "memory_bandwidth": 1e9, "op_overhead_s": 0}' > %t.json
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=%t.json" | FileCheck %s
// RUN: megagraph-opt %s --gt-pipeline-split="pp=3 mb=4 balance=even" | FileCheck %s --check-prefix=EVEN
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 stages=0,1" | FileCheck %s --check-prefix=GIVEN
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 memory-limit=4500 profile=%t.json" | FileCheck %s --check-prefix=LIMIT
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 memory-limit=1000 profile=%t.json" 2>&1 | FileCheck %s --check-prefix=TIGHT

// A small Graphormer-like forward: a node encoder and a spatial-bias encoder
// (source ops: they read only graph inputs and parameters), an attention
// block with a residual, an FFN block with a residual, a head. Cut points
// are where one activation crosses (outputs of source ops are not counted:
// they are forwarded): after the node encoder, after the bias encoder,
// after the attention (its output and the encoder output cross), after the
// first residual, before the head. Six units; by cost the first stage takes
// the encoders and the attention.
// CHECK: module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 4,
// CHECK-SAME: stages = [0, 3]
// CHECK-SAME: units = ["gt.linear", "gt.spatial_bias", "gt.attention", "tosa.add", "gt.linear", "gt.linear"]
// The forward @main is kept.
// CHECK-LABEL: func.func @main(
// Stage 0: the encoders and the attention; it sends the encoder output and
// the attention output to stage 1.
// CHECK-LABEL: func.func @pp_stage0(
// CHECK-SAME: %arg0: tensor<2x6x4xf32> {gt.name = "x"}, %arg1: tensor<2x6x6xi64> {gt.name = "spd"})
// CHECK-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<2x6x8xf32> {gt.name = "act1", gt.send_to = 1 : i64})
// CHECK-SAME: attributes {gt.pipeline_stage = 0 : i64}
// Parameter loads are cloned next to their first use in the stage.
// CHECK:       %[[W0:.*]] = ml_program.global_load @w0
// CHECK:       %[[ENC:.*]] = gt.linear %arg0, %[[W0]]
// CHECK:       %[[SW:.*]] = ml_program.global_load @sw
// CHECK:       %[[BIAS:.*]] = gt.spatial_bias %arg1, %[[SW]]
// CHECK:       %[[ATT:.*]] = gt.attention %[[ENC]], %[[ENC]], %[[ENC]] bias(%[[BIAS]])
// CHECK-NOT:   global_load @w1
// CHECK:       return %[[ENC]], %[[ATT]]
// Stage 1 receives them (the matching recv of each send), keeps the graph
// inputs, and returns the logits.
// CHECK-LABEL: func.func @pp_stage1(
// CHECK-SAME: %arg2: tensor<2x6x8xf32> {gt.differentiable, gt.name = "act0", gt.recv_from = 0 : i64}
// CHECK-SAME: %arg3: tensor<2x6x8xf32> {gt.differentiable, gt.name = "act1", gt.recv_from = 0 : i64}
// CHECK-SAME: -> (tensor<2x6x3xf32> {gt.name = "logits"})
// CHECK-NOT:   global_load @w0
// CHECK:       %[[R1:.*]] = tosa.add %arg2, %arg3
// CHECK:       gt.linear %[[R1]]
// CHECK:       gt.gelu
// CHECK:       return

// Even: two units per stage; the middle stage receives the encoder output
// and the bias and sends the residual.
// EVEN: stages = [0, 2, 4]
// EVEN-LABEL: func.func @pp_stage0(
// EVEN-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<2x2x6x6xf32> {gt.name = "act1", gt.send_to = 1 : i64})
// EVEN-LABEL: func.func @pp_stage1(
// EVEN-SAME: %arg3: tensor<2x2x6x6xf32> {gt.differentiable, gt.name = "act1", gt.recv_from = 0 : i64}
// EVEN-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 2 : i64})
// EVEN-LABEL: func.func @pp_stage2(
// EVEN-SAME: {gt.differentiable, gt.name = "act0", gt.recv_from = 1 : i64}

// A memory limit: the fastest split (0:3) needs 5436 bytes on stage 1, so
// the DP moves the first residual to stage 0.
// LIMIT: stages = [0, 4]
// LIMIT-SAME: stage_memory = [3592, 4284]
// TIGHT: error: no split into 2 stages fits memory-limit=1000 bytes per stage (the fastest split needs 5436)

// Given boundaries: stage 0 is the node encoder only.
// GIVEN: stages = [0, 1]
// GIVEN-LABEL: func.func @pp_stage0(
// GIVEN-SAME: -> (tensor<2x6x8xf32> {gt.name = "act0", gt.send_to = 1 : i64})
// GIVEN-LABEL: func.func @pp_stage1(
// GIVEN:       gt.spatial_bias %arg1

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
