// RUN: megagraph-opt %s --gt-stage-globals -split-input-file -verify-diagnostics | FileCheck %s

// Tests of the gt-stage-globals pass (passes/Lower/GTStageGlobals.cpp): in
// a pipelined program (pp > 1) every function reaches a mutable global
// through mgrt_stage_global(address, bytes), so that each rank
// materialises only the globals its stage's entries use; constants and the
// globals' own initializers are left alone.

// CHECK-LABEL: module attributes {gt.plan
// CHECK:         llvm.func @mgrt_stage_global(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-LABEL:   llvm.func @step
// CHECK:           %[[W:.+]] = llvm.mlir.addressof @w : !llvm.ptr
// CHECK-NEXT:      %[[WB:.+]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT:      %[[WS:.+]] = llvm.call @mgrt_stage_global(%[[W]], %[[WB]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT:      %[[S:.+]] = llvm.mlir.addressof @step_count : !llvm.ptr
// CHECK-NEXT:      %[[SB:.+]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:      %[[SS:.+]] = llvm.call @mgrt_stage_global(%[[S]], %[[SB]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT:      %[[C:.+]] = llvm.mlir.addressof @init : !llvm.ptr
// CHECK-NEXT:      %[[V:.+]] = llvm.load %[[C]] : !llvm.ptr -> f32
// CHECK-NEXT:      llvm.store %[[V]], %[[WS]] : f32, !llvm.ptr
// CHECK-NEXT:      llvm.store %[[V]], %[[SS]] : f32, !llvm.ptr
// CHECK-NEXT:      llvm.return
// The table's reference to @w (a global's initializer) stays static.
// CHECK-LABEL:   llvm.mlir.global internal constant @table()
// CHECK:           llvm.mlir.addressof @w : !llvm.ptr
// CHECK-NOT:       mgrt_stage_global
module attributes {gt.plan = #gt.plan<pp = 2>} {
  llvm.mlir.global private @w(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.mlir.global private @step_count(0.0 : f32) : f32
  llvm.mlir.global private constant @init(2.0 : f32) : f32
  llvm.func @step() {
    %w = llvm.mlir.addressof @w : !llvm.ptr
    %s = llvm.mlir.addressof @step_count : !llvm.ptr
    %c = llvm.mlir.addressof @init : !llvm.ptr
    %v = llvm.load %c : !llvm.ptr -> f32
    llvm.store %v, %w : f32, !llvm.ptr
    llvm.store %v, %s : f32, !llvm.ptr
    llvm.return
  }
  llvm.mlir.global internal constant @table() : !llvm.ptr {
    %w = llvm.mlir.addressof @w : !llvm.ptr
    llvm.return %w : !llvm.ptr
  }
}

// -----

// Without pp (one stage per rank holds everything) nothing changes.
// CHECK-LABEL: module attributes {gt.plan
// CHECK-NOT:     mgrt_stage_global
module attributes {gt.plan = #gt.plan<dp = 2>} {
  llvm.mlir.global private @w(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.func @step(%v: f32) {
    %w = llvm.mlir.addressof @w : !llvm.ptr
    llvm.store %v, %w : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// A mutable global whose storage is elsewhere cannot be given stage
// storage.
module attributes {gt.plan = #gt.plan<pp = 2>} {
  llvm.mlir.global external @elsewhere() : f32
  llvm.func @step(%v: f32) {
    // expected-error @below {{gt-stage-globals: mutable global @elsewhere has no storage in this module}}
    %w = llvm.mlir.addressof @elsewhere : !llvm.ptr
    llvm.store %v, %w : f32, !llvm.ptr
    llvm.return
  }
}
