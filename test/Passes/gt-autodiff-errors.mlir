// RUN: megagraph-opt %s --gt-autodiff -split-input-file -verify-diagnostics

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// An op on a parameter's path without a gradient rule is named.
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  // expected-error @+1 {{'tosa.sin' op has no gradient rule; gt-autodiff cannot differentiate through it}}
  %e = tosa.sin %w : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{output #0 must be static float logits [..., C], got 'tensor<4xi64>'}}
func.func @main(%x: tensor<4xi64>) -> tensor<4xi64> {
  return %x : tensor<4xi64>
}

// -----

// expected-error @+1 {{gt-autodiff needs a single-block func.func @main}}
module {
  func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
