// RUN: megagraph-opt %s --gt-data-parallel=dp=2 -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-data-parallel=dp=0 2>&1 | FileCheck %s --check-prefix=DP0
// DP0: error: gt-data-parallel: dp must be at least 1, got 0
// RUN: not megagraph-opt %s --split-input-file --gt-data-parallel="dp=2 zero=4" 2>&1 | FileCheck %s --check-prefix=ZERO4
// ZERO4: error: gt-data-parallel: zero must be 0, 1, 2 or 3, got 4
// RUN: not megagraph-opt %s --split-input-file --gt-data-parallel="dp=2 pp=0" 2>&1 | FileCheck %s --check-prefix=PP0
// PP0: error: gt-data-parallel: pp must be at least 1, got 0

// expected-error @+1 {{gt-data-parallel needs the gradient function @main_grad (run gt-autodiff first, gt-optimizer after)}}
module {
  func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}

// -----

// expected-error @+1 {{gt-data-parallel: the module already has a symbol @gt_dp (the pass ran twice?)}}
module {
  shard.grid @gt_dp(shape = 2)
  func.func @main_grad(%x: tensor<4xf32>) -> (tensor<f32> {gt.name = "loss"}) {
    %c = "tosa.const"() <{values = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module {
  // expected-error @+1 {{gt-data-parallel: result 'grad:w' must be a static f32 tensor, got 'tensor<4xf64>'}}
  func.func @main_grad(%x: tensor<4xf64>) -> (tensor<4xf64> {gt.name = "grad:w"}) {
    return %x : tensor<4xf64>
  }
}
