// RUN: megagraph-opt %s --gt-context-parallel="cp=2" | FileCheck %s
// RUN: megagraph-opt %s --gt-context-parallel="cp=4 dp=2 mode=ring" | FileCheck %s --check-prefix=RING
// RUN: megagraph-opt %s --gt-context-parallel="cp=1" | FileCheck %s --check-prefix=CP1
// RUN: megagraph-opt %s --gt-context-parallel="cp=2 pp=2 mode=ring" | FileCheck %s --check-prefix=PP
// RUN: megagraph-opt %s --gt-context-parallel="cp=2" --gt-autodiff --gt-data-parallel="dp=2 presummed=true" | FileCheck %s --check-prefix=GRAD
// RUN: megagraph-opt %s --gt-context-parallel="cp=2 mode=ulysses" --gt-autodiff --gt-data-parallel="dp=2 presummed=true" | FileCheck %s --check-prefix=ULYSSES
// RUN: megagraph-opt %s --gt-context-parallel="cp=2 mode=ulysses" --gt-fuse-spatial-bias --gt-autodiff | FileCheck %s --check-prefix=ULYSSES-FUSED
// RUN: megagraph-opt %s --gt-context-parallel="cp=2 mode=ring" --gt-fuse-spatial-bias --gt-autodiff --gt-data-parallel="dp=2 presummed=true" | FileCheck %s --check-prefix=FUSED

// A Graphormer-style layer: S = 8 nodes, D = 8 (= S: the node dimension is
// found by propagation, not by size), spatial bias from the SPD.
ml_program.global private mutable @enc(dense<0.1> : tensor<4x8xf32>) : tensor<4x8xf32> {gt.param}
ml_program.global private mutable @encb(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @deg(dense<0.2> : tensor<16x8xf32>) : tensor<16x8xf32> {gt.param}
ml_program.global private mutable @sp(dense<0.3> : tensor<5x2xf32>) : tensor<5x2xf32> {gt.param}
ml_program.global private mutable @lnw(dense<1.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @lnb(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @wq(dense<0.05> : tensor<8x8xf32>) : tensor<8x8xf32> {gt.param}
ml_program.global private mutable @head(dense<0.05> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @headb(dense<0.0> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// CHECK-NOT: megagraph_plan_cp
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x4xf32> {gt.name = "x"}
// CHECK-SAME: %[[DEG:.*]]: tensor<2x4xi64> {gt.name = "in_degree"}
// CHECK-SAME: %[[SPD:.*]]: tensor<2x4x8xi64> {gt.name = "spd"}
// CHECK-SAME: -> (tensor<2x4x3xf32> {gt.name = "logits"})
// CHECK: gt.linear %[[X]], {{.*}} -> tensor<2x4x8xf32>
// CHECK: gt.degree_embedding {{.*}} -> tensor<2x4x8xf32>
// CHECK: %[[BIAS:.*]] = gt.spatial_bias %[[SPD]], {{.*}} -> tensor<2x2x4x8xf32>
// CHECK: gt.layer_norm {{.*}} -> tensor<2x4x8xf32>
// CHECK: gt.attention {{.*}} bias(%[[BIAS]]) heads = 2 {gt.cp = #gt.cp<size = 2, mode = allgather, grid = [1, 2, 1, 1], axes = 2>
// CHECK-SAME: (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: tosa.add {{.*}} -> tensor<2x4x8xf32>
// CHECK: gt.gelu {{.*}} : tensor<2x4x8xf32>
// CHECK: return {{.*}} : tensor<2x4x3xf32>
// No collective in the forward: the bias rows are local, K / V move inside
// the runtime's cp attention.
// CHECK-NOT: shard.

// RING: shard.grid @gt_cp(shape = 2x4)
// RING: func.func @main(%{{.*}}: tensor<2x2x4xf32> {gt.name = "x"}, %{{.*}}: tensor<2x2xi64> {gt.name = "in_degree"}, %{{.*}}: tensor<2x2x8xi64> {gt.name = "spd"})
// RING: gt.attention {{.*}} {gt.cp = #gt.cp<size = 4, mode = ring, grid = [2, 4, 1, 1], axes = 2>
// RING-SAME: -> tensor<2x2x8xf32>

// Before a pipeline split (pp > 1): the cp axis is axis 2 of the runtime
// grid [dp, pp, cp, 1], and @main gets no gt.cp_seed (the pipeline's last
// stage takes its loss seed from the driver).
// PP: shard.grid @gt_cp(shape = 1x2x2)
// PP-NOT: gt.cp_seed
// PP: func.func @main(%{{.*}}: tensor<2x4x4xf32> {gt.name = "x"}
// PP-NOT: gt.cp_seed
// PP: gt.attention {{.*}} {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 2, 1], axes = 4>

// CP1-NOT: gt.cp
// CP1: func.func @main(%{{.*}}: tensor<2x8x4xf32>

// The gradient: the backward attention is context parallel too, the loss
// seed is this rank's share n_r / N of the labelled rows (an all-reduce of
// the count over the grid), and the gradients are summed unweighted.
// GRAD: func.func @main_grad(
// GRAD: shard.all_reduce %{{.*}} on @gt_cp grid_axes = [0, 1] : tensor<1xf32> -> tensor<1xf32>
// GRAD: gt.attention_grad {{.*}} {gt.cp = #gt.cp<size = 2, mode = allgather, grid = [1, 2, 1, 1], axes = 2>
// GRAD-SAME: -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>)
// GRAD: shard.all_reduce {{.*}} on @gt_dp grid_axes = [0]
// The train pipeline's order (gt-fuse-spatial-bias after the sharding):
// the cp attention reads its [B, S/cp, S] distance rows and the table, no
// [B, H, S/cp, S] bias exists in either direction, and the backward's
// dtable (this rank's rows' part of the table gradient) is summed over the
// dp x cp ranks with the other gradients.
// FUSED-LABEL: func.func @main(
// FUSED-SAME: %[[SPD:[^:]*]]: tensor<2x4x8xi64> {gt.name = "spd"}
// FUSED-NOT: gt.spatial_bias
// FUSED-NOT: tensor<2x2x4x8xf32>
// FUSED: %[[SP:[^ ]*]] = ml_program.global_load @sp : tensor<5x2xf32>
// FUSED: gt.attention {{.*}} spatial(%[[SPD]], %[[SP]]) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>
// FUSED-SAME: (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xi64>, tensor<5x2xf32>) -> tensor<2x4x8xf32>
// FUSED-LABEL: func.func @main_grad(
// FUSED-NOT: tensor<2x2x4x8xf32>
// FUSED: gt.attention_grad {{.*}} spatial(%[[SPD]], %[[SP]]) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring
// FUSED-SAME: -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<5x2xf32>)
// FUSED-NOT: gt.spatial_bias
// The gradients, the table's 5 x 2 among them, fill one bucket (under the
// default 4 MiB), all-reduced inside the backward.
// FUSED: shard.all_reduce {{.*}} on @gt_dp grid_axes = [0] {gt.overlap} : tensor<285xf32> -> tensor<285xf32>
// Ulysses (mode 2 of the runtime's cp attention): the same row shapes; the
// all-to-alls that move q, k, v, the bias rows [2, 2, 4, 8] (to heads:
// [2, 1, 8, 8] on each rank) and the results happen inside the runtime's
// cp attention and its backward (bufferize-attention-cp-ulysses.mlir), so
// no shard collective appears in the forward; the backward returns the
// bias rows' gradient like the other modes.
// ULYSSES: shard.grid @gt_cp(shape = 1x2)
// ULYSSES-LABEL: func.func @main(
// ULYSSES-SAME: tensor<2x4x4xf32> {gt.name = "x"}
// ULYSSES-NOT: shard.
// ULYSSES: gt.attention {{.*}} bias(%{{.*}}) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses, grid = [1, 2, 1, 1], axes = 2>}
// ULYSSES-SAME: (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32>
// ULYSSES-NOT: shard.
// ULYSSES-LABEL: func.func @main_grad(
// ULYSSES: shard.all_reduce {{.*}} on @gt_cp grid_axes = [0, 1] : tensor<1xf32>
// ULYSSES: gt.attention_grad {{.*}} heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses
// ULYSSES-SAME: -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x8xf32>)
// ULYSSES: shard.all_reduce {{.*}} on @gt_dp grid_axes = [0]

// Ulysses with the spatial bias read in place: the attentions take the
// rank's distance rows [2, 4, 8] (the runtime all-gathers them) and the
// whole table; no [2, 2, 4, 8] bias.
// ULYSSES-FUSED-LABEL: func.func @main(
// ULYSSES-FUSED-NOT: gt.spatial_bias
// ULYSSES-FUSED: gt.attention {{.*}} spatial(%{{.*}}, %{{.*}}) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses
// ULYSSES-FUSED-SAME: (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xi64>, tensor<5x2xf32>) -> tensor<2x4x8xf32>
// ULYSSES-FUSED-LABEL: func.func @main_grad(
// ULYSSES-FUSED-NOT: tensor<2x2x4x8xf32>
// ULYSSES-FUSED: gt.attention_grad {{.*}} spatial(%{{.*}}, %{{.*}}) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ulysses
// ULYSSES-FUSED-SAME: -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<5x2xf32>)
func.func @main(%x: tensor<2x8x4xf32> {gt.name = "x"},
                %deg: tensor<2x8xi64> {gt.name = "in_degree"},
                %spd: tensor<2x8x8xi64> {gt.name = "spd"})
    -> (tensor<2x8x3xf32> {gt.name = "logits"}) {
  %enc = ml_program.global_load @enc : tensor<4x8xf32>
  %encb = ml_program.global_load @encb : tensor<8xf32>
  %degt = ml_program.global_load @deg : tensor<16x8xf32>
  %sp = ml_program.global_load @sp : tensor<5x2xf32>
  %lnw = ml_program.global_load @lnw : tensor<8xf32>
  %lnb = ml_program.global_load @lnb : tensor<8xf32>
  %wq = ml_program.global_load @wq : tensor<8x8xf32>
  %head = ml_program.global_load @head : tensor<8x3xf32>
  %headb = ml_program.global_load @headb : tensor<3xf32>
  %h0 = gt.linear %x, %enc, %encb : (tensor<2x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %h1 = gt.degree_embedding %h0, %deg, %degt : (tensor<2x8x8xf32>, tensor<2x8xi64>, tensor<16x8xf32>) -> tensor<2x8x8xf32>
  %bias = gt.spatial_bias %spd, %sp : (tensor<2x8x8xi64>, tensor<5x2xf32>) -> tensor<2x2x8x8xf32>
  %n = gt.layer_norm %h1, %lnw, %lnb epsilon = 1.0e-5 : (tensor<2x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %q = gt.linear %n, %wq, %encb : (tensor<2x8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %a = gt.attention %q, %n, %n bias(%bias) heads = 2 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x8x8xf32>
  %r = tosa.add %h1, %a : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %g = gt.gelu %r : tensor<2x8x8xf32>
  %y = gt.linear %g, %head, %headb : (tensor<2x8x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x8x3xf32>
  return %y : tensor<2x8x3xf32>
}
