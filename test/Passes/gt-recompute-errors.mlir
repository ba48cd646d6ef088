// RUN: not megagraph-opt %s --gt-recompute 2>&1 | FileCheck %s

// Without the step gt-autodiff builds from @main: refused.
// CHECK: error: gt-recompute needs the forward @main and the step @main_grad gt-autodiff built from it
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
