// RUN: megagraph-opt %s --gt-gpu-offload | FileCheck %s
// RUN: megagraph-opt %s --gt-gpu-offload="emulate-on-host" | FileCheck %s --check-prefix=EMU

// Each linalg op (and memref.copy) becomes one gpu.launch; the leading
// parallel loops are flattened over blocks x threads, row-major, behind a
// bounds guard; reductions stay sequential in the thread; a rank-0 op runs
// on one thread; runtime kernels get their CUDA names; the globals' sizes
// are recorded for gt-gpu-device-memory.

// CHECK: module attributes {gt.device_globals = #gt.device_globals<globals = [@w], bytes = [128]>}
// CHECK: func.func private @mgrt_cuda_matmul_f32(
// CHECK-LABEL: func.func @step(
// The exp over 4x8: 32 threads, one block.
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C32]] : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[COL:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.divui %[[ID]], %{{.*}} : index
// CHECK: math.exp
// CHECK: gpu.terminator
// The row sum: 4 threads, each loops over the 8 columns.
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: gpu.terminator
// The rank-0 fill: one thread.
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c1
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK-NEXT: gpu.terminator
// The copy from the global.
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<4x8xf32>
// CHECK: gpu.terminator
// CHECK: call @mgrt_cuda_matmul_f32(
// CHECK-NOT: linalg.
// CHECK: return

// Emulated: the launches are host loops over blocks and threads, and the
// CPU runtime call stays.
// EMU-LABEL: func.func @step(
// EMU-NOT: gpu.launch
// EMU: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// EMU-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// EMU: arith.muli %[[B]], %{{.*}} : index
// EMU: call @mgrt_matmul_f32(

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func private @mgrt_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %r: memref<4xf32>, %s: memref<f32>, %m: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) {
  %w = memref.get_global @w : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%b : memref<4x8xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  memref.copy %w, %b : memref<4x8xf32> to memref<4x8xf32>
  call @mgrt_matmul_f32(%m, %m, %m) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
  return
}

// A column sum: the parallel loop moves first, one thread per column, each
// reducing over the rows in order.
// CHECK-LABEL: func.func @colsum(
// CHECK: gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = {{%c5(_[0-9]+)?}},
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c6
// CHECK: arith.addf
func.func @colsum(%a: memref<6x5xf32>, %r: memref<5xf32>) {
  linalg.reduce ins(%a : memref<6x5xf32>) outs(%r : memref<5xf32>) dimensions = [0]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return
}
