// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the verifiers of #gt.pipeline, #gt.zero_shard,
// #gt.device_globals, #gt.cp and #gt.halo (GTAttrs.cpp), of the mode
// keyword, of gt.spmm under #gt.halo, and of
// the check that the names of GTNames.h hold their attribute
// (GTDialect::verifyOperationAttribute).

// expected-error@+1 {{pp and micro_batches must be >= 1, got pp = 0, micro_batches = 1}}
module attributes {gt.pipeline = #gt.pipeline<pp = 0, micro_batches = 1, stages = [], units = [], unit_time = [], stage_time = [], stage_memory = []>} {}

// -----

// expected-error@+1 {{stages lists 1 stage boundaries but pp = 2}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [0], units = ["a", "b"], unit_time = [1.0, 1.0], stage_time = [1.0, 1.0], stage_memory = [0, 0]>} {}

// -----

// expected-error@+1 {{the first stage must start at unit 0, got 1}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [1, 2], units = ["a", "b", "c"], unit_time = [1.0, 1.0, 1.0], stage_time = [1.0, 1.0], stage_memory = [0, 0]>} {}

// -----

// expected-error@+1 {{stage boundaries must be strictly increasing, got 1 then 1}}
module attributes {gt.pipeline = #gt.pipeline<pp = 3, micro_batches = 1, stages = [0, 1, 1], units = ["a", "b", "c"], unit_time = [1.0, 1.0, 1.0], stage_time = [1.0, 1.0, 1.0], stage_memory = [0, 0, 0]>} {}

// -----

// expected-error@+1 {{unit_time lists 1 times for 2 units}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [0, 1], units = ["a", "b"], unit_time = [1.0], stage_time = [1.0, 1.0], stage_memory = [0, 0]>} {}

// -----

// expected-error@+1 {{stage 1 starts at unit 2 of 2}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [0, 2], units = ["a", "b"], unit_time = [1.0, 1.0], stage_time = [1.0, 1.0], stage_memory = [0, 0]>} {}

// -----

// expected-error@+1 {{stage_time and stage_memory need one entry per stage (2), got 2 and 1}}
module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 1, stages = [0, 1], units = ["a", "b"], unit_time = [1.0, 1.0], stage_time = [1.0, 1.0], stage_memory = [0]>} {}

// -----

// A parameter left out: the struct parser names it.
// expected-error@+1 {{struct is missing required parameter: pp}}
module attributes {gt.pipeline = #gt.pipeline<micro_batches = 1, stages = [0], units = [], unit_time = [], stage_time = [1.0], stage_memory = [0]>} {}

// -----

// expected-error@+1 {{'gt.pipeline' must be a #gt.pipeline attribute, got {mb = 1 : i64, pp = 2 : i64}}}
module attributes {gt.pipeline = {pp = 2 : i64, mb = 1 : i64}} {}

// -----

module {
  // expected-error@+1 {{a ZeRO bucket holds at least one parameter}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [], sizes = [], padded = 4>}
}

// -----

module {
  // expected-error@+1 {{params lists 2 parameters but sizes 1}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [4], padded = 4>}
}

// -----

module {
  // expected-error@+1 {{parameter sizes must be >= 1, got 0}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w], sizes = [0], padded = 4>}
}

// -----

module {
  // expected-error@+1 {{the parameters' 6 elements exceed the padded size 4}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = #gt.zero_shard<params = [@w, @b], sizes = [4, 2], padded = 4>}
}

// -----

module {
  // expected-error@+1 {{'gt.zero_shard' must be a #gt.zero_shard attribute, got {padded = 4 : i64, params = [@w], sizes = [4]}}}
  ml_program.global private mutable @gt.zero.bucket0(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_shard = {padded = 4 : i64, params = [@w], sizes = [4]}}
}

// -----

module {
  // expected-error@+1 {{'gt.zero_moment' must be a #gt.zero_shard attribute, got "gt.zero.bucket0"}}
  ml_program.global private mutable @gt.zero.bucket0.adam_m(dense<0.0> : tensor<2xf32>) : tensor<2xf32> {gt.zero_moment = "gt.zero.bucket0"}
}

// -----

// expected-error@+1 {{globals lists 2 globals but bytes 1}}
module attributes {gt.device_globals = #gt.device_globals<globals = [@w, @b], bytes = [128]>} {}

// -----

// expected-error@+1 {{global @w has -1 bytes}}
module attributes {gt.device_globals = #gt.device_globals<globals = [@w], bytes = [-1]>} {}

// -----

// expected-error@+1 {{global @w is listed twice}}
module attributes {gt.device_globals = #gt.device_globals<globals = [@w, @w], bytes = [4, 4]>} {}

// -----

// expected-error@+1 {{'gt.device_globals' must be a #gt.device_globals attribute, got {w = 128 : i64}}}
module attributes {gt.device_globals = {w = 128 : i64}} {}

// -----

// expected-error@+1 {{size must be >= 1, got 0}}
func.func @f() attributes {a = #gt.cp<size = 0, mode = ring, grid = [1, 1, 1, 1], axes = 2>}

// -----

// expected-error@+2 {{expected allgather, ring or ulysses, got rings}}
// expected-error@+1 {{failed to parse GT_ContextParallelAttr parameter 'mode'}}
func.func @f() attributes {a = #gt.cp<size = 2, mode = rings, grid = [1, 2, 1, 1], axes = 2>}

// -----

// expected-error@+1 {{grid must be 4 sizes >= 1, got [1, 2]}}
func.func @f() attributes {a = #gt.cp<size = 2, mode = ring, grid = [1, 2], axes = 2>}

// -----

// expected-error@+1 {{grid must be 4 sizes >= 1, got [0, 2, 1, 1]}}
func.func @f() attributes {a = #gt.cp<size = 2, mode = ring, grid = [0, 2, 1, 1], axes = 2>}

// -----

// expected-error@+1 {{axes must be a non-empty mask of the 4 grid axes, got 16}}
func.func @f() attributes {a = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 16>}

// -----

// expected-error@+1 {{the grid axes of mask 1 hold 4 ranks, not size = 2}}
func.func @f() attributes {a = #gt.cp<size = 2, mode = ring, grid = [4, 2, 1, 1], axes = 1>}

// -----

func.func @f(%q: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'gt.cp' must be a #gt.cp attribute, got {size = 2 : i64}}}
  %o = gt.attention %q, %q, %q heads = 2 {gt.cp = {size = 2 : i64}}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// expected-error@+1 {{parts and nodes must be >= 1, got parts = 0, nodes = 8}}
func.func @f() attributes {a = #gt.halo<parts = 0, nodes = 8>}

// -----

// expected-error@+1 {{3 parts do not divide 8 nodes}}
func.func @f() attributes {a = #gt.halo<parts = 3, nodes = 8>}

// -----

func.func @f(%rp: tensor<9xi64>, %ci: tensor<20xi64>, %w: tensor<20xf32>, %x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'gt.halo' must be a #gt.halo attribute, got 2 : i64}}
  %0 = gt.spmm %rp, %ci, %w, %x {gt.halo = 2} : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @f(%rp: tensor<9xi64>, %ci: tensor<20xi64>, %w: tensor<20xf32>, %x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{has 8 CSR rows but #gt.halo splits 16 nodes}}
  %0 = gt.spmm %rp, %ci, %w, %x {gt.halo = #gt.halo<parts = 4, nodes = 16>} : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @f(%rp: tensor<9xi64>, %ci: tensor<20xi64>, %w: tensor<20xf32>, %x: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{input has 8 rows but #gt.halo gives each of its 2 parts 4}}
  %0 = gt.spmm %rp, %ci, %w, %x {gt.halo = #gt.halo<parts = 2, nodes = 8>} : (tensor<9xi64>, tensor<20xi64>, tensor<20xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
