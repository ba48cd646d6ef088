// RUN: megagraph-opt %s --gt-sparse-adjacency=edges=6 -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-sparse-adjacency=edges=0 2>&1 | FileCheck %s --check-prefix=E0
// E0: error: gt-sparse-adjacency: edges=0: the edge_index input needs at least one edge

// gt-sparse-adjacency's errors, and the forms it leaves dense with a
// warning (passes/Raise/GTSparseAdjacency.cpp).

// The model already has an edge list.
// expected-error @+1 {{gt-sparse-adjacency: the model already has an edge_index input ('tensor<2x8xi64>'); edges=6 would add a second one}}
func.func @main(%adj: tensor<4x4xf32> {gt.name = "adj_norm"},
                %ei: tensor<2x8xi64> {gt.name = "edge_index"}) -> tensor<4x4xf32> {
  return %adj : tensor<4x4xf32>
}

// -----

// adj_norm read other than as the left operand of a product (here it is
// also added to itself): it stays dense, and the compile goes on.
// expected-warning @+1 {{gt-sparse-adjacency: adj_norm is used by 'tosa.add', not only as the left operand of a matrix product; it stays dense}}
func.func @main(%h: tensor<1x4x3xf32> {gt.name = "h"},
                %adj: tensor<1x4x4xf32> {gt.name = "adj_norm"})
    -> (tensor<1x4x3xf32>, tensor<1x4x4xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %adj, %h, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %s = tosa.add %adj, %adj : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %y, %s : tensor<1x4x3xf32>, tensor<1x4x4xf32>
}

// -----

// adj_norm as the right operand (h^T adj): dense.
// expected-warning @+1 {{gt-sparse-adjacency: adj_norm is used by 'tosa.matmul', not only as the left operand of a matrix product; it stays dense}}
func.func @main(%h: tensor<1x3x4xf32> {gt.name = "h"},
                %adj: tensor<1x4x4xf32> {gt.name = "adj_norm"}) -> tensor<1x3x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %h, %adj, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// Not a square f32 matrix: dense.
// expected-warning @+1 {{gt-sparse-adjacency: adj_norm is 'tensor<2x4x4xf32>', not f32 [N, N] or [1, N, N]; it stays dense}}
func.func @main(%adj: tensor<2x4x4xf32> {gt.name = "adj_norm"}) -> tensor<2x4x4xf32> {
  return %adj : tensor<2x4x4xf32>
}
