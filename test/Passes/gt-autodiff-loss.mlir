// gt-autodiff loss= and output-name=: the element-wise losses and the errors.
// RUN: not megagraph-opt %s --gt-autodiff='loss=hinge' 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: error: unknown loss 'hinge' (expected cross_entropy, nll, mse, l1 or bce_with_logits)
// RUN: not megagraph-opt %s --gt-autodiff='loss=mse output-name=score' 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: loss output 'score' is not an output of the model (outputs: logits, #1)

// The element-wise losses are TOSA ops the reverse sweep differentiates.
// RUN: megagraph-opt %s --gt-autodiff='loss=bce_with_logits output-name=logits' | FileCheck %s --check-prefix=BCE
// BCE-LABEL: func.func @main_grad(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x3xf32> {gt.name = "labels"}, %{{.*}}: tensor<4xi1> {gt.name = "label_mask"}) -> (tensor<f32> {gt.name = "loss"}, tensor<3x3xf32> {gt.name = "grad:w"})
// BCE-DAG: tosa.maximum
// BCE-DAG: tosa.abs
// BCE-DAG: tosa.exp
// BCE-DAG: tosa.log
// BCE-NOT: gt.cross_entropy

ml_program.global private mutable @w(dense<0.5> : tensor<3x3xf32>) : tensor<3x3xf32> {gt.param}

func.func @main(%x: tensor<4x3xf32>) -> (tensor<4x3xf32> {gt.name = "logits"}, tensor<4x3xf32>) {
  %w = ml_program.global_load @w : tensor<3x3xf32>
  %y = gt.linear %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %y, %x : tensor<4x3xf32>, tensor<4x3xf32>
}
