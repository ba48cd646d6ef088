// RUN: megagraph-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file -verify-diagnostics

// Errors of the one-shot bufferization of gt.attention
// (dialects/GT/GTBufferizableOpInterfaceImpl.cpp). The bufferization driver
// adds its own "failed to bufferize op" on the same op.

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
