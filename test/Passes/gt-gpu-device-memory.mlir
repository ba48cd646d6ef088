// RUN: megagraph-opt %s --split-input-file --gt-gpu-device-memory --verify-diagnostics | FileCheck %s

// Allocations go to the device allocator; the address of a listed global
// becomes its device copy, with the global's size; other globals stay.

// CHECK-LABEL: module attributes {gt.device_globals
// CHECK-DAG: llvm.func @mgrt_cuda_global(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @mgrt_cuda_memref_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @mgrt_cuda_memref_free(!llvm.ptr)
// CHECK-LABEL: llvm.func @step()
// CHECK: %[[P:.*]] = llvm.call @mgrt_cuda_memref_alloc(
// CHECK: %[[W:.*]] = llvm.mlir.addressof @w : !llvm.ptr
// CHECK: %[[N:.*]] = llvm.mlir.constant(128 : i64) : i64
// CHECK: %[[D:.*]] = llvm.call @mgrt_cuda_global(%[[W]], %[[N]])
// CHECK: llvm.call @use(%[[D]])
// CHECK: %[[O:.*]] = llvm.mlir.addressof @other : !llvm.ptr
// CHECK: llvm.call @use(%[[O]])
// CHECK: llvm.call @mgrt_cuda_memref_free(%[[P]])
// CHECK-NOT: _mlir_memref_to_llvm
module attributes {gt.device_globals = #gt.device_globals<globals = [@w], bytes = [128]>} {
  llvm.mlir.global private constant @w(dense<1.0> : tensor<32xf32>) : !llvm.array<32 x f32>
  llvm.mlir.global private constant @other(0 : i32) : i32
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @use(!llvm.ptr)
  llvm.func @step() {
    %c = llvm.mlir.constant(64 : i64) : i64
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%c) : (i64) -> !llvm.ptr
    %w = llvm.mlir.addressof @w : !llvm.ptr
    llvm.call @use(%w) : (!llvm.ptr) -> ()
    %o = llvm.mlir.addressof @other : !llvm.ptr
    llvm.call @use(%o) : (!llvm.ptr) -> ()
    llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Without gt-gpu-offload's list of globals the pass cannot tell which
// addresses to move.
// expected-error @+1 {{no `gt.device_globals` (run gt-gpu-offload before the LLVM lowering)}}
module {
  llvm.func @f() {
    llvm.return
  }
}
