// megagraph-compile --loss / --loss-output: the losses' labels and results,
// and the flag errors.

// The default loss is cross-entropy on the first output, with class labels
// and the accuracy counts.
// RUN: megagraph-compile %s --gradients --emit=gt | FileCheck %s --check-prefix=CE
// CE: func.func @main({{.*}}: tensor<2x4xi64> {gt.name = "labels"}, %{{.*}}: tensor<2x4xi1> {gt.name = "label_mask"}, %{{.*}}: tensor<2x4xf32> {gt.name = "eval_mask"}) -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<2x3x5xf32> {gt.name = "grad:w"})
// CE: gt.cross_entropy

// A regression loss on the second output takes float labels of that
// output's shape and returns no accuracy counts (and takes no eval_mask).
// RUN: megagraph-compile %s --gradients --emit=gt --loss mse --loss-output pred | FileCheck %s --check-prefix=MSE
// MSE: func.func @main({{.*}}: tensor<2x4x1xf32> {gt.name = "labels"}, %{{.*}}: tensor<2x4xi1> {gt.name = "label_mask"}) -> (tensor<f32> {gt.name = "loss"}, tensor<2x3x1xf32> {gt.name = "grad:v"})
// MSE-NOT: gt.cross_entropy

// Data parallelism weights the loss by the label_mask count, which every
// loss is a mean over.
// RUN: megagraph-compile %s --train --plan dp=2 --emit=gt --optimizer sgd --loss l1 --loss-output pred | FileCheck %s --check-prefix=DP
// DP: func.func @main({{.*}}gt.name = "labels"{{.*}}gt.name = "label_mask"{{.*}}) -> (tensor<f32> {gt.name = "loss"})
// DP: shard.all_reduce

// Context parallelism seeds each rank's share of the masked mean with its
// label_mask count over the total, whatever the loss: each rank gets float
// labels for its block of rows.
// RUN: megagraph-compile %examples/models/graphormer/model.onnx --train --plan cp=2 --optimizer sgd --loss mse --emit=gt | FileCheck %s --check-prefix=CP
// CP: func.func @main({{.*}}tensor<2x8x4xf32> {gt.name = "labels"}, %{{.*}}: tensor<2x8xi1> {gt.name = "label_mask"}) -> (tensor<f32> {gt.name = "loss"})
// CP: shard.all_reduce {{.*}} on @gt_cp grid_axes = [0, 1] : tensor<1xf32>

// RUN: not megagraph-compile %s --gradients --emit=gt --loss hinge 2>&1 | FileCheck %s --check-prefix=BAD-LOSS
// BAD-LOSS: --loss=hinge is not a loss; use cross_entropy, nll, mse, l1 or bce_with_logits

// RUN: not megagraph-compile %s --gradients --emit=gt --loss-output score 2>&1 | FileCheck %s --check-prefix=BAD-OUTPUT
// BAD-OUTPUT: error: loss output 'score' is not an output of the model (outputs: logits, pred)

// RUN: not megagraph-compile %s --emit=gt --loss mse 2>&1 | FileCheck %s --check-prefix=NO-TRAIN
// NO-TRAIN: --loss and --loss-output apply to --train and --gradients

// Pipeline stages build cross-entropy only.
// RUN: not megagraph-compile %s --train --plan pp=2 --emit=gt --loss mse --loss-output pred 2>&1 | FileCheck %s --check-prefix=PP
// PP: --loss=mse --loss-output=pred is not supported with pipeline parallelism or micro-batches (pp=2, mb=1)

ml_program.global private mutable @w(dense<0.25> : tensor<2x3x5xf32>) : tensor<2x3x5xf32> {gt.param}
ml_program.global private mutable @v(dense<0.5> : tensor<2x3x1xf32>) : tensor<2x3x1xf32> {gt.param}

func.func @main(%x: tensor<2x4x3xf32> {gt.name = "x"}) -> (tensor<2x4x5xf32> {gt.name = "logits"}, tensor<2x4x1xf32> {gt.name = "pred"}) {
  %w = ml_program.global_load @w : tensor<2x3x5xf32>
  %v = ml_program.global_load @v : tensor<2x3x1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  %p = tosa.matmul %x, %v, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x1xf32>
  return %y, %p : tensor<2x4x5xf32>, tensor<2x4x1xf32>
}
