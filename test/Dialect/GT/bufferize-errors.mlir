// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file -verify-diagnostics

// Errors of the one-shot bufferization of gt.attention, gt.spmm and
// gt.sparse_attention (dialects/GT/GTBufferizableOpInterfaceImpl.cpp). The
// bufferization driver adds its own "failed to bufferize op" on the same op.

func.func @attention_f16(%q: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  // expected-error @+2 {{the CPU attention kernel supports f32 only}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.attention %q, %q, %q heads = 2
      : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>)
      -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// -----

func.func @attention_dynamic(%q: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  // expected-error @+2 {{needs static shapes to bufferize}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.attention %q, %q, %q heads = 2
      : (tensor<?x4x8xf32>, tensor<?x4x8xf32>, tensor<?x4x8xf32>)
      -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// gt.spmm and gt.sparse_attention call f32 kernels only.
func.func @spmm_f16(%rp: tensor<5xi64>, %ci: tensor<7xi64>, %w: tensor<7xf16>,
                    %x: tensor<6x8xf16>) -> tensor<4x8xf16> {
  // expected-error @+2 {{the CPU spmm kernel supports f32 only}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi64>, tensor<7xi64>, tensor<7xf16>, tensor<6x8xf16>)
      -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @sparse_attention_f16(%q: tensor<4x8xf16>, %rp: tensor<5xi64>,
                                %ci: tensor<7xi64>) -> tensor<4x8xf16> {
  // expected-error @+2 {{the CPU sparse attention kernel supports f32 only}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 2
      : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<5xi64>,
         tensor<7xi64>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @spmm_dynamic(%rp: tensor<5xi64>, %ci: tensor<?xi64>,
                        %w: tensor<?xf32>, %x: tensor<6x8xf32>)
    -> tensor<4x8xf32> {
  // expected-error @+2 {{needs static shapes to bufferize}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi64>, tensor<?xi64>, tensor<?xf32>, tensor<6x8xf32>)
      -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @sparse_attention_i1_indices(%q: tensor<4x8xf32>, %rp: tensor<5xi1>,
                                       %ci: tensor<7xi1>) -> tensor<4x8xf32> {
  // expected-error @+2 {{CSR indices must be integers of 2 to 64 bits, got i1}}
  // expected-error @+1 {{failed to bufferize op}}
  %0 = gt.sparse_attention %q, %q, %q, %rp, %ci heads = 2
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<5xi1>,
         tensor<7xi1>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @spatial_wide_distance(%q: tensor<1x4x8xf32>, %d: tensor<4x4xi64>, %t: tensor<9x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+2 {{the CPU spatial attention kernels take i16 distances (gt-decompose narrows them)}}
  // expected-error @+1 {{failed to bufferize op}}
  %o = gt.attention %q, %q, %q spatial(%d, %t) heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi64>, tensor<9x2xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}
