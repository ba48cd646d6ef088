//===- DeviceShardCalls.cpp - Collectives of compiled code on the GPU -----===//
//
// The shard collectives of a --target cuda program (gt-gpu-offload renames
// mgrt_comm_<op>_f32 to mgrt_comm_device_<op>_f32): the operations of
// ShardCalls.cpp on device buffers, through an NCCL group over the
// processes of the same (grid, axes), bootstrapped over MPI and bound to
// the CUDA device current on the calling thread (the one the program's
// runtime chose for this rank, RuntimeCuda.h). Part of libmegagraph_rt_nccl.
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"

#include <cuda_runtime.h>

#include <array>
#include <map>
#include <string>

namespace mgrt::comm {

mgrt_comm_group *deviceShardGroup(const ShardGrid &grid, const char *call) {
  static std::map<std::array<int64_t, 5>, mgrt_comm_group *> cache;
  const std::array<int64_t, 5> key = {grid.g[0], grid.g[1], grid.g[2],
                                      grid.g[3], grid.axes};
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  mgrt_comm_group *mpi = shardGroup(grid, call);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    mgrt_comm_abort((std::string(call) + ": no CUDA device is current").c_str(),
                    3);
  }
  mgrt_comm_group *g = nullptr;
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  mgrt_comm_nccl_group_create(mpi, device, &g);
  mgrt_comm_set_error_mode(prev);
  cache[key] = g;
  return g;
}

} // namespace mgrt::comm

using namespace mgrt::comm;

extern "C" {

void _mlir_ciface_mgrt_comm_device_all_reduce_f32(mgrt_memref_f32_1 *buf,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_device_all_reduce_f32";
  shardAllReduce(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), buf, op,
                 call);
}

void _mlir_ciface_mgrt_comm_device_all_gather_f32(mgrt_memref_f32_1 *out,
                                                  mgrt_memref_f32_1 *in,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes) {
  const char *call = "mgrt_comm_device_all_gather_f32";
  shardAllGather(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                 call);
}

void _mlir_ciface_mgrt_comm_device_reduce_scatter_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_device_reduce_scatter_f32";
  shardReduceScatter(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                     op, call);
}

// NCCL orders its transfers on the group's stream: a started
// reduce-scatter, all-reduce or all-gather is the plain one, and its wait
// has nothing to do.
int64_t _mlir_ciface_mgrt_comm_device_reduce_scatter_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_device_reduce_scatter_start_f32";
  shardReduceScatter(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                     op, call);
  return 0;
}

int64_t _mlir_ciface_mgrt_comm_device_all_reduce_start_f32(
    mgrt_memref_f32_1 *buf, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_device_all_reduce_start_f32";
  shardAllReduce(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), buf, op,
                 call);
  return 0;
}

int64_t _mlir_ciface_mgrt_comm_device_all_gather_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes) {
  const char *call = "mgrt_comm_device_all_gather_start_f32";
  shardAllGather(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                 call);
  return 0;
}

void _mlir_ciface_mgrt_comm_device_wait_f32(mgrt_memref_f32_1 *,
                                            mgrt_memref_f32_1 *, int64_t) {}

void _mlir_ciface_mgrt_comm_device_all_to_all_f32(mgrt_memref_f32_1 *out,
                                                  mgrt_memref_f32_1 *in,
                                                  int64_t g0, int64_t g1,
                                                  int64_t g2, int64_t g3,
                                                  int64_t axes) {
  const char *call = "mgrt_comm_device_all_to_all_f32";
  shardAllToAll(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                call);
}

void _mlir_ciface_mgrt_comm_device_all_slice_f32(mgrt_memref_f32_1 *out,
                                                 mgrt_memref_f32_1 *in,
                                                 int64_t g0, int64_t g1,
                                                 int64_t g2, int64_t g3,
                                                 int64_t axes) {
  const char *call = "mgrt_comm_device_all_slice_f32";
  shardAllSlice(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in,
                call);
}

void _mlir_ciface_mgrt_comm_device_broadcast_f32(mgrt_memref_f32_1 *buf,
                                                 int64_t g0, int64_t g1,
                                                 int64_t g2, int64_t g3,
                                                 int64_t axes, int64_t root) {
  const char *call = "mgrt_comm_device_broadcast_f32";
  shardBroadcast(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), buf, root,
                 call);
}

void _mlir_ciface_mgrt_comm_device_send_f32(mgrt_memref_f32_1 *in, int64_t g0,
                                            int64_t g1, int64_t g2, int64_t g3,
                                            int64_t axes, int64_t dest) {
  const char *call = "mgrt_comm_device_send_f32";
  shardSend(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), in, dest, call);
}

void _mlir_ciface_mgrt_comm_device_recv_f32(mgrt_memref_f32_1 *out, int64_t g0,
                                            int64_t g1, int64_t g2, int64_t g3,
                                            int64_t axes, int64_t source) {
  const char *call = "mgrt_comm_device_recv_f32";
  shardRecv(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, source,
            call);
}

void _mlir_ciface_mgrt_comm_device_shift_f32(mgrt_memref_f32_1 *out,
                                             mgrt_memref_f32_1 *in, int64_t g0,
                                             int64_t g1, int64_t g2, int64_t g3,
                                             int64_t axes, int64_t offset,
                                             int64_t rotate) {
  const char *call = "mgrt_comm_device_shift_f32";
  shardShift(deviceShardGroup({{g0, g1, g2, g3}, axes}, call), out, in, offset,
             rotate, call);
}

} // extern "C"
