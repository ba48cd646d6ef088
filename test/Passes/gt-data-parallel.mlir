// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2" | FileCheck %s --check-prefix=ONE
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 bucket-bytes=36" | FileCheck %s --check-prefix=SMALL
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 bucket-bytes=48" | FileCheck %s --check-prefix=FILL
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=1" | FileCheck %s --check-prefix=DP1
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=4 bucket-bytes=48" --gt-optimizer=optimizer=sgd --gt-shard-to-runtime --cse | FileCheck %s --check-prefix=LOWERED

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @big(dense<0.2> : tensor<3x3xf32>) : tensor<3x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// Default buckets (4 MiB). The gradients go in the order the backward
// produces them (layer 2's 9 + 3 elements, then layer 1's 24) into one
// bucket, all-reduced right after its last gradient and marked gt.overlap.
// The count, n * loss, correct and eval_correct travel together at the
// end.
// ONE:      module attributes {gt.plan = #gt.plan<dp = 2>}
// ONE:      shard.grid @gt_dp(shape = 2)
// ONE-NOT:  megagraph_plan_dp
// ONE-LABEL: func.func @main_grad
// ONE-SAME:    %{{.*}}: tensor<4xi1> {gt.name = "label_mask"}
// The local count of labelled nodes comes first.
// ONE:        %[[MASK:.*]] = tosa.cast %arg2 : (tensor<4xi1>) -> tensor<4xf32>
// ONE-NEXT:   %[[N:.*]] = tosa.reduce_sum %[[MASK]] {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
// ONE:        tosa.matmul {{.*}} -> tensor<1x8x3xf32>
// ONE:        %[[L:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : (tensor<9xf32>, tensor<3xf32>, tensor<24xf32>) -> tensor<36xf32>
// ONE-NEXT:   %[[S2:.*]] = shard.all_reduce %[[L]] on @gt_dp grid_axes = [0] {gt.overlap} : tensor<36xf32> -> tensor<36xf32>
// ONE:        %[[NLOSS:.*]] = tosa.mul %{{.*}}, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>, tensor<1xi8>) -> tensor<f32>
// ONE:        %[[PACK:.*]] = tosa.concat %[[N]], {{.*}} {axis = 0 : i32} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4xf32>
// ONE-NEXT:   %[[SUM:.*]] = shard.all_reduce %[[PACK]] on @gt_dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// ONE-NOT:    shard.all_reduce
// ONE:        %[[GN:.*]] = tosa.slice %[[SUM]]
// ONE:        tosa.slice %[[S2]]
// ONE:        %[[INV:.*]] = tosa.reciprocal %[[GN]] : (tensor<1xf32>) -> tensor<1xf32>
// ONE:        return

// 48-byte buckets fill in production order: layer 2's 12 elements are
// all-reduced inside the backward, before layer 1's backward (the gradient
// of w) runs, then layer 1's 24 (they would overflow the first bucket).
// FILL-LABEL: func.func @main_grad
// FILL:       %[[L2:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : (tensor<9xf32>, tensor<3xf32>) -> tensor<12xf32>
// FILL-NEXT:  shard.all_reduce %[[L2]] on @gt_dp grid_axes = [0] {gt.overlap} : tensor<12xf32> -> tensor<12xf32>
// FILL:       tosa.matmul {{.*}} -> tensor<1x8x3xf32>
// FILL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] {gt.overlap} : tensor<24xf32> -> tensor<24xf32>
// FILL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// FILL-NOT:   shard.all_reduce
// 36-byte buckets: each gradient of >= 9 elements alone, the 3-element
// bias in a new bucket, the scalars together at the end.
// SMALL-LABEL: func.func @main_grad
// SMALL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] {gt.overlap} : tensor<9xf32> -> tensor<9xf32>
// SMALL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] {gt.overlap} : tensor<3xf32> -> tensor<3xf32>
// SMALL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] {gt.overlap} : tensor<24xf32> -> tensor<24xf32>
// SMALL:       shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// SMALL:       tosa.slice
// SMALL:       tosa.slice
// SMALL:       tosa.slice
// SMALL:       tosa.slice
// SMALL:       %[[INV:.*]] = tosa.reciprocal
// SMALL:       %[[G:.*]] = tosa.mul %{{.*}}, %[[INV]], %{{.*}} : (tensor<24xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<24xf32>
// SMALL:       %[[GW:.*]] = tosa.reshape %[[G]], %{{.*}} -> tensor<8x3xf32>
// SMALL:       return {{.*}}, %[[GW]], %{{.*}}, %{{.*}} : {{.*}}tensor<8x3xf32>, tensor<3x3xf32>, tensor<3xf32>

// dp = 1 changes nothing.
// DP1-NOT: shard.
// DP1-NOT: gt.plan

// The full path (48-byte buckets): the optimizer consumes the averaged
// gradients, the all-reduces become runtime calls on a 4 x 1 x 1 x 1 grid,
// axis mask 1,
// reduction sum (0): the gradient buckets started, each waited for before
// the next one starts or before its first reader (the last one after the
// scalars' blocking all-reduce).
// LOWERED-NOT: shard.grid
// LOWERED-DAG: func.func private @mgrt_comm_all_reduce_f32(memref<?xf32>, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// LOWERED-DAG: func.func private @mgrt_comm_all_reduce_start_f32(memref<?xf32>, i64, i64, i64, i64, i64, i64) -> i64 attributes {llvm.emit_c_interface}
// LOWERED-LABEL: func.func @main(
// LOWERED-NOT: shard.all_reduce
// LOWERED-DAG: %[[C4:.*]] = arith.constant 4 : i64
// LOWERED-DAG: %[[C1:.*]] = arith.constant 1 : i64
// LOWERED-DAG: %[[C0:.*]] = arith.constant 0 : i64
// LOWERED:     %[[R2:.*]] = call @mgrt_comm_all_reduce_start_f32(%{{.*}}, %[[C4]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C0]])
// LOWERED:     tosa.matmul {{.*}} -> tensor<1x8x3xf32>
// LOWERED:     call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R2]])
// LOWERED:     %[[R1:.*]] = call @mgrt_comm_all_reduce_start_f32
// LOWERED:     call @mgrt_comm_all_reduce_f32(%{{.*}}, %[[C4]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C0]])
// LOWERED:     call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R1]])
// LOWERED:     ml_program.global_store @w
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %y = gt.linear %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %big = ml_program.global_load @big : tensor<3x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %z = gt.linear %y, %big, %b : (tensor<4x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %z : tensor<4x3xf32>
}
