// RUN: megagraph-opt %s --gt-shard-to-runtime -split-input-file -verify-diagnostics

shard.grid @g(shape = 2x2)
func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{gt-shard-to-runtime needs static f32 tensors, got 'tensor<4xf64>'}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

shard.grid @g(shape = 2x2)
func.func @product(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduction must be sum, average, max or min}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] reduction = product : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @descending(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{grid_axes must be ascending}}
  %0 = shard.all_reduce %x on @g grid_axes = [1, 0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @inner_gather(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{gather_axis must be preceded by unit dimensions only}}
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 1 : tensor<2x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @inner_scatter(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{scatter_axis must be preceded by unit dimensions only}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @shift_two_axes(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{the runtime shifts over the shift axis only}}
  %0 = shard.shift %x on @g grid_axes = [0, 1] shift_axis = 1 offset = 1 rotate : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2x2x2x2x2)
func.func @big_grid(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{the runtime supports static grids of at most 4 axes}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{gt-shard-to-runtime needs static f32 tensors}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @recv_dynamic_source(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{needs a static source}}
  %0 = shard.recv %x on @g grid_axes = [0] : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @overlap_all_to_all(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'gt.overlap' must be a unit attribute on a shard.reduce_scatter, shard.all_reduce or shard.all_gather}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 0 concat_axis = 0 {gt.overlap} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @overlap_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'gt.overlap' must be a unit attribute}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] {gt.overlap = 1 : i64} : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
