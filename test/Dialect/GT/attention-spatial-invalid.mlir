// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

func.func @distance_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x6x4xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{spatial distance must be [Sq, Sk] or [B|1, Sq, Sk] with [B, Sq, Sk] = [2, 4, 6], got [2, 6, 4]}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x4xi64>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @distance_batch(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<3x4x6xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{spatial distance must be [Sq, Sk] or [B|1, Sq, Sk] with [B, Sq, Sk] = [2, 4, 6], got [3, 4, 6]}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<3x4x6xi64>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @table_heads(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x4xf32>) {
  // expected-error @+1 {{spatial table must be [V, H] with V > 0 and H = 2, got [9, 4]}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @table_empty(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<0x2xf32>) {
  // expected-error @+1 {{spatial table must be [V, H] with V > 0 and H = 2, got [0, 2]}}
  %o, %lse = gt.attention_lse %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<0x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
  return
}

// -----

func.func @table_type(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x2xf16>) {
  // expected-error @+1 {{element type of spatial table ('f16') does not match that of query ('f32')}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf16>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @distance_float(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xf32>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of signless integer values, but got 'tensor<2x4x6xf32>'}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @distance_alone(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>) {
  // expected-error @+1 {{takes the spatial distance and table together}}
  %o = "gt.attention"(%q, %k, %k, %d) <{num_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0>}> : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>) -> tensor<2x4x8xf32>
  return
}

// -----

// Under cp the distance has the rank's query rows and all S = 2 x 4 key
// columns, not the rank's 4 keys.
func.func @cp_distance_keys(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %d: tensor<1x4x4xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{spatial distance must be [Sq, Sk] or [B|1, Sq, Sk] with [B, Sq, Sk] = [1, 4, 8], got [1, 4, 4]}}
  %o = gt.attention %q, %k, %k spatial(%d, %t) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x4xi64>, tensor<9x2xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// With uneven blocks the key columns are seq = 7.
func.func @cp_uneven_distance_keys(%q: tensor<1x3x8xf32>, %d: tensor<1x3x9xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{spatial distance must be [Sq, Sk] or [B|1, Sq, Sk] with [B, Sq, Sk] = [1, 3, 7], got [1, 3, 9]}}
  %o = gt.attention %q, %q, %q spatial(%d, %t) heads = 2 {gt.cp = #gt.cp<size = 3, mode = allgather, grid = [1, 3, 1, 1], axes = 2, seq = 7>} : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x9xi64>, tensor<9x2xf32>) -> tensor<1x3x8xf32>
  return
}

// -----

func.func @grad_no_dtable(%do: tensor<2x4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{has 4 results (dq, dk, dv, then dbias with a bias and dtable with a spatial table), got 3}}
  %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>)
  return
}

// -----

func.func @grad_dtable_type(%do: tensor<2x4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x2xf32>) {
  // expected-error @+1 {{dtable type 'tensor<8x2xf32>' does not match the operand type 'tensor<9x2xf32>'}}
  %dq, %dk, %dv, %dt = gt.attention_grad %do, %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<8x2xf32>)
  return
}
