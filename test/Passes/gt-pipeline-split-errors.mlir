// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=2" -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --split-input-file --gt-pipeline-split="pp=3 stages=0,1" 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: stages lists 2 boundaries but pp=3
// RUN: not megagraph-opt %s --split-input-file --gt-pipeline-split="pp=2 stages=0,7" 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: stages=0:7 is not a split of the 3 units of @main into 2 non-empty stages
// RUN: not megagraph-opt %s --split-input-file --gt-pipeline-split="pp=5" 2>&1 | FileCheck %s --check-prefix=FEW
// FEW: error: @main has 3 pipeline units (cut points where few activations are live), too few for pp=5

// Three units (linear, gelu, linear), on which the options above are
// checked; pp=2 splits them without error.
ml_program.global private mutable @w(dense<0.5> : tensor<4x4xf32>) : tensor<4x4xf32> {gt.param}
ml_program.global private mutable @v(dense<0.25> : tensor<4x4xf32>) : tensor<4x4xf32> {gt.param}
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = ml_program.global_load @w : tensor<4x4xf32>
  %a = gt.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = gt.gelu %a : tensor<2x4xf32>
  %v = ml_program.global_load @v : tensor<4x4xf32>
  %c = gt.linear %b, %v : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{gt-pipeline-split needs a single-block func.func @main}}
module {
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}

// -----

// expected-error @+1 {{@main computes nothing from its inputs; nothing to split into pipeline stages}}
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
