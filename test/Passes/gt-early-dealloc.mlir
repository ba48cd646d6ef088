// RUN: megagraph-opt %s --gt-early-dealloc -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-early-dealloc --gt-early-dealloc -split-input-file | FileCheck %s

// The dealloc moves to just after the last use, counting uses of a view.
// CHECK-LABEL: func.func @moved_after_view_use
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4x4xf32>)
// CHECK-NEXT:    %[[V:.*]] = memref.collapse_shape %[[A]] {{\[\[}}0, 1]] : memref<4x4xf32> into memref<16xf32>
// CHECK-NEXT:    memref.copy %[[V]], %{{.*}} : memref<16xf32> to memref<16xf32>
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<4x4xf32>
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<16xf32>)
// CHECK-NEXT:    memref.copy %[[B]], %{{.*}} : memref<16xf32> to memref<16xf32>
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<16xf32>
// CHECK-NEXT:    return
func.func @moved_after_view_use(%out: memref<16xf32>, %out2: memref<16xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4x4xf32>)
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %v, %out : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%c : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %out2 : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// An unused allocation is freed right away.
// CHECK-LABEL: func.func @unused
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<8xf32>
// CHECK-NEXT:    linalg.fill
func.func @unused(%out: memref<8xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%out : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// Uses inside a nested region count through their ancestor in the block.
// CHECK-LABEL: func.func @nested_use
// CHECK:         scf.for
// CHECK:           memref.load %[[A:.*]][
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<8xf32>
// CHECK-NEXT:    linalg.fill
func.func @nested_use(%out: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%z : f32) outs(%a : memref<8xf32>)
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  linalg.fill ins(%s : f32) outs(%out : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return %s : f32
}

// -----

// A buffer whose alias escapes through an op returning a memref stays put.
// CHECK-LABEL: func.func @unknown_alias
// CHECK:         call @make_alias
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    return
func.func private @make_alias(memref<8xf32>) -> memref<8xf32>
func.func @unknown_alias(%out: memref<8xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %b = call @make_alias(%a) : (memref<8xf32>) -> memref<8xf32>
  linalg.fill ins(%c : f32) outs(%out : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}
