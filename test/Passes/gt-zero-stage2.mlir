// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2 presummed" | FileCheck %s --check-prefix=PRESUMMED
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=1" | FileCheck %s --check-prefix=ZERO1
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=2" --gt-shard-to-runtime | FileCheck %s --check-prefix=LOWERED
// ZeRO-2 (sharded gradients): a bucket is one layer, in the order the
// backward produces the gradients (the last layer first). Each bucket's
// full-size gradients are packed and reduce-scattered right after the
// backward has produced the last of them, inside the backward: layer 2's
// bucket (18 + 3 + 1 padding = 22 elements) is sent before the backward
// of layer 1 (its weight gradient, tensor<8x6xf32>, a 1x8x6 matmul) has
// run, and nothing uses the packed gradients after their reduce-scatter.
// Only the shards reach the return. The bucket reduce-scatters carry
// gt.overlap: gt-shard-to-runtime starts each one and waits for it only
// before the next one starts (LOWERED), so layer 1's backward runs while
// layer 2's bucket moves.

ml_program.global private mutable @w1(dense<0.5> : tensor<8x6xf32>) : tensor<8x6xf32> {gt.param}
ml_program.global private mutable @b1(dense<0.1> : tensor<6xf32>) : tensor<6xf32> {gt.param}
ml_program.global private mutable @w2(dense<0.25> : tensor<6x3xf32>) : tensor<6x3xf32> {gt.param}
ml_program.global private mutable @b2(dense<0.2> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// CHECK:      module attributes {gt.plan = #gt.plan<dp = 2, zero = 2>
// CHECK:      ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<11xf32>) : tensor<11xf32> {gt.zero_shard = #gt.zero_shard<params = [@w2, @b2], sizes = [18, 3], padded = 22>}
// CHECK:      ml_program.global private mutable @gt.zero.bucket1(dense<0.000000e+00> : tensor<27xf32>) : tensor<27xf32> {gt.zero_shard = #gt.zero_shard<params = [@w1, @b1], sizes = [48, 6], padded = 54>}
// CHECK-LABEL: func.func @main_grad
// CHECK-SAME:   tensor<11xf32> {gt.name = "grad:gt.zero.bucket0"}, tensor<27xf32> {gt.name = "grad:gt.zero.bucket1"})
// The local count that weights the gradients comes first.
// CHECK:        %[[MASK:.*]] = tosa.cast %arg2 : (tensor<4xi1>) -> tensor<4xf32>
// CHECK:        tosa.reduce_sum %[[MASK]]
// CHECK:        %[[PACK0:.*]] = tosa.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<18xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<22xf32>
// CHECK-NEXT:   %[[RS0:.*]] = shard.reduce_scatter %[[PACK0]] on @gt_dp grid_axes = [0] scatter_axis = 0 {gt.overlap} : tensor<22xf32> -> tensor<11xf32>
// CHECK-NOT:    %[[PACK0]]
// CHECK:        tosa.matmul {{.*}} -> tensor<1x8x6xf32>
// CHECK:        %[[PACK1:.*]] = tosa.concat %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<48xf32>, tensor<6xf32>) -> tensor<54xf32>
// CHECK-NEXT:   %[[RS1:.*]] = shard.reduce_scatter %[[PACK1]] on @gt_dp grid_axes = [0] scatter_axis = 0 {gt.overlap} : tensor<54xf32> -> tensor<27xf32>
// CHECK-NOT:    %[[PACK0]]
// CHECK-NOT:    %[[PACK1]]
// CHECK:        shard.all_reduce {{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK:        %[[G0:.*]] = tosa.mul %[[RS0]], %{{.*}}, %{{.*}} : (tensor<11xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<11xf32>
// CHECK:        %[[G1:.*]] = tosa.mul %[[RS1]], %{{.*}}, %{{.*}} : (tensor<27xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<27xf32>
// CHECK:        return %{{.*}}, %{{.*}}, %{{.*}}, %[[G0]], %[[G1]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<11xf32>, tensor<27xf32>
// Presummed gradients (context parallelism: already the global mean) are
// neither weighted by the local count before the reduce-scatter nor divided
// by the global count after it: the shards are returned as they are.
// PRESUMMED-LABEL: func.func @main_grad
// PRESUMMED:        %[[PACK:.*]] = tosa.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<18xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<22xf32>
// PRESUMMED-NEXT:   %[[RS0:.*]] = shard.reduce_scatter %[[PACK]] on @gt_dp grid_axes = [0] scatter_axis = 0 {gt.overlap} : tensor<22xf32> -> tensor<11xf32>
// PRESUMMED:        tosa.matmul {{.*}} -> tensor<1x8x6xf32>
// PRESUMMED:        %[[RS1:.*]] = shard.reduce_scatter {{.*}} : tensor<54xf32> -> tensor<27xf32>
// PRESUMMED-NOT:    tosa.mul %[[RS0]]
// PRESUMMED-NOT:    tosa.mul %[[RS1]]
// PRESUMMED:        return %{{.*}}, %{{.*}}, %{{.*}}, %[[RS0]], %[[RS1]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<11xf32>, tensor<27xf32>
// ZeRO-1 keeps one bucket in parameter order, reduce-scattered after the
// whole backward (after the gradient of w1).
// ZERO1:       @gt.zero.bucket0({{.*}}) : tensor<38xf32> {gt.zero_shard = #gt.zero_shard<params = [@w1, @b1, @w2, @b2], sizes = [48, 6, 18, 3], padded = 76>}
// ZERO1-LABEL: func.func @main_grad
// ZERO1:       tosa.matmul {{.*}} -> tensor<1x8x6xf32>
// ZERO1-NOT:   gt.overlap
// ZERO1:       shard.reduce_scatter {{.*}} : tensor<76xf32> -> tensor<38xf32>
// ZERO1-NOT:   shard.reduce_scatter
// ZERO1-NOT:   gt.overlap
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w1 = ml_program.global_load @w1 : tensor<8x6xf32>
  %b1 = ml_program.global_load @b1 : tensor<6xf32>
  %w2 = ml_program.global_load @w2 : tensor<6x3xf32>
  %b2 = ml_program.global_load @b2 : tensor<3xf32>
  %h = gt.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %y = gt.linear %h, %w2, %b2 : (tensor<4x6xf32>, tensor<6x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// LOWERED-LABEL: func.func @main_grad
// LOWERED:       tosa.concat {{.*}} -> tensor<22xf32>
// LOWERED:       %[[R0:.*]] = call @mgrt_comm_reduce_scatter_start_f32({{.*}}) : {{.*}} -> i64
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       tosa.matmul {{.*}} -> tensor<1x8x6xf32>
// LOWERED:       tosa.concat {{.*}} -> tensor<54xf32>
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R0]])
// LOWERED:       %[[R1:.*]] = call @mgrt_comm_reduce_scatter_start_f32
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R1]])
// LOWERED-NEXT:  bufferization.to_tensor
// LOWERED:       return
