// megagraph-compile's training-recipe flags: documented in --help, passed
// to gt-optimizer, and each invalid recipe is one clear error, found before
// the model is read (every gt-optimizer message is in
// test/Passes/gt-optimizer-errors.mlir).
// RUN: megagraph-compile --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --beta1=<number>
// HELP-DAG: --beta2=<number>
// HELP-DAG: --clip-grad-norm=<MAX>
// HELP-DAG: --dampening=<number>
// HELP-DAG: --eps=<number>
// HELP-DAG: --lr-schedule=<string>
// HELP-DAG: --min-lr=<number>
// HELP-DAG: --momentum=<number>
// HELP-DAG: --nesterov
// HELP-DAG: --optimizer=<string> {{.*}}sgd {{.*}}adam {{.*}}adamw
// HELP-DAG: --power=<number>
// HELP-DAG: --total-steps=<N>
// HELP-DAG: --warmup-steps=<N>

// RUN: megagraph-compile %s --train --optimizer sgd --lr 0.1 --momentum 0.9 --nesterov --lr-schedule polynomial --warmup-steps 2 --total-steps 10 --min-lr 0.001 --power 2 --clip-grad-norm 1 --plan dp=2 | FileCheck %s --check-prefix=OK
// OK: module attributes {gt.plan = #gt.plan<dp = 2>, gt.training = {clip_grad_norm = 1.000000e+00 : f64, lr = 1.000000e-01 : f64, lr_schedule = "polynomial", optimizer = "sgd", weight_decay = 0.000000e+00 : f64}}
// OK: @w.momentum_buffer
// OK: @gt.step

// RUN: not megagraph-compile %s --train --lr -1 2>&1 | FileCheck %s --check-prefix=LR
// LR: megagraph-compile: error: --lr must be a finite number > 0, got -1
// RUN: not megagraph-compile %s --train --optimizer sgd --momentum 1.5 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: megagraph-compile: error: --momentum must be in [0, 1), got 1.5
// RUN: not megagraph-compile %s --train --optimizer sgd --nesterov 2>&1 | FileCheck %s --check-prefix=NEST
// NEST: megagraph-compile: error: --nesterov needs --momentum > 0 and no --dampening
// RUN: not megagraph-compile %s --train --lr-schedule exponential 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: megagraph-compile: error: --lr-schedule=exponential is not a schedule; use constant, linear, cosine or polynomial
// RUN: not megagraph-compile %s --train --lr-schedule cosine --warmup-steps 100 --total-steps 50 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: megagraph-compile: error: --warmup-steps (100) exceeds --total-steps (50)
// RUN: not megagraph-compile %s --train --optimizer adam --beta1 1 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: megagraph-compile: error: --beta1 must be in [0, 1), got 1

// The global norm needs every gradient: a ZeRO rank holds a shard.
// RUN: not megagraph-compile %s --train --clip-grad-norm 1 --plan dp=2,zero=1 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: gt-optimizer: clip-grad-norm is not supported with ZeRO (zero >= 1): each rank holds a shard of the gradients, and the global norm needs them all

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %y = gt.linear %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
