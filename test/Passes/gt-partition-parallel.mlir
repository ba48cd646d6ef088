// RUN: megagraph-opt %s --gt-partition-parallel="ranks=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-partition-parallel="ranks=2" --gt-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: not megagraph-opt %s --gt-partition-parallel="ranks=3" 2>&1 | FileCheck %s --check-prefix=P3
// P3: error: gt-partition-parallel: 3 ranks do not divide the N = 8 nodes

// The two-layer GCN of gt-mixture-parallel.mlir. Under partition
// parallelism every node value is a block of 4 of the 8 rows; the
// aggregations exchange boundary rows inside their kernel (#gt.halo), so
// there is no all-to-all at all.
ml_program.global private mutable @w1(dense<0.1> : tensor<4x6xf32>) : tensor<4x6xf32> {gt.param}
ml_program.global private mutable @b1(dense<0.0> : tensor<6xf32>) : tensor<6xf32> {gt.param}
ml_program.global private mutable @w2(dense<0.2> : tensor<6x3xf32>) : tensor<6x3xf32> {gt.param}

func.func @main(%x: tensor<8x4xf32> {gt.name = "x"}, %rp: tensor<9xi64> {gt.name = "row_ptr"}, %ci: tensor<20xi64> {gt.name = "col_idx"}, %v: tensor<20xf32> {gt.name = "values"}) -> (tensor<8x3xf32> {gt.name = "logits"}) {
  %w1 = ml_program.global_load @w1 : tensor<4x6xf32>
  %b1 = ml_program.global_load @b1 : tensor<6xf32>
  %w2 = ml_program.global_load @w2 : tensor<6x3xf32>
  %h = gt.linear %x, %w1 : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a = gt.spmm %rp, %ci, %v, %h : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %s = tosa.const_shape {values = dense<[1, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.reshape %b1, %s : (tensor<6xf32>, !tosa.shape<2>) -> tensor<1x6xf32>
  %ab = tosa.add %a, %b : (tensor<8x6xf32>, tensor<1x6xf32>) -> tensor<8x6xf32>
  %r = tosa.clamp %ab {max_val = 0x7F800000 : f32, min_val = 0.000000e+00 : f32} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %h2 = gt.linear %r, %w2 : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %a2 = gt.spmm %rp, %ci, %v, %h2 : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  return %a2 : tensor<8x3xf32>
}

// CHECK: shard.grid @gt_gp(shape = 2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<4x3xf32> {gt.name = "logits"})
// CHECK-SAME: gt.row_shard_grid = "gt_gp"
// CHECK-NOT: shard.all_to_all
// CHECK: shard.all_slice %{{.*}} on @gt_gp grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: gt.linear {{.*}} -> tensor<4x6xf32>
// CHECK: gt.spmm {{.*}} {gt.halo = #gt.halo<parts = 2, nodes = 8>} : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: tosa.add {{.*}} : (tensor<4x6xf32>, tensor<1x6xf32>) -> tensor<4x6xf32>
// CHECK: gt.linear {{.*}} -> tensor<4x3xf32>
// CHECK: gt.spmm {{.*}} {gt.halo = #gt.halo<parts = 2, nodes = 8>} {{.*}} -> tensor<4x3xf32>
// CHECK-NOT: shard.all_to_all
// CHECK: return {{.*}} : tensor<4x3xf32>

// The gradient of a halo SpMM is a halo SpMM over the transposed CSR of
// all 8 nodes.
// GRAD-LABEL: func.func @main_grad(
// GRAD-NOT: shard.all_to_all
// GRAD: gt.csr_transpose {{.*}} cols = 8
// GRAD: gt.spmm {{.*}} {gt.halo = #gt.halo<parts = 2, nodes = 8>} {{.*}} -> tensor<4x3xf32>
// GRAD-NOT: shard.all_to_all
