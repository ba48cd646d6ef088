// RUN: megagraph-opt %s --gt-sparse-adjacency=edges=6 --split-input-file \
// RUN:   | FileCheck %s --implicit-check-not='tensor<4x4xf32>' --implicit-check-not='tensor<1x4x4xf32>' --implicit-check-not=adj_norm
// RUN: megagraph-opt %s --gt-sparse-adjacency=edges=6 --gt-raise --split-input-file \
// RUN:   | FileCheck %s --check-prefix=RAISE --implicit-check-not='tensor<4x4xf32>' --implicit-check-not='tensor<1x4x4xf32>'
// RUN: megagraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(import-to-gt{sparse-adjacency-edges=6})' \
// RUN:   | FileCheck %s --check-prefix=RAISE --implicit-check-not='tensor<4x4xf32>' --implicit-check-not='tensor<1x4x4xf32>'
// RUN: megagraph-opt %s --gt-sparse-adjacency --split-input-file | FileCheck %s --check-prefix=NOE
// RUN: megagraph-opt %s --split-input-file --pass-pipeline='builtin.module(import-to-gt)' | FileCheck %s --check-prefix=NOE

// Kipf's dense adj_norm made sparse (passes/Raise/GTSparseAdjacency.cpp),
// on the importer's form of `adj_norm @ (x W + b)` (examples/gcn/gcn.py's
// KipfGCN): adj_norm [N, N] reshaped to [1, N, N] and multiplied with
// tosa.matmul. With edges=E the input becomes edge_index [2, E] and each
// product one gt.spmm over the CSR of the targets with the self loops
// appended (E + N = 10 entries); without edges nothing changes (NOE). The
// import-to-gt pipeline runs it before gt-raise given
// sparse-adjacency-edges.

// One layer, and a second product behind its own reshape: both share the
// one CSR and the one set of weights built at the function's entry.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x2xf32> {gt.name = "x"}, %[[EI:[a-zA-Z0-9_]+]]: tensor<2x6xi64> {gt.name = "edge_index"})
// CHECK:         %[[LOOPS:.+]] = "tosa.const"() <{values = dense<[0, 1, 2, 3]> : tensor<4xi64>}>
// CHECK:         %[[ROW0:.+]] = tosa.const_shape {values = dense<0> : tensor<2xindex>}
// CHECK:         tosa.slice %[[EI]], %[[ROW0]]
// CHECK:         %[[SRC:.+]] = tosa.concat %{{.*}}, %[[LOOPS]] {axis = 0 : i32} : (tensor<6xi64>, tensor<4xi64>) -> tensor<10xi64>
// CHECK:         %[[ROW1:.+]] = tosa.const_shape {values = dense<[1, 0]> : tensor<2xindex>}
// CHECK:         tosa.slice %[[EI]], %[[ROW1]]
// CHECK:         %[[DST:.+]] = tosa.concat %{{.*}}, %[[LOOPS]] {axis = 0 : i32} : (tensor<6xi64>, tensor<4xi64>) -> tensor<10xi64>
// CHECK:         %[[RP:.+]], %[[CI:.+]], %[[P:.+]] = gt.csr_transpose %[[DST]] cols = 4 : (tensor<10xi64>) -> (tensor<5xi64>, tensor<10xi64>, tensor<10xi64>)
// CHECK-DAG:     %[[ONES1:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<10x1xf32>}>
// CHECK-DAG:     %[[ONES:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<10xf32>}>
// CHECK:         %[[DEG:.+]] = gt.spmm %[[RP]], %[[CI]], %[[ONES]], %[[ONES1]] : (tensor<5xi64>, tensor<10xi64>, tensor<10xf32>, tensor<10x1xf32>) -> tensor<4x1xf32>
// CHECK:         %[[DINV:.+]] = tosa.rsqrt %[[DEG]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK:         %[[P32:.+]] = tosa.cast %[[P]] : (tensor<10xi64>) -> tensor<10xi32>
// CHECK:         %[[PERM:.+]] = tosa.reshape %[[P32]]
// CHECK:         %[[SRC3:.+]] = tosa.reshape %[[SRC]]
// CHECK:         %[[SRC32:.+]] = tosa.cast %[[SRC3]]
// CHECK:         %[[SRCP:.+]] = tosa.gather %[[SRC32]], %[[PERM]] : (tensor<1x10x1xi32>, tensor<1x10xi32>) -> tensor<1x10x1xi32>
// CHECK:         %[[SRCP2:.+]] = tosa.reshape %[[SRCP]]
// CHECK:         %[[DST3:.+]] = tosa.reshape %[[DST]]
// CHECK:         %[[DST32:.+]] = tosa.cast %[[DST3]]
// CHECK:         %[[DSTP:.+]] = tosa.gather %[[DST32]], %[[PERM]] : (tensor<1x10x1xi32>, tensor<1x10xi32>) -> tensor<1x10x1xi32>
// CHECK:         %[[DSTP2:.+]] = tosa.reshape %[[DSTP]]
// CHECK:         %[[DINV3:.+]] = tosa.reshape %[[DINV]]
// CHECK:         %[[WD:.+]] = tosa.gather %[[DINV3]], %[[DSTP2]] : (tensor<1x4x1xf32>, tensor<1x10xi32>) -> tensor<1x10x1xf32>
// CHECK:         %[[WD1:.+]] = tosa.reshape %[[WD]]
// CHECK:         %[[DINV3B:.+]] = tosa.reshape %[[DINV]]
// CHECK:         %[[WS:.+]] = tosa.gather %[[DINV3B]], %[[SRCP2]] : (tensor<1x4x1xf32>, tensor<1x10xi32>) -> tensor<1x10x1xf32>
// CHECK:         %[[WS1:.+]] = tosa.reshape %[[WS]]
// CHECK:         %[[W:.+]] = tosa.mul %[[WS1]], %[[WD1]], %{{.*}} : (tensor<10xf32>, tensor<10xf32>, tensor<1xi8>) -> tensor<10xf32>
// CHECK:         %[[COL:.+]] = tosa.reshape %[[SRCP2]], %{{.*}} : (tensor<1x10xi32>, !tosa.shape<1>) -> tensor<10xi32>
// CHECK:         %[[H:.+]] = tosa.matmul
// CHECK:         %[[H2:.+]] = tosa.reshape %[[H]], %{{.*}} : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
// CHECK:         %[[Y:.+]] = gt.spmm %[[RP]], %[[COL]], %[[W]], %[[H2]] : (tensor<5xi64>, tensor<10xi32>, tensor<10xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[Y3:.+]] = tosa.reshape %[[Y]]
// CHECK:         %[[Y2:.+]] = tosa.reshape %[[Y3]]
// CHECK:         %[[Z:.+]] = gt.spmm %[[RP]], %[[COL]], %[[W]], %{{.*}} : (tensor<5xi64>, tensor<10xi32>, tensor<10xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         return

// After gt-raise (which runs after this pass in import-to-gt) the
// products stay gt.spmm over the one CSR; no [N, N] tensor is left.
// RAISE-LABEL: func.func @main
// RAISE-SAME:    tensor<2x6xi64> {gt.name = "edge_index"}
// RAISE:         %[[RP:.+]], %{{.*}}, %{{.*}} = gt.csr_transpose
// RAISE:         gt.spmm %[[RP]], {{.*}} -> tensor<4x1xf32>
// RAISE:         gt.spmm %[[RP]], {{.*}} : (tensor<5xi64>, tensor<10xi32>, tensor<10xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// RAISE:         gt.spmm %[[RP]], {{.*}} : (tensor<5xi64>, tensor<10xi32>, tensor<10xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// RAISE:         return

// NOE-LABEL: func.func @main
// NOE-SAME:    tensor<4x4xf32> {gt.name = "adj_norm"}
// NOE:         tosa.matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x4xf32>, tensor<1x4x3xf32>
// NOE-NOT:     gt.spmm
func.func @main(%x: tensor<4x2xf32> {gt.name = "x"},
                %adj: tensor<4x4xf32> {gt.name = "adj_norm"})
    -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3x = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3a = tosa.const_shape {values = dense<[1, 4, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[4, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s3x : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %h = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %a = tosa.reshape %adj, %s3a : (tensor<4x4xf32>, !tosa.shape<3>) -> tensor<1x4x4xf32>
  %y = tosa.matmul %a, %h, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %y2 = tosa.reshape %y, %s2 : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
  %a2 = tosa.reshape %adj, %s3a : (tensor<4x4xf32>, !tosa.shape<3>) -> tensor<1x4x4xf32>
  %z = tosa.matmul %a2, %y, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %z2 = tosa.reshape %z, %s2 : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
  return %y2, %z2 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// adj_norm [1, N, N] multiplied directly, and an argument after it: the
// edge list takes adj_norm's place.
// CHECK-LABEL: func.func @batched
// CHECK-SAME:    (%{{.*}}: tensor<1x4x3xf32> {gt.name = "h"}, %[[EI:[a-zA-Z0-9_]+]]: tensor<2x6xi64> {gt.name = "edge_index"}, %{{.*}}: tensor<4xf32> {gt.name = "other"})
// CHECK:         gt.csr_transpose
// CHECK:         %[[Y:.+]] = gt.spmm %{{.*}} -> tensor<4x3xf32>
// CHECK:         %[[Y3:.+]] = tosa.reshape %[[Y]], %{{.*}} : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
// CHECK:         return %[[Y3]]
// NOE-LABEL: func.func @batched
// NOE:         tosa.matmul
func.func @batched(%h: tensor<1x4x3xf32> {gt.name = "h"},
                   %adj: tensor<1x4x4xf32> {gt.name = "adj_norm"},
                   %o: tensor<4xf32> {gt.name = "other"}) -> tensor<1x4x3xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %adj, %h, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}
