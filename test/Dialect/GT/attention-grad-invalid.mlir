// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

func.func @dout_shape(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x16xf32>) {
  // expected-error @+1 {{dout must have the attention result shape [1, 3, 16], got [1, 3, 8]}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v heads = 4 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x16xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x16xf32>)
  return
}

// -----

func.func @dout_type(%do: tensor<1x3x8xf16>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{element type of dout ('f16') does not match that of query ('f32')}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v heads = 2 : (tensor<1x3x8xf16>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>)
  return
}

// -----

func.func @heads(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{num_heads (3) must divide the hidden size (8)}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v heads = 3 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>)
  return
}

// -----

func.func @result_type(%do: tensor<1x3x8xf32>, %q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) {
  // expected-error @+1 {{dk type 'tensor<1x3x8xf32>' does not match the operand type 'tensor<1x5x8xf32>'}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v heads = 2 : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x5x8xf32>)
  return
}
