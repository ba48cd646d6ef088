// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=1" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather | sed 's/zero = 1>/zero = 2>/' > %t.zero1
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather > %t.zero2
// RUN: diff %t.zero1 %t.zero2
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2 presummed" | FileCheck %s --check-prefix=PRESUMMED
// ZeRO-2 (sharded gradients) is the same code as ZeRO-1: the packed
// full-size gradients (24 + 3 + 1 padding = 28 elements) have one use, the
// reduce-scatter, and @main_grad returns only this rank's 14-element
// gradient shard, so no full-size gradient outlives the reduce-scatter.
// The step compiled with zero=2 equals the zero=1 one but for the plan
// attribute (the diff above).

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// CHECK:      module attributes {gt.plan = #gt.plan<dp = 2, zero = 2>
// CHECK:      ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// CHECK-LABEL: func.func @main_grad
// CHECK-SAME:   -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<14xf32> {gt.name = "grad:gt.zero.bucket0"})
// CHECK:        %[[PACK:.*]] = tosa.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<24xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<28xf32>
// CHECK-NEXT:   %[[RS:.*]] = shard.reduce_scatter %[[PACK]] on @gt_dp grid_axes = [0] scatter_axis = 0 : tensor<28xf32> -> tensor<14xf32>
// CHECK-NOT:    %[[PACK]]
// CHECK-NOT:    tensor<28xf32>
// CHECK:        %[[G:.*]] = tosa.mul %[[RS]], %{{.*}}, %{{.*}} : (tensor<14xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<14xf32>
// CHECK-NOT:    tensor<28xf32>
// CHECK:        return %{{.*}}, %{{.*}}, %{{.*}}, %[[G]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<14xf32>
// Presummed gradients (context parallelism: already the global mean) are
// neither weighted by the local count before the reduce-scatter nor divided
// by the global count after it: the shard is returned as it is.
// PRESUMMED-LABEL: func.func @main_grad
// PRESUMMED:        %[[PACK:.*]] = tosa.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<24xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<28xf32>
// PRESUMMED-NEXT:   %[[RS:.*]] = shard.reduce_scatter %[[PACK]] on @gt_dp grid_axes = [0] scatter_axis = 0 : tensor<28xf32> -> tensor<14xf32>
// PRESUMMED-NOT:    tosa.mul %[[RS]]
// PRESUMMED:        return %{{.*}}, %{{.*}}, %{{.*}}, %[[RS]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<14xf32>
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %y = gt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
