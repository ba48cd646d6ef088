// RUN: megagraph-opt %s | megagraph-opt | FileCheck %s
// RUN: megagraph-opt %s --mlir-print-op-generic | megagraph-opt | FileCheck %s

// Round trip of the attributes passes hand each other: #gt.pipeline
// (gt-pipeline-split -> gt-pipeline-train), #gt.zero_shard (gt-data-parallel
// -> gt-zero-gather; as gt.zero_moment gt-zero-gather -> the state table),
// #gt.device_globals (gt-gpu-offload -> gt-gpu-device-memory), #gt.cp
// (gt-context-parallel -> gt.attention's verifier and bufferization) and
// #gt.halo (gt-partition-parallel -> gt.spmm's verifier, gradient and
// bufferization). Parameters print in declaration order.

// CHECK-LABEL: module @pipeline attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 4, stages = [0, 2], units = ["gt.linear", "gt.attention", "gt.linear"], unit_time = [1.000000e+00, 2.500000e+00, 5.000000e-01], stage_time = [3.500000e+00, 5.000000e-01], stage_memory = [4096, 512]>}
module @pipeline attributes {gt.pipeline = #gt.pipeline<micro_batches = 4,
    pp = 2, stages = [0, 2], units = ["gt.linear", "gt.attention", "gt.linear"],
    unit_time = [1.0, 2.5, 0.5], stage_time = [3.5, 0.5],
    stage_memory = [4096, 512]>} {}

// A pipeline of one stage, and units not listed (written by hand).
// CHECK-LABEL: module @one_stage attributes {gt.pipeline = #gt.pipeline<pp = 1, micro_batches = 1, stages = [0], units = [], unit_time = [], stage_time = [0.000000e+00], stage_memory = [0]>}
module @one_stage attributes {gt.pipeline = #gt.pipeline<pp = 1,
    micro_batches = 1, stages = [0], units = [], unit_time = [],
    stage_time = [0.0], stage_memory = [0]>} {}

// CHECK-LABEL: module @zero
// CHECK: ml_program.global private mutable @gt.zero.bucket0(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
module @zero {
  ml_program.global private mutable @w(dense<0.5> : tensor<4x6xf32>) : tensor<4x6xf32>
  ml_program.global private mutable @b(dense<0.5> : tensor<3xf32>) : tensor<3xf32>
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<14xf32>) : tensor<14xf32> {gt.zero_shard = #gt.zero_shard<sizes = [24, 3], padded = 28, params = [@w, @b]>}
}

// ZeRO-1/2: the bucket is gone, its moments keep the packing
// (gt-zero-gather -> the state table).
// CHECK-LABEL: module @zero_moment
// CHECK: ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.000000e+00> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
module @zero_moment {
  ml_program.global private mutable @w(dense<0.5> : tensor<4x6xf32>) : tensor<4x6xf32>
  ml_program.global private mutable @b(dense<0.5> : tensor<3xf32>) : tensor<3xf32>
  ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.0> : tensor<14xf32>) : tensor<14xf32> {gt.optimizer_state, gt.zero_moment = #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
}

// CHECK-LABEL: module @device_globals attributes {gt.device_globals = #gt.device_globals<globals = [@w, @gt.step], bytes = [128, 8]>}
module @device_globals attributes {gt.device_globals = #gt.device_globals<globals = [@w, @gt.step], bytes = [128, 8]>} {}

// No globals at all (an empty `bytes` is elided).
// CHECK-LABEL: module @no_globals attributes {gt.device_globals = #gt.device_globals<globals = []>}
module @no_globals attributes {gt.device_globals = #gt.device_globals<globals = [], bytes = []>} {}

// The keys of a cp attention are `size` times its local ones (4 x 2).
// CHECK-LABEL: func.func @cp_attention
// CHECK: gt.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}}) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>}
func.func @cp_attention(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>,
                        %v: tensor<1x4x8xf32>, %bias: tensor<2x4x8xf32>)
    -> tensor<1x4x8xf32> {
  %o = gt.attention %q, %k, %v bias(%bias) heads = 2
      {gt.cp = #gt.cp<mode = ring, size = 2, grid = [1, 2, 1, 1], axes = 2>}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<2x4x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// Every mode keyword; a dp x cp grid with the cp group on axis 1.
// CHECK-LABEL: func.func @cp_modes() attributes {a = #gt.cp<size = 4, mode = allgather, grid = [2, 4, 1, 1], axes = 2>, b = #gt.cp<size = 8, mode = ulysses, grid = [2, 4, 1, 1], axes = 3>}
func.func @cp_modes() attributes {
    a = #gt.cp<size = 4, mode = allgather, grid = [2, 4, 1, 1], axes = 2>,
    b = #gt.cp<size = 8, mode = ulysses, grid = [2, 4, 1, 1], axes = 3>} {
  return
}

// A partition-parallel SpMM: 100 nodes in 2 blocks of 50 rows, the whole
// CSR.
// CHECK-LABEL: func.func @halo
// CHECK: gt.spmm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {gt.halo = #gt.halo<parts = 2, nodes = 100>} : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>, tensor<50x64xf32>) -> tensor<50x64xf32>
func.func @halo(%rp: tensor<101xi64>, %ci: tensor<800xi64>, %w: tensor<800xf32>, %x: tensor<50x64xf32>) -> tensor<50x64xf32> {
  %0 = gt.spmm %rp, %ci, %w, %x {gt.halo = #gt.halo<nodes = 100, parts = 2>} : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>, tensor<50x64xf32>) -> tensor<50x64xf32>
  return %0 : tensor<50x64xf32>
}
