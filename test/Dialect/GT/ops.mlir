// RUN: megagraph-opt %s | megagraph-opt | FileCheck %s
// RUN: megagraph-opt %s --mlir-print-op-generic | megagraph-opt | FileCheck %s

// Round-trip tests of the gt dialect ops: custom assembly, and the generic
// form parsed back. Every optional operand and attribute form is covered.

//===----------------------------------------------------------------------===//
// gt.attention
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[K:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[V:[a-z0-9_]+]]: tensor<2x16x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[K]], %[[V]] heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R]] : tensor<2x16x64xf32>
func.func @attention_plain(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>,
                           %v: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %k, %v heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
      -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// The value hidden size may differ from the query/key one: the result takes
// it (here Dv = 32, both divisible by 8 heads).
// CHECK-LABEL: func.func @attention_value_dim
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[V:[a-z0-9_]+]]: tensor<2x16x32xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[Q]], %[[V]] heads = 8 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_value_dim(%q: tensor<2x16x64xf32>,
                               %v: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = gt.attention %q, %q, %v heads = 8
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x32xf32>)
      -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// CHECK-LABEL: func.func @attention_bias_rank3
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[B:[a-z0-9_]+]]: tensor<4x16x16xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_bias_rank3(%q: tensor<2x16x64xf32>,
                                %b: tensor<4x16x16xf32>) -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<4x16x16xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @attention_bias_rank4
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[B:[a-z0-9_]+]]: tensor<2x4x16x16xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x4x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_bias_rank4(%q: tensor<2x16x64xf32>,
                                %b: tensor<2x4x16x16xf32>) -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<2x4x16x16xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// A rank-4 bias may broadcast over the batch and head dimensions.
// CHECK-LABEL: func.func @attention_bias_rank4_broadcast
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[B1:[a-z0-9_]+]]: tensor<1x1x16x16xf32>, %[[B2:[a-z0-9_]+]]: tensor<1x4x16x16xf32>, %[[B3:[a-z0-9_]+]]: tensor<2x1x16x16xf32>)
// CHECK-NEXT: %[[R1:.*]] = gt.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B1]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x1x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[R2:.*]] = gt.attention %[[Q]], %[[Q]], %[[R1]] bias(%[[B2]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x4x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[R3:.*]] = gt.attention %[[Q]], %[[Q]], %[[R2]] bias(%[[B3]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x1x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R3]]
func.func @attention_bias_rank4_broadcast(
    %q: tensor<2x16x64xf32>, %b1: tensor<1x1x16x16xf32>,
    %b2: tensor<1x4x16x16xf32>, %b3: tensor<2x1x16x16xf32>)
    -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %q, %q bias(%b1) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x1x16x16xf32>) -> tensor<2x16x64xf32>
  %1 = gt.attention %q, %q, %0 bias(%b2) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x4x16x16xf32>) -> tensor<2x16x64xf32>
  %2 = gt.attention %q, %q, %1 bias(%b3) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<2x1x16x16xf32>) -> tensor<2x16x64xf32>
  return %2 : tensor<2x16x64xf32>
}

// Context parallelism: the queries and the bias are a row block (Sq = 4) of
// the Sk = 16 keys.
// CHECK-LABEL: func.func @attention_row_block
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x4x64xf32>, %[[KV:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[B:[a-z0-9_]+]]: tensor<4x4x16xf32>, %[[B4:[a-z0-9_]+]]: tensor<1x4x4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[KV]], %[[KV]] bias(%[[B]]) heads = 4 : (tensor<2x4x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x4x16xf32>) -> tensor<2x4x64xf32>
// CHECK-NEXT: %[[R4:.*]] = gt.attention %[[Q]], %[[KV]], %[[KV]] bias(%[[B4]]) heads = 4 : (tensor<2x4x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x4x4x16xf32>) -> tensor<2x4x64xf32>
// CHECK-NEXT: return %[[R]], %[[R4]]
func.func @attention_row_block(%q: tensor<2x4x64xf32>, %kv: tensor<2x16x64xf32>,
                               %b: tensor<4x4x16xf32>, %b4: tensor<1x4x4x16xf32>)
    -> (tensor<2x4x64xf32>, tensor<2x4x64xf32>) {
  %0 = gt.attention %q, %kv, %kv bias(%b) heads = 4
      : (tensor<2x4x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<4x4x16xf32>) -> tensor<2x4x64xf32>
  %1 = gt.attention %q, %kv, %kv bias(%b4) heads = 4
      : (tensor<2x4x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x4x4x16xf32>) -> tensor<2x4x64xf32>
  return %0, %1 : tensor<2x4x64xf32>, tensor<2x4x64xf32>
}

// Masks broadcast from the right to [B, H, Sq, Sk]: [Sq, Sk], [1, Sq, Sk],
// [B|1, H|1, Sq, Sk], even [1, 1].
// CHECK-LABEL: func.func @attention_mask
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[M2:[a-z0-9_]+]]: tensor<16x16xi1>, %[[M3:[a-z0-9_]+]]: tensor<1x16x16xi1>, %[[M4:[a-z0-9_]+]]: tensor<1x4x16x16xi1>, %[[M1:[a-z0-9_]+]]: tensor<1x1xi1>)
// CHECK-NEXT: %[[R2:.*]] = gt.attention %[[Q]], %[[Q]], %[[Q]] mask(%[[M2]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x16xi1>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[R3:.*]] = gt.attention %[[Q]], %[[Q]], %[[R2]] mask(%[[M3]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x16x16xi1>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[R4:.*]] = gt.attention %[[Q]], %[[Q]], %[[R3]] mask(%[[M4]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x4x16x16xi1>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[R1:.*]] = gt.attention %[[Q]], %[[Q]], %[[R4]] mask(%[[M1]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x1xi1>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R1]]
func.func @attention_mask(%q: tensor<2x16x64xf32>, %m2: tensor<16x16xi1>,
                          %m3: tensor<1x16x16xi1>, %m4: tensor<1x4x16x16xi1>,
                          %m1: tensor<1x1xi1>) -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %q, %q mask(%m2) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<16x16xi1>) -> tensor<2x16x64xf32>
  %1 = gt.attention %q, %q, %0 mask(%m3) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x16x16xi1>) -> tensor<2x16x64xf32>
  %2 = gt.attention %q, %q, %1 mask(%m4) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x4x16x16xi1>) -> tensor<2x16x64xf32>
  %3 = gt.attention %q, %q, %2 mask(%m1) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<1x1xi1>) -> tensor<2x16x64xf32>
  return %3 : tensor<2x16x64xf32>
}

// Bias, mask and an explicit scale together; the scale stays in the attribute
// dictionary, and operandSegmentSizes never shows in the custom form.
// CHECK-LABEL: func.func @attention_bias_mask_scale
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[K:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[V:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[B:[a-z0-9_]+]]: tensor<4x16x16xf32>, %[[M:[a-z0-9_]+]]: tensor<2x1x16x16xi1>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) heads = 4 {scale = 1.250000e-01 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x16x16xf32>, tensor<2x1x16x16xi1>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_bias_mask_scale(%q: tensor<2x16x64xf32>,
    %k: tensor<2x16x64xf32>, %v: tensor<2x16x64xf32>, %b: tensor<4x16x16xf32>,
    %m: tensor<2x1x16x16xi1>) -> tensor<2x16x64xf32> {
  %0 = gt.attention %q, %k, %v bias(%b) mask(%m) heads = 4 {scale = 0.125 : f32}
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
         tensor<4x16x16xf32>, tensor<2x1x16x16xi1>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// Dynamic batch, sequence and hidden dimensions.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x?x64xf32>, %[[K:[a-z0-9_]+]]: tensor<?x?x?xf32>, %[[B:[a-z0-9_]+]]: tensor<4x?x?xf32>, %[[M:[a-z0-9_]+]]: tensor<?x?xi1>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[K]], %[[K]] bias(%[[B]]) mask(%[[M]]) heads = 4 : (tensor<?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<4x?x?xf32>, tensor<?x?xi1>) -> tensor<?x?x?xf32>
// CHECK-NEXT: return %[[R]] : tensor<?x?x?xf32>
func.func @attention_dynamic(%q: tensor<?x?x64xf32>, %k: tensor<?x?x?xf32>,
                             %b: tensor<4x?x?xf32>, %m: tensor<?x?xi1>)
    -> tensor<?x?x?xf32> {
  %0 = gt.attention %q, %k, %k bias(%b) mask(%m) heads = 4
      : (tensor<?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>,
         tensor<4x?x?xf32>, tensor<?x?xi1>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// Any float element type.
// CHECK-LABEL: func.func @attention_bf16
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<1x8x16xbf16>)
// CHECK-NEXT: %[[R:.*]] = gt.attention %[[Q]], %[[Q]], %[[Q]] heads = 2 {scale = 2.500000e-01 : f32} : (tensor<1x8x16xbf16>, tensor<1x8x16xbf16>, tensor<1x8x16xbf16>) -> tensor<1x8x16xbf16>
func.func @attention_bf16(%q: tensor<1x8x16xbf16>) -> tensor<1x8x16xbf16> {
  %0 = gt.attention %q, %q, %q heads = 2 {scale = 0.25 : f32}
      : (tensor<1x8x16xbf16>, tensor<1x8x16xbf16>, tensor<1x8x16xbf16>)
      -> tensor<1x8x16xbf16>
  return %0 : tensor<1x8x16xbf16>
}

//===----------------------------------------------------------------------===//
// gt.sparse_attention and gt.spmm
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @sparse_attention
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<100x64xf32>, %[[V:[a-z0-9_]+]]: tensor<100x32xf32>, %[[RP:[a-z0-9_]+]]: tensor<101xi64>, %[[CI:[a-z0-9_]+]]: tensor<800xi64>)
// CHECK-NEXT: %[[R:.*]] = gt.sparse_attention %[[Q]], %[[Q]], %[[V]], %[[RP]], %[[CI]] heads = 4 : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x32xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<100x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @sparse_attention(%q: tensor<100x64xf32>, %v: tensor<100x32xf32>,
                            %rp: tensor<101xi64>, %ci: tensor<800xi64>)
    -> tensor<100x32xf32> {
  %0 = gt.sparse_attention %q, %q, %v, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x32xf32>,
         tensor<101xi64>, tensor<800xi64>) -> tensor<100x32xf32>
  return %0 : tensor<100x32xf32>
}

// With an edge bias, a scale, i32 CSR indices and N != M (a row block).
// CHECK-LABEL: func.func @sparse_attention_edge_bias
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<25x64xf32>, %[[KV:[a-z0-9_]+]]: tensor<100x64xf32>, %[[RP:[a-z0-9_]+]]: tensor<26xi32>, %[[CI:[a-z0-9_]+]]: tensor<200xi32>, %[[EB:[a-z0-9_]+]]: tensor<200x8xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.sparse_attention %[[Q]], %[[KV]], %[[KV]], %[[RP]], %[[CI]] edge_bias(%[[EB]]) heads = 8 {scale = 5.000000e-01 : f32} : (tensor<25x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<26xi32>, tensor<200xi32>, tensor<200x8xf32>) -> tensor<25x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @sparse_attention_edge_bias(%q: tensor<25x64xf32>,
    %kv: tensor<100x64xf32>, %rp: tensor<26xi32>, %ci: tensor<200xi32>,
    %eb: tensor<200x8xf32>) -> tensor<25x64xf32> {
  %0 = gt.sparse_attention %q, %kv, %kv, %rp, %ci edge_bias(%eb) heads = 8
      {scale = 0.5 : f32}
      : (tensor<25x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>,
         tensor<26xi32>, tensor<200xi32>, tensor<200x8xf32>)
      -> tensor<25x64xf32>
  return %0 : tensor<25x64xf32>
}

// CHECK-LABEL: func.func @sparse_attention_dynamic
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x64xf32>, %[[RP:[a-z0-9_]+]]: tensor<?xi64>, %[[CI:[a-z0-9_]+]]: tensor<?xi64>, %[[EB:[a-z0-9_]+]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.sparse_attention %[[Q]], %[[Q]], %[[Q]], %[[RP]], %[[CI]] edge_bias(%[[EB]]) heads = 4 : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>) -> tensor<?x64xf32>
func.func @sparse_attention_dynamic(%q: tensor<?x64xf32>, %rp: tensor<?xi64>,
    %ci: tensor<?xi64>, %eb: tensor<?x4xf32>) -> tensor<?x64xf32> {
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci edge_bias(%eb) heads = 4
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>,
         tensor<?xi64>, tensor<?x4xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @spmm
// CHECK-SAME: (%[[RP:[a-z0-9_]+]]: tensor<101xi64>, %[[CI:[a-z0-9_]+]]: tensor<800xi64>, %[[W:[a-z0-9_]+]]: tensor<800xf32>, %[[X:[a-z0-9_]+]]: tensor<50x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.spmm %[[RP]], %[[CI]], %[[W]], %[[X]] : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>, tensor<50x64xf32>) -> tensor<100x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @spmm(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800xf32>,
                %x: tensor<50x64xf32>) -> tensor<100x64xf32> {
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>,
      tensor<800xf32>, tensor<50x64xf32>) -> tensor<100x64xf32>
  return %0 : tensor<100x64xf32>
}

// CHECK-LABEL: func.func @spmm_dynamic
// CHECK-SAME: (%[[RP:[a-z0-9_]+]]: tensor<?xi32>, %[[CI:[a-z0-9_]+]]: tensor<?xi32>, %[[W:[a-z0-9_]+]]: tensor<?xf16>, %[[X:[a-z0-9_]+]]: tensor<?x8xf16>)
// CHECK-NEXT: %[[R:.*]] = gt.spmm %[[RP]], %[[CI]], %[[W]], %[[X]] : (tensor<?xi32>, tensor<?xi32>, tensor<?xf16>, tensor<?x8xf16>) -> tensor<?x8xf16>
func.func @spmm_dynamic(%rp: tensor<?xi32>, %ci: tensor<?xi32>, %w: tensor<?xf16>,
                        %x: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<?xi32>, tensor<?xi32>, tensor<?xf16>,
      tensor<?x8xf16>) -> tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}

//===----------------------------------------------------------------------===//
// Graph encodings
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @spatial_bias_rank2
// CHECK-SAME: (%[[D:[a-z0-9_]+]]: tensor<128x128xi64>, %[[T:[a-z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.spatial_bias %[[D]], %[[T]] : (tensor<128x128xi64>, tensor<16x8xf32>) -> tensor<8x128x128xf32>
// CHECK-NEXT: return %[[R]]
func.func @spatial_bias_rank2(%spd: tensor<128x128xi64>, %t: tensor<16x8xf32>)
    -> tensor<8x128x128xf32> {
  %0 = gt.spatial_bias %spd, %t
      : (tensor<128x128xi64>, tensor<16x8xf32>) -> tensor<8x128x128xf32>
  return %0 : tensor<8x128x128xf32>
}

// Batched distances, a row block (Sq = 32 of Sk = 128).
// CHECK-LABEL: func.func @spatial_bias_rank3
// CHECK-SAME: (%[[D:[a-z0-9_]+]]: tensor<2x32x128xi32>, %[[T:[a-z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.spatial_bias %[[D]], %[[T]] : (tensor<2x32x128xi32>, tensor<16x8xf32>) -> tensor<2x8x32x128xf32>
// CHECK-NEXT: return %[[R]]
func.func @spatial_bias_rank3(%spd: tensor<2x32x128xi32>, %t: tensor<16x8xf32>)
    -> tensor<2x8x32x128xf32> {
  %0 = gt.spatial_bias %spd, %t
      : (tensor<2x32x128xi32>, tensor<16x8xf32>) -> tensor<2x8x32x128xf32>
  return %0 : tensor<2x8x32x128xf32>
}

// CHECK-LABEL: func.func @edge_bias_rank2
// CHECK-SAME: (%[[P:[a-z0-9_]+]]: tensor<64x64x4xi64>, %[[D:[a-z0-9_]+]]: tensor<64x64xi64>, %[[T:[a-z0-9_]+]]: tensor<32x8xf32>, %[[W:[a-z0-9_]+]]: tensor<4x8x8xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.edge_bias %[[P]], %[[D]], %[[T]], %[[W]] : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @edge_bias_rank2(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>,
                           %t: tensor<32x8xf32>, %w: tensor<4x8x8xf32>)
    -> tensor<8x64x64xf32> {
  %0 = gt.edge_bias %path, %spd, %t, %w
      : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>,
         tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
  return %0 : tensor<8x64x64xf32>
}

// CHECK-LABEL: func.func @edge_bias_rank3
// CHECK-SAME: (%[[P:[a-z0-9_]+]]: tensor<2x16x64x3xi64>, %[[D:[a-z0-9_]+]]: tensor<2x16x64xi64>, %[[T:[a-z0-9_]+]]: tensor<32x4xf16>, %[[W:[a-z0-9_]+]]: tensor<3x4x4xf16>)
// CHECK-NEXT: %[[R:.*]] = gt.edge_bias %[[P]], %[[D]], %[[T]], %[[W]] : (tensor<2x16x64x3xi64>, tensor<2x16x64xi64>, tensor<32x4xf16>, tensor<3x4x4xf16>) -> tensor<2x4x16x64xf16>
// CHECK-NEXT: return %[[R]]
func.func @edge_bias_rank3(%path: tensor<2x16x64x3xi64>,
                           %spd: tensor<2x16x64xi64>, %t: tensor<32x4xf16>,
                           %w: tensor<3x4x4xf16>) -> tensor<2x4x16x64xf16> {
  %0 = gt.edge_bias %path, %spd, %t, %w
      : (tensor<2x16x64x3xi64>, tensor<2x16x64xi64>, tensor<32x4xf16>,
         tensor<3x4x4xf16>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}

// CHECK-LABEL: func.func @degree_embedding
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x128x64xf32>, %[[DEG:[a-z0-9_]+]]: tensor<2x128xi64>, %[[T:[a-z0-9_]+]]: tensor<64x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.degree_embedding %[[X]], %[[DEG]], %[[T]] : (tensor<2x128x64xf32>, tensor<2x128xi64>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @degree_embedding(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xi64>,
                            %t: tensor<64x64xf32>) -> tensor<2x128x64xf32> {
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>,
      tensor<2x128xi64>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  return %0 : tensor<2x128x64xf32>
}

// CHECK-LABEL: func.func @degree_embedding_rank2
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?x32xf32>, %[[DEG:[a-z0-9_]+]]: tensor<?xi32>, %[[T:[a-z0-9_]+]]: tensor<10x32xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.degree_embedding %[[X]], %[[DEG]], %[[T]] : (tensor<?x32xf32>, tensor<?xi32>, tensor<10x32xf32>) -> tensor<?x32xf32>
func.func @degree_embedding_rank2(%x: tensor<?x32xf32>, %deg: tensor<?xi32>,
                                  %t: tensor<10x32xf32>) -> tensor<?x32xf32> {
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<?x32xf32>, tensor<?xi32>,
      tensor<10x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @node_embedding
// CHECK-SAME: (%[[IDS:[a-z0-9_]+]]: tensor<2x128xi64>, %[[T:[a-z0-9_]+]]: tensor<512x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.node_embedding %[[IDS]], %[[T]] : (tensor<2x128xi64>, tensor<512x64xf32>) -> tensor<2x128x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @node_embedding(%ids: tensor<2x128xi64>, %t: tensor<512x64xf32>)
    -> tensor<2x128x64xf32> {
  %0 = gt.node_embedding %ids, %t
      : (tensor<2x128xi64>, tensor<512x64xf32>) -> tensor<2x128x64xf32>
  return %0 : tensor<2x128x64xf32>
}

// CHECK-LABEL: func.func @node_embedding_sum_features
// CHECK-SAME: (%[[IDS:[a-z0-9_]+]]: tensor<128x9xi64>, %[[T:[a-z0-9_]+]]: tensor<512x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.node_embedding %[[IDS]], %[[T]] {sum_features} : (tensor<128x9xi64>, tensor<512x64xf32>) -> tensor<128x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @node_embedding_sum_features(%ids: tensor<128x9xi64>,
                                       %t: tensor<512x64xf32>)
    -> tensor<128x64xf32> {
  %0 = gt.node_embedding %ids, %t {sum_features}
      : (tensor<128x9xi64>, tensor<512x64xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

//===----------------------------------------------------------------------===//
// Fused dense ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x128x64xf32>, %[[G:[a-z0-9_]+]]: tensor<64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.layer_norm %[[X]], %[[G]] epsilon = 9.99999974E-6 : (tensor<2x128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @layer_norm_no_bias(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>)
    -> tensor<2x128x64xf32> {
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-05
      : (tensor<2x128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return %0 : tensor<2x128x64xf32>
}

// CHECK-LABEL: func.func @layer_norm_bias
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x128x64xf32>, %[[G:[a-z0-9_]+]]: tensor<64xf32>, %[[B:[a-z0-9_]+]]: tensor<64xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 1.000000e-03 : (tensor<2x128x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @layer_norm_bias(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>,
                           %b: tensor<64xf32>) -> tensor<2x128x64xf32> {
  %0 = gt.layer_norm %x, %g, %b epsilon = 1.0e-03 : (tensor<2x128x64xf32>,
      tensor<64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return %0 : tensor<2x128x64xf32>
}

// Normalization over the two trailing dimensions, one of them dynamic.
// CHECK-LABEL: func.func @layer_norm_multi_dim
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x?x8x16xf16>, %[[G:[a-z0-9_]+]]: tensor<8x16xf16>, %[[B:[a-z0-9_]+]]: tensor<8x?xf16>)
// CHECK-NEXT: %[[R:.*]] = gt.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 5.000000e-01 : (tensor<2x?x8x16xf16>, tensor<8x16xf16>, tensor<8x?xf16>) -> tensor<2x?x8x16xf16>
// CHECK-NEXT: return %[[R]]
func.func @layer_norm_multi_dim(%x: tensor<2x?x8x16xf16>, %g: tensor<8x16xf16>,
                                %b: tensor<8x?xf16>) -> tensor<2x?x8x16xf16> {
  %0 = gt.layer_norm %x, %g, %b epsilon = 0.5 : (tensor<2x?x8x16xf16>,
      tensor<8x16xf16>, tensor<8x?xf16>) -> tensor<2x?x8x16xf16>
  return %0 : tensor<2x?x8x16xf16>
}

// CHECK-LABEL: func.func @linear_rank2_no_bias
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<128x64xf32>, %[[W:[a-z0-9_]+]]: tensor<64x256xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.linear %[[X]], %[[W]] : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
// CHECK-NEXT: return %[[R]]
func.func @linear_rank2_no_bias(%x: tensor<128x64xf32>, %w: tensor<64x256xf32>)
    -> tensor<128x256xf32> {
  %0 = gt.linear %x, %w
      : (tensor<128x64xf32>, tensor<64x256xf32>) -> tensor<128x256xf32>
  return %0 : tensor<128x256xf32>
}

// CHECK-LABEL: func.func @linear_rank3_bias
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x128x64xf32>, %[[W:[a-z0-9_]+]]: tensor<64x256xf32>, %[[B:[a-z0-9_]+]]: tensor<256xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.linear %[[X]], %[[W]], %[[B]] : (tensor<2x128x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
// CHECK-NEXT: return %[[R]]
func.func @linear_rank3_bias(%x: tensor<2x128x64xf32>, %w: tensor<64x256xf32>,
                             %b: tensor<256xf32>) -> tensor<2x128x256xf32> {
  %0 = gt.linear %x, %w, %b : (tensor<2x128x64xf32>, tensor<64x256xf32>,
      tensor<256xf32>) -> tensor<2x128x256xf32>
  return %0 : tensor<2x128x256xf32>
}

// CHECK-LABEL: func.func @linear_rank1_dynamic
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?xf32>, %[[W:[a-z0-9_]+]]: tensor<?x10xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.linear %[[X]], %[[W]] : (tensor<?xf32>, tensor<?x10xf32>) -> tensor<10xf32>
func.func @linear_rank1_dynamic(%x: tensor<?xf32>, %w: tensor<?x10xf32>)
    -> tensor<10xf32> {
  %0 = gt.linear %x, %w : (tensor<?xf32>, tensor<?x10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x128x256xf32>)
// CHECK-NEXT: %[[R:.*]] = gt.gelu %[[X]] : tensor<2x128x256xf32>
// CHECK-NEXT: return %[[R]]
func.func @gelu(%x: tensor<2x128x256xf32>) -> tensor<2x128x256xf32> {
  %0 = gt.gelu %x : tensor<2x128x256xf32>
  return %0 : tensor<2x128x256xf32>
}

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?x256xbf16>)
// CHECK-NEXT: %[[R:.*]] = gt.gelu %[[X]] {tanh} : tensor<?x256xbf16>
// CHECK-NEXT: return %[[R]]
func.func @gelu_tanh(%x: tensor<?x256xbf16>) -> tensor<?x256xbf16> {
  %0 = gt.gelu %x {tanh} : tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

//===----------------------------------------------------------------------===//
// gt.cross_entropy
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[L:[a-z0-9_]+]]: tensor<128x8xf32>, %[[Y:[a-z0-9_]+]]: tensor<128xi64>)
// CHECK-NEXT: %[[R:.*]] = gt.cross_entropy %[[L]], %[[Y]] : (tensor<128x8xf32>, tensor<128xi64>) -> tensor<f32>
// CHECK-NEXT: return %[[R]]
func.func @cross_entropy(%logits: tensor<128x8xf32>, %labels: tensor<128xi64>)
    -> tensor<f32> {
  %0 = gt.cross_entropy %logits, %labels
      : (tensor<128x8xf32>, tensor<128xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @cross_entropy_mask
// CHECK-SAME: (%[[L:[a-z0-9_]+]]: tensor<2x128x8xf16>, %[[Y:[a-z0-9_]+]]: tensor<2x128xi32>, %[[M:[a-z0-9_]+]]: tensor<2x128xi1>)
// CHECK-NEXT: %[[R:.*]] = gt.cross_entropy %[[L]], %[[Y]] mask(%[[M]]) : (tensor<2x128x8xf16>, tensor<2x128xi32>, tensor<2x128xi1>) -> tensor<f16>
// CHECK-NEXT: return %[[R]]
func.func @cross_entropy_mask(%logits: tensor<2x128x8xf16>,
                              %labels: tensor<2x128xi32>,
                              %m: tensor<2x128xi1>) -> tensor<f16> {
  %0 = gt.cross_entropy %logits, %labels mask(%m) : (tensor<2x128x8xf16>,
      tensor<2x128xi32>, tensor<2x128xi1>) -> tensor<f16>
  return %0 : tensor<f16>
}

//===----------------------------------------------------------------------===//
// gt.layer and gt.yield
//===----------------------------------------------------------------------===//

// No results, no kind: the yield has no operands.
// CHECK-LABEL: func.func @layer_empty
// CHECK-NEXT: gt.layer index = 0 {
// CHECK-NEXT:   gt.yield{{$}}
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @layer_empty() {
  gt.layer index = 0 {
    gt.yield
  }
  return
}

// CHECK-LABEL: func.func @layer_kind_no_results
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT: gt.layer index = 7 kind = "head" {
// CHECK-NEXT:   %{{.*}} = gt.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:   gt.yield{{$}}
// CHECK-NEXT: }
func.func @layer_kind_no_results(%x: tensor<4x8xf32>) {
  gt.layer index = 7 kind = "head" {
    %0 = gt.gelu %x : tensor<4x8xf32>
    gt.yield
  }
  return
}

// One result, no kind; the body uses a value defined above.
// CHECK-LABEL: func.func @layer_result_no_kind
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x16x64xf32>)
// CHECK-NEXT: %[[L:.*]] = gt.layer index = 2 -> tensor<2x16x64xf32> {
// CHECK-NEXT:   %[[G:.*]] = gt.gelu %[[X]] {tanh} : tensor<2x16x64xf32>
// CHECK-NEXT:   gt.yield %[[G]] : tensor<2x16x64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[L]]
func.func @layer_result_no_kind(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %0 = gt.layer index = 2 -> tensor<2x16x64xf32> {
    %1 = gt.gelu %x {tanh} : tensor<2x16x64xf32>
    gt.yield %1 : tensor<2x16x64xf32>
  }
  return %0 : tensor<2x16x64xf32>
}

// A full transformer layer: two results, a kind, extra attributes (printed
// after `attributes`), nested gt ops.
// CHECK-LABEL: func.func @layer_transformer
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x16x64xf32>, %[[G:[a-z0-9_]+]]: tensor<64xf32>, %[[B:[a-z0-9_]+]]: tensor<4x16x16xf32>, %[[W:[a-z0-9_]+]]: tensor<64x64xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x16xi64>)
// CHECK-NEXT: %[[L:.*]]:2 = gt.layer index = 1 kind = "transformer" -> tensor<2x16x64xf32>, tensor<f32> attributes {stage = 0 : i64} {
// CHECK-NEXT:   %[[N:.*]] = gt.layer_norm %[[X]], %[[G]] epsilon = 9.99999974E-6 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:   %[[A:.*]] = gt.attention %[[N]], %[[N]], %[[N]] bias(%[[B]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x16x16xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:   %[[P:.*]] = gt.linear %[[A]], %[[W]] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:   %[[E:.*]] = gt.cross_entropy %[[P]], %[[Y]] : (tensor<2x16x64xf32>, tensor<2x16xi64>) -> tensor<f32>
// CHECK-NEXT:   gt.yield %[[P]], %[[E]] : tensor<2x16x64xf32>, tensor<f32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[L]]#0, %[[L]]#1 : tensor<2x16x64xf32>, tensor<f32>
func.func @layer_transformer(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>,
                             %b: tensor<4x16x16xf32>, %w: tensor<64x64xf32>,
                             %y: tensor<2x16xi64>)
    -> (tensor<2x16x64xf32>, tensor<f32>) {
  %0:2 = gt.layer index = 1 kind = "transformer"
      -> tensor<2x16x64xf32>, tensor<f32> attributes {stage = 0 : i64} {
    %n = gt.layer_norm %x, %g epsilon = 1.0e-5
        : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    %a = gt.attention %n, %n, %n bias(%b) heads = 4
        : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
           tensor<4x16x16xf32>) -> tensor<2x16x64xf32>
    %p = gt.linear %a, %w
        : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %e = gt.cross_entropy %p, %y
        : (tensor<2x16x64xf32>, tensor<2x16xi64>) -> tensor<f32>
    gt.yield %p, %e : tensor<2x16x64xf32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<2x16x64xf32>, tensor<f32>
}

// Layers in sequence, each one consuming the previous; non-tensor results.
// CHECK-LABEL: func.func @layer_chain
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8xf32>, %[[I:[a-z0-9_]+]]: index)
// CHECK-NEXT: %[[L0:.*]] = gt.layer index = 0 kind = "embedding" -> tensor<8xf32> {
// CHECK-NEXT:   gt.yield %[[X]] : tensor<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[L1:.*]]:2 = gt.layer index = 1 -> tensor<8xf32>, index {
// CHECK-NEXT:   %[[G:.*]] = gt.gelu %[[L0]] : tensor<8xf32>
// CHECK-NEXT:   gt.yield %[[G]], %[[I]] : tensor<8xf32>, index
// CHECK-NEXT: }
// CHECK-NEXT: return %[[L1]]#0, %[[L1]]#1
func.func @layer_chain(%x: tensor<8xf32>, %i: index) -> (tensor<8xf32>, index) {
  %0 = gt.layer index = 0 kind = "embedding" -> tensor<8xf32> {
    gt.yield %x : tensor<8xf32>
  }
  %1:2 = gt.layer index = 1 -> tensor<8xf32>, index {
    %g = gt.gelu %0 : tensor<8xf32>
    gt.yield %g, %i : tensor<8xf32>, index
  }
  return %1#0, %1#1 : tensor<8xf32>, index
}
