// RUN: megagraph-opt %s --gt-autodiff -split-input-file -verify-diagnostics

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// An op on a parameter's path without a gradient rule is named.
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{'linalg.exp' op has no gradient rule; gt-autodiff cannot differentiate through it}}
  %e = linalg.exp ins(%w : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// An elementwise linalg.generic whose body has a float op without a
// derivative rule names that op.
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    // expected-error @+1 {{'math.sin' op has no derivative rule inside a linalg.generic body}}
    %s = math.sin %x : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// A linalg.generic that is neither elementwise nor a row scatter.
func.func @main() -> tensor<4x1xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %init = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  // expected-error @+1 {{'linalg.generic' op has no gradient rule for this linalg.generic (rules exist for elementwise bodies and the importer's row scatters)}}
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%w : tensor<4x3xf32>) outs(%init : tensor<4x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  return %e : tensor<4x1xf32>
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
