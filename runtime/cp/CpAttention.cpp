//===- CpAttention.cpp - Context-parallel attention, all-gather variant ---===//
//
// The C entries of megagraph/RuntimeCp.h: argument checks and the row
// layout of the group, then either the all-gather variant (here: gather K
// and V, run the single-process kernel for the local queries against all
// keys, reduce-scatter dK / dV back to their owners) or the ring variant
// (CpRing.cpp) or the Ulysses variant (CpUlysses.cpp, which moves the
// bias and mask to heads). With the other two, the bias and mask rows of the
// local queries go to the kernel as they are; they never cross the network. So
// do the spatial entries' distance rows of the local queries (over all S keys)
// and the table: the kernels add table[distance] per score, and the backward's
// dtable is the local rows' part of the table gradient.
//
//===----------------------------------------------------------------------===//

#include "cp/CpCommon.h"

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"
#include "kernels/AttentionInternal.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mgrt::cp {

Buffer::Buffer(size_t floats)
    : data_(static_cast<float *>(mgrt_alloc(floats * sizeof(float)))) {
  if (!data_ && floats)
    comm::fail(MGRT_ERR_NOMEM, "mgrt_cp_attention", "out of memory (%zu bytes)",
               floats * sizeof(float));
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    o.data_ = nullptr;
  }
  return *this;
}

void Buffer::reset() {
  mgrt_free(data_);
  data_ = nullptr;
}

int gatherLayout(mgrt_comm_group *group, int64_t rows, Layout &l) {
  l.size = mgrt_comm_size(group);
  l.rank = mgrt_comm_rank(group);
  l.rows.assign(l.size, 0);
  if (int rc = mgrt_comm_all_gather(group, &rows, 1, l.rows.data(), nullptr,
                                    MGRT_I64))
    return rc;
  l.first.assign(l.size, 0);
  l.total = l.maxRows = 0;
  for (int r = 0; r < l.size; ++r) {
    l.first[r] = l.total;
    l.total += l.rows[r];
    l.maxRows = std::max(l.maxRows, l.rows[r]);
  }
  return MGRT_OK;
}

mgrt_memref_f32_3 desc3(float *data, int64_t d0, int64_t d1, int64_t d2) {
  mgrt_memref_f32_3 d{};
  d.allocated = d.aligned = data;
  d.sizes[0] = d0, d.sizes[1] = d1, d.sizes[2] = d2;
  d.strides[0] = d1 * d2, d.strides[1] = d2, d.strides[2] = 1;
  return d;
}

bool isContiguous(const mgrt_memref_f32_3 *d) {
  return (d->sizes[2] <= 1 || d->strides[2] == 1) &&
         (d->sizes[1] <= 1 || d->strides[1] == d->sizes[2]) &&
         (d->sizes[0] <= 1 || d->strides[0] == d->sizes[1] * d->sizes[2]);
}

void packRows(const mgrt_memref_f32_3 *src, float *dst) {
  const float *base = src->aligned + src->offset;
  for (int64_t i = 0; i < src->sizes[0]; ++i)
    for (int64_t j = 0; j < src->sizes[1]; ++j)
      for (int64_t c = 0; c < src->sizes[2]; ++c)
        *dst++ = base[i * src->strides[0] + j * src->strides[1] +
                      c * src->strides[2]];
}

void unpackRows(const float *src, mgrt_memref_f32_3 *dst) {
  float *base = dst->aligned + dst->offset;
  for (int64_t i = 0; i < dst->sizes[0]; ++i)
    for (int64_t j = 0; j < dst->sizes[1]; ++j)
      for (int64_t c = 0; c < dst->sizes[2]; ++c)
        base[i * dst->strides[0] + j * dst->strides[1] + c * dst->strides[2]] =
            *src++;
}

void zero3(mgrt_memref_f32_3 *d) {
  float *base = d->aligned + d->offset;
  for (int64_t i = 0; i < d->sizes[0]; ++i)
    for (int64_t j = 0; j < d->sizes[1]; ++j)
      for (int64_t c = 0; c < d->sizes[2]; ++c)
        base[i * d->strides[0] + j * d->strides[1] + c * d->strides[2]] = 0.f;
}

void zero2(mgrt_memref_f32_2 *d) {
  float *base = d->aligned + d->offset;
  for (int64_t a = 0; a < d->sizes[0]; ++a)
    for (int64_t b = 0; b < d->sizes[1]; ++b)
      base[a * d->strides[0] + b * d->strides[1]] = 0.f;
}

void zero4(mgrt_memref_f32_4 *d) {
  float *base = d->aligned + d->offset;
  for (int64_t a = 0; a < d->sizes[0]; ++a)
    for (int64_t b = 0; b < d->sizes[1]; ++b)
      for (int64_t i = 0; i < d->sizes[2]; ++i)
        for (int64_t j = 0; j < d->sizes[3]; ++j)
          base[a * d->strides[0] + b * d->strides[1] + i * d->strides[2] +
               j * d->strides[3]] = 0.f;
}

bool overlapEnabled() {
  static const bool on = [] {
    const char *s = std::getenv("MEGAGRAPH_CP_OVERLAP");
    if (s && *s)
      return std::strcmp(s, "0") != 0;
    return rankCores() > numThreads();
  }();
  return on;
}

} // namespace mgrt::cp

namespace {

using namespace mgrt;
using namespace mgrt::cp;

constexpr const char *kFwd = "mgrt_cp_attention_f32";
constexpr const char *kBwd = "mgrt_cp_attention_bwd_f32";
constexpr const char *kSpatialFwd = "mgrt_cp_attention_spatial_f32";
constexpr const char *kSpatialBwd = "mgrt_cp_attention_spatial_bwd_f32";

/// Checks what the kernels cannot see (the group, the mode, the row blocks
/// of q, k, v and the key dimension of bias / mask / dbias against the
/// global S) and fills the layout.
int prepare(const char *call, mgrt_comm_group *group, int mode,
            mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
            const mgrt_memref_f32_4 *bias, const mgrt_memref_i8_4 *mask,
            const mgrt_memref_f32_4 *dbias, int64_t numHeads, int64_t flags,
            Layout &layout) {
  if (!group || mgrt_comm_backend_of(group) != MGRT_COMM_MPI)
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "needs an MPI group (host buffers)");
  if (mode != MGRT_CP_ALLGATHER && mode != MGRT_CP_RING &&
      mode != MGRT_CP_ULYSSES)
    return comm::fail(MGRT_ERR_ARGUMENT, call, "unknown mode %d", mode);
  if (!q || !k || !v)
    return comm::fail(MGRT_ERR_ARGUMENT, call, "null operand descriptor");
  if (numHeads <= 0 || q->sizes[2] % numHeads || v->sizes[2] % numHeads)
    return comm::fail(
        MGRT_ERR_ARGUMENT, call, "%lld heads do not divide D=%lld and Dv=%lld",
        (long long)numHeads, (long long)q->sizes[2], (long long)v->sizes[2]);
  if (k->sizes[0] != q->sizes[0] || v->sizes[0] != q->sizes[0] ||
      k->sizes[1] != q->sizes[1] || v->sizes[1] != q->sizes[1] ||
      k->sizes[2] != q->sizes[2])
    return comm::fail(
        MGRT_ERR_ARGUMENT, call,
        "q [%lld,%lld,%lld], k [%lld,%lld,%lld], v "
        "[%lld,%lld,%lld] must hold the same rows",
        (long long)q->sizes[0], (long long)q->sizes[1], (long long)q->sizes[2],
        (long long)k->sizes[0], (long long)k->sizes[1], (long long)k->sizes[2],
        (long long)v->sizes[0], (long long)v->sizes[1], (long long)v->sizes[2]);
  if (int rc = gatherLayout(group, q->sizes[1], layout))
    return rc;
  const int64_t S = layout.total;
  auto keysOk = [&](int64_t n) { return n == S || n == 1; };
  if ((flags & MGRT_ATTENTION_BIAS) && bias && !keysOk(bias->sizes[3]))
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "bias key dimension is %lld, expected 1 or S=%lld",
                      (long long)bias->sizes[3], (long long)S);
  if ((flags & MGRT_ATTENTION_MASK) && mask && !keysOk(mask->sizes[3]))
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "mask key dimension is %lld, expected 1 or S=%lld",
                      (long long)mask->sizes[3], (long long)S);
  if ((flags & MGRT_ATTENTION_DBIAS) && dbias && !keysOk(dbias->sizes[3]))
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "dbias key dimension is %lld, expected 1 or S=%lld",
                      (long long)dbias->sizes[3], (long long)S);
  return MGRT_OK;
}

/// All-gathers x [B,S_r,d] into the contiguous [B,S,d] array `full`, one
/// gather per sequence of the batch.
int gatherKeys(mgrt_comm_group *group, const Layout &l, mgrt_memref_f32_3 *x,
               float *full) {
  const int64_t B = x->sizes[0], Sr = x->sizes[1], d = x->sizes[2];
  Buffer packed;
  const float *local = x->aligned + x->offset;
  if (!isContiguous(x)) {
    packed = Buffer(B * Sr * d);
    packRows(x, packed.data());
    local = packed.data();
  }
  std::vector<int64_t> counts(l.size);
  for (int r = 0; r < l.size; ++r)
    counts[r] = l.rows[r] * d;
  for (int64_t b = 0; b < B; ++b)
    if (int rc = mgrt_comm_all_gather(group, local + b * Sr * d, Sr * d,
                                      full + b * l.total * d, counts.data(),
                                      MGRT_F32))
      return rc;
  return MGRT_OK;
}

/// Sums the [B,S,d] partial gradients `full` over the group and leaves this
/// rank's rows in x [B,S_r,d].
int scatterKeys(mgrt_comm_group *group, const Layout &l, const float *full,
                mgrt_memref_f32_3 *x) {
  const int64_t B = x->sizes[0], Sr = x->sizes[1], d = x->sizes[2];
  Buffer packed;
  float *local = x->aligned + x->offset;
  const bool direct = isContiguous(x);
  if (!direct) {
    packed = Buffer(B * Sr * d);
    local = packed.data();
  }
  std::vector<int64_t> counts(l.size);
  for (int r = 0; r < l.size; ++r)
    counts[r] = l.rows[r] * d;
  for (int64_t b = 0; b < B; ++b)
    if (int rc = mgrt_comm_reduce_scatter(
            group, full + b * l.total * d, local + b * Sr * d, Sr * d,
            counts.data(), MGRT_F32, MGRT_COMM_SUM))
      return rc;
  if (!direct)
    unpackRows(local, x);
  return MGRT_OK;
}

int allGatherForward(mgrt_comm_group *group, const Layout &l,
                     mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                     mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                     mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                     int64_t numHeads, float scale, int64_t flags,
                     const SpatialBias *spatial) {
  const int64_t B = q->sizes[0], S = l.total, D = k->sizes[2], Dv = v->sizes[2];
  Buffer kf(B * S * D), vf(B * S * Dv);
  if (int rc = gatherKeys(group, l, k, kf.data()))
    return rc;
  if (int rc = gatherKeys(group, l, v, vf.data()))
    return rc;
  mgrt_memref_f32_3 kd = desc3(kf.data(), B, S, D),
                    vd = desc3(vf.data(), B, S, Dv);
  if (S > 0)
    attentionForward(out, q, &kd, &vd, bias, mask, numHeads, scale, flags,
                     nullptr, spatial);
  return MGRT_OK;
}

int allGatherBackward(mgrt_comm_group *group, const Layout &l,
                      mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                      mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                      mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                      mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                      mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                      int64_t numHeads, float scale, int64_t flags,
                      const SpatialBias *spatial, mgrt_memref_f32_2 *dtable) {
  const int64_t B = q->sizes[0], S = l.total, D = k->sizes[2], Dv = v->sizes[2];
  Buffer kf(B * S * D), vf(B * S * Dv);
  if (int rc = gatherKeys(group, l, k, kf.data()))
    return rc;
  if (int rc = gatherKeys(group, l, v, vf.data()))
    return rc;
  // dK, dV of all S keys from the local queries: partial sums.
  Buffer dkf(B * S * D), dvf(B * S * Dv);
  mgrt_memref_f32_3 kd = desc3(kf.data(), B, S, D),
                    vd = desc3(vf.data(), B, S, Dv),
                    dkd = desc3(dkf.data(), B, S, D),
                    dvd = desc3(dvf.data(), B, S, Dv);
  attentionBackward(dq, &dkd, &dvd, dbias, dout, q, &kd, &vd, bias, mask,
                    numHeads, scale, flags, nullptr, nullptr, false, spatial,
                    dtable);
  kf.reset(), vf.reset();
  if (int rc = scatterKeys(group, l, dkf.data(), dk))
    return rc;
  return scatterKeys(group, l, dvf.data(), dv);
}

/// The forward of both entries: `distance` and `table` both null (no
/// spatial bias) or both given.
int cpForward(const char *call, mgrt_comm_group *group, int mode,
              mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
              mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
              mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
              const mgrt_memref_i16_3 *distance, const mgrt_memref_f32_2 *table,
              int64_t numHeads, float scale, int64_t flags) {
  Layout l;
  if (!out)
    return comm::fail(MGRT_ERR_ARGUMENT, call, "null operand descriptor");
  if (int rc = prepare(call, group, mode, q, k, v, bias, mask, nullptr,
                       numHeads, flags, l))
    return rc;
  if (mode == MGRT_CP_ULYSSES)
    return ulyssesForward(call, group, l, out, q, k, v, bias, mask, distance,
                          table, numHeads, scale, flags);
  // The local rows' distances over all S keys; each key block reads its
  // columns.
  std::vector<float> tableT;
  SpatialBias spatial;
  if (distance || table)
    spatial = makeSpatialBias(distance, table, q->sizes[0], q->sizes[1],
                              l.total, numHeads, call, tableT);
  const SpatialBias *sp = spatial ? &spatial : nullptr;
  if (mode == MGRT_CP_ALLGATHER)
    return allGatherForward(group, l, out, q, k, v, bias, mask, numHeads, scale,
                            flags, sp);
  Buffer lse(q->sizes[0] * numHeads * q->sizes[1]);
  return ringForward(group, l, out, q, k, v, bias, mask, numHeads, scale, flags,
                     lse.data(), sp);
}

/// The backward of both entries; `dtable` with the spatial operands.
int cpBackward(const char *call, mgrt_comm_group *group, int mode,
               mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
               mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
               mgrt_memref_f32_2 *dtable, mgrt_memref_f32_3 *dout,
               mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
               mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
               const mgrt_memref_i16_3 *distance,
               const mgrt_memref_f32_2 *table, int64_t numHeads, float scale,
               int64_t flags) {
  Layout l;
  if (!dq || !dk || !dv || !dout)
    return comm::fail(MGRT_ERR_ARGUMENT, call, "null operand descriptor");
  if ((distance || table) && !dtable)
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "a spatial bias needs its dtable");
  if (int rc = prepare(call, group, mode, q, k, v, bias, mask, dbias, numHeads,
                       flags, l))
    return rc;
  if (mode == MGRT_CP_ULYSSES)
    return ulyssesBackward(call, group, l, dq, dk, dv, dbias, dtable, dout, q,
                           k, v, bias, mask, distance, table, numHeads, scale,
                           flags);
  std::vector<float> tableT;
  SpatialBias spatial;
  if (distance || table)
    spatial = makeSpatialBias(distance, table, q->sizes[0], q->sizes[1],
                              l.total, numHeads, call, tableT);
  const SpatialBias *sp = spatial ? &spatial : nullptr;
  mgrt_memref_f32_2 *dt = sp ? dtable : nullptr;
  if (dtable && !dt) // no local rows (no distance data): no contribution
    zero2(dtable);
  if (mode == MGRT_CP_ALLGATHER)
    return allGatherBackward(group, l, dq, dk, dv, dbias, dout, q, k, v, bias,
                             mask, numHeads, scale, flags, sp, dt);
  return ringBackward(group, l, dq, dk, dv, dbias, dout, q, k, v, bias, mask,
                      numHeads, scale, flags, sp, dt);
}

} // namespace

extern "C" int mgrt_cp_attention_f32(mgrt_comm_group *group, int mode,
                                     mgrt_memref_f32_3 *out,
                                     mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                                     mgrt_memref_f32_3 *v,
                                     mgrt_memref_f32_4 *bias,
                                     mgrt_memref_i8_4 *mask, int64_t numHeads,
                                     float scale, int64_t flags) {
  return cpForward(kFwd, group, mode, out, q, k, v, bias, mask, nullptr,
                   nullptr, numHeads, scale, flags);
}

extern "C" int mgrt_cp_attention_bwd_f32(
    mgrt_comm_group *group, int mode, mgrt_memref_f32_3 *dq,
    mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags) {
  return cpBackward(kBwd, group, mode, dq, dk, dv, dbias, nullptr, dout, q, k,
                    v, bias, mask, nullptr, nullptr, numHeads, scale, flags);
}

extern "C" int mgrt_cp_attention_spatial_f32(
    mgrt_comm_group *group, int mode, mgrt_memref_f32_3 *out,
    mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
    mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table, int64_t numHeads,
    float scale, int64_t flags) {
  if (!distance || !table)
    return comm::fail(MGRT_ERR_ARGUMENT, kSpatialFwd,
                      "null spatial distance or table");
  return cpForward(kSpatialFwd, group, mode, out, q, k, v, bias, mask, distance,
                   table, numHeads, scale, flags);
}

extern "C" int mgrt_cp_attention_spatial_bwd_f32(
    mgrt_comm_group *group, int mode, mgrt_memref_f32_3 *dq,
    mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
    mgrt_memref_f32_2 *dtable, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, mgrt_memref_i16_3 *distance,
    mgrt_memref_f32_2 *table, int64_t numHeads, float scale, int64_t flags) {
  if (!distance || !table)
    return comm::fail(MGRT_ERR_ARGUMENT, kSpatialBwd,
                      "null spatial distance or table");
  return cpBackward(kSpatialBwd, group, mode, dq, dk, dv, dbias, dtable, dout,
                    q, k, v, bias, mask, distance, table, numHeads, scale,
                    flags);
}

namespace {

/// Compiled code with uneven blocks (`seq` > 0): the operands hold
/// ceil(seq / C) rows, of which this rank's block (mgrt_cp_block_rows) is a
/// prefix. `Padded` narrows the descriptors to the block for the call and
/// zeroes the padding rows of the results after it.
struct Padded {
  int64_t rows = -1; // the block's rows; -1: no padding
  int64_t all = 0;   // the operands' rows

  Padded(mgrt_comm_group *group, mgrt_memref_f32_3 *q, int64_t seq) {
    if (seq <= 0 || !group || !q)
      return;
    const int64_t C = mgrt_comm_size(group), c = mgrt_comm_rank(group);
    all = q->sizes[1];
    const int64_t n = mgrt_cp_block_rows(seq, C, c);
    if (n < all)
      rows = n;
  }
  /// Rows [rows, all) of d are padding: narrow it (3-D: dim 1, q and its
  /// kin and the distances; 4-D: dim 2, unless broadcast).
  template <typename D3> void narrow(D3 *d) const {
    if (rows >= 0 && d && d->sizes[1] == all)
      d->sizes[1] = rows;
  }
  template <typename D4> void narrow4(D4 *d) const {
    if (rows >= 0 && d && d->sizes[2] == all)
      d->sizes[2] = rows;
  }
  /// Zeroes the padding rows of a result narrowed by narrow().
  void zeroPadding(mgrt_memref_f32_3 d) const {
    if (rows < 0 || d.sizes[1] != rows)
      return;
    d.offset += rows * d.strides[1];
    d.sizes[1] = all - rows;
    zero3(&d);
  }
  void zeroPadding4(mgrt_memref_f32_4 d) const {
    if (rows < 0 || d.sizes[2] != rows)
      return;
    d.offset += rows * d.strides[2];
    d.sizes[2] = all - rows;
    zero4(&d);
  }
};

/// The compiled-code forward of both entries (spatial when `distance` is
/// not null): the group of the grid axes, the padding of uneven blocks.
void compiledForward(const char *call, mgrt_memref_f32_3 *out,
                     mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                     mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
                     mgrt_memref_i8_4 *mask, mgrt_memref_i16_3 *distance,
                     mgrt_memref_f32_2 *table, int64_t numHeads, float scale,
                     int64_t flags, int64_t g0, int64_t g1, int64_t g2,
                     int64_t g3, int64_t axes, int64_t mode, int64_t seq) {
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, call);
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  const Padded pad(group, q, seq);
  mgrt_memref_f32_3 o = *out, qq = *q, kk = *k, vv = *v;
  mgrt_memref_f32_4 b{}, *bp = nullptr;
  mgrt_memref_i8_4 m{}, *mp = nullptr;
  mgrt_memref_i16_3 d{}, *dp = nullptr;
  if (bias)
    b = *bias, bp = &b;
  if (mask)
    m = *mask, mp = &m;
  if (distance)
    d = *distance, dp = &d;
  for (mgrt_memref_f32_3 *x : {&o, &qq, &kk, &vv})
    pad.narrow(x);
  pad.narrow4(bp);
  pad.narrow4(mp);
  pad.narrow(dp);
  cpForward(call, group, static_cast<int>(mode), &o, &qq, &kk, &vv, bp, mp, dp,
            dp ? table : nullptr, numHeads, scale, flags);
  pad.zeroPadding(o);
  mgrt_comm_set_error_mode(prev);
}

/// The compiled-code backward of both entries (`dtable`, `distance` and
/// `table` null without a spatial bias).
void compiledBackward(const char *call, mgrt_memref_f32_3 *dq,
                      mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
                      mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
                      mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                      mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                      mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                      mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table,
                      int64_t numHeads, float scale, int64_t flags, int64_t g0,
                      int64_t g1, int64_t g2, int64_t g3, int64_t axes,
                      int64_t mode, int64_t seq) {
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, call);
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  const Padded pad(group, q, seq);
  mgrt_memref_f32_3 ddq = *dq, ddk = *dk, ddv = *dv, ddo = *dout, qq = *q,
                    kk = *k, vv = *v;
  mgrt_memref_f32_4 db{}, *dbp = nullptr, b{}, *bp = nullptr;
  mgrt_memref_i8_4 m{}, *mp = nullptr;
  mgrt_memref_i16_3 d{}, *dp = nullptr;
  if (dbias)
    db = *dbias, dbp = &db;
  if (bias)
    b = *bias, bp = &b;
  if (mask)
    m = *mask, mp = &m;
  if (distance)
    d = *distance, dp = &d;
  for (mgrt_memref_f32_3 *x : {&ddq, &ddk, &ddv, &ddo, &qq, &kk, &vv})
    pad.narrow(x);
  pad.narrow4(dbp);
  pad.narrow4(bp);
  pad.narrow4(mp);
  pad.narrow(dp);
  cpBackward(call, group, static_cast<int>(mode), &ddq, &ddk, &ddv, dbp,
             dp ? dtable : nullptr, &ddo, &qq, &kk, &vv, bp, mp, dp,
             dp ? table : nullptr, numHeads, scale, flags);
  for (const mgrt_memref_f32_3 &x : {ddq, ddk, ddv})
    pad.zeroPadding(x);
  if (dbp && (flags & MGRT_ATTENTION_DBIAS))
    pad.zeroPadding4(db);
  mgrt_comm_set_error_mode(prev);
}

} // namespace

extern "C" void _mlir_ciface_mgrt_cp_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t mode, int64_t seq) {
  compiledForward(kFwd, out, q, k, v, bias, mask, nullptr, nullptr, numHeads,
                  scale, flags, g0, g1, g2, g3, axes, mode, seq);
}

extern "C" void _mlir_ciface_mgrt_cp_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes, int64_t mode,
    int64_t seq) {
  compiledBackward(kBwd, dq, dk, dv, dbias, nullptr, dout, q, k, v, bias, mask,
                   nullptr, nullptr, numHeads, scale, flags, g0, g1, g2, g3,
                   axes, mode, seq);
}

extern "C" void _mlir_ciface_mgrt_cp_attention_spatial_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table, int64_t numHeads,
    float scale, int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t mode, int64_t seq) {
  MGRT_CHECK(distance && table, kSpatialFwd, "null spatial distance or table");
  compiledForward(kSpatialFwd, out, q, k, v, bias, mask, distance, table,
                  numHeads, scale, flags, g0, g1, g2, g3, axes, mode, seq);
}

extern "C" void _mlir_ciface_mgrt_cp_attention_spatial_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    mgrt_memref_i16_3 *distance, mgrt_memref_f32_2 *table, int64_t numHeads,
    float scale, int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes, int64_t mode, int64_t seq) {
  MGRT_CHECK(distance && table && dtable, kSpatialBwd,
             "null spatial distance, table or dtable");
  compiledBackward(kSpatialBwd, dq, dk, dv, dbias, dtable, dout, q, k, v, bias,
                   mask, distance, table, numHeads, scale, flags, g0, g1, g2,
                   g3, axes, mode, seq);
}
