// RUN: megagraph-opt %s -split-input-file | megagraph-opt -split-input-file | FileCheck %s
// RUN: megagraph-opt %s -split-input-file --mlir-print-op-generic | megagraph-opt -split-input-file | FileCheck %s

// The spatial operands of the attention ops round trip: a [B, Sq, Sk]
// distance and a [V, H] table, alone or beside a bias and a mask; the
// gradient's dtable has the table's type and follows dbias.
// CHECK-LABEL: func.func @spatial
// CHECK-SAME:    (%[[DO:.*]]: tensor<2x4x8xf32>, %[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x8xf32>, %[[D:.*]]: tensor<2x4x6xi64>, %[[T:.*]]: tensor<9x2xf32>, %[[B:.*]]: tensor<2x1x4x6xf32>, %[[M:.*]]: tensor<4x6xi1>)
// CHECK:         %[[O:.*]] = gt.attention %[[Q]], %[[K]], %[[V]] spatial(%[[D]], %[[T]]) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
// CHECK:         %[[O2:.*]], %[[L:.*]] = gt.attention_lse %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) spatial(%[[D]], %[[T]]) heads = 2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<4x6xi1>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
// CHECK:         = gt.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) spatial(%[[D]], %[[T]]) out(%[[O2]]) lse(%[[L]]) heads = 2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<4x6xi1>, tensor<2x4x6xi64>, tensor<9x2xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>)
// CHECK:         = gt.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]] spatial(%[[D]], %[[T]]) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<9x2xf32>)
// CHECK:         return %[[O]],
func.func @spatial(%do: tensor<2x4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x2xf32>, %b: tensor<2x1x4x6xf32>, %m: tensor<4x6xi1>) -> (tensor<2x4x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>, tensor<9x2xf32>) {
  %o = gt.attention %q, %k, %v spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  %o2, %lse = gt.attention_lse %q, %k, %v bias(%b) mask(%m) spatial(%d, %t) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<4x6xi1>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
  %dq, %dk, %dv, %db, %dt = gt.attention_grad %do, %q, %k, %v bias(%b) mask(%m) spatial(%d, %t) out(%o2) lse(%lse) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<4x6xi1>, tensor<2x4x6xi64>, tensor<9x2xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>)
  %dq2, %dk2, %dv2, %dt2 = gt.attention_grad %do, %q, %k, %v spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<9x2xf32>)
  return %o, %db, %dt, %dt2 : tensor<2x4x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>, tensor<9x2xf32>
}

// -----

// A distance shared by the batch: [Sq, Sk] or [1, Sq, Sk], any integer type.
// CHECK-LABEL: func.func @shared
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} spatial(%{{.*}}, %{{.*}}) heads = 4 : (tensor<3x5x8xf32>, tensor<3x7x8xf32>, tensor<3x7x16xf32>, tensor<5x7xi16>, tensor<1x4xf32>) -> tensor<3x5x16xf32>
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} spatial(%{{.*}}, %{{.*}}) heads = 4 : (tensor<3x5x8xf32>, tensor<3x7x8xf32>, tensor<3x7x16xf32>, tensor<1x5x7xi32>, tensor<1x4xf32>) -> tensor<3x5x16xf32>
func.func @shared(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x16xf32>, %d: tensor<5x7xi16>, %d1: tensor<1x5x7xi32>, %t: tensor<1x4xf32>) -> (tensor<3x5x16xf32>, tensor<3x5x16xf32>) {
  %o = gt.attention %q, %k, %v spatial(%d, %t) heads = 4 : (tensor<3x5x8xf32>, tensor<3x7x8xf32>, tensor<3x7x16xf32>, tensor<5x7xi16>, tensor<1x4xf32>) -> tensor<3x5x16xf32>
  %o1 = gt.attention %q, %k, %v spatial(%d1, %t) heads = 4 : (tensor<3x5x8xf32>, tensor<3x7x8xf32>, tensor<3x7x16xf32>, tensor<1x5x7xi32>, tensor<1x4xf32>) -> tensor<3x5x16xf32>
  return %o, %o1 : tensor<3x5x16xf32>, tensor<3x5x16xf32>
}
