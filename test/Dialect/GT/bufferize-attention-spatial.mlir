// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// The spatial forms call the spatial kernels: the forward with a [1, 1, 1]
// lse placeholder and flags 3 (bias, mask) without lse, 9 (bias, lse) with
// it; the backward allocates dtable [V, H] and passes it after dbias, the
// [Sq, Sk] distance as [1, Sq, Sk], out and lse after the table (flags 13:
// bias, dbias, lse), or placeholders without them (flags 0).
// CHECK-LABEL: module
// CHECK-DAG:     func.func private @mgrt_attention_spatial_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, memref<?x?x?xi16>, memref<?x?xf32>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG:     func.func private @mgrt_attention_spatial_bwd_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, memref<?x?x?xi16>, memref<?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG:     func.func private @mgrt_cp_attention_spatial_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, memref<?x?x?xi16>, memref<?x?xf32>, i64, f32, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG:     func.func private @mgrt_cp_attention_spatial_bwd_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, memref<?x?x?xi16>, memref<?x?xf32>, i64, f32, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @spatial
// CHECK:         %[[PH:.+]] = memref.alloca() : memref<1x1x1xf32>
// CHECK:         %[[F3:.+]] = arith.constant 3 : i64
// CHECK:         call @mgrt_attention_spatial_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F3]])
// CHECK:         %[[F9:.+]] = arith.constant 9 : i64
// CHECK:         call @mgrt_attention_spatial_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F9]])
// CHECK:         %[[DT:.+]] = memref.alloc() : memref<9x2xf32>
// CHECK:         %[[DTD:.+]] = memref.cast %[[DT]] : memref<9x2xf32> to memref<?x?xf32>
// CHECK:         memref.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [1, 4, 6] : memref<4x6xi16> into memref<1x4x6xi16>
// CHECK:         %[[F13:.+]] = arith.constant 13 : i64
// CHECK:         call @mgrt_attention_spatial_bwd_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DTD]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F13]])
// CHECK:         %[[F0:.+]] = arith.constant 0 : i64
// CHECK:         call @mgrt_attention_spatial_bwd_f32({{.*}}, %[[F0]])
// CHECK-NOT:     gt.attention
func.func @spatial(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %b: tensor<2x4x6xf32>, %m: tensor<4x6xi1>, %d: tensor<4x6xi16>, %t: tensor<9x2xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<9x2xf32>, tensor<9x2xf32>) {
  %o = gt.attention %q, %k, %k bias(%b) mask(%m) spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>, tensor<4x6xi16>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  %o2, %lse = gt.attention_lse %q, %k, %k bias(%b) spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi16>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
  %dq, %dk, %dv, %db, %dt = gt.attention_grad %do, %q, %k, %k bias(%b) spatial(%d, %t) out(%o2) lse(%lse) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<4x6xi16>, tensor<9x2xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<9x2xf32>)
  %dq2, %dk2, %dv2, %dt2 = gt.attention_grad %do, %q, %k, %k spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<4x6xi16>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<9x2xf32>)
  return %o, %dq, %dt, %dt2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<9x2xf32>, tensor<9x2xf32>
}


// Context parallel (gt.cp): the cp spatial kernels, which take no out or
// lse (no [1, 1, 1] placeholders), the distance rows [B, Sq, S] of the
// rank (S = 2 x 4 key columns), then the grid [1, 2, 1, 1], axes 2, mode 1
// (ring) and seq 0 (the declarations at the top); the backward's dtable
// after dbias as above.
// CHECK-LABEL: func.func @spatial_cp
// CHECK-NOT:     memref<1x1x1xf32>
// CHECK:         call @mgrt_cp_attention_spatial_f32(
// CHECK-NOT:     memref<1x1x1xf32>
// CHECK:         %[[DT:.+]] = memref.alloc() : memref<9x2xf32>
// CHECK:         %[[DTD:.+]] = memref.cast %[[DT]] : memref<9x2xf32> to memref<?x?xf32>
// CHECK-NOT:     memref<1x1x1xf32>
// CHECK:         call @mgrt_cp_attention_spatial_bwd_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DTD]],
// CHECK-NOT:     call @mgrt_attention_spatial
func.func @spatial_cp(%q: tensor<2x4x8xf32>, %d: tensor<2x4x8xi16>, %t: tensor<9x2xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<9x2xf32>) {
  %o = gt.attention %q, %q, %q spatial(%d, %t) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xi16>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  %dq, %dk, %dv, %dt = gt.attention_grad %do, %q, %q, %q spatial(%d, %t) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xi16>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<9x2xf32>)
  return %o, %dq, %dt : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<9x2xf32>
}
