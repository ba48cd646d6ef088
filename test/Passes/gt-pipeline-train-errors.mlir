// RUN: megagraph-opt %s --gt-pipeline-train -split-input-file -verify-diagnostics

// gt-pipeline-train runs after gt-pipeline-split: without its gt.pipeline
// summary and stage functions there is nothing to train.
// expected-error @+1 {{gt-pipeline-train needs @main and the stage functions of gt-pipeline-split}}
module {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}

// -----

// The summary promises two stages; @pp_stage1 is missing.
// expected-error @+1 {{missing @pp_stage1}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [0, 1], units = ["a", "b"], unit_time = [1.0, 1.0], stage_time = [1.0, 1.0], stage_memory = [0, 0]>} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
  func.func @pp_stage0(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}
