// RUN: megagraph-opt %s --gt-zero-gather -split-input-file -verify-diagnostics

// expected-error @+1 {{gt-zero-gather: no shard.grid @gt_dp (run gt-data-parallel{zero=1} first)}}
module {
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [4], padded = 4>}
}

// -----

module {
  shard.grid @gt_dp(shape = 2)
  // expected-error @+1 {{gt-zero-gather: gt.zero_shard names no parameter global @nope}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@nope], sizes = [4], padded = 4>}
}

// -----

module {
  shard.grid @gt_dp(shape = 2)
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  // expected-error @+1 {{gt-zero-gather: parameter @w is not an f32 tensor of 6 elements}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [6], padded = 8>}
}

// -----

// expected-error @+1 {{gt-zero-gather needs the training step @main (run gt-optimizer first)}}
module {
  shard.grid @gt_dp(shape = 2)
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [4], padded = 4>}
}

// -----

module {
  shard.grid @gt_dp(shape = 2)
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [4], padded = 4>}
  // expected-error @+1 {{gt-zero-gather: expected one store of @gt.zero.bucket0 (the optimizer's update), found 0}}
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// zero=3: the shard global becomes the parameters' storage, so nothing
// else may write a parameter.
module attributes {gt.plan = #gt.plan<dp = 2, zero = 3>} {
  shard.grid @gt_dp(shape = 2)
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [4], padded = 4>}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = ml_program.global_load @gt.zero.bucket0 : tensor<2xf32>
    ml_program.global_store @gt.zero.bucket0 = %s : tensor<2xf32>
    // expected-error @+1 {{gt-zero-gather: zero=3 needs parameters that only the optimizer's shard updates; @w is stored}}
    ml_program.global_store @w = %x : tensor<4xf32>
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {gt.plan = #gt.plan<dp = 2, zero = 3>} {
  shard.grid @gt_dp(shape = 2)
  ml_program.global private mutable @w(dense<0.5> : tensor<4xf32>) : tensor<4xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [4], padded = 4>}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @other() -> tensor<4xf32> {
    // expected-error @+1 {{gt-zero-gather: zero=3 needs every load of a parameter in @main or a pipeline stage entry}}
    %w = ml_program.global_load @w : tensor<4xf32>
    return %w : tensor<4xf32>
  }
}
