// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// A Ulysses attention (gt.cp mode = ulysses) calls the runtime's cp
// attention like the other modes, with mode 2 (MGRT_CP_ULYSSES): the
// runtime moves q, k, v, dO and the bias rows [2, 2, 4, 8] to heads by
// all-to-all and the results back. The trailing constants are the heads,
// scale, flags, the grid [1, 2, 1, 1], axes 2, the mode and seq 0 (the
// forward: flags 1, bias; the backward: 5, bias and dbias).
// CHECK-LABEL: func.func @ulysses
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 2 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    %[[AXES:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[MODE:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[SEQ:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_cp_attention_f32({{.*}}, %[[AXES]], %[[MODE]], %[[SEQ]])
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    arith.constant 5 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 2 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    %[[AXES2:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[MODE2:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[SEQ2:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_cp_attention_bwd_f32({{.*}}, %[[AXES2]], %[[MODE2]], %[[SEQ2]])
// CHECK-NOT:     call @mgrt_attention
func.func @ulysses(%q: tensor<2x4x8xf32>, %b: tensor<2x2x4x8xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) {
  %o = gt.attention %q, %q, %q bias(%b) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses, grid = [1, 2, 1, 1], axes = 2>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32>
  %dq, %dk, %dv, %db = gt.attention_grad %do, %q, %q, %q bias(%b) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses, grid = [1, 2, 1, 1], axes = 2>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>)
  return %o, %dq, %db : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>
}
