// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s

// One-shot bufferization of gt.attention
// (dialects/GT/GTBufferizableOpInterfaceImpl.cpp): the op becomes an
// allocation of its result and a call to the fused runtime kernel
// mgrt_attention_f32(out, q, k, v, bias, mask, num_heads, scale, flags) on
// identity-layout memrefs of dynamic shape. The bias and the mask are given
// rank 4 by memref.expand_shape; an absent one is a 1x1x1x1 memref.alloca
// placeholder, and flags has bit 0 for a bias and bit 1 for a mask. The
// kernel is declared once per module, private, with the C interface.

// Rank-3 bias [H, Sq, Sk] -> 1xHxSqxSk; no mask; default scale 1/sqrt(4).
// CHECK-LABEL: module
// CHECK-NEXT:    func.func private @mgrt_attention_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @bias_rank3
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<2x6x12xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2x4x6xf32>) -> memref<2x4x12xf32>
// CHECK-NEXT:    %[[B4:.+]] = memref.expand_shape %[[B]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : memref<2x4x6xf32> into memref<1x2x4x6xf32>
// CHECK-NEXT:    %[[MASK:.+]] = memref.alloca() : memref<1x1x1x1xi1>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<2x4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]] : memref<2x6x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[V]] : memref<2x6x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[B4]] : memref<1x2x4x6xf32> to memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[MD:.+]] = memref.cast %[[MASK]] : memref<1x1x1x1xi1> to memref<?x?x?x?xi1>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 1 : i64
// CHECK-NEXT:    call @mgrt_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[BD]], %[[MD]], %[[H]], %[[S]], %[[F]]) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, i64, f32, i64) -> ()
// CHECK-NEXT:    return %[[OUT]] : memref<2x4x12xf32>
// CHECK-NOT:     gt.attention
func.func @bias_rank3(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                      %v: tensor<2x6x12xf32>, %b: tensor<2x4x6xf32>)
    -> tensor<2x4x12xf32> {
  %0 = gt.attention %q, %k, %v bias(%b) heads = 2
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>,
         tensor<2x4x6xf32>) -> tensor<2x4x12xf32>
  return %0 : tensor<2x4x12xf32>
}

// -----

// Rank-4 bias (passed as is) and a rank-2 i1 mask [Sq, Sk] -> 1x1xSqxSk;
// the scale attribute is passed; flags = 3.
// CHECK-LABEL: module
// CHECK-NEXT:    func.func private @mgrt_attention_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, i64, f32, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @bias_rank4_mask
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<2x6x12xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<1x2x4x6xf32>, %[[M:[a-zA-Z0-9_]+]]: memref<4x6xi1>) -> memref<2x4x12xf32>
// CHECK-NEXT:    %[[M4:.+]] = memref.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 6] : memref<4x6xi1> into memref<1x1x4x6xi1>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<2x4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]] : memref<2x6x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[V]] : memref<2x6x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[B]] : memref<1x2x4x6xf32> to memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[MD:.+]] = memref.cast %[[M4]] : memref<1x1x4x6xi1> to memref<?x?x?x?xi1>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 3 : i64
// CHECK-NEXT:    call @mgrt_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[BD]], %[[MD]], %[[H]], %[[S]], %[[F]]) :
// CHECK-NEXT:    return %[[OUT]] : memref<2x4x12xf32>
// CHECK-NOT:     memref.alloca
func.func @bias_rank4_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                           %v: tensor<2x6x12xf32>, %b: tensor<1x2x4x6xf32>,
                           %m: tensor<4x6xi1>) -> tensor<2x4x12xf32> {
  %0 = gt.attention %q, %k, %v bias(%b) mask(%m) heads = 2 {scale = 0.25 : f32}
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>,
         tensor<1x2x4x6xf32>, tensor<4x6xi1>) -> tensor<2x4x12xf32>
  return %0 : tensor<2x4x12xf32>
}

// -----

// A rank-3 mask [H, Sq, Sk] alone: f32 bias placeholder, flags = 2.
// CHECK-LABEL: func.func @mask_rank3
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, %[[M:[a-zA-Z0-9_]+]]: memref<2x4x4xi1>) -> memref<2x4x8xf32>
// CHECK-NEXT:    %[[BIAS:.+]] = memref.alloca() : memref<1x1x1x1xf32>
// CHECK-NEXT:    %[[M4:.+]] = memref.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : memref<2x4x4xi1> into memref<1x2x4x4xi1>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<2x4x8xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[BIAS]] : memref<1x1x1x1xf32> to memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[MD:.+]] = memref.cast %[[M4]] : memref<1x2x4x4xi1> to memref<?x?x?x?xi1>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    call @mgrt_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[BD]], %[[MD]], %[[H]], %[[S]], %[[F]]) :
// CHECK-NEXT:    return %[[OUT]] : memref<2x4x8xf32>
func.func @mask_rank3(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xi1>) -> tensor<2x4x8xf32> {
  %0 = gt.attention %q, %q, %q mask(%m) heads = 2
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
         tensor<2x4x4xi1>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Neither bias nor mask: two placeholders and flags = 0. Two attentions in a
// module share one declaration; heads = 4 gives scale 1/sqrt(2).
// CHECK-LABEL: module
// CHECK-COUNT-1: func.func private @mgrt_attention_f32(
// CHECK-NOT:     func.func private @mgrt_attention_f32(
// CHECK-LABEL: func.func @no_bias_no_mask
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<2x6x12xf32>) -> (memref<2x4x12xf32>, memref<2x4x12xf32>)
// CHECK-NEXT:    %[[BIAS:.+]] = memref.alloca() : memref<1x1x1x1xf32>
// CHECK-NEXT:    %[[MASK:.+]] = memref.alloca() : memref<1x1x1x1xi1>
// CHECK-NEXT:    %[[OUT:.+]] = memref.alloc() : memref<2x4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[Q]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]] : memref<2x6x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[VD:.+]] = memref.cast %[[V]] : memref<2x6x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[BD:.+]] = memref.cast %[[BIAS]] : memref<1x1x1x1xf32> to memref<?x?x?x?xf32>
// CHECK-NEXT:    %[[MD:.+]] = memref.cast %[[MASK]] : memref<1x1x1x1xi1> to memref<?x?x?x?xi1>
// CHECK-NEXT:    %[[H:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[S:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[F:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_attention_f32(%[[OUTD]], %[[QD]], %[[KD]], %[[VD]], %[[BD]], %[[MD]], %[[H]], %[[S]], %[[F]]) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?x?xf32>, memref<?x?x?x?xi1>, i64, f32, i64) -> ()
// CHECK:         %[[OUT2:.+]] = memref.alloc() : memref<2x4x12xf32>
// CHECK:         %[[H2:.+]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[S2:.+]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:    %[[F2:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    call @mgrt_attention_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[H2]], %[[S2]], %[[F2]])
// CHECK-NEXT:    return %[[OUT]], %[[OUT2]] : memref<2x4x12xf32>, memref<2x4x12xf32>
func.func @no_bias_no_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                           %v: tensor<2x6x12xf32>)
    -> (tensor<2x4x12xf32>, tensor<2x4x12xf32>) {
  %0 = gt.attention %q, %k, %v heads = 2
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>)
      -> tensor<2x4x12xf32>
  %1 = gt.attention %q, %k, %v heads = 4
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>)
      -> tensor<2x4x12xf32>
  return %0, %1 : tensor<2x4x12xf32>, tensor<2x4x12xf32>
}

// -----

// A strided query (a row block of a larger tensor) is copied into an
// identity-layout buffer before the cast.
// CHECK-LABEL: func.func @strided_query
// CHECK-SAME:    (%[[QQ:[a-zA-Z0-9_]+]]: memref<2x8x8xf32>, %[[K:[a-zA-Z0-9_]+]]: memref<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: memref<2x6x12xf32>)
// CHECK-NEXT:    %[[SV:.+]] = memref.subview %[[QQ]][0, 2, 0] [2, 4, 8] [1, 1, 1] : memref<2x8x8xf32> to memref<2x4x8xf32, strided<[64, 8, 1], offset: 16>>
// CHECK:         %[[OUT:.+]] = memref.alloc() : memref<2x4x12xf32>
// CHECK-NEXT:    %[[OUTD:.+]] = memref.cast %[[OUT]] : memref<2x4x12xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[QC:.+]] = memref.alloc() : memref<2x4x8xf32>
// CHECK-NEXT:    memref.copy %[[SV]], %[[QC]] : memref<2x4x8xf32, strided<[64, 8, 1], offset: 16>> to memref<2x4x8xf32>
// CHECK-NEXT:    %[[QD:.+]] = memref.cast %[[QC]] : memref<2x4x8xf32> to memref<?x?x?xf32>
// CHECK-NEXT:    %[[KD:.+]] = memref.cast %[[K]] : memref<2x6x8xf32> to memref<?x?x?xf32>
// CHECK:         call @mgrt_attention_f32(%[[OUTD]], %[[QD]], %[[KD]],
// CHECK-NEXT:    return %[[OUT]] : memref<2x4x12xf32>
func.func @strided_query(%qq: tensor<2x8x8xf32>, %k: tensor<2x6x8xf32>,
                         %v: tensor<2x6x12xf32>) -> tensor<2x4x12xf32> {
  %q = tensor.extract_slice %qq[0, 2, 0] [2, 4, 8] [1, 1, 1]
      : tensor<2x8x8xf32> to tensor<2x4x8xf32>
  %0 = gt.attention %q, %k, %v heads = 2
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>)
      -> tensor<2x4x12xf32>
  return %0 : tensor<2x4x12xf32>
}

// -----

// A strided rank-3 bias (a row block sliced from a larger bias, as under
// context parallelism) is copied to an identity layout before it is
// expanded to rank 4.
// CHECK-LABEL: func.func @strided_bias
// CHECK: %[[SUB:.*]] = memref.subview
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<2x4x6xf32>
// CHECK: memref.copy %[[SUB]], %[[COPY]]
// CHECK: memref.expand_shape %[[COPY]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 2, 4, 6] : memref<2x4x6xf32> into memref<1x2x4x6xf32>
// CHECK: call @mgrt_attention_f32
func.func @strided_bias(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>,
                        %full: tensor<2x8x6xf32>) -> tensor<1x4x8xf32> {
  %b = tensor.extract_slice %full[0, 2, 0] [2, 4, 6] [1, 1, 1]
      : tensor<2x8x6xf32> to tensor<2x4x6xf32>
  %0 = gt.attention %q, %k, %k bias(%b) heads = 2
      : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>,
         tensor<2x4x6xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
