// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// gt.attention_lse allocates its result and the [B, H, Sq] lse and calls
// mgrt_attention_lse_f32(out, lse, q, k, v, bias, mask, num_heads, scale,
// flags); a gt.attention_grad given them calls mgrt_attention_bwd_lse_f32
// with the forward's two buffers after the mask.
// CHECK-LABEL: module
// CHECK-DAG:     func.func private @mgrt_attention_bwd_lse_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, memref<?x?x?xf32>, memref<?x?x?xf32>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG:     func.func private @mgrt_attention_lse_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @lse
// CHECK:         %[[OUT:.+]] = memref.alloc() : memref<2x4x8xf32>
// CHECK-NEXT:    %[[LSE:.+]] = memref.alloc() : memref<2x2x4xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[LSED:.+]] = memref.cast %[[LSE]] : memref<2x2x4xf32> to memref<?x?x?xf32>
// CHECK:         call @mgrt_attention_lse_f32(%[[OUTD]], %[[LSED]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:         %[[OUTB:.+]] = memref.cast %[[OUT]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[LSEB:.+]] = memref.cast %[[LSE]] : memref<2x2x4xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    arith.constant 2 : i64
// CHECK-NEXT:    arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 5 : i64
// CHECK-NEXT:    call @mgrt_attention_bwd_lse_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[OUTB]], %[[LSEB]], %{{.+}}, %{{.+}}, %[[F]])
// CHECK-NOT:     gt.attention
func.func @lse(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %b: tensor<2x4x6xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x6xf32>) {
  %o, %lse = gt.attention_lse %q, %k, %v bias(%b) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
  %dq, %dk, %dv, %db = gt.attention_grad %do, %q, %k, %v bias(%b) out(%o) lse(%lse) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>)
  return %dq, %db : tensor<2x4x8xf32>, tensor<2x4x6xf32>
}
