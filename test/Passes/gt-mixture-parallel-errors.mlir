// RUN: megagraph-opt %s --gt-mixture-parallel=ranks=2 -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-mixture-parallel=ranks=0 2>&1 | FileCheck %s --check-prefix=R0
// R0: error: gt-mixture-parallel: the number of ranks must be at least 1, got 0

// No node features to split.
// expected-error @+1 {{gt-mixture-parallel needs a full-graph model: an input x [N, F] (named x, features or node_feat) whose N nodes it splits}}
func.func @main(%a: tensor<8x4xf32> {gt.name = "input"}) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}

// -----

// P must divide N.
// expected-error @+1 {{gt-mixture-parallel: 2 ranks do not divide the N = 7 nodes (each rank holds N / P rows)}}
func.func @main(%x: tensor<7x4xf32> {gt.name = "x"}) -> tensor<7x4xf32> {
  return %x : tensor<7x4xf32>
}

// -----

// A reduction over the nodes (global pooling) has no node-split rule.
func.func @main(%x: tensor<8x4xf32> {gt.name = "x"}) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tosa.reduce_sum' op gt-mixture-parallel: cannot split the 8 nodes through this op: it reduces over the nodes}}
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<8x4xf32>) -> tensor<1x4xf32>
  return %s : tensor<1x4xf32>
}

// -----

// A gather by node id (an unraised x[src]) is not row-local.
func.func @main(%x: tensor<8x4xf32> {gt.name = "x"}, %idx: tensor<1x12xi32> {gt.name = "src"}) -> tensor<1x12x4xf32> {
  %s = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r = tosa.reshape %x, %s : (tensor<8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  // expected-error @+1 {{'tosa.gather' op gt-mixture-parallel: cannot split the 8 nodes through this op: it is not row-local (no node-split rule)}}
  %g = tosa.gather %r, %idx : (tensor<1x8x4xf32>, tensor<1x12xi32>) -> tensor<1x12x4xf32>
  return %g : tensor<1x12x4xf32>
}

// -----

// A sparse matrix computed from the node features (attention-like edge
// weights) cannot stay whole on every rank.
func.func @main(%x: tensor<8x4xf32> {gt.name = "x"}, %rp: tensor<9xi64>, %ci: tensor<8xi64>) -> tensor<8x4xf32> {
  %r = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %s = tosa.const_shape {values = dense<8> : tensor<1xindex>} : () -> !tosa.shape<1>
  %w = tosa.reshape %r, %s : (tensor<8x1xf32>, !tosa.shape<1>) -> tensor<8xf32>
  // expected-error @+1 {{'gt.spmm' op gt-mixture-parallel: cannot split the 8 nodes through this op: its sparse matrix depends on the node features}}
  %a = gt.spmm %rp, %ci, %w, %x : (tensor<9xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

// The module has the grid already (the pass ran twice).
// expected-error @+1 {{gt-mixture-parallel: the module already has a symbol @gt_mop (the pass ran twice?)}}
module {
  shard.grid @gt_mop(shape = 2)
  func.func @main(%x: tensor<8x4xf32> {gt.name = "x"}) -> tensor<8x4xf32> {
    return %x : tensor<8x4xf32>
  }
}
