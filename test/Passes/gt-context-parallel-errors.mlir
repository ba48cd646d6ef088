// RUN: megagraph-opt %s --gt-context-parallel=cp=2 -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-context-parallel="cp=2 mode=tree" 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: gt-context-parallel: mode must be allgather, ring or ulysses, got 'tree'
// RUN: not megagraph-opt %s --split-input-file --gt-context-parallel=cp=0 2>&1 | FileCheck %s --check-prefix=CP0
// CP0: error: gt-context-parallel: cp, dp and pp must be at least 1, got cp=0 dp=1 pp=1

// Each rank holds at least one row: cp must not exceed S.
func.func @main(%x: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{'gt.attention' op gt-context-parallel: cp=2 exceeds the sequence length S=1 (each rank holds at least one row)}}
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  return %a : tensor<1x1x4xf32>
}

// -----

// A reshape that merges the node dimension as the minor part of a dim
// ([B, S] -> [B * S]: each rank's rows are not one block) is not row-local.
func.func @main(%x: tensor<2x8x4xf32>) -> tensor<16x4xf32> {
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %s = tosa.const_shape {values = dense<[16, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  // expected-error @+1 {{'tosa.reshape' op gt-context-parallel: cannot shard the node dimension (S=8) through this op: it is not row-local}}
  %r = tosa.reshape %a, %s : (tensor<2x8x4xf32>, !tosa.shape<2>) -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}

// -----

// A reshape that splits the node dimension is not row-local either.
func.func @main(%x: tensor<1x8x4xf32>) -> tensor<1x2x4x4xf32> {
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %s = tosa.const_shape {values = dense<[1, 2, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  // expected-error @+1 {{'tosa.reshape' op gt-context-parallel: cannot shard the node dimension (S=8) through this op: it is not row-local}}
  %r = tosa.reshape %a, %s : (tensor<1x8x4xf32>, !tosa.shape<4>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// A slice that drops rows is not row-local.
func.func @main(%x: tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %st = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sz = tosa.const_shape {values = dense<[1, 4, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  // expected-error @+1 {{'tosa.slice' op gt-context-parallel: cannot shard the node dimension (S=8) through this op: it is not row-local}}
  %r = tosa.slice %a, %st, %sz : (tensor<1x8x4xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x4x4xf32>
  return %r : tensor<1x4x4xf32>
}

// -----

// A reduction over the nodes (global pooling) is not row-local either.
func.func @main(%x: tensor<1x8x4xf32>) -> tensor<1x1x4xf32> {
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  // expected-error @+1 {{'tosa.reduce_sum' op gt-context-parallel: cannot shard the node dimension (S=8) through this op: it is not row-local}}
  %s = tosa.reduce_sum %a {axis = 1 : i32} : (tensor<1x8x4xf32>) -> tensor<1x1x4xf32>
  return %s : tensor<1x1x4xf32>
}

// -----

// expected-error @+1 {{gt-context-parallel: @main has no gt.attention; context parallelism shards the attention's sequence}}
func.func @main(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  return %x : tensor<1x8x4xf32>
}

// -----

// Cross-attention (queries and keys of different lengths) is not handled.
func.func @main(%q: tensor<1x8x4xf32>, %k: tensor<1x4x4xf32>) -> tensor<1x8x4xf32> {
  // expected-error @+1 {{'gt.attention' op gt-context-parallel: every attention must be a self-attention over the same static sequence length}}
  %a = gt.attention %q, %k, %k heads = 1 : (tensor<1x8x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x8x4xf32>
  return %a : tensor<1x8x4xf32>
}

// -----

// A sequence-first input [S, B, D] (transposed inside the model) would be
// cut on the wrong dimension by the driver.
// expected-error @+1 {{gt-context-parallel: input 'x' has the node dimension at position 0; inputs must be [B, S, ...] (the driver gives each rank rows of dimension 1)}}
func.func @main(%x: tensor<8x1x4xf32> {gt.name = "x"}) -> tensor<1x8x4xf32> {
  %t = tosa.transpose %x {perms = array<i32: 1, 0, 2>} : (tensor<8x1x4xf32>) -> tensor<1x8x4xf32>
  %a = gt.attention %t, %t, %t heads = 1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %a : tensor<1x8x4xf32>
}
