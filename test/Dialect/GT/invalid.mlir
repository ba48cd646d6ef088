// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

// One case per verifier diagnostic of the gt ops (GTOps.cpp), plus the ODS
// constraints that guard them.

//===----------------------------------------------------------------------===//
// gt.attention
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: tensor<16x64xf32>) {
  // expected-error@+1 {{'gt.attention' op expects query, key and value of rank 3 ([B, S, D]), got ranks 2, 2, 2}}
  %0 = gt.attention %q, %q, %q heads = 4
      : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @attention_value_rank(%q: tensor<2x16x64xf32>, %v: tensor<2x16x4x16xf32>) {
  // expected-error@+1 {{expects query, key and value of rank 3 ([B, S, D]), got ranks 3, 3, 4}}
  %0 = gt.attention %q, %q, %v heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_key_element_type(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf16>) {
  // expected-error@+1 {{element type of key ('f16') does not match that of query ('f32')}}
  %0 = gt.attention %q, %k, %q heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_bias_element_type(%q: tensor<2x16x64xf32>, %b: tensor<4x16x16xbf16>) {
  // expected-error@+1 {{element type of bias ('bf16') does not match that of query ('f32')}}
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x16x16xbf16>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x16x64xf32>, %k: tensor<3x16x64xf32>) {
  // expected-error@+1 {{batch sizes of query, key and value differ: 2, 3, 3}}
  %0 = gt.attention %q, %k, %k heads = 4
      : (tensor<2x16x64xf32>, tensor<3x16x64xf32>, tensor<3x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_key_hidden(%q: tensor<2x16x64xf32>, %k: tensor<2x16x32xf32>) {
  // expected-error@+1 {{query hidden size 64 differs from key hidden size 32}}
  %0 = gt.attention %q, %k, %q heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x32xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_key_value_length(%q: tensor<2x16x64xf32>, %v: tensor<2x8x64xf32>) {
  // expected-error@+1 {{key length 16 differs from value length 8}}
  %0 = gt.attention %q, %q, %v heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x8x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_heads_hidden(%q: tensor<2x16x64xf32>) {
  // expected-error@+1 {{num_heads (5) must divide the hidden size (64)}}
  %0 = gt.attention %q, %q, %q heads = 5
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_heads_value_hidden(%q: tensor<2x16x64xf32>, %v: tensor<2x16x30xf32>) {
  // expected-error@+1 {{num_heads (4) must divide the value hidden size (30)}}
  %0 = gt.attention %q, %q, %v heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x30xf32>) -> tensor<2x16x30xf32>
  return
}

// -----

func.func @attention_num_heads_zero(%q: tensor<2x16x64xf32>) {
  // expected-error@+1 {{'gt.attention' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = gt.attention %q, %q, %q heads = 0
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_bias_rank3_heads(%q: tensor<2x16x64xf32>, %b: tensor<8x16x16xf32>) {
  // expected-error@+1 {{bias must be [H, Sq, Sk] = [4, 16, 16] or [B|1, H|1, Sq, Sk], got [8, 16, 16]}}
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<8x16x16xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

// The row block of the bias must match the query rows (Sq = 4, Sk = 16).
func.func @attention_bias_row_block(%q: tensor<2x4x64xf32>, %kv: tensor<2x16x64xf32>, %b: tensor<4x16x16xf32>) {
  // expected-error@+1 {{bias must be [H, Sq, Sk] = [4, 4, 16] or [B|1, H|1, Sq, Sk], got [4, 16, 16]}}
  %0 = gt.attention %q, %kv, %kv bias(%b) heads = 4
      : (tensor<2x4x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<4x16x16xf32>) -> tensor<2x4x64xf32>
  return
}

// -----

func.func @attention_bias_rank4_batch(%q: tensor<2x16x64xf32>, %b: tensor<3x4x16x16xf32>) {
  // expected-error@+1 {{bias must be [H, Sq, Sk] = [4, 16, 16] or [B|1, H|1, Sq, Sk], got [3, 4, 16, 16]}}
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<3x4x16x16xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_bias_rank4_keys(%q: tensor<2x16x64xf32>, %b: tensor<1x1x16x1xf32>) {
  // expected-error@+1 {{bias must be [H, Sq, Sk] = [4, 16, 16] or [B|1, H|1, Sq, Sk], got [1, 1, 16, 1]}}
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x1x16x1xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_bias_rank2(%q: tensor<2x16x64xf32>, %b: tensor<16x16xf32>) {
  // expected-error@+1 {{bias must be [H, Sq, Sk] = [4, 16, 16] or [B|1, H|1, Sq, Sk], got [16, 16]}}
  %0 = gt.attention %q, %q, %q bias(%b) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x16xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<2x16x64xf32>, %m: tensor<16x8xi1>) {
  // expected-error@+1 {{mask [16, 8] does not broadcast to [B, H, Sq, Sk] = [2, 4, 16, 16]}}
  %0 = gt.attention %q, %q, %q mask(%m) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x8xi1>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask_rank1(%q: tensor<2x16x64xf32>, %m: tensor<16xi1>) {
  // expected-error@+1 {{mask [16] does not broadcast to [B, H, Sq, Sk] = [2, 4, 16, 16]}}
  %0 = gt.attention %q, %q, %q mask(%m) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16xi1>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask_rank5(%q: tensor<2x16x64xf32>, %m: tensor<1x2x4x16x16xi1>) {
  // expected-error@+1 {{mask [1, 2, 4, 16, 16] does not broadcast to [B, H, Sq, Sk] = [2, 4, 16, 16]}}
  %0 = gt.attention %q, %q, %q mask(%m) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<1x2x4x16x16xi1>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask_i32(%q: tensor<2x16x64xf32>, %m: tensor<16x16xi32>) {
  // expected-error@+1 {{'gt.attention' op operand #3 must be ranked tensor of 1-bit signless integer values, but got 'tensor<16x16xi32>'}}
  %0 = gt.attention %q, %q, %q mask(%m) heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x16xi32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_result_type(%q: tensor<2x16x64xf32>, %v: tensor<2x16x32xf32>) {
  // expected-error@+1 {{result type 'tensor<2x16x64xf32>' does not match the expected 'tensor<2x16x32xf32>'}}
  %0 = gt.attention %q, %q, %v heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x32xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_result_element_type(%q: tensor<2x16x64xf32>) {
  // expected-error@+1 {{result type 'tensor<2x16x64xf16>' does not match the expected 'tensor<2x16x64xf32>'}}
  %0 = gt.attention %q, %q, %q heads = 4
      : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.sparse_attention
//===----------------------------------------------------------------------===//

func.func @sparse_attention_rank(%q: tensor<2x100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{expects query, key and value of rank 2 ([N, D]), got ranks 3, 3, 3}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 4
      : (tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<2x100x64xf32>
  return
}

// -----

func.func @sparse_attention_value_element_type(%q: tensor<100x64xf32>, %v: tensor<100x64xf16>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{element type of value ('f16') does not match that of query ('f32')}}
  %0 = gt.sparse_attention %q, %q, %v, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf16>, tensor<101xi64>, tensor<800xi64>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_edge_bias_element_type(%q: tensor<100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>, %eb: tensor<800x4xf16>) {
  // expected-error@+1 {{element type of edge_bias ('f16') does not match that of query ('f32')}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci edge_bias(%eb) heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<800xi64>, tensor<800x4xf16>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_key_hidden(%q: tensor<100x64xf32>, %k: tensor<100x32xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{query hidden size 64 differs from key hidden size 32}}
  %0 = gt.sparse_attention %q, %k, %q, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x32xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_key_value_count(%q: tensor<100x64xf32>, %v: tensor<50x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{key count 100 differs from value count 50}}
  %0 = gt.sparse_attention %q, %q, %v, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<50x64xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_heads(%q: tensor<100x64xf32>, %v: tensor<100x36xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{num_heads (8) must divide the hidden size (36)}}
  %0 = gt.sparse_attention %q, %q, %v, %rp, %ci heads = 8
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x36xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<100x36xf32>
  return
}

// -----

func.func @sparse_attention_csr_rank(%q: tensor<100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<8x100xi64>) {
  // expected-error@+1 {{row_ptr and col_idx must have rank 1 (CSR)}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<8x100xi64>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_row_ptr_size(%q: tensor<100x64xf32>, %rp: tensor<100xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{row_ptr must have N + 1 = 101 entries, got 100}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100xi64>, tensor<800xi64>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_edge_bias_shape(%q: tensor<100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>, %eb: tensor<800x8xf32>) {
  // expected-error@+1 {{edge_bias must be [E, H] = [800, 4], got [800, 8]}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci edge_bias(%eb) heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<800xi64>, tensor<800x8xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_edge_bias_rank(%q: tensor<100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>, %eb: tensor<800xf32>) {
  // expected-error@+1 {{edge_bias must be [E, H] = [800, 4], got [800]}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci edge_bias(%eb) heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<800xi64>, tensor<800xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @sparse_attention_result_type(%q: tensor<100x64xf32>, %rp: tensor<101xi64>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{result type 'tensor<101x64xf32>' does not match the expected 'tensor<100x64xf32>'}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xi64>, tensor<800xi64>) -> tensor<101x64xf32>
  return
}

// -----

func.func @sparse_attention_float_row_ptr(%q: tensor<100x64xf32>, %rp: tensor<101xf32>, %ci: tensor<800xi64>) {
  // expected-error@+1 {{'gt.sparse_attention' op operand #3 must be ranked tensor of signless integer values, but got 'tensor<101xf32>'}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 4
      : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<101xf32>, tensor<800xi64>) -> tensor<100x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.spmm
//===----------------------------------------------------------------------===//

func.func @spmm_csr_rank(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800x1xf32>, %x: tensor<100x64xf32>) {
  // expected-error@+1 {{row_ptr, col_idx and values must have rank 1 (CSR)}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>, tensor<800x1xf32>, tensor<100x64xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @spmm_empty_row_ptr(%rp: tensor<0xi64>, %ci: tensor<800xi64>, %w: tensor<800xf32>, %x: tensor<100x64xf32>) {
  // expected-error@+1 {{row_ptr must have at least one entry}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<0xi64>, tensor<800xi64>, tensor<800xf32>, tensor<100x64xf32>) -> tensor<0x64xf32>
  return
}

// -----

func.func @spmm_values_count(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<400xf32>, %x: tensor<100x64xf32>) {
  // expected-error@+1 {{col_idx has 800 entries but values has 400}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>, tensor<400xf32>, tensor<100x64xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @spmm_input_rank(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800xf32>, %x: tensor<2x100x64xf32>) {
  // expected-error@+1 {{expects input of rank 2 ([M, D]), got rank 3}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>, tensor<2x100x64xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @spmm_element_type(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800xf16>, %x: tensor<100x64xf32>) {
  // expected-error@+1 {{element type of values ('f16') does not match that of input ('f32')}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>, tensor<800xf16>, tensor<100x64xf32>) -> tensor<100x64xf32>
  return
}

// -----

func.func @spmm_result_type(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800xf32>, %x: tensor<50x64xf32>) {
  // expected-error@+1 {{result type 'tensor<50x64xf32>' does not match the expected 'tensor<100x64xf32>'}}
  %0 = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>, tensor<50x64xf32>) -> tensor<50x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.spatial_bias
//===----------------------------------------------------------------------===//

func.func @spatial_bias_distance_rank(%spd: tensor<128xi64>, %t: tensor<16x8xf32>) {
  // expected-error@+1 {{expects distance of rank 2 ([Sq, Sk]) or 3 ([B, Sq, Sk]), got rank 1}}
  %0 = gt.spatial_bias %spd, %t : (tensor<128xi64>, tensor<16x8xf32>) -> tensor<8x128xf32>
  return
}

// -----

func.func @spatial_bias_table_rank(%spd: tensor<128x128xi64>, %t: tensor<16x8x2xf32>) {
  // expected-error@+1 {{expects table of rank 2 ([M, H]), got rank 3}}
  %0 = gt.spatial_bias %spd, %t : (tensor<128x128xi64>, tensor<16x8x2xf32>) -> tensor<8x128x128xf32>
  return
}

// -----

func.func @spatial_bias_result_type(%spd: tensor<2x128x128xi64>, %t: tensor<16x8xf32>) {
  // expected-error@+1 {{result type 'tensor<8x2x128x128xf32>' does not match the expected 'tensor<2x8x128x128xf32>'}}
  %0 = gt.spatial_bias %spd, %t : (tensor<2x128x128xi64>, tensor<16x8xf32>) -> tensor<8x2x128x128xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.edge_bias
//===----------------------------------------------------------------------===//

func.func @edge_bias_distance_rank(%path: tensor<2x2x64x64x4xi64>, %spd: tensor<2x2x64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8x8xf32>) {
  // expected-error@+1 {{expects distance of rank 2 ([Sq, Sk]) or 3 ([B, Sq, Sk]), got rank 4}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<2x2x64x64x4xi64>, tensor<2x2x64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf32>) -> tensor<2x2x8x64x64xf32>
  return
}

// -----

func.func @edge_bias_path_shape(%path: tensor<64x32x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8x8xf32>) {
  // expected-error@+1 {{path must be the distance shape plus a hop dimension ([64, 64] + [L]), got [64, 32, 4]}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x32x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_path_rank(%path: tensor<64x64xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8x8xf32>) {
  // expected-error@+1 {{path must be the distance shape plus a hop dimension ([64, 64] + [L]), got [64, 64]}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_table_rank(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32xf32>, %w: tensor<4x8x8xf32>) {
  // expected-error@+1 {{expects table of rank 2 ([E, H]), got rank 1}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32xf32>, tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_hop_weights_hops(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<3x8x8xf32>) {
  // expected-error@+1 {{hop_weights must be [L, H, H] = [4, 8, 8], got [3, 8, 8]}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<3x8x8xf32>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_hop_weights_rank(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error@+1 {{hop_weights must be [L, H, H] = [4, 8, 8], got [4, 8]}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8xf32>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_element_type(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8x8xf16>) {
  // expected-error@+1 {{element type of hop_weights ('f16') does not match that of table ('f32')}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf16>) -> tensor<8x64x64xf32>
  return
}

// -----

func.func @edge_bias_result_type(%path: tensor<64x64x4xi64>, %spd: tensor<64x64xi64>, %t: tensor<32x8xf32>, %w: tensor<4x8x8xf32>) {
  // expected-error@+1 {{result type 'tensor<4x64x64xf32>' does not match the expected 'tensor<8x64x64xf32>'}}
  %0 = gt.edge_bias %path, %spd, %t, %w : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>, tensor<4x8x8xf32>) -> tensor<4x64x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.degree_embedding
//===----------------------------------------------------------------------===//

func.func @degree_embedding_input_rank(%x: tensor<64xf32>, %deg: tensor<64xi64>, %t: tensor<64x64xf32>) {
  // expected-error@+1 {{expects input of rank >= 2 ([..., S, D]), got rank 1}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<64xf32>, tensor<64xi64>, tensor<64x64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @degree_embedding_degree_shape(%x: tensor<2x128x64xf32>, %deg: tensor<128xi64>, %t: tensor<64x64xf32>) {
  // expected-error@+1 {{degree must have the node shape [2, 128], got [128]}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<128xi64>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @degree_embedding_table_width(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xi64>, %t: tensor<64x32xf32>) {
  // expected-error@+1 {{table must be [M, D] with D = 64, got [64, 32]}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<2x128xi64>, tensor<64x32xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @degree_embedding_table_rank(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xi64>, %t: tensor<64xf32>) {
  // expected-error@+1 {{table must be [M, D] with D = 64, got [64]}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<2x128xi64>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @degree_embedding_element_type(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xi64>, %t: tensor<64x64xbf16>) {
  // expected-error@+1 {{element type of table ('bf16') does not match that of input ('f32')}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<2x128xi64>, tensor<64x64xbf16>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @degree_embedding_result_type(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xi64>, %t: tensor<64x64xf32>) {
  // expected-error@+1 {{result type 'tensor<2x128x32xf32>' does not match the expected 'tensor<2x128x64xf32>'}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<2x128xi64>, tensor<64x64xf32>) -> tensor<2x128x32xf32>
  return
}

// -----

func.func @degree_embedding_float_degree(%x: tensor<2x128x64xf32>, %deg: tensor<2x128xf32>, %t: tensor<64x64xf32>) {
  // expected-error@+1 {{'gt.degree_embedding' op operand #1 must be ranked tensor of signless integer values, but got 'tensor<2x128xf32>'}}
  %0 = gt.degree_embedding %x, %deg, %t : (tensor<2x128x64xf32>, tensor<2x128xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.node_embedding
//===----------------------------------------------------------------------===//

func.func @node_embedding_table_rank(%ids: tensor<128xi64>, %t: tensor<512xf32>) {
  // expected-error@+1 {{expects table of rank 2 ([V, D]), got rank 1}}
  %0 = gt.node_embedding %ids, %t : (tensor<128xi64>, tensor<512xf32>) -> tensor<128xf32>
  return
}

// -----

func.func @node_embedding_sum_features_rank0(%ids: tensor<i64>, %t: tensor<512x64xf32>) {
  // expected-error@+1 {{sum_features needs ids with a feature dimension}}
  %0 = gt.node_embedding %ids, %t {sum_features} : (tensor<i64>, tensor<512x64xf32>) -> tensor<64xf32>
  return
}

// -----

// Without sum_features the feature dimension of ids is kept.
func.func @node_embedding_result_type(%ids: tensor<128x9xi64>, %t: tensor<512x64xf32>) {
  // expected-error@+1 {{result type 'tensor<128x64xf32>' does not match the expected 'tensor<128x9x64xf32>'}}
  %0 = gt.node_embedding %ids, %t : (tensor<128x9xi64>, tensor<512x64xf32>) -> tensor<128x64xf32>
  return
}

// -----

func.func @node_embedding_sum_features_result_type(%ids: tensor<128x9xi64>, %t: tensor<512x64xf32>) {
  // expected-error@+1 {{result type 'tensor<128x9x64xf32>' does not match the expected 'tensor<128x64xf32>'}}
  %0 = gt.node_embedding %ids, %t {sum_features} : (tensor<128x9xi64>, tensor<512x64xf32>) -> tensor<128x9x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.layer_norm
//===----------------------------------------------------------------------===//

func.func @layer_norm_scale_rank(%x: tensor<128x64xf32>, %g: tensor<2x128x64xf32>) {
  // expected-error@+1 {{scale rank 3 must be in [1, 2] (the normalized trailing dimensions)}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-5 : (tensor<128x64xf32>, tensor<2x128x64xf32>) -> tensor<128x64xf32>
  return
}

// -----

func.func @layer_norm_scale_rank0(%x: tensor<128x64xf32>, %g: tensor<f32>) {
  // expected-error@+1 {{scale rank 0 must be in [1, 2] (the normalized trailing dimensions)}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-5 : (tensor<128x64xf32>, tensor<f32>) -> tensor<128x64xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x128x64xf32>, %g: tensor<128xf32>) {
  // expected-error@+1 {{scale shape [128] must equal the trailing input shape [64]}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-5 : (tensor<2x128x64xf32>, tensor<128xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x128x64xf32>, %g: tensor<128x64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{bias shape [64] must equal the scale shape [128, 64]}}
  %0 = gt.layer_norm %x, %g, %b epsilon = 1.0e-5 : (tensor<2x128x64xf32>, tensor<128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_scale_element_type(%x: tensor<2x128x64xf32>, %g: tensor<64xf16>) {
  // expected-error@+1 {{element type of scale ('f16') does not match that of input ('f32')}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-5 : (tensor<2x128x64xf32>, tensor<64xf16>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_bias_element_type(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf16>) {
  // expected-error@+1 {{element type of bias ('f16') does not match that of input ('f32')}}
  %0 = gt.layer_norm %x, %g, %b epsilon = 1.0e-5 : (tensor<2x128x64xf32>, tensor<64xf32>, tensor<64xf16>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_epsilon_zero(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{epsilon must be positive}}
  %0 = gt.layer_norm %x, %g epsilon = 0.0 : (tensor<2x128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_epsilon_negative(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{epsilon must be positive}}
  %0 = gt.layer_norm %x, %g epsilon = -1.0e-5 : (tensor<2x128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
  return
}

// -----

func.func @layer_norm_result_type(%x: tensor<2x128x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{result type 'tensor<2x128x64xf16>' does not match the expected 'tensor<2x128x64xf32>'}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-5 : (tensor<2x128x64xf32>, tensor<64xf32>) -> tensor<2x128x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.linear
//===----------------------------------------------------------------------===//

func.func @linear_input_rank0(%x: tensor<f32>, %w: tensor<64x256xf32>) {
  // expected-error@+1 {{expects input of rank >= 1}}
  %0 = gt.linear %x, %w : (tensor<f32>, tensor<64x256xf32>) -> tensor<256xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<128x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{expects weight of rank 2 ([K, N]), got rank 1}}
  %0 = gt.linear %x, %w : (tensor<128x64xf32>, tensor<64xf32>) -> tensor<128x64xf32>
  return
}

// -----

// A PyTorch-layout ([N, K]) weight is rejected.
func.func @linear_k_mismatch(%x: tensor<128x64xf32>, %w: tensor<256x64xf32>) {
  // expected-error@+1 {{input features 64 differ from weight rows 256}}
  %0 = gt.linear %x, %w : (tensor<128x64xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<128x64xf32>, %w: tensor<64x256xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{bias must be [N] = [256], got [64]}}
  %0 = gt.linear %x, %w, %b : (tensor<128x64xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<128x256xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<128x64xf32>, %w: tensor<64x256xf32>, %b: tensor<1x256xf32>) {
  // expected-error@+1 {{bias must be [N] = [256], got [1, 256]}}
  %0 = gt.linear %x, %w, %b : (tensor<128x64xf32>, tensor<64x256xf32>, tensor<1x256xf32>) -> tensor<128x256xf32>
  return
}

// -----

func.func @linear_element_type(%x: tensor<128x64xf32>, %w: tensor<64x256xbf16>) {
  // expected-error@+1 {{element type of weight ('bf16') does not match that of input ('f32')}}
  %0 = gt.linear %x, %w : (tensor<128x64xf32>, tensor<64x256xbf16>) -> tensor<128x256xf32>
  return
}

// -----

func.func @linear_result_type(%x: tensor<2x128x64xf32>, %w: tensor<64x256xf32>) {
  // expected-error@+1 {{result type 'tensor<256x128xf32>' does not match the expected 'tensor<2x128x256xf32>'}}
  %0 = gt.linear %x, %w : (tensor<2x128x64xf32>, tensor<64x256xf32>) -> tensor<256x128xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.gelu
//===----------------------------------------------------------------------===//

func.func @gelu_integer(%x: tensor<4xi32>) {
  // expected-error@+1 {{'gt.gelu' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = gt.gelu %x : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.cross_entropy
//===----------------------------------------------------------------------===//

func.func @cross_entropy_logits_rank(%logits: tensor<f32>, %labels: tensor<i64>) {
  // expected-error@+1 {{expects logits of rank >= 1 ([..., C])}}
  %0 = gt.cross_entropy %logits, %labels : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_labels_shape(%logits: tensor<128x8xf32>, %labels: tensor<128x8xi64>) {
  // expected-error@+1 {{labels must have shape [128] (logits without the class dimension), got [128, 8]}}
  %0 = gt.cross_entropy %logits, %labels : (tensor<128x8xf32>, tensor<128x8xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_mask_shape(%logits: tensor<128x8xf32>, %labels: tensor<128xi64>, %m: tensor<64xi1>) {
  // expected-error@+1 {{mask must have shape [128], got [64]}}
  %0 = gt.cross_entropy %logits, %labels mask(%m) : (tensor<128x8xf32>, tensor<128xi64>, tensor<64xi1>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_result_element_type(%logits: tensor<128x8xf32>, %labels: tensor<128xi64>) {
  // expected-error@+1 {{result type 'tensor<f16>' does not match the expected 'tensor<f32>'}}
  %0 = gt.cross_entropy %logits, %labels : (tensor<128x8xf32>, tensor<128xi64>) -> tensor<f16>
  return
}

// -----

func.func @cross_entropy_result_rank(%logits: tensor<128x8xf32>, %labels: tensor<128xi64>) {
  // expected-error@+1 {{'gt.cross_entropy' op result #0 must be 0D tensor of floating-point values, but got 'tensor<1xf32>'}}
  %0 = gt.cross_entropy %logits, %labels : (tensor<128x8xf32>, tensor<128xi64>) -> tensor<1xf32>
  return
}

// -----

func.func @cross_entropy_mask_i64(%logits: tensor<128x8xf32>, %labels: tensor<128xi64>, %m: tensor<128xi64>) {
  // expected-error@+1 {{'gt.cross_entropy' op operand #2 must be ranked tensor of 1-bit signless integer values, but got 'tensor<128xi64>'}}
  %0 = gt.cross_entropy %logits, %labels mask(%m) : (tensor<128x8xf32>, tensor<128xi64>, tensor<128xi64>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gt.layer and gt.yield
//===----------------------------------------------------------------------===//

func.func @layer_not_yield() {
  // expected-error@+1 {{'gt.layer' op body must end with gt.yield}}
  gt.layer index = 0 {
    func.return
  }
  return
}

// -----

func.func @layer_yield_count(%x: tensor<4xf32>) {
  // expected-error@+1 {{'gt.layer' op yields 0 value(s) whose types do not match the 1 result type(s)}}
  %0 = gt.layer index = 0 -> tensor<4xf32> {
    gt.yield
  }
  return
}

// -----

func.func @layer_yield_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'gt.layer' op yields 1 value(s) whose types do not match the 1 result type(s)}}
  %0 = gt.layer index = 0 -> tensor<8xf32> {
    %1 = gt.gelu %x : tensor<4xf32>
    gt.yield %1 : tensor<4xf32>
  }
  return
}

// -----

func.func @layer_yield_extra(%x: tensor<4xf32>) {
  // expected-error@+1 {{'gt.layer' op yields 1 value(s) whose types do not match the 0 result type(s)}}
  gt.layer index = 0 {
    gt.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @layer_empty_kind() {
  // expected-error@+1 {{'gt.layer' op kind must not be empty when present}}
  gt.layer index = 0 kind = "" {
    gt.yield
  }
  return
}

// -----

func.func @layer_negative_index() {
  // expected-error@+1 {{'gt.layer' op attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  gt.layer index = -1 {
    gt.yield
  }
  return
}

// -----

func.func @layer_empty_body() {
  // expected-error@+1 {{'gt.layer' op expects a non-empty block}}
  gt.layer index = 0 {
  }
  return
}

// -----

func.func @yield_outside_layer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'gt.yield' op expects parent op 'gt.layer'}}
  gt.yield %x : tensor<4xf32>
}
