// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

func.func @heads(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{num_heads (3) must divide the hidden size (8)}}
  %o, %lse = gt.attention_lse %q, %k, %v heads = 3 : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x3x3xf32>)
  return
}

// -----

func.func @lse_shape(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{lse must be 'tensor<1x2x3xf32>' ([B, H, Sq]), got 'tensor<1x3x2xf32>'}}
  %o, %lse = gt.attention_lse %q, %k, %v heads = 2 : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x3x2xf32>)
  return
}

// -----

func.func @cp(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{has no context-parallel form}}
  %o, %lse = gt.attention_lse %q, %k, %v heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>} : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x2x3xf32>)
  return
}

// -----

func.func @grad_out_without_lse(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{takes out and lse together or neither}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v out(%do) heads = 2 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x3x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>)
  return
}

// -----

func.func @grad_out_type(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>, %o: tensor<1x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{out type 'tensor<1x3x4xf32>' does not match the dout type 'tensor<1x3x8xf32>'}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v out(%o) lse(%lse) heads = 2 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x3x4xf32>, tensor<1x2x3xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>)
  return
}

// -----

func.func @grad_lse_shape(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>, %lse: tensor<1x3x2xf32>) {
  // expected-error @+1 {{lse must be 'tensor<1x2x3xf32>' ([B, H, Sq]), got 'tensor<1x3x2xf32>'}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v out(%do) lse(%lse) heads = 2 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x3x8xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>)
  return
}
