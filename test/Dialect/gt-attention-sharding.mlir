// RUN: megagraph-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize))" --split-input-file | FileCheck %s

// gt.attention's ShardingInterface with upstream sharding-propagation and
// shard-partition (issue 7): queries, keys and values arrive sharded on the
// node dimension over the cp grid, the spatial bias on its query rows. The
// partitioned op takes the local queries and the local bias rows as they
// are and all-gathers K and V; nothing is sent for the bias.

shard.grid @cp(shape = 2)

// CHECK-LABEL: func.func @bias
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x4x8xf32>, %[[V:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-DAG: %[[GV:.*]] = shard.all_gather %[[V]] on @cp grid_axes = [0] gather_axis = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// CHECK-DAG: %[[GK:.*]] = shard.all_gather %[[K]] on @cp grid_axes = [0] gather_axis = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// CHECK-NOT: shard.
// CHECK: %[[O:.*]] = gt.attention %[[Q]], %[[GK]], %[[GV]] bias(%[[B]]) heads = 2 : (tensor<2x4x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NOT: shard.
// CHECK: return %[[O]]
func.func @bias(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>, %v: tensor<2x8x8xf32>, %bias: tensor<2x2x8x8xf32>) -> tensor<2x8x8xf32> {
  %rows = shard.sharding @cp split_axes = [[], [0]] : !shard.sharding
  %brows = shard.sharding @cp split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %rows : tensor<2x8x8xf32>
  %k1 = shard.shard %k to %rows : tensor<2x8x8xf32>
  %v1 = shard.shard %v to %rows : tensor<2x8x8xf32>
  %b1 = shard.shard %bias to %brows : tensor<2x2x8x8xf32>
  %a = gt.attention %q1, %k1, %v1 bias(%b1) heads = 2 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x8x8xf32>
  %a1 = shard.shard %a to %rows : tensor<2x8x8xf32>
  return %a1 : tensor<2x8x8xf32>
}

// -----

shard.grid @cp(shape = 2)

// Only the query is annotated: the result, the bias rows follow it; K and
// V (replicated) stay whole; no collective at all.
// CHECK-LABEL: func.func @query_only
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x8x8xf32>, %[[V:.*]]: tensor<2x8x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NOT: shard.
// CHECK: gt.attention %[[Q]], %[[K]], %[[V]] heads = 2 : (tensor<2x4x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x4x8xf32>
func.func @query_only(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %rows = shard.sharding @cp split_axes = [[], [0]] : !shard.sharding
  %q1 = shard.shard %q to %rows : tensor<2x8x8xf32>
  %a = gt.attention %q1, %k, %v heads = 2 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %a1 = shard.shard %a to %rows : tensor<2x8x8xf32>
  return %a1 : tensor<2x8x8xf32>
}
