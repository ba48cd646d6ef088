//===- ShardCalls.cpp - Collectives called from compiled code -------------===//
//
// The targets of gt-shard-to-runtime: one function per shard collective, on
// f32 rank-1 memrefs (the pass flattens tensors), the grid passed as four
// sizes and an axes bit mask. Groups are created on first use (MPI is
// initialized then if the driver has not) and cached per (grid, axes).
// There is no error channel back into compiled code: every failure ends the
// job (mgrt_comm_abort).
//
//===----------------------------------------------------------------------===//

#include "comm/CommGroup.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace mgrt::comm {

mgrt_comm_group *gridGroup(int64_t g0, int64_t g1, int64_t g2, int64_t g3,
                           int64_t axes, const char *call) {
  using Key = std::vector<int64_t>;
  static std::map<Key, mgrt_comm_group *> cache;
  Key key = {g0, g1, g2, g3, axes};
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  if (!mgrt_comm_initialized())
    mgrt_comm_init(nullptr, nullptr);
  int64_t shape[4] = {g0, g1, g2, g3};
  const int64_t n = g0 * g1 * g2 * g3;
  const int world = mgrt_comm_size(mgrt_comm_world());
  if (n != world) {
    std::string msg = std::string(call) +
                      ": the model was compiled for a "
                      "grid of " +
                      std::to_string(n) + " processes (" + std::to_string(g0) +
                      "x" + std::to_string(g1) + "x" + std::to_string(g2) +
                      "x" + std::to_string(g3) + ") but the job has " +
                      std::to_string(world) + "; launch it with mpirun -np " +
                      std::to_string(n);
    mgrt_comm_abort(msg.c_str(), 3);
  }
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  mgrt_comm_group *g = nullptr;
  mgrt_comm_grid_group(4, shape, static_cast<uint32_t>(axes), &g);
  mgrt_comm_set_error_mode(prev);
  cache[key] = g;
  return g;
}

} // namespace mgrt::comm

namespace {

using mgrt::comm::gridGroup;

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

extern "C" {

void _mlir_ciface_mgrt_comm_all_reduce_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_all_reduce_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  float *p = dataOf(buf, call);
  fatal([&] {
    mgrt_comm_all_reduce(g, p, p, buf->sizes[0], MGRT_F32,
                         static_cast<int>(op));
  });
}

void _mlir_ciface_mgrt_comm_all_gather_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes) {
  const char *call = "mgrt_comm_all_gather_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  if (out->sizes[0] != in->sizes[0] * g->size)
    mgrt_comm_abort("mgrt_comm_all_gather_f32: out must hold size x in", 3);
  fatal([&] {
    mgrt_comm_all_gather(g, dataOf(in, call), in->sizes[0], dataOf(out, call),
                         nullptr, MGRT_F32);
  });
}

void _mlir_ciface_mgrt_comm_reduce_scatter_f32(mgrt_memref_f32_1 *out,
                                               mgrt_memref_f32_1 *in,
                                               int64_t g0, int64_t g1,
                                               int64_t g2, int64_t g3,
                                               int64_t axes, int64_t op) {
  const char *call = "mgrt_comm_reduce_scatter_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  if (in->sizes[0] != out->sizes[0] * g->size)
    mgrt_comm_abort("mgrt_comm_reduce_scatter_f32: in must hold size x out", 3);
  fatal([&] {
    mgrt_comm_reduce_scatter(g, dataOf(in, call), dataOf(out, call),
                             out->sizes[0], nullptr, MGRT_F32,
                             static_cast<int>(op));
  });
}

void _mlir_ciface_mgrt_comm_all_to_all_f32(mgrt_memref_f32_1 *out,
                                           mgrt_memref_f32_1 *in, int64_t g0,
                                           int64_t g1, int64_t g2, int64_t g3,
                                           int64_t axes) {
  const char *call = "mgrt_comm_all_to_all_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  if (in->sizes[0] != out->sizes[0] || in->sizes[0] % g->size)
    mgrt_comm_abort("mgrt_comm_all_to_all_f32: in and out must have the same "
                    "size, a multiple of the group size",
                    3);
  fatal([&] {
    mgrt_comm_all_to_all(g, dataOf(in, call), nullptr, dataOf(out, call),
                         nullptr, in->sizes[0] / g->size, MGRT_F32);
  });
}

void _mlir_ciface_mgrt_comm_all_slice_f32(mgrt_memref_f32_1 *out,
                                          mgrt_memref_f32_1 *in, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes) {
  const char *call = "mgrt_comm_all_slice_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  const int64_t n = out->sizes[0];
  if (in->sizes[0] != n * g->size)
    mgrt_comm_abort("mgrt_comm_all_slice_f32: in must hold size x out", 3);
  std::memcpy(dataOf(out, call), dataOf(in, call) + g->rank * n,
              n * sizeof(float));
}

int64_t mgrt_comm_group_rank(int64_t g0, int64_t g1, int64_t g2, int64_t g3,
                             int64_t axes) {
  return gridGroup(g0, g1, g2, g3, axes, "mgrt_comm_group_rank")->rank;
}

void _mlir_ciface_mgrt_comm_broadcast_f32(mgrt_memref_f32_1 *buf, int64_t g0,
                                          int64_t g1, int64_t g2, int64_t g3,
                                          int64_t axes, int64_t root) {
  const char *call = "mgrt_comm_broadcast_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  fatal([&] {
    mgrt_comm_broadcast(g, dataOf(buf, call), buf->sizes[0], MGRT_F32,
                        static_cast<int>(root));
  });
}

void _mlir_ciface_mgrt_comm_send_f32(mgrt_memref_f32_1 *in, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t dest) {
  const char *call = "mgrt_comm_send_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  fatal([&] {
    mgrt_comm_send(g, dataOf(in, call), in->sizes[0], MGRT_F32,
                   static_cast<int>(dest), 0);
  });
}

void _mlir_ciface_mgrt_comm_recv_f32(mgrt_memref_f32_1 *out, int64_t g0,
                                     int64_t g1, int64_t g2, int64_t g3,
                                     int64_t axes, int64_t source) {
  const char *call = "mgrt_comm_recv_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  fatal([&] {
    mgrt_comm_recv(g, dataOf(out, call), out->sizes[0], MGRT_F32,
                   static_cast<int>(source), 0);
  });
}

void _mlir_ciface_mgrt_comm_shift_f32(mgrt_memref_f32_1 *out,
                                      mgrt_memref_f32_1 *in, int64_t g0,
                                      int64_t g1, int64_t g2, int64_t g3,
                                      int64_t axes, int64_t offset,
                                      int64_t rotate) {
  const char *call = "mgrt_comm_shift_f32";
  mgrt_comm_group *g = gridGroup(g0, g1, g2, g3, axes, call);
  const int n = g->size, r = g->rank;
  const int64_t count = in->sizes[0];
  float *src = dataOf(in, call), *dst = dataOf(out, call);
  if (out->sizes[0] != count)
    mgrt_comm_abort("mgrt_comm_shift_f32: in and out sizes differ", 3);
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
  if (source < 0)
    std::memcpy(dst, src, count * sizeof(float));
  fatal([&] {
    mgrt_comm_sendrecv(g, src, count, dest, dst, count, source, MGRT_F32, 1);
  });
}

} // extern "C"
