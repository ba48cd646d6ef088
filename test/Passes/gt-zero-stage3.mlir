// RUN: megagraph-opt %s -split-input-file --gt-autodiff --gt-data-parallel="dp=2 zero=3" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather | FileCheck %s
// RUN: megagraph-opt %s -split-input-file --gt-autodiff --gt-data-parallel="dp=2 zero=3" --gt-optimizer="optimizer=adamw lr=0.01" --gt-zero-gather --gt-shard-to-runtime | FileCheck %s --check-prefix=LOWERED
// ZeRO-3 (sharded parameters): gt-zero-gather keeps @gt.zero.bucket0 (14
// of the 28 packed elements) as the parameters' storage. The parameter
// globals become immutable initial weights, read on the first step only
// (flag @gt.zero.ready) to cut this rank's shard, before any other work
// of the step (its packed temporaries are freed before the step's arena
// exists). Every step all-gathers
// the shard into temporaries that replace the parameters' loads; the
// optimizer writes only the shard.

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

// CHECK:      module attributes {gt.plan = #gt.plan<dp = 2, zero = 3>
// CHECK-DAG:  ml_program.global private @w(dense<5.000000e-01> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param_init}
// CHECK-DAG:  ml_program.global private @b(dense<1.000000e-01> : tensor<3xf32>) : tensor<3xf32> {gt.param_init}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.param_shard, gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state}
// CHECK-DAG:  ml_program.global private mutable @gt.zero.ready(dense<0> : tensor<i32>) : tensor<i32>
// CHECK-NOT:  ml_program.global private mutable @w
// CHECK-LABEL: func.func @main(
// The first step cuts this rank's shard from the initial weights.
// CHECK:      %[[R:.*]] = ml_program.global_load @gt.zero.ready : tensor<i32>
// CHECK:      %[[RV:.*]] = tensor.extract %[[R]][] : tensor<i32>
// CHECK:      %[[FIRST:.*]] = arith.cmpi eq, %[[RV]], %{{.*}} : i32
// CHECK:      scf.if %[[FIRST]] {
// CHECK:        ml_program.global_load @w : tensor<8x3xf32>
// CHECK:        ml_program.global_load @b : tensor<3xf32>
// CHECK:        %[[INIT:.*]] = shard.all_slice %{{.*}} on @gt_dp grid_axes = [0] slice_axis = 0 : tensor<28xf32> -> tensor<14xf32>
// CHECK:        ml_program.global_store @gt.zero.bucket0 = %[[INIT]] : tensor<14xf32>
// CHECK-NEXT: }
// The cuts come before anything else of the step: then the flag is set.
// CHECK:      ml_program.global_store @gt.zero.ready =
// The full parameters of the step, gathered into temporaries.
// CHECK:      %[[S:.*]] = ml_program.global_load @gt.zero.bucket0 : tensor<14xf32>
// CHECK:      %[[ALL:.*]] = shard.all_gather %[[S]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<14xf32> -> tensor<28xf32>
// CHECK:      %[[WS:.*]] = tosa.slice %[[ALL]], {{.*}} -> tensor<24xf32>
// CHECK:      %[[W:.*]] = tosa.reshape %[[WS]], {{.*}} -> tensor<8x3xf32>
// CHECK:      %[[B:.*]] = tosa.slice %[[ALL]], {{.*}} -> tensor<3xf32>
// CHECK:      gt.linear %arg0, %[[W]], %[[B]]
// CHECK-NOT:  ml_program.global_load @w
// CHECK-NOT:  ml_program.global_load @b
// CHECK:      shard.reduce_scatter %{{.*}} on @gt_dp grid_axes = [0] scatter_axis = 0 {gt.overlap} : tensor<28xf32> -> tensor<14xf32>
// The update writes only the shard; no all-gather after it.
// CHECK-NOT:  shard.all_gather
// CHECK-NOT:  ml_program.global_store @w
// CHECK:      ml_program.global_store @gt.zero.bucket0 = %{{.*}} : tensor<14xf32>
// CHECK-NOT:  shard.all_gather
// CHECK-NOT:  ml_program.global_store @w
// CHECK-NOT:  ml_program.global_store @b
// CHECK:      return
func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %y = gt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Three layers, three buckets (the backward's order: bucket0 is layer 3's
// w3, b3 of 15 + 3 elements, bucket1 layer 2's 30 + 5 + 1 padding, bucket2
// layer 1's 48 + 6). Each phase gathers its first bucket where it is first
// read; every later bucket's gather is started one layer ahead, marked
// gt.overlap, right before the first read of the bucket the phase reads
// before it, and its slices stay at its own first read. Forward: layer 1
// computes while layer 2's parameters move, layer 2 while layer 3's.
// Backward (layer 3 first): layer 3's backward while layer 2's move,
// layer 2's while layer 1's.
// CHECK-LABEL: func.func @main(
// CHECK-DAG:   %[[S0:.*]] = ml_program.global_load @gt.zero.bucket0 : tensor<9xf32>
// CHECK-DAG:   %[[S1:.*]] = ml_program.global_load @gt.zero.bucket1 : tensor<18xf32>
// CHECK-DAG:   %[[S2:.*]] = ml_program.global_load @gt.zero.bucket2 : tensor<27xf32>
// CHECK:       %[[F1:.*]] = shard.all_gather %[[S2]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<27xf32> -> tensor<54xf32>
// CHECK:       %[[W1:.*]] = tosa.reshape {{.*}} -> tensor<8x6xf32>
// CHECK:       %[[F2:.*]] = shard.all_gather %[[S1]] on @gt_dp grid_axes = [0] gather_axis = 0 {gt.overlap} : tensor<18xf32> -> tensor<36xf32>
// CHECK-NEXT:  %[[H:.*]] = gt.linear %arg0, %[[W1]]
// CHECK:       tosa.slice %[[F2]]
// CHECK:       %[[F3:.*]] = shard.all_gather %[[S0]] on @gt_dp grid_axes = [0] gather_axis = 0 {gt.overlap} : tensor<9xf32> -> tensor<18xf32>
// CHECK-NEXT:  %[[G:.*]] = gt.linear %[[H]],
// CHECK:       tosa.slice %[[F3]]
// CHECK:       gt.linear %[[G]],
// CHECK:       %[[C3:.*]] = bufferization.alloc_tensor() copy(%[[S0]]) : tensor<9xf32>
// CHECK-NEXT:  %[[B3:.*]] = shard.all_gather %[[C3]] on @gt_dp grid_axes = [0] gather_axis = 0 : tensor<9xf32> -> tensor<18xf32>
// CHECK:       %[[C2:.*]] = bufferization.alloc_tensor() copy(%[[S1]]) : tensor<18xf32>
// CHECK-NEXT:  %[[B2:.*]] = shard.all_gather %[[C2]] on @gt_dp grid_axes = [0] gather_axis = 0 {gt.overlap} : tensor<18xf32> -> tensor<36xf32>
// CHECK:       tosa.matmul {{.*}} -> tensor<1x4x5xf32>
// CHECK:       shard.reduce_scatter {{.*}} {gt.overlap} : tensor<18xf32> -> tensor<9xf32>
// CHECK:       tosa.slice %[[B2]]
// CHECK:       %[[C1:.*]] = bufferization.alloc_tensor() copy(%[[S2]]) : tensor<27xf32>
// CHECK-NEXT:  %[[B1:.*]] = shard.all_gather %[[C1]] on @gt_dp grid_axes = [0] gather_axis = 0 {gt.overlap} : tensor<27xf32> -> tensor<54xf32>
// CHECK:       tosa.matmul {{.*}} -> tensor<1x4x6xf32>
// CHECK:       shard.reduce_scatter {{.*}} {gt.overlap} : tensor<36xf32> -> tensor<18xf32>
// CHECK:       tosa.slice %[[B1]]
// CHECK:       tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK:       shard.reduce_scatter {{.*}} {gt.overlap} : tensor<54xf32> -> tensor<27xf32>
// CHECK-NOT:   shard.all_gather
// CHECK:       return
// Lowered: each prefetched gather is started and waited for right before
// the slices at its bucket's first read; the gradient reduce-scatters wait
// before the next reduce-scatter, not before the gathers started between.
// LOWERED:       ml_program.global private mutable @gt.zero.bucket2
// LOWERED:       func.func @main(
// LOWERED:       call @mgrt_comm_all_gather_f32
// LOWERED:       %[[F2:.*]] = call @mgrt_comm_all_gather_start_f32
// LOWERED-NEXT:  gt.linear
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[F2]])
// LOWERED:       %[[F3:.*]] = call @mgrt_comm_all_gather_start_f32
// LOWERED-NEXT:  gt.linear
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[F3]])
// LOWERED:       gt.linear
// LOWERED:       call @mgrt_comm_all_gather_f32
// LOWERED:       %[[B2:.*]] = call @mgrt_comm_all_gather_start_f32
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       %[[R3:.*]] = call @mgrt_comm_reduce_scatter_start_f32
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[B2]])
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       %[[B1:.*]] = call @mgrt_comm_all_gather_start_f32
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       tosa.matmul {{.*}} -> tensor<1x4x6xf32>
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R3]])
// LOWERED-NOT:   tosa.matmul
// LOWERED:       call @mgrt_comm_reduce_scatter_start_f32
// LOWERED-NOT:   call @mgrt_comm_wait_f32
// LOWERED:       call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[B1]])
// LOWERED:       return
ml_program.global private mutable @w1(dense<0.5> : tensor<8x6xf32>) : tensor<8x6xf32> {gt.param}
ml_program.global private mutable @b1(dense<0.1> : tensor<6xf32>) : tensor<6xf32> {gt.param}
ml_program.global private mutable @w2(dense<0.25> : tensor<6x5xf32>) : tensor<6x5xf32> {gt.param}
ml_program.global private mutable @b2(dense<0.2> : tensor<5xf32>) : tensor<5xf32> {gt.param}
ml_program.global private mutable @w3(dense<0.125> : tensor<5x3xf32>) : tensor<5x3xf32> {gt.param}
ml_program.global private mutable @b3(dense<0.3> : tensor<3xf32>) : tensor<3xf32> {gt.param}

func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w1 = ml_program.global_load @w1 : tensor<8x6xf32>
  %b1 = ml_program.global_load @b1 : tensor<6xf32>
  %w2 = ml_program.global_load @w2 : tensor<6x5xf32>
  %b2 = ml_program.global_load @b2 : tensor<5xf32>
  %w3 = ml_program.global_load @w3 : tensor<5x3xf32>
  %b3 = ml_program.global_load @b3 : tensor<3xf32>
  %h = gt.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %g = gt.linear %h, %w2, %b2 : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %y = gt.linear %g, %w3, %b3 : (tensor<4x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
