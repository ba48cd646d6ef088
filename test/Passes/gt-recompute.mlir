// RUN: megagraph-opt %s --gt-autodiff --gt-recompute | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff | FileCheck %s --check-prefix=NOREC
// RUN: megagraph-opt %s --gt-pipeline-split="pp=1 mb=2" --gt-pipeline-train="optimizer=sgd lr=0.5 recompute=true" | FileCheck %s --check-prefix=STAGE

// Units of the forward: the encoder, the attention half (ends at %r1) and
// the FFN half (ends at %r2), then the head. The checkpoints (%enc, the
// bias, %r1, %r2) stay from the forward to the backward. The FFN half's
// inner values that the backward reads (the linear's output, for the GELU
// derivative) are recomputed: a clone of the unit, reading the checkpoint
// %r1 through a copy, right before the backward's first read, and the
// backward reads the clone. Without gt-recompute it reads the forward's.

// CHECK-LABEL: func.func @main_grad(
// CHECK:         %[[R1:.*]] = tosa.add %{{.*}}, %{{.*}} : (tensor<2x6x8xf32>
// CHECK-NEXT:    %[[H:.*]] = gt.linear %[[R1]], %[[W1:.*]], %[[B1:.*]] :
// CHECK:         gt.cross_entropy
// CHECK:         %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[R1]]) : tensor<2x6x8xf32>
// CHECK-NEXT:    %[[H2:.*]] = gt.linear %[[COPY]], %[[W1]], %[[B1]] :
// CHECK-NEXT:    gt.gelu %[[H2]]
// CHECK-NEXT:    tosa.add %[[COPY]],
// CHECK-NEXT:    tosa.mul %[[H2]],
// CHECK-NOT:     %[[H]]
// CHECK:         gt.attention_grad
// CHECK:         return

// Gradient accumulation (the one-stage pipeline): the stage's backward
// entry, which runs the forward and the backward of a micro-batch, gets the
// same recomputation.
// STAGE-LABEL: func.func @pp_s0_bwd(
// STAGE:         gt.cross_entropy
// STAGE:         bufferization.alloc_tensor() copy(
// STAGE:         gt.attention_grad
// STAGE:         return

// NOREC-LABEL: func.func @main_grad(
// NOREC-NOT:     bufferization.alloc_tensor
// NOREC:         %[[R1:.*]] = tosa.add %{{.*}}, %{{.*}} : (tensor<2x6x8xf32>
// NOREC-NEXT:    %[[H:.*]] = gt.linear %[[R1]],
// NOREC:         gt.cross_entropy
// NOREC:         tosa.mul %[[H]],
// NOREC-NOT:     bufferization.alloc_tensor
// NOREC:         return

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
