//===- ShardCalls.h - The collectives of compiled code, per backend -*- C++
//-*-===//
//
// Internal to the runtime. Compiled code calls one C function per shard
// collective (megagraph/Comm.h: `_mlir_ciface_mgrt_comm_<op>_f32` on host
// buffers, `_mlir_ciface_mgrt_comm_device_<op>_f32` on device buffers).
// Both families are thin: they find the group of (grid, axes) - an MPI
// group for host buffers (ShardCalls.cpp), an NCCL group over the same
// processes for device buffers (DeviceShardCalls.cpp, in
// libmegagraph_rt_nccl) - and run the same operation below, which checks
// the operands and moves the data through the group's backend. Every
// failure ends the job: compiled code has no error channel.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_COMM_SHARDCALLS_H
#define MEGAGRAPH_RUNTIME_COMM_SHARDCALLS_H

#include "megagraph/Comm.h"

#include <cstdint>

namespace mgrt::comm {

/// The grid of a shard call: four axis sizes (unused axes 1) and a bit
/// mask of the group's axes.
struct ShardGrid {
  int64_t g[4];
  int64_t axes;
};

/// The MPI group of `grid`, created on first use (MPI initialized then if
/// the driver has not) and cached. Ends the job, naming `call`, when the
/// grid does not match the number of processes.
mgrt_comm_group *shardGroup(const ShardGrid &grid, const char *call);

/// The NCCL group over the processes of shardGroup(grid) on the current
/// CUDA device, created on first use and cached. Defined in
/// libmegagraph_rt_nccl (DeviceShardCalls.cpp).
mgrt_comm_group *deviceShardGroup(const ShardGrid &grid, const char *call);

/// The shard collectives on any group; buffers in the memory the group's
/// backend moves. `call` names the entry point in messages.
void shardAllReduce(mgrt_comm_group *g, mgrt_memref_f32_1 *buf, int64_t op,
                    const char *call);
void shardAllGather(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                    mgrt_memref_f32_1 *in, const char *call);
void shardReduceScatter(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                        mgrt_memref_f32_1 *in, int64_t op, const char *call);
/// shardReduceScatter, started (mgrt_comm_reduce_scatter_start): returns
/// the request, as an integer, that shardWait completes (0: nothing to
/// wait for).
int64_t shardReduceScatterStart(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                                mgrt_memref_f32_1 *in, int64_t op,
                                const char *call);
int64_t shardAllReduceStart(mgrt_comm_group *g, mgrt_memref_f32_1 *buf,
                            int64_t op, const char *call);
int64_t shardAllGatherStart(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                            mgrt_memref_f32_1 *in, const char *call);
void shardWait(int64_t request, const char *call);
void shardAllToAll(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                   mgrt_memref_f32_1 *in, const char *call);
void shardAllSlice(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                   mgrt_memref_f32_1 *in, const char *call);
void shardBroadcast(mgrt_comm_group *g, mgrt_memref_f32_1 *buf, int64_t root,
                    const char *call);
void shardSend(mgrt_comm_group *g, mgrt_memref_f32_1 *in, int64_t dest,
               const char *call);
void shardRecv(mgrt_comm_group *g, mgrt_memref_f32_1 *out, int64_t source,
               const char *call);
void shardShift(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                mgrt_memref_f32_1 *in, int64_t offset, int64_t rotate,
                const char *call);

} // namespace mgrt::comm

#endif // MEGAGRAPH_RUNTIME_COMM_SHARDCALLS_H
