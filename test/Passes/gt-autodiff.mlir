// RUN: megagraph-opt %s --gt-autodiff -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff=replace-main -split-input-file | FileCheck %s --check-prefix=MAIN

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// A linear head: the loss, the weight gradient x^T dlogits and the bias
// gradient (row sum), in parameter order, named after the globals. The
// correct counts come from the forward logits: `correct` over label_mask
// (i1, logical and) and `eval_correct` over eval_mask (f32, a product).
// CHECK-LABEL: func.func @main_grad
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32> {gt.name = "x"}, %[[L:.*]]: tensor<4xi64> {gt.name = "labels"}, %[[M:.*]]: tensor<4xi1> {gt.name = "label_mask"}, %[[E:.*]]: tensor<4xf32> {gt.name = "eval_mask"})
// CHECK-SAME:    -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<8x3xf32> {gt.name = "grad:w"}, tensor<3xf32> {gt.name = "grad:b"})
// CHECK:         %[[Y:.*]] = gt.linear %[[X]]
// CHECK:         %[[LOSS:.*]] = gt.cross_entropy %[[Y]], %[[L]] mask(%[[M]])
// CHECK:         tosa.equal
// CHECK:         %[[DW:.*]] = tosa.reshape %{{.*}} -> tensor<8x3xf32>
// CHECK:         %[[DB:.*]] = tosa.reshape %{{.*}} -> tensor<3xf32>
// CHECK:         tosa.argmax %[[Y]] {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4xi32>
// CHECK:         tosa.logical_and %{{.*}}, %[[M]]
// CHECK:         tosa.argmax %[[Y]]
// CHECK:         %[[HIT:.*]] = tosa.equal
// CHECK:         %[[HITF:.*]] = tosa.cast %[[HIT]] : (tensor<4xi1>) -> tensor<4xf32>
// CHECK:         %[[EVAL:.*]] = tosa.mul %[[HITF]], %[[E]]
// CHECK:         %[[ESUM:.*]] = tosa.reduce_sum %[[EVAL]]
// CHECK:         %[[ECOUNT:.*]] = tosa.reshape %[[ESUM]]
// CHECK:         return %[[LOSS]], %{{.*}}, %[[ECOUNT]], %[[DW]], %[[DB]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<8x3xf32>, tensor<3xf32>
// MAIN-LABEL: func.func @main
// MAIN-SAME:    {gt.name = "label_mask"}, %{{.*}}: tensor<4xf32> {gt.name = "eval_mask"}
// MAIN-NOT:   func.func @main_grad
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %y = gt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// Fan-out: the parameter feeds two uses, whose gradients are added; a
// broadcast add sums its gradient back over the broadcast dimension.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[G1:.*]] = tosa.reduce_sum %{{.*}} {axis = 0 : i32} : (tensor<2x4x3xf32>) -> tensor<1x4x3xf32>
// CHECK:         %[[G2:.*]] = tosa.reduce_sum %{{.*}} {axis = 0 : i32} : (tensor<2x4x3xf32>) -> tensor<1x4x3xf32>
// CHECK:         %[[ACC:.*]] = tosa.add %[[G1]], %[[G2]] : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
// CHECK:         %[[DW:.*]] = tosa.reshape %[[ACC]], %{{.*}} : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}}, %[[DW]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<4x3xf32>
func.func @main(%x: tensor<2x4x3xf32> {gt.name = "x"}) -> (tensor<2x4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %s = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3 = tosa.reshape %w, %s : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %a = tosa.add %x, %w3 : (tensor<2x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = tosa.mul %a, %w3, %shift : (tensor<2x4x3xf32>, tensor<1x4x3xf32>, tensor<1xi8>) -> tensor<2x4x3xf32>
  return %m : tensor<2x4x3xf32>
}
