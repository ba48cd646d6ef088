// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=2 stages=0,2" | FileCheck %s
// RUN: megagraph-opt %s --gt-pipeline-split="pp=3 mb=3 stages=0,1,2" | FileCheck %s --check-prefix=THREE

// A parameter that two stages read (tied weights; Graphormer's spatial
// table, read by every layer's attention): the first stage that reads it
// loads it and sends its value to the other as one more activation, which
// is differentiable there, so its cotangent comes back with the others'.
// CHECK-LABEL: func.func @pp_stage0(
// CHECK-SAME:    %arg0: tensor<2x4xf32>)
// CHECK-SAME:    -> (tensor<2x4xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<4x4xf32> {gt.name = "act1", gt.send_to = 1 : i64})
// CHECK:         %[[W:.+]] = ml_program.global_load @w
// CHECK:         %[[A:.+]] = gt.linear %arg0, %[[W]]
// CHECK:         %[[B:.+]] = gt.gelu %[[A]]
// CHECK:         return %[[B]], %[[W]]
// CHECK-LABEL: func.func @pp_stage1(
// CHECK-SAME:    %arg1: tensor<2x4xf32> {gt.differentiable, gt.name = "act0", gt.recv_from = 0 : i64}, %arg2: tensor<4x4xf32> {gt.differentiable, gt.name = "act1", gt.recv_from = 0 : i64})
// CHECK-NOT:     ml_program.global_load
// CHECK:         %[[C:.+]] = gt.linear %arg1, %arg2
// CHECK:         return %[[C]]
// With three stages the middle one reads no @w: it receives the value and
// sends it on. The last stage's own load of @w (a second load op) reads
// the value received too.
// THREE-LABEL: func.func @pp_stage0(
// THREE-SAME:    -> (tensor<2x4xf32> {gt.name = "act0", gt.send_to = 1 : i64}, tensor<4x4xf32> {gt.name = "act1", gt.send_to = 1 : i64})
// THREE-LABEL: func.func @pp_stage1(
// THREE-SAME:    %arg1: tensor<2x4xf32> {gt.differentiable, gt.name = "act0", gt.recv_from = 0 : i64}, %arg2: tensor<4x4xf32> {gt.differentiable, gt.name = "act1", gt.recv_from = 0 : i64})
// THREE-SAME:    -> (tensor<2x4xf32> {gt.name = "act0", gt.send_to = 2 : i64}, tensor<4x4xf32> {gt.name = "act1", gt.send_to = 2 : i64})
// THREE:         %[[G:.+]] = gt.gelu %arg1
// THREE:         return %[[G]], %arg2
// THREE-LABEL: func.func @pp_stage2(
// THREE-SAME:    %arg2: tensor<4x4xf32> {gt.differentiable, gt.name = "act1", gt.recv_from = 1 : i64})
// THREE-NOT:     ml_program.global_load
// THREE:         gt.linear %arg1, %arg2
ml_program.global private mutable @w(dense<0.5> : tensor<4x4xf32>) : tensor<4x4xf32> {gt.param}
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = ml_program.global_load @w : tensor<4x4xf32>
  %a = gt.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = gt.gelu %a : tensor<2x4xf32>
  %w2 = ml_program.global_load @w : tensor<4x4xf32>
  %c = gt.linear %b, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}
