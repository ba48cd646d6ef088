// RUN: megagraph-opt %s --gt-memory-plan -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-memory-plan --gt-memory-plan -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-memory-plan=alignment=256 -split-input-file | FileCheck %s --check-prefix=A256

// Tests of the gt-memory-plan pass (passes/Lower/GTMemoryPlan.cpp): the
// buffers a function allocates and frees in its body block become views of
// one arena at offsets where buffers alive at the same time never share a
// byte. The second RUN line plans twice: the arena is then the only
// allocation left, and one buffer is nothing to share, so nothing changes.

// Three buffers: %a (4096 B) and %b (2048 B) are alive together, %c
// (4096 B) only after both are freed, so %c reuses %a's bytes. Largest
// first: %a at 0, %c at 0 (disjoint lifetimes), %b after %a at 4096. The
// arena is 6144 bytes, allocated first and freed before the return.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME:    (%[[IN:.+]]: memref<1024xf32>, %[[OUT:.+]]: memref<1024xf32>)
// CHECK:         %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<6144xi8>
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<6144xi8> to memref<1024xf32>
// CHECK-NEXT:    linalg.copy ins(%[[IN]] : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
// CHECK-NEXT:    %[[C4096:.+]] = arith.constant 4096 : index
// CHECK-NEXT:    %[[B:.+]] = memref.view %[[ARENA]][%[[C4096]]][] : memref<6144xi8> to memref<512xf32>
// CHECK-NOT:     memref.dealloc %[[A]]
// CHECK:         %[[C0B:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.+]] = memref.view %[[ARENA]][%[[C0B]]][] : memref<6144xi8> to memref<1024xf32>
// CHECK:         linalg.copy ins(%[[C]] : memref<1024xf32>) outs(%[[OUT]] : memref<1024xf32>)
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<6144xi8>
// CHECK-NEXT:    return
// A256-LABEL: func.func @reuse
// A256:         memref.alloc() {alignment = 256 : i64} : memref<6144xi8>
func.func @reuse(%in: memref<1024xf32>, %out: memref<1024xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%in : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() : memref<512xf32>
  %sa = memref.subview %a[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  linalg.copy ins(%sa : memref<512xf32, strided<[1]>>) outs(%b : memref<512xf32>)
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<1024xf32>
  %sc = memref.subview %c[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  linalg.copy ins(%b : memref<512xf32>) outs(%sc : memref<512xf32, strided<[1]>>)
  memref.dealloc %b : memref<512xf32>
  linalg.copy ins(%c : memref<1024xf32>) outs(%out : memref<1024xf32>)
  memref.dealloc %c : memref<1024xf32>
  return
}

// -----

// Offsets are aligned: four buffers alive together, largest first (ties in
// order of allocation): 40 bytes of f32 at 0, 40 bytes of index (8 per
// element) at 64, the f32 scalar at 128, 3 bytes of i8 at 192; 195 bytes.
// With alignment=256: 0, 256, 512, 768; 771 bytes.
// CHECK-LABEL: func.func @aligned
// CHECK:         %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<195xi8>
// CHECK:         %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT:    memref.view %[[ARENA]][%[[C128]]][] : memref<195xi8> to memref<f32>
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    memref.view %[[ARENA]][%[[C0]]][] : memref<195xi8> to memref<10xf32>
// CHECK:         %[[C192:.+]] = arith.constant 192 : index
// CHECK-NEXT:    memref.view %[[ARENA]][%[[C192]]][] : memref<195xi8> to memref<3xi8>
// CHECK:         %[[C64:.+]] = arith.constant 64 : index
// CHECK-NEXT:    memref.view %[[ARENA]][%[[C64]]][] : memref<195xi8> to memref<5xindex>
// A256-LABEL: func.func @aligned
// A256:         memref.alloc() {alignment = 256 : i64} : memref<771xi8>
func.func @aligned(%x: f32, %i: index) {
  %c0 = arith.constant 0 : index
  %s = memref.alloc() : memref<f32>
  %v = memref.alloc() : memref<10xf32>
  %bytes = memref.alloc() : memref<3xi8>
  %idx = memref.alloc() : memref<5xindex>
  memref.store %x, %s[] : memref<f32>
  memref.store %x, %v[%c0] : memref<10xf32>
  memref.store %i, %idx[%c0] : memref<5xindex>
  %c7 = arith.constant 7 : i8
  memref.store %c7, %bytes[%c0] : memref<3xi8>
  memref.dealloc %s : memref<f32>
  memref.dealloc %v : memref<10xf32>
  memref.dealloc %bytes : memref<3xi8>
  memref.dealloc %idx : memref<5xindex>
  return
}

// -----

// Buffers the plan leaves alone: a returned one, a dynamic one, one freed in
// a nested region, one with a layout, and an i1 buffer (elements smaller
// than a byte). With fewer than two plannable buffers nothing changes.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     memref.view
// CHECK:         %[[R:.+]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[D:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         %[[N:.+]] = memref.alloc() : memref<8xf32>
// CHECK:         scf.if
// CHECK-NEXT:      memref.dealloc %[[N]]
// CHECK:         memref.alloc() : memref<8xf32, strided<[2]>>
// CHECK:         memref.alloc() : memref<8xi1>
// CHECK:         memref.alloc() : memref<4xf32>
// CHECK-NOT:     memref.view
// CHECK:         return %[[R]]
func.func @kept(%n: index, %cond: i1) -> memref<8xf32> {
  %r = memref.alloc() : memref<8xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  %nested = memref.alloc() : memref<8xf32>
  scf.if %cond {
    memref.dealloc %nested : memref<8xf32>
  }
  %strided = memref.alloc() : memref<8xf32, strided<[2]>>
  memref.dealloc %strided : memref<8xf32, strided<[2]>>
  %bits = memref.alloc() : memref<8xi1>
  memref.dealloc %bits : memref<8xi1>
  %one = memref.alloc() : memref<4xf32>
  memref.dealloc %one : memref<4xf32>
  return %r : memref<8xf32>
}

// -----

// The arena lives from the first planned buffer's allocation to the last
// one's free: the buffer of the `scf.if` before them (one-time work) is
// freed before the arena exists, and the one allocated after them is not
// stacked on it either.
// CHECK-LABEL: func.func @span
// CHECK:         scf.if
// CHECK-NEXT:      %[[ONCE:.+]] = memref.alloc() : memref<4096xf32>
// CHECK:           memref.dealloc %[[ONCE]]
// CHECK:         }
// CHECK-NEXT:    %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK:         memref.view %[[ARENA]]
// CHECK:         memref.view %[[ARENA]]
// CHECK:         memref.dealloc %[[ARENA]] : memref<8192xi8>
// CHECK-NEXT:    %[[LATE:.+]] = memref.alloc() : memref<2048xf32>
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      memref.dealloc %[[LATE]]
func.func @span(%cond: i1, %in: memref<1024xf32>, %out: memref<1024xf32>) {
  scf.if %cond {
    %once = memref.alloc() : memref<4096xf32>
    memref.dealloc %once : memref<4096xf32>
  }
  %a = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%in : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  memref.dealloc %a : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%out : memref<1024xf32>)
  memref.dealloc %b : memref<1024xf32>
  %late = memref.alloc() : memref<2048xf32>
  scf.if %cond {
    memref.dealloc %late : memref<2048xf32>
  }
  return
}
