// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.5 weight-decay=0.1" | FileCheck %s --check-prefix=SGD
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01" | FileCheck %s --check-prefix=ADAM
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01 return-state=true" | FileCheck %s --check-prefix=STATE

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}

// With sgd the step function replaces @main, returns loss and the correct
// counts only, and
// stores w - lr * (g + wd * w) into the parameter global.
// SGD:      module attributes {gt.training = {lr = 5.000000e-01 : f64, lr_schedule = "constant", optimizer = "sgd", weight_decay = 1.000000e-01 : f64}}
// SGD-NOT:  func.func @main_grad
// SGD-LABEL: func.func @main
// SGD-SAME:    %{{.*}}: tensor<4xf32> {gt.name = "eval_mask"})
// SGD-SAME:    -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"})
// SGD:         %[[W:.*]] = ml_program.global_load @w : tensor<8x3xf32>
// SGD-NOT:     ml_program.global_load @w
// SGD:         %[[NEW:.*]] = tosa.sub %[[W]], %{{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// SGD-NEXT:    ml_program.global_store @w = %[[NEW]] : tensor<8x3xf32>
// SGD:         return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>

// With adamw: zero-initialized moment globals and a step counter, bias
// corrections from the counter. Every store comes after the last compute op,
// so no state is read after it is stored: upstream bufferization of
// ml_program.global_store treats its operand as written and not read, and a
// stored tensor read later was stored as an uninitialized copy (the AdamW
// NaN). The counter, then each parameter's moments, then the parameter.
// ADAM-DAG:  ml_program.global private mutable @gt.step(dense<0.000000e+00> : tensor<f32>) : tensor<f32> {gt.optimizer_state}
// ADAM-DAG:  ml_program.global private mutable @w.adam_m(dense<0.000000e+00> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.optimizer_state}
// ADAM-DAG:  ml_program.global private mutable @w.adam_v(dense<0.000000e+00> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.optimizer_state}
// ADAM-LABEL: func.func @main
// ADAM:        %[[T0:.*]] = ml_program.global_load @gt.step
// ADAM:        %[[T:.*]] = tosa.add %[[T0]]
// ADAM:        tosa.pow %{{.*}}, %[[T]]
// ADAM:        %[[M:.*]] = tosa.add
// ADAM:        %[[V:.*]] = tosa.add
// ADAM:        tosa.mul %[[V]]
// ADAM:        tosa.pow
// ADAM:        %[[NEW:.*]] = tosa.sub
// ADAM-NEXT:   ml_program.global_store @gt.step = %[[T]]
// ADAM-NEXT:   ml_program.global_store @w.adam_m = %[[M]]
// ADAM-NEXT:   ml_program.global_store @w.adam_v = %[[V]]
// ADAM-NEXT:   ml_program.global_store @w = %[[NEW]]
// ADAM-NEXT:   return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>

// return-state (for tests) keeps the gradients and returns every stored
// global, loaded back after all the stores.
// STATE-LABEL: func.func @main
// STATE-SAME:    -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<8x3xf32> {gt.name = "grad:w"}, tensor<f32> {gt.name = "state:gt.step"}, tensor<8x3xf32> {gt.name = "state:w.adam_m"}, tensor<8x3xf32> {gt.name = "state:w.adam_v"}, tensor<8x3xf32> {gt.name = "state:w"})
// STATE:         ml_program.global_store @w =
// STATE-NEXT:    %[[T:.*]] = ml_program.global_load @gt.step
// STATE-NEXT:    %[[M:.*]] = ml_program.global_load @w.adam_m
// STATE-NEXT:    %[[V:.*]] = ml_program.global_load @w.adam_v
// STATE-NEXT:    %[[W:.*]] = ml_program.global_load @w :
// STATE-NEXT:    return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %[[M]], %[[V]], %[[W]] :
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %y = gt.linear %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
