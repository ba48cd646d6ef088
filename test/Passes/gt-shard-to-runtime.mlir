// RUN: megagraph-opt %s --gt-shard-to-runtime | FileCheck %s
// Each shard collective becomes one call of the communication runtime
// (megagraph/Comm.h) on flattened buffers; the grid 2x2 is passed as
// 2, 2, 1, 1 and the group's axes as a bit mask.

shard.grid @g(shape = 2x2)

// CHECK-DAG: func.func private @mgrt_comm_all_reduce_f32(memref<?xf32>, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @mgrt_comm_all_gather_f32(memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK: shard.grid @g(shape = 2x2)

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<6xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: bufferization.materialize_in_destination %[[FLAT]] in restrict writable %[[BUF]]
// CHECK: %[[DYN:.*]] = memref.cast %[[BUF]] : memref<6xf32> to memref<?xf32>
// CHECK: %[[MAX:.*]] = arith.constant 2 : i64
// CHECK: call @mgrt_comm_all_reduce_f32(%[[DYN]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MAX]])
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<6xf32> to tensor<6xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[T]] {{\[}}[0, 1]] output_shape [2, 3]
// CHECK: return %[[R]]
func.func @all_reduce(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = shard.all_reduce %x on @g grid_axes = [0] reduction = max : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// The whole grid: mask 3; average is code 1; a rank-0 tensor is expanded.
// CHECK-LABEL: func.func @all_reduce_scalar_average
// CHECK: %[[MASK:.*]] = arith.constant 3 : i64
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[AVG:.*]] = arith.constant 1 : i64
// CHECK: call @mgrt_comm_all_reduce_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MASK]], %[[AVG]])
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @all_reduce_scalar_average(%x: tensor<f32>) -> tensor<f32> {
  %0 = shard.all_reduce %x on @g grid_axes = [0, 1] reduction = average : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @all_gather
// CHECK: %[[IN:.*]] = memref.alloc() : memref<3xf32>
// CHECK: materialize_in_destination %{{.*}} in restrict writable %[[IN]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK: %[[O:.*]] = memref.cast %[[OUT]]
// CHECK: %[[I:.*]] = memref.cast %[[IN]]
// CHECK: call @mgrt_comm_all_gather_f32(%[[O]], %[[I]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[M2:.*]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<6xf32> to tensor<6xf32>
func.func @all_gather(%x: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 : tensor<1x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A gather axis after unit dimensions is contiguous too.
// CHECK-LABEL: func.func @all_gather_inner
// CHECK: call @mgrt_comm_all_gather_f32
func.func @all_gather_inner(%x: tensor<1x4xf32>) -> tensor<1x8xf32> {
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 1 : tensor<1x4xf32> -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// CHECK-LABEL: func.func @reduce_scatter
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[SUM:.*]] = arith.constant 0 : i64
// CHECK: call @mgrt_comm_reduce_scatter_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SUM]]) : (memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 2]
func.func @reduce_scatter(%x: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %0 = shard.reduce_scatter %x on @g grid_axes = [1] scatter_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// An overlapped reduce-scatter is started where it stands and waited for
// right before its first reader (here after the independent abs); the
// wait takes both buffers so that they live until then.
// CHECK-LABEL: func.func @reduce_scatter_overlap
// CHECK: %[[IN:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[REQ:.*]] = call @mgrt_comm_reduce_scatter_start_f32({{.*}}) : (memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64) -> i64
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: tosa.abs
// CHECK-NEXT: %[[OC:.*]] = memref.cast %[[OUT]]
// CHECK-NEXT: %[[IC:.*]] = memref.cast %[[IN]]
// CHECK-NEXT: call @mgrt_comm_wait_f32(%[[OC]], %[[IC]], %[[REQ]]) : (memref<?xf32>, memref<?xf32>, i64) -> ()
// CHECK-NEXT: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: tosa.add
func.func @reduce_scatter_overlap(%x: tensor<8xf32>, %y: tensor<4xf32>, %z: tensor<1xi8>) -> tensor<4xf32> {
  %0 = shard.reduce_scatter %x on @g grid_axes = [1] scatter_axis = 0 {gt.overlap} : tensor<8xf32> -> tensor<4xf32>
  %1 = tosa.abs %y : (tensor<4xf32>) -> tensor<4xf32>
  %2 = tosa.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// An overlapped all-gather (ZeRO-3's parameter prefetch) is started where
// it stands and waited for right before its first reader; the wait takes
// both buffers.
// CHECK-LABEL: func.func @all_gather_overlap
// CHECK: %[[IN:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[REQ:.*]] = call @mgrt_comm_all_gather_start_f32({{.*}}) : (memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64) -> i64
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: tosa.abs
// CHECK-NEXT: %[[OC:.*]] = memref.cast %[[OUT]]
// CHECK-NEXT: %[[IC:.*]] = memref.cast %[[IN]]
// CHECK-NEXT: call @mgrt_comm_wait_f32(%[[OC]], %[[IC]], %[[REQ]]) : (memref<?xf32>, memref<?xf32>, i64) -> ()
// CHECK-NEXT: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: tosa.add
func.func @all_gather_overlap(%x: tensor<4xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.all_gather %x on @g grid_axes = [1] gather_axis = 0 {gt.overlap} : tensor<4xf32> -> tensor<8xf32>
  %1 = tosa.abs %y : (tensor<8xf32>) -> tensor<8xf32>
  %2 = tosa.add %0, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// Two chains: an overlapped all-gather waits before the next overlapped
// all-gather (one parameter gather in flight) but not before an
// overlapped reduce-scatter, and the reduce-scatter's wait does not stop
// at the next all-gather: each waits at its reader.
// CHECK-LABEL: func.func @overlap_chains
// CHECK: %[[G0:.*]] = call @mgrt_comm_all_gather_start_f32
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: %[[R:.*]] = call @mgrt_comm_reduce_scatter_start_f32
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[G0]])
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: %[[G1:.*]] = call @mgrt_comm_all_gather_start_f32
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[R]])
// CHECK-NEXT: bufferization.to_tensor
// CHECK-NEXT: tosa.abs
// CHECK-NOT: mgrt_comm_wait_f32
// CHECK: tosa.negate
// CHECK: call @mgrt_comm_wait_f32(%{{.*}}, %{{.*}}, %[[G1]])
// CHECK: tosa.add
func.func @overlap_chains(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<8xf32>, %z: tensor<1xf32>) -> (tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) {
  %0 = shard.all_gather %a on @g grid_axes = [1] gather_axis = 0 {gt.overlap} : tensor<4xf32> -> tensor<8xf32>
  %1 = shard.reduce_scatter %c on @g grid_axes = [1] scatter_axis = 0 {gt.overlap} : tensor<8xf32> -> tensor<4xf32>
  %2 = shard.all_gather %b on @g grid_axes = [1] gather_axis = 0 {gt.overlap} : tensor<4xf32> -> tensor<8xf32>
  %3 = tosa.abs %1 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = tosa.negate %0, %z, %z : (tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8xf32>
  %5 = tosa.add %2, %4 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %5, %3, %4 : tensor<8xf32>, tensor<4xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @all_to_all
// CHECK: call @mgrt_comm_all_to_all_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64) -> ()
func.func @all_to_all(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<4x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// Root [1, 0] of the group over both axes is rank 2.
// CHECK-LABEL: func.func @broadcast
// CHECK: %[[MASK:.*]] = arith.constant 3 : i64
// CHECK: memref.cast
// CHECK-NEXT: %[[ROOT:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @mgrt_comm_broadcast_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROOT]])
func.func @broadcast(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = shard.broadcast %x on @g grid_axes = [0, 1] root = [1, 0] : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// send returns its input; recv the received buffer.
// CHECK-LABEL: func.func @send_recv
// CHECK-SAME: (%[[X:.*]]: tensor<5xf32>)
// CHECK: memref.cast
// CHECK-NEXT: %[[DEST:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @mgrt_comm_send_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DEST]])
// CHECK: %[[RB:.*]] = memref.alloc() : memref<5xf32>
// CHECK-NOT: materialize_in_destination
// CHECK: %[[SRC:.*]] = arith.constant 0 : i64
// CHECK: call @mgrt_comm_recv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SRC]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[RB]]
// CHECK: return %[[X]], %[[R]]
func.func @send_recv(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %0 = shard.send %x on @g grid_axes = [1] destination = [1] : (tensor<5xf32>) -> tensor<5xf32>
  %1 = shard.recv %x on @g grid_axes = [1] source = [0] : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1 : tensor<5xf32>, tensor<5xf32>
}

// CHECK-LABEL: func.func @shift
// CHECK: memref.cast
// CHECK-NEXT: memref.cast
// CHECK-NEXT: %[[OFF:.*]] = arith.constant -1 : i64
// CHECK-NEXT: %[[ROT:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @mgrt_comm_shift_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[OFF]], %[[ROT]])
func.func @shift(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = shard.shift %x on @g grid_axes = [1] shift_axis = 1 offset = -1 rotate : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// all_slice is local: this rank's piece, copied by the runtime.
// CHECK-LABEL: func.func @all_slice
// CHECK: %[[IN:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2xf32>
// CHECK: call @mgrt_comm_all_slice_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>, i64, i64, i64, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[OUT]]
func.func @all_slice(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = shard.all_slice %x on @g grid_axes = [0] slice_axis = 0 : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// An all-to-all from rows to columns ([4/2, 6] -> [4, 6/2], MixGCN's
// switch): the two column pieces are made contiguous first ([2, 3] pieces
// first: reshape [2, 2, 3] and transpose to [2, 2, 3]), exchanged, and the
// received row pieces are already in order ([2 pieces, 2 rows, 3] ->
// [4, 3]).
// CHECK-LABEL: func.func @rows_to_columns
// CHECK: %[[S:.*]] = tosa.reshape %{{.*}} : (tensor<2x6xf32>, !tosa.shape<3>) -> tensor<2x2x3xf32>
// CHECK: %[[T:.*]] = tosa.transpose %[[S]] {perms = array<i32: 1, 0, 2>} : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
// CHECK: tensor.collapse_shape %[[T]]
// CHECK: call @mgrt_comm_all_to_all_f32
// CHECK: %[[R:.*]] = tensor.expand_shape {{.*}} into tensor<2x2x3xf32>
// CHECK: tosa.reshape %[[R]], %{{.*}} : (tensor<2x2x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
func.func @rows_to_columns(%x: tensor<2x6xf32>) -> tensor<4x3xf32> {
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x6xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// And back: the row pieces are contiguous already; the received column
// pieces are moved next to the columns ([2, 2, 3] -> [2 rows, 2 pieces, 3]).
// CHECK-LABEL: func.func @columns_to_rows
// CHECK: %[[S:.*]] = tosa.reshape %{{.*}} : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<2x2x3xf32>
// CHECK-NOT: tosa.transpose
// CHECK: call @mgrt_comm_all_to_all_f32
// CHECK: %[[R:.*]] = tensor.expand_shape {{.*}} into tensor<2x2x3xf32>
// CHECK: %[[T:.*]] = tosa.transpose %[[R]] {perms = array<i32: 1, 0, 2>} : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
// CHECK: tosa.reshape %[[T]], %{{.*}} : (tensor<2x2x3xf32>, !tosa.shape<2>) -> tensor<2x6xf32>
func.func @columns_to_rows(%x: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<4x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// A slice of the columns: the pieces first, then this rank's one.
// CHECK-LABEL: func.func @column_slice
// CHECK: tosa.transpose {{.*}} : (tensor<3x2x2xf32>) -> tensor<2x3x2xf32>
// CHECK: call @mgrt_comm_all_slice_f32
// CHECK: tensor.expand_shape {{.*}} into tensor<3x2xf32>
func.func @column_slice(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %0 = shard.all_slice %x on @g grid_axes = [1] slice_axis = 1 : tensor<3x4xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// The rank: a call returning i64 over the whole grid (mask 3).
// CHECK-LABEL: func.func @rank
// CHECK: %[[M:.*]] = arith.constant 3 : i64
// CHECK: %[[R:.*]] = call @mgrt_comm_group_rank(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[M]]) : (i64, i64, i64, i64, i64) -> i64
// CHECK: arith.index_cast %[[R]] : i64 to index
func.func @rank() -> index {
  %0 = shard.process_linear_index on @g : index
  return %0 : index
}

// Other ops are left alone (and keep the grid alive).
// CHECK-LABEL: func.func @untouched
// CHECK: shard.reduce
func.func @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shard.reduce %x on @g grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
