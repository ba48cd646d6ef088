// RUN: megagraph-opt %s -split-input-file | megagraph-opt -split-input-file | FileCheck %s
// RUN: megagraph-opt %s -split-input-file --mlir-print-op-generic | megagraph-opt -split-input-file | FileCheck %s

// gt.attention_lse round trip (result and [B, H, Sq] lse), and a
// gt.attention_grad that takes them.
// CHECK-LABEL: func.func @with_bias
// CHECK-SAME:    (%[[DO:.*]]: tensor<2x4x8xf32>, %[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x8xf32>, %[[B:.*]]: tensor<2x4x6xf32>, %[[M:.*]]: tensor<4x6xi1>)
// CHECK:         %[[O:.*]], %[[L:.*]] = gt.attention_lse %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) heads = 2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
// CHECK:         gt.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) out(%[[O]]) lse(%[[L]]) heads = 2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>)
func.func @with_bias(%do: tensor<2x4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %b: tensor<2x4x6xf32>, %m: tensor<4x6xi1>) -> tensor<2x4x6xf32> {
  %o, %lse = gt.attention_lse %q, %k, %v bias(%b) mask(%m) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
  %dq, %dk, %dv, %db = gt.attention_grad %do, %q, %k, %v bias(%b) mask(%m) out(%o) lse(%lse) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>)
  return %db : tensor<2x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @plain
// CHECK:         gt.attention_lse %{{.*}}, %{{.*}}, %{{.*}} heads = 4 : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x16xf32>) -> (tensor<1x3x16xf32>, tensor<1x4x3xf32>)
func.func @plain(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x16xf32>) -> tensor<1x4x3xf32> {
  %o, %lse = gt.attention_lse %q, %k, %v heads = 4 : (tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x16xf32>) -> (tensor<1x3x16xf32>, tensor<1x4x3xf32>)
  return %lse : tensor<1x4x3xf32>
}
