// RUN: megagraph-opt %s --gt-optimizer -split-input-file -verify-diagnostics
// Each invalid recipe is one clear error (the options are checked before
// anything is rewritten).
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: gt-optimizer: unknown optimizer 'rmsprop'; use sgd, adam or adamw
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=lr=-0.1 2>&1 | FileCheck %s --check-prefix=LR
// LR: error: gt-optimizer: lr must be positive, got -1.000000e-01
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=weight-decay=-1 2>&1 | FileCheck %s --check-prefix=WD
// WD: error: gt-optimizer: weight-decay must be non-negative, got -1.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd momentum=1" 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: error: gt-optimizer: momentum must be in [0, 1), got 1.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd momentum=-0.5" 2>&1 | FileCheck %s --check-prefix=MOMNEG
// MOMNEG: error: gt-optimizer: momentum must be in [0, 1), got -5.000000e-01
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd momentum=0.9 dampening=2" 2>&1 | FileCheck %s --check-prefix=DAMP
// DAMP: error: gt-optimizer: dampening must be in [0, 1], got 2.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd nesterov=true" 2>&1 | FileCheck %s --check-prefix=NEST
// NEST: error: gt-optimizer: nesterov needs momentum > 0 and dampening 0
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd momentum=0.9 dampening=0.1 nesterov=true" 2>&1 | FileCheck %s --check-prefix=NEST
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adam momentum=0.9" 2>&1 | FileCheck %s --check-prefix=ADAMMOM
// ADAMMOM: error: gt-optimizer: momentum, dampening and nesterov are sgd options, not adam's
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw pack-below=-1" 2>&1 | FileCheck %s --check-prefix=PACK
// PACK: error: gt-optimizer: pack-below must be non-negative, got -1
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw beta2=1" 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: error: gt-optimizer: beta1 and beta2 must be in [0, 1), got 9.000000e-01 and 1.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adam eps=0" 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: gt-optimizer: eps must be positive, got 0.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=lr-schedule=step 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: error: gt-optimizer: unknown lr-schedule 'step'; use constant, linear, cosine or polynomial
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=lr-schedule=cosine 2>&1 | FileCheck %s --check-prefix=TOTAL
// TOTAL: error: gt-optimizer: lr-schedule=cosine needs total-steps > 0
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="lr-schedule=linear warmup-steps=20 total-steps=10" 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: error: gt-optimizer: warmup-steps (20) exceeds total-steps (10)
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="warmup-steps=-1" 2>&1 | FileCheck %s --check-prefix=NEGSTEPS
// NEGSTEPS: error: gt-optimizer: warmup-steps and total-steps must be non-negative
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="lr-schedule=linear total-steps=10 min-lr=0.1" 2>&1 | FileCheck %s --check-prefix=MINLIN
// MINLIN: error: gt-optimizer: min-lr applies to the cosine and polynomial schedules only
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="lr=0.01 lr-schedule=cosine total-steps=10 min-lr=0.1" 2>&1 | FileCheck %s --check-prefix=MINCOS
// MINCOS: error: gt-optimizer: min-lr (1.000000e-01) exceeds lr (1.000000e-02)
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="lr=0.01 lr-schedule=polynomial total-steps=10 min-lr=0.01" 2>&1 | FileCheck %s --check-prefix=MINPOLY
// MINPOLY: error: gt-optimizer: polynomial decay needs min-lr < lr, got min-lr 1.000000e-02 and lr 1.000000e-02
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="lr-schedule=polynomial total-steps=10 power=0" 2>&1 | FileCheck %s --check-prefix=POWER
// POWER: error: gt-optimizer: power must be positive, got 0.000000e+00
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer="clip-grad-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: gt-optimizer: clip-grad-norm must be non-negative (0: off), got -1.000000e+00

// expected-error @+1 {{gt-optimizer needs the gradient function @main_grad (run gt-autodiff first)}}
module {
  func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
