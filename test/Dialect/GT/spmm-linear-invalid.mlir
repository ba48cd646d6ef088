// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

func.func @too_many_chunks(%rp: tensor<4xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                           %x: tensor<3x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op has 4 chunks but only 3 rows}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 4 : (tensor<4xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>) -> (tensor<3x2xf32>, tensor<3x6xf32>)
  return
}

// -----

func.func @weight_rows(%rp: tensor<4xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<5x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op input features 2 differ from weight rows 5}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 : (tensor<4xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<5x6xf32>) -> (tensor<3x2xf32>, tensor<3x6xf32>)
  return
}

// -----

func.func @scale_shape(%rp: tensor<4xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<2x6xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op scale must be [N, 1] = [3, 1], got [3]}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w scale(%s) chunks = 2 : (tensor<4xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>, tensor<3xf32>) -> (tensor<3x2xf32>, tensor<3x6xf32>)
  return
}

// -----

func.func @zero_chunks(%rp: tensor<4xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<3x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op attribute 'chunks' failed to satisfy constraint}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 0 : (tensor<4xi64>, tensor<5xi64>, tensor<5xf32>, tensor<3x2xf32>, tensor<2x6xf32>) -> (tensor<3x2xf32>, tensor<3x6xf32>)
  return
}

// -----

// #gt.halo (partition parallelism): the whole graph's CSR, this rank's
// block of the rows.
func.func @halo_csr_rows(%rp: tensor<9xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                         %x: tensor<5x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op has 8 CSR rows but #gt.halo splits 10 nodes}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<9xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>) -> (tensor<5x2xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @halo_input_rows(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                           %x: tensor<10x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op input has 10 rows but #gt.halo gives each of its 2 parts 5}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<10x2xf32>, tensor<2x6xf32>) -> (tensor<10x2xf32>, tensor<10x6xf32>)
  return
}

// -----

func.func @halo_chunks(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                       %x: tensor<5x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op has 6 chunks but only 5 rows}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 6 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>) -> (tensor<5x2xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @halo_result_rows(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                            %x: tensor<5x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op result types must be}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<2x6xf32>) -> (tensor<10x2xf32>, tensor<10x6xf32>)
  return
}

// -----

// gt.mop_switch (mixture of parallelism): all N rows of D / P columns are
// aggregated, the results are the block's N / P rows of all D columns.
func.func @mop_weight_rows(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                           %x: tensor<10x2xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op input features 4 (over all parts) differ from weight rows 2}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<10x2xf32>, tensor<2x6xf32>) -> (tensor<5x2xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @mop_scale(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                     %x: tensor<10x2xf32>, %w: tensor<4x6xf32>, %s: tensor<5x1xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op scale must be [N, 1] = [10, 1], got [5, 1]}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w scale(%s) chunks = 1 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<10x2xf32>, tensor<4x6xf32>, tensor<5x1xf32>) -> (tensor<5x4xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @mop_chunks(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                      %x: tensor<10x2xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op has 6 chunks but only 5 rows}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 6 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<10x2xf32>, tensor<4x6xf32>) -> (tensor<5x4xf32>, tensor<5x6xf32>)
  return
}

// -----

func.func @mop_with_halo(%rp: tensor<11xi64>, %ci: tensor<5xi64>, %v: tensor<5xf32>,
                         %x: tensor<5x2xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{'gt.spmm_linear' op gt.mop_switch and #gt.halo exclude each other}}
  %a, %y = gt.spmm_linear %rp, %ci, %v, %x, %w chunks = 1 {gt.halo = #gt.halo<parts = 2, nodes = 10>, gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<5xi64>, tensor<5xf32>, tensor<5x2xf32>, tensor<4x6xf32>) -> (tensor<5x4xf32>, tensor<5x6xf32>)
  return
}
