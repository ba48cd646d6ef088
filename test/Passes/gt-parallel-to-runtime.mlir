// RUN: megagraph-opt %s --gt-parallel-to-runtime -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-parallel-to-runtime=min-work=1000000 -split-input-file | FileCheck %s --check-prefix=BIG
// RUN: megagraph-opt %s --gt-parallel-to-runtime -split-input-file \
// RUN:   | megagraph-opt --gt-parallel-to-runtime -split-input-file | FileCheck %s

// Tests of the gt-parallel-to-runtime pass (passes/Lower/GTParallelToRuntime.cpp):
// a large outermost scf.parallel becomes a private function over a range of
// its leading iterations, called through the runtime's mgrt_parallel_for with
// a stack record of the values it uses; small loops, loops with reductions
// and loops that call functions stay. The third RUN line runs the pass on
// its own output: nothing is outlined twice (one declaration, no loop left
// worth a dispatch).

// An elementwise loop over [4096, 128]: the leading dimension (4096 >= 64
// iterations) is split, the inner one stays a loop of the outlined function.
// Both memrefs go through the record as descriptors; the constants are
// cloned.
// CHECK-LABEL: module
// CHECK:         func.func private @mgrt_parallel_for((!llvm.ptr, index, index) -> (), !llvm.ptr, index, index)
// CHECK-NOT:     func.func private @mgrt_parallel_for
// CHECK-LABEL:   func.func private @exp_loop0
// CHECK-SAME:      (%[[CTX:.+]]: !llvm.ptr, %[[BEGIN:.+]]: index, %[[END:.+]]: index)
// CHECK-DAG:       %[[C128:.+]] = arith.constant 128 : index
// CHECK:           %[[P0:.+]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK:           %[[D0:.+]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:           %[[IN:.+]] = builtin.unrealized_conversion_cast %[[D0]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4096x128xf32>
// CHECK:           %[[P1:.+]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK:           %[[D1:.+]] = llvm.load %[[P1]]
// CHECK:           %[[OUT:.+]] = builtin.unrealized_conversion_cast %[[D1]] {{.*}} to memref<4096x128xf32>
// CHECK:           scf.for %[[I:.+]] = %[[BEGIN]] to %[[END]] step
// CHECK:             scf.parallel (%[[J:.+]]) = ({{.*}}) to (%[[C128]])
// CHECK:               %[[X:.+]] = memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK:               %[[Y:.+]] = math.exp %[[X]]
// CHECK:               memref.store %[[Y]], %[[OUT]][%[[I]], %[[J]]]
// CHECK:           return
// CHECK-LABEL:   func.func @exp
// CHECK-SAME:      (%[[A:.+]]: memref<4096x128xf32>, %[[B:.+]]: memref<4096x128xf32>)
// CHECK:           %[[SLOT:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK:           %[[DA:.+]] = builtin.unrealized_conversion_cast %[[A]] : memref<4096x128xf32> to !llvm.struct
// CHECK:           %[[FA:.+]] = llvm.getelementptr %[[SLOT]][0, 0]
// CHECK:           llvm.store %[[DA]], %[[FA]]
// CHECK:           %[[DB:.+]] = builtin.unrealized_conversion_cast %[[B]]
// CHECK:           %[[FB:.+]] = llvm.getelementptr %[[SLOT]][0, 1]
// CHECK:           llvm.store %[[DB]], %[[FB]]
// CHECK-DAG:       %[[N:.+]] = arith.constant 4096 : index
// CHECK-DAG:       %[[GRAIN:.+]] = arith.constant 64 : index
// CHECK-DAG:       %[[F:.+]] = constant @exp_loop0 : (!llvm.ptr, index, index) -> ()
// CHECK:           call @mgrt_parallel_for(%[[F]], %[[SLOT]], %[[N]], %[[GRAIN]])
// CHECK-NOT:       scf.parallel
// CHECK:           return
// BIG-LABEL:   func.func @exp
// BIG:           scf.parallel
// BIG-NOT:       mgrt_parallel_for
func.func @exp(%in: memref<4096x128xf32>, %out: memref<4096x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4096, %c128) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<4096x128xf32>
    %y = math.exp %x : f32
    memref.store %y, %out[%i, %j] : memref<4096x128xf32>
  }
  return
}

// -----

// Few leading iterations ([2, 8, 64, 64]): the first three dimensions are
// split together (2 * 8 * 64 = 1024 >= 64 iterations) and delinearized,
// the last fastest; a captured index and float go through the record as i64
// and f32, in the order the body first uses them.
// CHECK-LABEL:   func.func private @scale_loop0
// CHECK-SAME:      (%[[CTX:.+]]: !llvm.ptr, %[[BEGIN:.+]]: index, %[[END:.+]]: index)
// CHECK-DAG:       %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG:       %[[C64:.+]] = arith.constant 64 : index
// CHECK:           %[[OFF64:.+]] = llvm.load {{.*}} -> i64
// CHECK:           %[[OFF:.+]] = arith.index_cast %[[OFF64]] : i64 to index
// CHECK:           llvm.load {{.*}} -> !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK:           %[[IN:.+]] = builtin.unrealized_conversion_cast {{.*}} to memref<2x8x64x64xf32>
// CHECK:           %[[S:.+]] = llvm.load {{.*}} -> f32
// CHECK:           llvm.load {{.*}} -> !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK:           %[[OUT:.+]] = builtin.unrealized_conversion_cast {{.*}} to memref<2x8x64x64xf32>
// CHECK:           scf.for %[[T:.+]] = %[[BEGIN]] to %[[END]]
// CHECK-NEXT:        %[[C:.+]] = arith.remui %[[T]], %[[C64]]
// CHECK-NEXT:        %[[T1:.+]] = arith.divui %[[T]], %[[C64]]
// CHECK-NEXT:        %[[B:.+]] = arith.remui %[[T1]], %[[C8]]
// CHECK-NEXT:        %[[A:.+]] = arith.divui %[[T1]], %[[C8]]
// CHECK-NEXT:        scf.parallel (%[[D:.+]]) = ({{.*}}) to (%[[C64]]) step
// CHECK-NEXT:          %[[DD:.+]] = arith.addi %[[D]], %[[OFF]]
// CHECK:               %[[X:.+]] = memref.load %[[IN]][%[[A]], %[[B]], %[[C]], %{{.+}}]
// CHECK-NEXT:          %[[Y:.+]] = arith.mulf %[[X]], %[[S]]
// CHECK-NEXT:          memref.store %[[Y]], %[[OUT]][%[[A]], %[[B]], %[[C]], %[[D]]]
// CHECK-LABEL:   func.func @scale
// CHECK:           arith.index_cast %{{.+}} : index to i64
// CHECK-DAG:       %[[N:.+]] = arith.constant 1024 : index
// CHECK:           call @mgrt_parallel_for(%{{.+}}, %{{.+}}, %[[N]], %{{.+}})
func.func @scale(%in: memref<2x8x64x64xf32>, %off: index, %s: f32,
                 %buf: memref<2x8x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%a, %b, %c, %d) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c64, %c64)
      step (%c1, %c1, %c1, %c1) {
    %dd = arith.addi %d, %off : index
    %e = arith.remui %dd, %c64 : index
    %x = memref.load %in[%a, %b, %c, %e] : memref<2x8x64x64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %buf[%a, %b, %c, %d] : memref<2x8x64x64xf32>
  }
  return
}

// -----

// Loops that stay: too little work, a reduction, and a call in the body.
// CHECK-LABEL:   func.func @stay
// CHECK-NOT:       mgrt_parallel_for
// CHECK:           scf.parallel
// CHECK:           scf.parallel
// CHECK:           scf.reduce
// CHECK:           scf.parallel
// CHECK:           call @opaque
// CHECK-NOT:       mgrt_parallel_for
// CHECK:           return
func.func private @opaque(f32) -> f32
func.func @stay(%small: memref<16xf32>, %big: memref<65536xf32>,
                %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c65536 = arith.constant 65536 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %x = memref.load %small[%i] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %small[%i] : memref<16xf32>
  }
  %r = scf.parallel (%i) = (%c0) to (%c65536) step (%c1) init (%zero) -> f32 {
    %x = memref.load %big[%i] : memref<65536xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %rr: f32):
      %s = arith.addf %l, %rr : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %r, %sum[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c65536) step (%c1) {
    %x = memref.load %big[%i] : memref<65536xf32>
    %y = func.call @opaque(%x) : (f32) -> f32
    memref.store %y, %big[%i] : memref<65536xf32>
  }
  return
}

// -----

// A one-dimensional loop: its only dimension is split, the outlined range
// loop is the innermost loop. A loop nested in a sequential loop is
// dispatched once per outer iteration.
// CHECK-LABEL:   func.func private @nested_loop0
// CHECK:           scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NOT:         scf.parallel
// CHECK:             memref.load %{{.+}}[%{{.+}}, %[[T]]]
// CHECK-LABEL:   func.func @nested
// CHECK:           scf.for
// CHECK:             call @mgrt_parallel_for
// CHECK-NOT:       scf.parallel
func.func @nested(%buf: memref<4x65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c65536 = arith.constant 65536 : index
  scf.for %r = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c65536) step (%c1) {
      %x = memref.load %buf[%r, %i] : memref<4x65536xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %buf[%r, %i] : memref<4x65536xf32>
    }
  }
  return
}
