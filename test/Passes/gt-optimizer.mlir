// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.5 weight-decay=0.1" | FileCheck %s --check-prefix=SGD
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01" | FileCheck %s --check-prefix=ADAM
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01 return-state=true" | FileCheck %s --check-prefix=STATE
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.1 momentum=0.9 nesterov=true weight-decay=0.01" | FileCheck %s --check-prefix=NEST
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.1 momentum=0.9 dampening=0.5" | FileCheck %s --check-prefix=DAMP
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adam lr=0.01 weight-decay=0.1 beta1=0.8" | FileCheck %s --check-prefix=ADAML2
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.5 lr-schedule=cosine warmup-steps=2 total-steps=10 min-lr=0.05" | FileCheck %s --check-prefix=COS
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.5 lr-schedule=polynomial total-steps=10 power=2" | FileCheck %s --check-prefix=POLY
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.5 clip-grad-norm=2" | FileCheck %s --check-prefix=CLIP

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
// corrections from the counter. Each store comes after the last compute op
// that reads what it overwrites, so no state is read after it is stored:
// upstream bufferization of ml_program.global_store treats its operand as
// written and not read, and a stored tensor read later was stored as an
// uninitialized copy (the AdamW NaN). The parameter's moments, then the
// parameter, right after its update; the counter, which every update reads,
// last.
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
// ADAM-NEXT:   ml_program.global_store @w.adam_m = %[[M]]
// ADAM-NEXT:   ml_program.global_store @w.adam_v = %[[V]]
// ADAM-NEXT:   ml_program.global_store @w = %[[NEW]]
// ADAM-NEXT:   ml_program.global_store @gt.step = %[[T]]
// ADAM-NEXT:   return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>

// return-state (for tests) keeps the gradients and returns every stored
// global, loaded back after all the stores.
// STATE-LABEL: func.func @main
// STATE-SAME:    -> (tensor<f32> {gt.name = "loss"}, tensor<f32> {gt.name = "correct"}, tensor<f32> {gt.name = "eval_correct"}, tensor<8x3xf32> {gt.name = "grad:w"}, tensor<f32> {gt.name = "state:gt.step"}, tensor<8x3xf32> {gt.name = "state:w.adam_m"}, tensor<8x3xf32> {gt.name = "state:w.adam_v"}, tensor<8x3xf32> {gt.name = "state:w"})
// STATE:         ml_program.global_store @w =
// STATE-NEXT:    ml_program.global_store @gt.step =
// STATE-NEXT:    %[[T:.*]] = ml_program.global_load @gt.step
// STATE-NEXT:    %[[M:.*]] = ml_program.global_load @w.adam_m
// STATE-NEXT:    %[[V:.*]] = ml_program.global_load @w.adam_v
// STATE-NEXT:    %[[W:.*]] = ml_program.global_load @w :
// STATE-NEXT:    return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %[[M]], %[[V]], %[[W]] :
// SGD with Nesterov momentum and L2 decay (torch.optim.SGD): g += wd * w,
// buf = momentum * buf + g, w -= lr * (g + momentum * buf). Without
// dampening and schedule the step needs no counter.
// NEST-DAG:  ml_program.global private mutable @w.momentum_buffer(dense<0.000000e+00> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.optimizer_state}
// NEST-NOT:  @gt.step
// NEST-LABEL: func.func @main
// NEST:        %[[W:.*]] = ml_program.global_load @w :
// NEST:        %[[BUF0:.*]] = ml_program.global_load @w.momentum_buffer
// NEST:        %[[DECAY:.*]] = tosa.mul %[[W]], %{{.*}} :
// NEST:        %[[G:.*]] = tosa.add %{{.*}}, %[[DECAY]] :
// NEST:        %[[MB:.*]] = tosa.mul %[[BUF0]], %{{.*}} :
// NEST:        %[[BUF:.*]] = tosa.add %[[MB]], %[[G]] :
// NEST:        %[[MBUF:.*]] = tosa.mul %[[BUF]], %{{.*}} :
// NEST:        %[[DIR:.*]] = tosa.add %[[G]], %[[MBUF]] :
// NEST:        %[[STEP:.*]] = tosa.mul %[[DIR]], %{{.*}} :
// NEST:        %[[NEW:.*]] = tosa.sub %[[W]], %[[STEP]] :
// NEST-NEXT:   ml_program.global_store @w.momentum_buffer = %[[BUF]]
// NEST-NEXT:   ml_program.global_store @w = %[[NEW]]

// With dampening the buffer is the gradient at step 1: the gradient's
// coefficient is 1 - dampening * (1 - max(0, 2 - t)), t from the counter.
// DAMP-LABEL: func.func @main
// DAMP:        %[[S:.*]] = ml_program.global_load @gt.step
// DAMP:        %[[T:.*]] = tosa.add %[[S]], %{{.*}} :
// DAMP:        %[[TWO:.*]] = "tosa.const"() <{values = dense<2.000000e+00> : tensor<f32>}>
// DAMP-NEXT:   %[[D:.*]] = tosa.sub %[[TWO]], %[[T]] :
// DAMP-NEXT:   %[[FIRST:.*]] = tosa.maximum %[[D]], %{{.*}} :
// DAMP:        tosa.sub %{{.*}}, %[[FIRST]] :
// DAMP:        ml_program.global_store @w.momentum_buffer =
// DAMP-NEXT:   ml_program.global_store @w =
// DAMP-NEXT:   ml_program.global_store @gt.step = %[[T]]

// Adam (torch.optim.Adam): the decay joins the gradient that feeds both
// moments, and no decoupled decay follows.
// ADAML2-LABEL: func.func @main
// ADAML2:        %[[W:.*]] = ml_program.global_load @w :
// ADAML2:        "tosa.const"() <{values = dense<8.000000e-01> : tensor<f32>}>
// ADAML2:        ml_program.global_load @w.adam_m
// ADAML2:        %[[DECAY:.*]] = tosa.mul %[[W]], %{{.*}} :
// ADAML2:        %[[G:.*]] = tosa.add %{{.*}}, %[[DECAY]] :
// ADAML2:        tosa.mul %[[G]], %{{.*}} :
// ADAML2:        tosa.mul %[[G]], %[[G]], %{{.*}} :
// ADAML2-NOT:    tosa.mul %[[W]],
// ADAML2:        %[[NEW:.*]] = tosa.sub %[[W]], %{{.*}} :
// ADAML2:        ml_program.global_store @w = %[[NEW]]

// Warmup then cosine to min-lr (W = 2, T = 10, r = 0.05 / 0.5): from the
// steps done s, f = s < 2 ? s / 2 : max(0, r + (1 - r) (1 + cos(pi p)) / 2)
// with p = (s - 2) / 8, and the step's rate lr * f.
// COS-LABEL: func.func @main
// COS:        %[[S:.*]] = ml_program.global_load @gt.step
// COS:        %[[T:.*]] = tosa.add %[[S]], %{{.*}} :
// COS:        %[[RAMP:.*]] = tosa.mul %[[S]], %{{.*}} :
// COS:        tosa.sub %[[S]], %{{.*}} :
// COS:        "tosa.const"() <{values = dense<1.250000e-01> : tensor<f32>}>
// COS:        "tosa.const"() <{values = dense<3.14159274> : tensor<f32>}>
// COS:        tosa.cos
// COS:        "tosa.const"() <{values = dense<0.899999976> : tensor<f32>}>
// COS:        "tosa.const"() <{values = dense<1.000000e-01> : tensor<f32>}>
// COS:        %[[DECAY:.*]] = tosa.maximum
// COS:        %[[WARM:.*]] = "tosa.const"() <{values = dense<2.000000e+00> : tensor<f32>}>
// COS-NEXT:   %[[IN:.*]] = tosa.greater %[[WARM]], %[[S]] :
// COS-NEXT:   %[[F:.*]] = tosa.select %[[IN]], %[[RAMP]], %[[DECAY]] :
// COS:        %[[LR:.*]] = tosa.mul %[[F]], %{{.*}} :
// COS:        tosa.reshape %[[LR]]
// COS:        ml_program.global_store @w =
// COS-NEXT:   ml_program.global_store @gt.step = %[[T]]

// Polynomial decay: (1 - min(p, 1))^power, p = s / 10.
// POLY-LABEL: func.func @main
// POLY:        %[[S:.*]] = ml_program.global_load @gt.step
// POLY:        %[[D:.*]] = tosa.sub %[[S]], %{{.*}} :
// POLY:        %[[P:.*]] = tosa.mul %[[D]], %{{.*}} :
// POLY:        %[[C:.*]] = tosa.minimum %[[P]], %{{.*}} :
// POLY:        %[[LEFT:.*]] = tosa.sub %{{.*}}, %[[C]] :
// POLY:        %[[POW:.*]] = "tosa.const"() <{values = dense<2.000000e+00> : tensor<f32>}>
// POLY-NEXT:   tosa.pow %[[LEFT]], %[[POW]] :
// POLY-NOT:    tosa.select

// clip_grad_norm_: the gradient times min(1, 2 / (||g||_2 + 1e-6)).
// CLIP-LABEL: func.func @main
// CLIP:        %[[SQ:.*]] = tosa.mul %[[G:.*]], %[[G]], %{{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<1xi8>)
// CLIP:        %[[FLAT:.*]] = tosa.reshape %[[SQ]], %{{.*}} -> tensor<24xf32>
// CLIP:        %[[SUM:.*]] = tosa.reduce_sum %[[FLAT]] {axis = 0 : i32}
// CLIP:        %[[NORM:.*]] = tosa.pow %[[SUM]], %{{.*}} :
// CLIP:        "tosa.const"() <{values = dense<9.99999997E-7> : tensor<1xf32>}>
// CLIP:        tosa.add %[[NORM]], %{{.*}} :
// CLIP:        "tosa.const"() <{values = dense<2.000000e+00> : tensor<1xf32>}>
// CLIP:        %[[COEF:.*]] = tosa.minimum
// CLIP:        %[[C:.*]] = tosa.reshape %[[COEF]]
// CLIP:        %[[CLIPPED:.*]] = tosa.mul %[[G]], %[[C]], %{{.*}} :
// CLIP:        %[[STEP:.*]] = tosa.mul %[[CLIPPED]], %{{.*}} :
// CLIP:        tosa.sub %{{.*}}, %[[STEP]] :
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %y = gt.linear %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
