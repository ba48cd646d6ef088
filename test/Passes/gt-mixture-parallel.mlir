// RUN: megagraph-opt %s --gt-mixture-parallel="ranks=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-mixture-parallel="ranks=2" | megagraph-opt --gt-mixture-parallel="ranks=1" | FileCheck %s
// RUN: megagraph-opt %s --gt-mixture-parallel="ranks=4" | FileCheck %s --check-prefix=P4
// RUN: megagraph-opt %s --gt-mixture-parallel="ranks=1" | FileCheck %s --check-prefix=P1
// RUN: megagraph-opt %s --gt-mixture-parallel="ranks=2" --gt-autodiff | FileCheck %s --check-prefix=GRAD

// A two-layer GCN as gt-raise leaves PyG's GCNConv: N = 8 nodes, F = 4
// features, hidden 6, 3 classes; the CSR (row_ptr, col_idx, normalized
// weights) is computed from the graph, so it stays whole on every rank.
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

// Transforms take row blocks (4 of 8 rows), aggregations column blocks
// (all 8 rows, 3 of 6 columns; the 3 classes padded to 4, 2 per rank), one
// all-to-all at each switch and none between an aggregation and the
// elementwise ops after it.
// CHECK: shard.grid @gt_mop(shape = 2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {gt.name = "x"}
// CHECK-SAME: -> (tensor<4x3xf32> {gt.name = "logits"})
// CHECK-SAME: gt.row_shard_grid = "gt_mop"
// CHECK: %[[XR:.*]] = shard.all_slice %[[X]] on @gt_mop grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: %[[H:.*]] = gt.linear %[[XR]], %{{.*}} -> tensor<4x6xf32>
// CHECK: %[[HC:.*]] = shard.all_to_all %[[H]] on @gt_mop grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x6xf32> -> tensor<8x3xf32>
// CHECK-NOT: shard.all_to_all
// CHECK: %[[A:.*]] = gt.spmm %{{.*}}, %{{.*}}, %{{.*}}, %[[HC]] : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-NOT: shard.all_to_all
// CHECK: %[[B:.*]] = tosa.reshape {{.*}} -> tensor<1x6xf32>
// CHECK: %[[BC:.*]] = shard.all_slice %[[B]] on @gt_mop grid_axes = [0] slice_axis = 1 : tensor<1x6xf32> -> tensor<1x3xf32>
// CHECK-NOT: shard.all_to_all
// CHECK: %[[AB:.*]] = tosa.add %[[A]], %[[BC]] : (tensor<8x3xf32>, tensor<1x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[R:.*]] = tosa.clamp %[[AB]] {{.*}} -> tensor<8x3xf32>
// CHECK: %[[RR:.*]] = shard.all_to_all %[[R]] on @gt_mop grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x3xf32> -> tensor<4x6xf32>
// CHECK: %[[H2:.*]] = gt.linear %[[RR]], %{{.*}} -> tensor<4x3xf32>
// CHECK: %[[P:.*]] = tosa.pad %[[H2]], {{.*}} -> tensor<4x4xf32>
// CHECK: %[[H2C:.*]] = shard.all_to_all %[[P]] on @gt_mop grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x4xf32> -> tensor<8x2xf32>
// CHECK: %[[A2:.*]] = gt.spmm %{{.*}}, %{{.*}}, %{{.*}}, %[[H2C]] : {{.*}} -> tensor<8x2xf32>
// CHECK: %[[A2R:.*]] = shard.all_to_all %[[A2]] on @gt_mop grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x2xf32> -> tensor<4x4xf32>
// CHECK: %[[OUT:.*]] = tosa.slice %[[A2R]], {{.*}} -> tensor<4x3xf32>
// CHECK: return %[[OUT]] : tensor<4x3xf32>

// P4: func.func @main({{.*}}) -> (tensor<2x3xf32> {gt.name = "logits"})
// P4: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 0 : tensor<2x8xf32> -> tensor<8x2xf32>
// P4: gt.spmm {{.*}} -> tensor<8x2xf32>
// P4: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 0 : tensor<2x4xf32> -> tensor<8x1xf32>
// P4: gt.spmm {{.*}} -> tensor<8x1xf32>

// P1-NOT: shard.
// P1-NOT: gt.row_shard_grid
// P1: gt.spmm {{.*}} -> tensor<8x6xf32>

// The backward switches at the same places, the other way: the gradient of
// each all-to-all is the inverse all-to-all; the bias gradient is the rank's
// slice put into zeros (summed over the ranks by gt-data-parallel); the
// loss gradient is seeded with the rank's share of the labelled rows.
// GRAD-LABEL: func.func @main_grad(
// GRAD-SAME: tensor<4xi64> {gt.name = "labels"}, %{{.*}}: tensor<4xi1> {gt.name = "label_mask"}
// GRAD: shard.all_reduce {{.*}} on @gt_mop grid_axes = [0]
// GRAD: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 0 : tensor<4x4xf32> -> tensor<8x2xf32>
// GRAD: gt.spmm {{.*}} -> tensor<8x2xf32>
// GRAD: shard.all_to_all {{.*}} split_axis = 0 concat_axis = 1 : tensor<8x2xf32> -> tensor<4x4xf32>
// GRAD: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 0 : tensor<4x6xf32> -> tensor<8x3xf32>
// GRAD: shard.process_linear_index on @gt_mop
// GRAD: tensor.insert_slice {{.*}} : tensor<1x3xf32> into tensor<1x6xf32>
// GRAD: gt.spmm {{.*}} -> tensor<8x3xf32>
// GRAD: shard.all_to_all {{.*}} split_axis = 0 concat_axis = 1 : tensor<8x3xf32> -> tensor<4x6xf32>
