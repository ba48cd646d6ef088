// RUN: megagraph-opt %s --gt-gpu-offload --split-input-file | FileCheck %s

// A chain of elementwise ops over the same points, each reading what the
// one before wrote at the same index, is one kernel; its threads run the
// ops in order (one bounds guard each). An allocation between them does not
// break the chain.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @chain(
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[T:.*]][
// CHECK: scf.if
// CHECK: memref.load %[[T]][
// CHECK: arith.mulf
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @chain(%a: memref<8x16xf32>, %out: memref<8x16xf32>) {
  %t = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x16xf32>) outs(%t : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  %u = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%t, %a : memref<8x16xf32>, memref<8x16xf32>) outs(%u : memref<8x16xf32>) {
  ^bb0(%x: f32, %z: f32, %y: f32):
    %m = arith.mulf %x, %z : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%u : memref<8x16xf32>) outs(%out : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<8x16xf32>
  memref.dealloc %u : memref<8x16xf32>
  return
}

// -----

// Reading what the kernel before wrote at other indices (a transpose) needs
// every thread of that kernel done: two kernels.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_read(
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: gpu.terminator
func.func @transposed_read(%a: memref<8x8xf32>, %t: memref<8x8xf32>, %out: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x8xf32>) outs(%t : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A buffer freed between the ops, another iteration space, or a reduction
// ends a chain.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @breaks(
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @breaks(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<4xf32>) {
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  memref.dealloc %t : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
