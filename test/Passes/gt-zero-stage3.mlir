// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=3" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather | FileCheck %s
// ZeRO-3 (sharded parameters): gt-zero-gather keeps @gt.zero.bucket0 (14
// of the 28 packed elements) as the parameters' storage. The parameter
// globals become immutable initial weights, read on the first step only
// (flag @gt.zero.ready) to cut this rank's shard, before any other work
// of the step (its packed temporaries are freed before the step's arena
// exists). Every step all-gathers
// the shard into temporaries that replace the parameters' loads; the
// optimizer writes only the shard.

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// CHECK:      module attributes {gt.plan = #gt.plan<dp = 2, zero = 3>
// CHECK-DAG:  ml_program.global private @w(dense<5.000000e-01> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param_init}
// CHECK-DAG:  ml_program.global private @b(dense<1.000000e-01> : tensor<3xf32>) : tensor<3xf32> {gt.param_init}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.param_shard, gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.ready(dense<0> : tensor<i32>) : tensor<i32>
// CHECK-NOT:  ml_program.global private mutable @w
// CHECK-LABEL: func.func @main(
// The first step cuts this rank's shard from the initial weights.
// CHECK:      %[[R:.*]] = ml_program.global_load @gt.zero.ready : tensor<i32>
// CHECK:      %[[RV:.*]] = tensor.extract %[[R]][] : tensor<i32>
// CHECK:      %[[FIRST:.*]] = arith.cmpi eq, %[[RV]], %{{.*}} : i32
// CHECK:      scf.if %[[FIRST]] {
// CHECK:        ml_program.global_load @w : tensor<8x3xf32>
// CHECK:        ml_program.global_load @b : tensor<3xf32>
// CHECK:        %[[INIT:.*]] = shard.all_slice %{{.*}} on @gt_dp grid_axes = [0] slice_axis = 0 : tensor<28xf32> -> tensor<14xf32>
// CHECK:        ml_program.global_store @gt.zero.bucket0 = %[[INIT]] : tensor<14xf32>
// CHECK-NEXT: }
// The cuts come before anything else of the step: then the flag is set.
// CHECK:      ml_program.global_store @gt.zero.ready =
// The full parameters of the step, gathered into temporaries.
// CHECK:      %[[S:.*]] = ml_program.global_load @gt.zero.bucket0 : tensor<14xf32>
// CHECK:      %[[ALL:.*]] = shard.all_gather %[[S]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<14xf32> -> tensor<28xf32>
// CHECK:      %[[WS:.*]] = tosa.slice %[[ALL]], {{.*}} -> tensor<24xf32>
// CHECK:      %[[W:.*]] = tosa.reshape %[[WS]], {{.*}} -> tensor<8x3xf32>
// CHECK:      %[[B:.*]] = tosa.slice %[[ALL]], {{.*}} -> tensor<3xf32>
// CHECK:      gt.linear %arg0, %[[W]], %[[B]]
// CHECK-NOT:  ml_program.global_load @w
// CHECK-NOT:  ml_program.global_load @b
// CHECK:      shard.reduce_scatter %{{.*}} on @gt_dp grid_axes = [0] scatter_axis = 0 {gt.overlap} : tensor<28xf32> -> tensor<14xf32>
// The update writes only the shard; no all-gather after it.
// CHECK-NOT:  shard.all_gather
// CHECK-NOT:  ml_program.global_store @w
// CHECK:      ml_program.global_store @gt.zero.bucket0 = %{{.*}} : tensor<14xf32>
// CHECK-NOT:  shard.all_gather
// CHECK-NOT:  ml_program.global_store @w
// CHECK-NOT:  ml_program.global_store @b
// CHECK:      return
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %y = gt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
