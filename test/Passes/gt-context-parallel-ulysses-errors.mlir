// RUN: megagraph-opt %s --gt-context-parallel="cp=2 mode=ulysses" -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-context-parallel="cp=4 mode=ulysses" 2>&1 | FileCheck %s --check-prefix=CP4
// CP4: error: 'gt.attention' op gt-context-parallel: mode=ulysses needs cp=4 to divide the 2 heads

// Ulysses gives each of the cp ranks whole heads: cp=2 does not divide 3.
func.func @main(%x: tensor<1x8x6xf32>) -> tensor<1x8x6xf32> {
  // expected-error @+1 {{'gt.attention' op gt-context-parallel: mode=ulysses needs cp=2 to divide the 3 heads}}
  %a = gt.attention %x, %x, %x heads = 3 : (tensor<1x8x6xf32>, tensor<1x8x6xf32>, tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  return %a : tensor<1x8x6xf32>
}

// -----

// Every attention: the second one (heads = 1) cannot split over cp=2.
func.func @main(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %a = gt.attention %x, %x, %x heads = 2 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  // expected-error @+1 {{'gt.attention' op gt-context-parallel: mode=ulysses needs cp=2 to divide the 1 heads}}
  %b = gt.attention %a, %a, %a heads = 1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %b : tensor<1x8x4xf32>
}

// -----

// Uneven blocks are fine (cp=2 divides the heads, not S = 7); only the
// heads matter at cp=2 (CP4 above: 4 ranks cannot split these 2 heads).
func.func @main(%x: tensor<1x7x4xf32>) -> tensor<1x7x4xf32> {
  %a = gt.attention %x, %x, %x heads = 2 : (tensor<1x7x4xf32>, tensor<1x7x4xf32>, tensor<1x7x4xf32>) -> tensor<1x7x4xf32>
  return %a : tensor<1x7x4xf32>
}
