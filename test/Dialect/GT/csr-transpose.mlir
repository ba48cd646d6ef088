// RUN: megagraph-opt %s -split-input-file | megagraph-opt | FileCheck %s --check-prefix=RT
// RUN: megagraph-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

// gt.csr_transpose: round trip (COO and CSR forms) and its bufferization
// into mgrt_csr_transpose(row_ptr_t, col_idx_t, perm, row_ptr, col_idx),
// where the COO form passes a row_ptr without entries.

// RT-LABEL: func.func @coo
// RT:         %{{.*}}, %{{.*}}, %{{.*}} = gt.csr_transpose %{{.*}} cols = 4 : (tensor<7xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
// BUF-LABEL:  func.func private @mgrt_csr_transpose(memref<?xi64>, memref<?xi64>, memref<?xi64>, memref<?xi64>, memref<?xi64>) attributes {llvm.emit_c_interface}
// BUF-LABEL:  func.func @coo
// BUF:          %[[NONE:.+]] = memref.alloca() : memref<0xi64>
// BUF:          %[[RP:.+]] = memref.alloc() : memref<5xi64>
// BUF:          %[[CI:.+]] = memref.alloc() : memref<7xi64>
// BUF:          %[[P:.+]] = memref.alloc() : memref<7xi64>
// BUF:          call @mgrt_csr_transpose(
// BUF:          return %[[RP]], %[[CI]], %[[P]]
func.func @coo(%dst: tensor<7xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>) {
  %rp, %ci, %perm = gt.csr_transpose %dst cols = 4
      : (tensor<7xi64>) -> (tensor<5xi64>, tensor<7xi64>, tensor<7xi64>)
  return %rp, %ci, %perm : tensor<5xi64>, tensor<7xi64>, tensor<7xi64>
}

// -----

// i32 indices are widened to i64 before the call.
// RT-LABEL: func.func @csr
// RT:         = gt.csr_transpose %{{.*}} row_ptr(%{{.*}}) cols = 6 : (tensor<7xi32>, tensor<5xi32>) -> (tensor<7xi64>, tensor<7xi64>, tensor<7xi64>)
// BUF-LABEL:  func.func @csr
// BUF:          scf.for
// BUF:          call @mgrt_csr_transpose(
func.func @csr(%ci: tensor<7xi32>, %rp: tensor<5xi32>) -> tensor<7xi64> {
  %rpt, %cit, %perm = gt.csr_transpose %ci row_ptr(%rp) cols = 6
      : (tensor<7xi32>, tensor<5xi32>) -> (tensor<7xi64>, tensor<7xi64>, tensor<7xi64>)
  return %rpt : tensor<7xi64>
}
