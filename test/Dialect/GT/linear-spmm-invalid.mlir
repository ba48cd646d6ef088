// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

// The chunks cut the transformed rows (M = 3 here, N = 5).
func.func @too_many_chunks(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                           %x: tensor<3x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op has 4 chunks but only 3 input rows}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 4 : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @weight_rows(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<5x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op input features 2 differ from weight rows 5}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<5x6xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @values_count(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<4xf32>,
                        %x: tensor<3x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op col_idx has 5 entries but values has 4}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 : (tensor<6xi64>, tensor<5xi64>, tensor<4xf32>, tensor<3x2xf32>, tensor<2x6xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

// The scale multiplies the transformed rows: [M, 1], not [N, 1].
func.func @scale_shape(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<2x6xf32>, %s: tensor<5x1xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op scale must be [M, 1] = [3, 1], got [5, 1]}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w scale(%s) chunks = 2 : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>, tensor<5x1xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @bias_shape(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                      %x: tensor<3x2xf32>, %w: tensor<2x6xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op bias must be [F] = [6], got [5]}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w bias(%b) chunks = 2 : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>, tensor<5xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @zero_chunks(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op attribute 'chunks' failed to satisfy constraint}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 0 : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>) -> (tensor<3x6xf32>, tensor<5x6xf32>)
  return
}

// -----

// #gt.halo (partition parallelism): the transformed rows are this rank's
// block of the graph's 10 nodes.
func.func @halo_input_rows(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                           %x: tensor<4x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op input has 4 rows but #gt.halo gives each of its 2 parts 5}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<4x2xf32>, tensor<2x6xf32>) -> (tensor<4x6xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @halo_csr_rows(%rp: tensor<6xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                         %x: tensor<5x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op has 5 CSR rows but #gt.halo splits 10 nodes}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>) -> (tensor<5x6xf32>, tensor<5x6xf32>)
  return
}

// -----

// gt.mop_switch (mixture of parallelism): the block's rows are
// transformed, then switched to all N rows of F / P columns.
func.func @mop_input_rows(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                          %x: tensor<10x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op input has 10 rows but gt.mop_switch gives each of its 2 parts 5}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<10x2xf32>, tensor<2x6xf32>) -> (tensor<10x6xf32>, tensor<10x3xf32>)
  return
}

// -----

func.func @mop_columns(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<5x2xf32>, %w: tensor<2x3xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op has 3 transformed columns, not a multiple of gt.mop_switch's 2 parts}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x3xf32>) -> (tensor<5x3xf32>, tensor<10x1xf32>)
  return
}

// -----

func.func @mop_result(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                      %x: tensor<5x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op result types must be}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>) -> (tensor<5x6xf32>, tensor<10x6xf32>)
  return
}

// -----

// The scale multiplies the block's transformed rows or all N switched rows.
func.func @mop_scale(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                     %x: tensor<5x2xf32>, %w: tensor<2x6xf32>, %s: tensor<7x1xf32>) {
  // expected-error @+1 {{'gt.linear_spmm' op scale must be [M, 1] = [5, 1], got [7, 1]}}
  %t, %y = gt.linear_spmm %rp, %ci, %v, %x, %w scale(%s) chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>, tensor<7x1xf32>) -> (tensor<5x6xf32>, tensor<10x3xf32>)
  return
}
