// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=1" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff --gt-data-parallel="dp=2 zero=1" | FileCheck %s --check-prefix=DP
// ZeRO-1: gt-data-parallel reduce-scatters the packed gradients (24 + 3 =
// 27 elements, padded to 28) and names the shard's gradient after the
// stand-in global @gt.zero.bucket0 (14 elements); gt-optimizer keeps the
// AdamW moments at that size; gt-zero-gather cuts the shard from the
// parameters and all-gathers the update into them.

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// DP:      ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// DP-LABEL: func.func @main_grad
// DP-SAME:   -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<14xf32> {gt.name = "grad:gt.zero.bucket0"})
// DP:        shard.all_reduce %{{.*}} on @gt_dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// DP:        %[[PAD:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// DP:        %[[PACK:.*]] = tosa.concat %{{.*}}, %{{.*}}, %[[PAD]] {axis = 0 : i32} : (tensor<24xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<28xf32>
// DP:        shard.reduce_scatter %[[PACK]] on @gt_dp grid_axes = [0] scatter_axis = 0 : tensor<28xf32> -> tensor<14xf32>

// CHECK-NOT:  @gt.zero.bucket0(
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0.adam_v(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// CHECK-NOT:  @w.adam_m
// CHECK-LABEL: func.func @main(
// CHECK-NOT:  ml_program.global_load @gt.zero.bucket0 :
// The shard of the current parameters.
// CHECK:      %[[W:.*]] = ml_program.global_load @w : tensor<8x3xf32>
// CHECK:      %[[WF:.*]] = tosa.reshape %[[W]]
// CHECK:      %[[B:.*]] = ml_program.global_load @b : tensor<3xf32>
// CHECK:      %[[P:.*]] = tosa.concat %[[WF]], %[[B]], %{{.*}} {axis = 0 : i32} : (tensor<24xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<28xf32>
// CHECK:      %[[S:.*]] = shard.all_slice %[[P]] on @gt_dp grid_axes = [0] slice_axis = 0 : tensor<28xf32> -> tensor<14xf32>
// CHECK:      ml_program.global_store @gt.zero.bucket0.adam_m
// The updated shard is gathered and stored into each parameter.
// CHECK:      %[[ALL:.*]] = shard.all_gather %[[NEW:.*]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<14xf32> -> tensor<28xf32>
// CHECK:      %[[WS:.*]] = tosa.slice %[[ALL]]
// CHECK:      %[[WN:.*]] = tosa.reshape %[[WS]], %{{.*}} -> tensor<8x3xf32>
// CHECK:      ml_program.global_store @w = %[[WN]] : tensor<8x3xf32>
// CHECK:      %[[BS:.*]] = tosa.slice %[[ALL]]
// CHECK:      ml_program.global_store @b = %[[BS]] : tensor<3xf32>
// CHECK-NOT:  ml_program.global_store @gt.zero.bucket0 =
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %y = gt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
