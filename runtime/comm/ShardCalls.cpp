//===- ShardCalls.cpp - Collectives called from compiled code -------------===//
//
// The targets of gt-shard-to-runtime: one function per shard collective, on
// f32 rank-1 memrefs (the pass flattens tensors), the grid passed as four
// sizes and an axes bit mask. Groups are created on first use (MPI is
// initialized then if the driver has not) and cached per (grid, axes).
// The operations themselves take any group (ShardCalls.h): the host entry
// points below give them an MPI group, the device entry points of
// --target cuda (DeviceShardCalls.cpp) an NCCL group over the same
// processes. There is no error channel back into compiled code: every
// failure ends the job (mgrt_comm_abort).
//
//===----------------------------------------------------------------------===//

#include "comm/ShardCalls.h"

#include "comm/CommGroup.h"

#include <array>
#include <map>
#include <string>

namespace mgrt::comm {
namespace {

/// Checks the contract of a flattened operand.
float *dataOf(mgrt_memref_f32_1 *m, const char *call) {
  if (!m || (m->sizes[0] > 1 && m->strides[0] != 1))
    mgrt_comm_abort(
        (std::string(call) + ": operand must be a contiguous rank-1 memref")
            .c_str(),
        3);
  return m->aligned + m->offset;
}

/// Runs `f` in abort mode (compiled code cannot handle errors).
template <typename F> void fatal(F f) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  f();
  mgrt_comm_set_error_mode(prev);
}

} // namespace

mgrt_comm_group *shardGroup(const ShardGrid &grid, const char *call) {
  static std::map<std::array<int64_t, 5>, mgrt_comm_group *> cache;
  const std::array<int64_t, 5> key = {grid.g[0], grid.g[1], grid.g[2],
                                      grid.g[3], grid.axes};
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  if (!mgrt_comm_initialized())
    mgrt_comm_init(nullptr, nullptr);
  const int64_t n = grid.g[0] * grid.g[1] * grid.g[2] * grid.g[3];
  const int world = mgrt_comm_size(mgrt_comm_world());
  if (n != world) {
    std::string msg =
        std::string(call) + ": the model was compiled for a grid of " +
        std::to_string(n) + " processes (" + std::to_string(grid.g[0]) + "x" +
        std::to_string(grid.g[1]) + "x" + std::to_string(grid.g[2]) + "x" +
        std::to_string(grid.g[3]) + ") but the job has " +
        std::to_string(world) + "; launch it with mpirun -np " +
        std::to_string(n);
    mgrt_comm_abort(msg.c_str(), 3);
  }
  mgrt_comm_group *g = nullptr;
  fatal([&] {
    mgrt_comm_grid_group(4, grid.g, static_cast<uint32_t>(grid.axes), &g);
  });
  cache[key] = g;
  return g;
}

void shardAllReduce(mgrt_comm_group *g, mgrt_memref_f32_1 *buf, int64_t op,
                    const char *call) {
  float *p = dataOf(buf, call);
  fatal([&] {
    mgrt_comm_all_reduce(g, p, p, buf->sizes[0], MGRT_F32,
                         static_cast<int>(op));
  });
}

void shardAllGather(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                    mgrt_memref_f32_1 *in, const char *call) {
  if (out->sizes[0] != in->sizes[0] * g->size)
    mgrt_comm_abort((std::string(call) + ": out must hold size x in").c_str(),
                    3);
  fatal([&] {
    mgrt_comm_all_gather(g, dataOf(in, call), in->sizes[0], dataOf(out, call),
                         nullptr, MGRT_F32);
  });
}

void shardReduceScatter(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                        mgrt_memref_f32_1 *in, int64_t op, const char *call) {
  if (in->sizes[0] != out->sizes[0] * g->size)
    mgrt_comm_abort((std::string(call) + ": in must hold size x out").c_str(),
                    3);
  fatal([&] {
    mgrt_comm_reduce_scatter(g, dataOf(in, call), dataOf(out, call),
                             out->sizes[0], nullptr, MGRT_F32,
                             static_cast<int>(op));
  });
}

int64_t shardReduceScatterStart(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                                mgrt_memref_f32_1 *in, int64_t op,
                                const char *call) {
  if (in->sizes[0] != out->sizes[0] * g->size)
    mgrt_comm_abort((std::string(call) + ": in must hold size x out").c_str(),
                    3);
  mgrt_comm_request *request = nullptr;
  fatal([&] {
    mgrt_comm_reduce_scatter_start(g, dataOf(in, call), dataOf(out, call),
                                   out->sizes[0], MGRT_F32,
                                   static_cast<int>(op), &request);
  });
  return reinterpret_cast<int64_t>(request);
}

int64_t shardAllReduceStart(mgrt_comm_group *g, mgrt_memref_f32_1 *buf,
                            int64_t op, const char *call) {
  mgrt_comm_request *request = nullptr;
  fatal([&] {
    float *data = dataOf(buf, call);
    mgrt_comm_all_reduce_start(g, data, data, buf->sizes[0], MGRT_F32,
                               static_cast<int>(op), &request);
  });
  return reinterpret_cast<int64_t>(request);
}

int64_t shardAllGatherStart(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                            mgrt_memref_f32_1 *in, const char *call) {
  if (out->sizes[0] != in->sizes[0] * g->size)
    mgrt_comm_abort((std::string(call) + ": out must hold size x in").c_str(),
                    3);
  mgrt_comm_request *request = nullptr;
  fatal([&] {
    mgrt_comm_all_gather_start(g, dataOf(in, call), in->sizes[0],
                               dataOf(out, call), MGRT_F32, &request);
  });
  return reinterpret_cast<int64_t>(request);
}

void shardWait(int64_t request, const char *call) {
  if (request == 0)
    return; // completed at its start
  fatal(
      [&] { mgrt_comm_wait(reinterpret_cast<mgrt_comm_request *>(request)); });
}

void shardAllToAll(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                   mgrt_memref_f32_1 *in, const char *call) {
  if (in->sizes[0] != out->sizes[0] || in->sizes[0] % g->size)
    mgrt_comm_abort((std::string(call) +
                     ": in and out must have the same size, a multiple of "
                     "the group size")
                        .c_str(),
                    3);
  fatal([&] {
    mgrt_comm_all_to_all(g, dataOf(in, call), nullptr, dataOf(out, call),
                         nullptr, in->sizes[0] / g->size, MGRT_F32);
  });
}

void shardAllSlice(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                   mgrt_memref_f32_1 *in, const char *call) {
  const int64_t n = out->sizes[0];
  if (in->sizes[0] != n * g->size)
    mgrt_comm_abort((std::string(call) + ": in must hold size x out").c_str(),
                    3);
  fatal([&] {
    g->localCopy(dataOf(out, call), dataOf(in, call) + g->rank * n, n,
                 MGRT_F32);
  });
}

void shardBroadcast(mgrt_comm_group *g, mgrt_memref_f32_1 *buf, int64_t root,
                    const char *call) {
  fatal([&] {
    mgrt_comm_broadcast(g, dataOf(buf, call), buf->sizes[0], MGRT_F32,
                        static_cast<int>(root));
  });
}

void shardSend(mgrt_comm_group *g, mgrt_memref_f32_1 *in, int64_t dest,
               const char *call) {
  fatal([&] {
    mgrt_comm_send(g, dataOf(in, call), in->sizes[0], MGRT_F32,
                   static_cast<int>(dest), 0);
  });
}

void shardRecv(mgrt_comm_group *g, mgrt_memref_f32_1 *out, int64_t source,
               const char *call) {
  fatal([&] {
    mgrt_comm_recv(g, dataOf(out, call), out->sizes[0], MGRT_F32,
                   static_cast<int>(source), 0);
  });
}

void shardShift(mgrt_comm_group *g, mgrt_memref_f32_1 *out,
                mgrt_memref_f32_1 *in, int64_t offset, int64_t rotate,
                const char *call) {
  const int n = g->size, r = g->rank;
  const int64_t count = in->sizes[0];
  float *src = dataOf(in, call), *dst = dataOf(out, call);
  if (out->sizes[0] != count)
    mgrt_comm_abort((std::string(call) + ": in and out sizes differ").c_str(),
                    3);
  int dest = static_cast<int>(r + offset),
      source = static_cast<int>(r - offset);
  if (rotate) {
    dest = ((dest % n) + n) % n;
    source = ((source % n) + n) % n;
  } else {
    if (dest < 0 || dest >= n)
      dest = -1;
    if (source < 0 || source >= n)
      source = -1;
  }
  fatal([&] {
    if (source < 0)
      g->localCopy(dst, src, count, MGRT_F32);
    mgrt_comm_sendrecv(g, src, count, dest, dst, count, source, MGRT_F32, 1);
  });
}

} // namespace mgrt::comm

using namespace mgrt::comm;

extern "C" {

void _mlir_ciface_mgrt_comm_all_reduce_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_all_reduce_f32";
  shardAllReduce(shardGroup({{g0, g1, g2, g3}, axes}, call), buf, op, call);
}

void _mlir_ciface_mgrt_comm_all_gather_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes) {
  const char *call = "mgrt_comm_all_gather_f32";
  shardAllGather(shardGroup({{g0, g1, g2, g3}, axes}, call), out, in, call);
}

void _mlir_ciface_mgrt_comm_reduce_scatter_f32(mgrt_memref_f32_1 *out,
                                               mgrt_memref_f32_1 *in,
                                               int64_t g0, int64_t g1,
                                               int64_t g2, int64_t g3,
                                               int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_reduce_scatter_f32";
  shardReduceScatter(shardGroup({{g0, g1, g2, g3}, axes}, call), out, in, op,
                     call);
}

int64_t _mlir_ciface_mgrt_comm_reduce_scatter_start_f32(
    mgrt_memref_f32_1 *out, mgrt_memref_f32_1 *in, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_reduce_scatter_start_f32";
  return shardReduceScatterStart(shardGroup({{g0, g1, g2, g3}, axes}, call),
                                 out, in, op, call);
}

int64_t _mlir_ciface_mgrt_comm_all_reduce_start_f32(mgrt_memref_f32_1 *buf,
                                                    int64_t g0, int64_t g1,
                                                    int64_t g2, int64_t g3,
                                                    int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_all_reduce_start_f32";
  return shardAllReduceStart(shardGroup({{g0, g1, g2, g3}, axes}, call), buf,
                             op, call);
}

int64_t _mlir_ciface_mgrt_comm_all_gather_start_f32(mgrt_memref_f32_1 *out,
                                                    mgrt_memref_f32_1 *in,
                                                    int64_t g0, int64_t g1,
                                                    int64_t g2, int64_t g3,
                                                    int64_t axes) {
  const char *call = "mgrt_comm_all_gather_start_f32";
  return shardAllGatherStart(shardGroup({{g0, g1, g2, g3}, axes}, call), out,
                             in, call);
}

void _mlir_ciface_mgrt_comm_wait_f32(mgrt_memref_f32_1 *, mgrt_memref_f32_1 *,
                                     int64_t request) {
  shardWait(request, "mgrt_comm_wait_f32");
}

void _mlir_ciface_mgrt_comm_all_to_all_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes) {
  const char *call = "mgrt_comm_all_to_all_f32";
  shardAllToAll(shardGroup({{g0, g1, g2, g3}, axes}, call), out, in, call);
}

void _mlir_ciface_mgrt_comm_all_slice_f32(mgrt_memref_f32_1 *out,
                                          mgrt_memref_f32_1 *in, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes) {
  const char *call = "mgrt_comm_all_slice_f32";
  shardAllSlice(shardGroup({{g0, g1, g2, g3}, axes}, call), out, in, call);
}

int64_t mgrt_comm_group_rank(int64_t g0, int64_t g1, int64_t g2, int64_t g3,
                             int64_t axes) {
  return shardGroup({{g0, g1, g2, g3}, axes}, "mgrt_comm_group_rank")->rank;
}

void _mlir_ciface_mgrt_comm_broadcast_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes, int64_t root) {
  const char *call = "mgrt_comm_broadcast_f32";
  shardBroadcast(shardGroup({{g0, g1, g2, g3}, axes}, call), buf, root, call);
}

void _mlir_ciface_mgrt_comm_send_f32(mgrt_memref_f32_1 *in, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t dest) {
  const char *call = "mgrt_comm_send_f32";
  shardSend(shardGroup({{g0, g1, g2, g3}, axes}, call), in, dest, call);
}

void _mlir_ciface_mgrt_comm_recv_f32(mgrt_memref_f32_1 *out, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t source) {
  const char *call = "mgrt_comm_recv_f32";
  shardRecv(shardGroup({{g0, g1, g2, g3}, axes}, call), out, source, call);
}

void _mlir_ciface_mgrt_comm_shift_f32(mgrt_memref_f32_1 *out,
                                      mgrt_memref_f32_1 *in, int64_t g0,
                                      int64_t g1, int64_t g2, int64_t g3,
                                      int64_t axes, int64_t offset,
                                      int64_t rotate) {
  const char *call = "mgrt_comm_shift_f32";
  shardShift(shardGroup({{g0, g1, g2, g3}, axes}, call), out, in, offset,
             rotate, call);
}

} // extern "C"
