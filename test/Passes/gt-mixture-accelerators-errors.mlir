// RUN: megagraph-opt %s -split-input-file --gt-mixture-accelerators=chunks=4 -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-mixture-accelerators=chunks=0 2>&1 | FileCheck %s --check-prefix=K0
// K0: error: gt-mixture-accelerators: chunks must be at least 1, got 0

// More chunks than rows.
func.func @few_rows(%rp: tensor<4xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                    %x: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{moa chunks=4 exceeds the 3 rows of this aggregation}}
  %a = gt.spmm %rp, %ci, %v, %x : (tensor<4xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = gt.linear %a, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// More chunks than the rows of a transform whose rows are aggregated.
func.func @few_transformed_rows(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                                %x: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> tensor<5x2xf32> {
  // expected-error @+1 {{moa chunks=4 exceeds the 3 rows of this transform}}
  %h = gt.linear %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %a = gt.spmm %rp, %ci, %v, %h : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  return %a : tensor<5x2xf32>
}

// -----

// Nothing to pipeline (a transformer, or Kipf's dense adjacency).
// expected-error @+1 {{moa=1: no aggregation (gt.spmm) whose rows go into or come from a transform (gt.linear, matmul) to pipeline}}
module {
  func.func @dense(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
    %y = gt.linear %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}
