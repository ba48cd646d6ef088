// RUN: megagraph-opt %s --gt-decompose -split-input-file -verify-diagnostics

// Errors of the gt-decompose pass (passes/Lower/GTDecompose.cpp): a gt
// op without a CPU lowering is reported, not silently kept.

// gt.spmm and gt.sparse_attention bufferize into runtime kernel calls
// (dialects/GT/GTBufferizableOpInterfaceImpl.cpp): they are kept, no error.
func.func @spmm_kept(%rp: tensor<5xi64>, %ci: tensor<8xi64>, %w: tensor<8xf32>,
                     %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = gt.spmm %rp, %ci, %w, %x
      : (tensor<5xi64>, tensor<8xi64>, tensor<8xf32>, tensor<4x16xf32>)
      -> tensor<4x16xf32>
  %1 = gt.sparse_attention %0, %0, %0, %rp, %ci heads = 2
      : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<5xi64>,
         tensor<8xi64>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// The ops around the unsupported one are still lowered (the error comes
// after the rewrite), and only the unsupported op is reported.
func.func @mixed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = gt.gelu %x : tensor<4xf32>
  // expected-error @+1 {{'gt.layer' op has no CPU lowering yet}}
  %1 = gt.layer index = 0 -> tensor<4xf32> {
    gt.yield %0 : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

// Dynamic shapes are rejected before any rewrite (they used to be
// miscompiled: a layer-norm mean factor of 1/INT64_MIN).
func.func @dynamic_layer_norm(%x: tensor<2x?xf32>, %g: tensor<?xf32>)
    -> tensor<2x?xf32> {
  // expected-error @+1 {{'gt.layer_norm' op needs static shapes for the CPU lowering (pass --input-shape for dynamic model inputs)}}
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-05
      : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// A gt.layer is reported as such, not through its terminator.
func.func @layer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gt.layer' op has no CPU lowering yet}}
  %0 = gt.layer index = 0 -> tensor<4xf32> {
    gt.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
