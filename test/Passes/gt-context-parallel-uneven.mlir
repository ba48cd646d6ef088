// RUN: megagraph-opt %s --gt-context-parallel="cp=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-context-parallel="cp=3 mode=ring" | FileCheck %s --check-prefix=CP3
// RUN: megagraph-opt %s --gt-context-parallel="cp=5" | FileCheck %s --check-prefix=EVEN

// Uneven blocks: cp does not divide S = 5. Every rank's rows become
// ceil(S / cp) (block c holds mgrt_cp_block_rows(S, cp, c) of them, the
// rest padding), and the attention's
// gt.cp carries seq = S so that the kernel knows which rows are padding.
// cp = 5 divides S: even blocks, no seq.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: gt.attention {{.*}}gt.cp = #gt.cp<size = 2, mode = allgather, grid = [1, 2, 1, 1], axes = 2, seq = 5>
// CP3-LABEL: func.func @main
// CP3-SAME: (%{{.*}}: tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
// CP3: gt.cp = #gt.cp<size = 3, mode = ring, grid = [1, 3, 1, 1], axes = 2, seq = 5>
// EVEN-LABEL: func.func @main
// EVEN-SAME: (%{{.*}}: tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
// EVEN: gt.cp = #gt.cp<size = 5, mode = allgather, grid = [1, 5, 1, 1], axes = 2>
func.func @main(%x: tensor<2x5x4xf32>) -> tensor<2x5x4xf32> {
  %a = gt.attention %x, %x, %x heads = 1 : (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  return %a : tensor<2x5x4xf32>
}
