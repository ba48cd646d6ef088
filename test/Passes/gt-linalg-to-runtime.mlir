// RUN: megagraph-opt %s --gt-linalg-to-runtime -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-linalg-to-runtime -split-input-file \
// RUN:   | megagraph-opt --gt-linalg-to-runtime -split-input-file | FileCheck %s

// Tests of the gt-linalg-to-runtime pass (passes/Lower/GTLinalgToRuntime.cpp)
// on bufferized IR: an f32 linalg.batch_matmul whose output was zero-filled
// just before becomes a call to the runtime's mgrt_matmul_f32 (out, a, b) on
// fully dynamic strided memrefs, and both the fill and the matmul go away.
// Anything else stays for generated loops. The second RUN line runs the pass
// on its own output: it is idempotent (one declaration, nothing left to
// replace).

// Two matmuls in two functions: one private declaration with the C interface,
// two calls.
// CHECK-LABEL: module
// CHECK:         func.func private @mgrt_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-NOT:     func.func private @mgrt_matmul_f32

// CHECK-LABEL: func.func @matmul_arg
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         %[[CC:.+]] = memref.cast %[[C]] : memref<2x3x5xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    %[[CA:.+]] = memref.cast %[[A]] : memref<2x3x4xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    %[[CB:.+]] = memref.cast %[[B]] : memref<2x4x5xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    call @mgrt_matmul_f32(%[[CC]], %[[CA]], %[[CB]]) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NEXT:    return
// CHECK-NOT:     linalg.
func.func @matmul_arg(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                      %c: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}

// The form bufferized tosa.matmul takes: an allocated output.
// CHECK-LABEL: func.func @matmul_alloc
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<4x8x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<4x16x32xf32>)
// CHECK:         %[[C:.+]] = memref.alloc() : memref<4x8x32xf32>
// CHECK-NEXT:    %[[CC:.+]] = memref.cast %[[C]] : memref<4x8x32xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    %[[CA:.+]] = memref.cast %[[A]] : memref<4x8x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    %[[CB:.+]] = memref.cast %[[B]] : memref<4x16x32xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT:    call @mgrt_matmul_f32(%[[CC]], %[[CA]], %[[CB]]) :
// CHECK-NEXT:    return %[[C]] : memref<4x8x32xf32>
func.func @matmul_alloc(%a: memref<4x8x16xf32>, %b: memref<4x16x32xf32>)
    -> memref<4x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8x32xf32>)
  linalg.batch_matmul ins(%a, %b : memref<4x8x16xf32>, memref<4x16x32xf32>)
                      outs(%c : memref<4x8x32xf32>)
  return %c : memref<4x8x32xf32>
}

// -----

// Two matmuls in one function, each with its own fill; side-effect-free ops
// between a fill and its matmul are fine.
// CHECK-LABEL: module
// CHECK-COUNT-1: func.func private @mgrt_matmul_f32({{.*}}) attributes {llvm.emit_c_interface}
// CHECK-NOT:     func.func private @mgrt_matmul_f32
// CHECK-LABEL: func.func @two_matmuls
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>, %[[D:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>, %[[IDX:[a-zA-Z0-9_]+]]: index)
// CHECK-NOT:     linalg.fill
// CHECK:         %[[CC:.+]] = memref.cast %[[C]] :
// CHECK-NEXT:    %[[CA:.+]] = memref.cast %[[A]] :
// CHECK-NEXT:    %[[CB:.+]] = memref.cast %[[B]] :
// CHECK-NEXT:    call @mgrt_matmul_f32(%[[CC]], %[[CA]], %[[CB]])
// CHECK-NEXT:    %[[I:.+]] = arith.addi %[[IDX]], %[[IDX]] : index
// CHECK-NEXT:    %[[CD:.+]] = memref.cast %[[D]] :
// CHECK-NEXT:    %[[CA2:.+]] = memref.cast %[[A]] :
// CHECK-NEXT:    %[[CB2:.+]] = memref.cast %[[B]] :
// CHECK-NEXT:    call @mgrt_matmul_f32(%[[CD]], %[[CA2]], %[[CB2]])
// CHECK-NEXT:    return %[[I]] : index
// CHECK-NOT:     linalg.
func.func @two_matmuls(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                       %c: memref<2x3x5xf32>, %d: memref<2x3x5xf32>,
                       %i: index) -> index {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<2x3x5xf32>)
  %j = arith.addi %i, %i : index
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%d : memref<2x3x5xf32>)
  return %j : index
}

// -----

// Negative: the fill value is 1.0, so the matmul accumulates onto ones.
// CHECK-LABEL: module
// CHECK-NOT:     @mgrt_matmul_f32
// CHECK-LABEL: func.func @fill_one
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>)
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[ONE]] : f32) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    return
// CHECK-NOT:     call
func.func @fill_one(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                    %c: memref<2x3x5xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<2x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}

// -----

// Negative: a store into the output between the fill and the matmul.
// CHECK-LABEL: module
// CHECK-NOT:     @mgrt_matmul_f32
// CHECK-LABEL: func.func @store_between
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>, %[[I:[a-zA-Z0-9_]+]]: index, %[[X:[a-zA-Z0-9_]+]]: f32)
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    memref.store %[[X]], %[[C]][%[[I]], %[[I]], %[[I]]] : memref<2x3x5xf32>
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    return
// CHECK-NOT:     call
func.func @store_between(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                         %c: memref<2x3x5xf32>, %i: index, %x: f32) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x5xf32>)
  memref.store %x, %c[%i, %i, %i] : memref<2x3x5xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}

// -----

// Negative: f64 operands (the kernel is f32 only).
// CHECK-LABEL: module
// CHECK-NOT:     @mgrt_matmul_f32
// CHECK-LABEL: func.func @f64
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf64>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf64>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf64>)
// CHECK-NEXT:    %[[Z:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    linalg.fill ins(%[[Z]] : f64) outs(%[[C]] : memref<2x3x5xf64>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf64>, memref<2x4x5xf64>) outs(%[[C]] : memref<2x3x5xf64>)
// CHECK-NEXT:    return
// CHECK-NOT:     call
func.func @f64(%a: memref<2x3x4xf64>, %b: memref<2x4x5xf64>,
               %c: memref<2x3x5xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<2x3x5xf64>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf64>, memref<2x4x5xf64>)
                      outs(%c : memref<2x3x5xf64>)
  return
}

// -----

// Negative: no fill at all (the matmul accumulates onto the caller's data).
// CHECK-LABEL: module
// CHECK-NOT:     @mgrt_matmul_f32
// CHECK-LABEL: func.func @no_fill
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    return
// CHECK-NOT:     call
func.func @no_fill(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                   %c: memref<2x3x5xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}

// -----

// Negative: the zero fill is of another buffer than the matmul's output.
// CHECK-LABEL: module
// CHECK-NOT:     @mgrt_matmul_f32
// CHECK-LABEL: func.func @fill_other_buffer
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x5xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>, %[[D:[a-zA-Z0-9_]+]]: memref<2x3x5xf32>)
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[D]] : memref<2x3x5xf32>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK-NEXT:    return
func.func @fill_other_buffer(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>,
                             %c: memref<2x3x5xf32>, %d: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<2x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>)
                      outs(%c : memref<2x3x5xf32>)
  return
}
