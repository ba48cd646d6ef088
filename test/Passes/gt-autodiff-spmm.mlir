// RUN: megagraph-opt %s --gt-autodiff --canonicalize | FileCheck %s

// The backward of gt.spmm with respect to its dense operand is A^T dy: a
// gt.csr_transpose of the CSR (num_cols = the rows of x) and an SpMM over
// the transposed pattern with the values permuted into its order. Values
// computed from the graph alone get no gradient, so no per-edge [E, D]
// products remain once dead code is removed.

ml_program.global private mutable @w(dense<0.5> : tensor<3x4xf32>) : tensor<3x4xf32> {gt.param}

// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[RPT:.+]], %[[CIT:.+]], %[[P:.+]] = gt.csr_transpose %[[CI:[^ ]+]] row_ptr(%[[RP:[^)]+]]) cols = 5 : (tensor<9xi64>, tensor<6xi64>) -> (tensor<6xi64>, tensor<9xi64>, tensor<9xi64>)
// CHECK:         %[[VT:.+]] = tosa.gather %{{.*}}, %{{.*}} : (tensor<1x9x1xf32>, tensor<1x9xi32>) -> tensor<1x9x1xf32>
// CHECK:         gt.spmm %[[RPT]], %[[CIT]], %{{.*}}, %{{.*}} : (tensor<6xi64>, tensor<9xi64>, tensor<9xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
// CHECK-NOT:     tensor<1x9x4xf32>
// CHECK:         return
func.func @main(%x: tensor<5x3xf32> {gt.name = "x"}, %rp: tensor<6xi64> {gt.name = "row_ptr"},
                %ci: tensor<9xi64> {gt.name = "col_idx"}, %v: tensor<9xf32> {gt.name = "values"})
    -> (tensor<5x4xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<3x4xf32>
  %h = gt.linear %x, %w : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %y = gt.spmm %rp, %ci, %v, %h : (tensor<6xi64>, tensor<9xi64>, tensor<9xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}
