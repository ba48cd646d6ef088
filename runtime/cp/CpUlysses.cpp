//===- CpUlysses.cpp - Context-parallel attention, Ulysses variant --------===//
//
// DeepSpeed-Ulysses: rank c of the C ranks of the group holds S_c rows of
// every head; one all-to-all per operand moves q, k, v to all S rows of
// the H / C heads of rank c (head group c: heads [c H/C, (c+1) H/C)), the
// rank runs the single-process attention kernel on its heads, and one
// all-to-all moves the output back to rows. The backward mirrors it: q, k,
// v and dO to heads, the attention backward, dQ / dK / dV back to rows.
//
// Unlike the all-gather and ring variants, the [B,H,S_c,S] bias and mask
// rows of the local queries are not enough: the rank needs all S query
// rows of its heads, so they are moved to heads too every call (the cost
// TorchGT pays), and dbias goes back to rows. Operands broadcast over the
// heads (size 1) reach every rank whole; their gradients are summed over
// the head groups. Graphormer's spatial bias read in place needs only the
// int16 distance rows of all S queries (all-gathered once per step while
// they stay the same, the table is replicated): the rank's table gradient
// covers its heads' columns and the others are zero, a per-rank partial that
// the dp x cp all-reduce of the replicated parameters sums.
//
//===----------------------------------------------------------------------===//

#include "cp/CpCommon.h"

#include "comm/CommGroup.h"
#include "kernels/AttentionInternal.h"

#include <cstring>
#include <mutex>
#include <type_traits>

namespace mgrt::cp {
namespace {

/// A strided 4-D view [n0, n1, n2, n3] of elements T.
template <typename T> struct View4 {
  T *base = nullptr;
  int64_t n[4] = {1, 1, 1, 1}, s[4] = {0, 0, 0, 0};
  T &at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return base[a * s[0] + b * s[1] + c * s[2] + d * s[3]];
  }
};

/// A tracked (mgrt_alloc) zeroed array of T, freed when it goes out of
/// scope, so mgrt_peak_bytes counts what Ulysses moves through.
template <typename T> class Array {
public:
  Array() = default;
  explicit Array(size_t n) { assign(n); }
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;
  ~Array() { mgrt_free(data_); }
  /// `n` zero elements (the old ones are freed).
  void assign(size_t n) {
    mgrt_free(data_);
    data_ = static_cast<T *>(mgrt_alloc(n * sizeof(T)));
    if (!data_ && n)
      comm::fail(MGRT_ERR_NOMEM, "mgrt_cp_attention",
                 "out of memory (%zu bytes)", n * sizeof(T));
    else if (n)
      std::memset(data_, 0, n * sizeof(T));
  }
  T *data() const { return data_; }

private:
  T *data_ = nullptr;
};

/// x [B, R, H * w] seen as [B, H, R, w].
View4<float> headView(const mgrt_memref_f32_3 *x, int64_t H) {
  View4<float> v;
  v.base = x->aligned + x->offset;
  const int64_t w = x->sizes[2] / H;
  v.n[0] = x->sizes[0], v.n[1] = H, v.n[2] = x->sizes[1], v.n[3] = w;
  v.s[0] = x->strides[0], v.s[1] = w * x->strides[2], v.s[2] = x->strides[1],
  v.s[3] = x->strides[2];
  return v;
}

/// A bias, mask or dbias descriptor as a view.
template <typename T, typename Desc> View4<T> view4(const Desc *d) {
  View4<T> v;
  v.base = d->aligned + d->offset;
  for (int i = 0; i < 4; ++i)
    v.n[i] = d->sizes[i], v.s[i] = d->strides[i];
  return v;
}

/// Whether a bias, mask or dbias query dimension of `n` holds this rank's
/// rows (else it is 1, broadcast). Decided alike on every rank: with at
/// most one row per rank, a dimension of 1 is read as rows (the same
/// values either way).
bool queryRows(const Layout &l, int64_t n) {
  return !(n == 1 && l.maxRows > 1);
}

/// A contiguous [B|1, H|1, R|1, K] descriptor over `data`.
template <typename Desc, typename T>
Desc contiguous4(T *data, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
  Desc d{};
  d.allocated = d.aligned = data;
  d.sizes[0] = n0, d.sizes[1] = n1, d.sizes[2] = n2, d.sizes[3] = n3;
  d.strides[3] = 1, d.strides[2] = n3, d.strides[1] = n2 * n3,
  d.strides[0] = n1 * n2 * n3;
  return d;
}

/// The comm dtype and elements per T (int16 travels as bytes).
template <typename T> std::pair<int, int64_t> wire() {
  if constexpr (std::is_same_v<T, float>)
    return {MGRT_F32, 1};
  else if constexpr (std::is_same_v<T, int8_t>)
    return {MGRT_I8, 1};
  else
    return {MGRT_U8, static_cast<int64_t>(sizeof(T))};
}

/// Rows to heads by one all-to-all. `src` is this rank's rows [n0, n1, R,
/// n3] of every head (`split`: n1 = H heads, head group c goes to rank c;
/// otherwise n1 = 1 and every rank gets the whole), `dst` [n0, n1 / C or
/// n1, S, n3] all rows of this rank's heads (any strides).
template <typename T>
int toHeads(mgrt_comm_group *group, const Layout &l, const View4<T> &src,
            bool split, const View4<T> &dst) {
  const int C = l.size;
  const int64_t n0 = src.n[0], R = src.n[2], n3 = src.n[3];
  const int64_t hl = split ? src.n[1] / C : src.n[1];
  const int64_t piece = n0 * hl * R * n3;
  Array<T> send(piece * C), recv(n0 * hl * l.total * n3);
  T *p = send.data();
  for (int c = 0; c < C; ++c)
    for (int64_t a = 0; a < n0; ++a)
      for (int64_t h = 0; h < hl; ++h)
        for (int64_t i = 0; i < R; ++i)
          for (int64_t j = 0; j < n3; ++j)
            *p++ = src.at(a, split ? c * hl + h : h, i, j);
  auto [dtype, per] = wire<T>();
  std::vector<int64_t> sendCounts(C, piece * per), recvCounts(C);
  for (int r = 0; r < C; ++r)
    recvCounts[r] = n0 * hl * l.rows[r] * n3 * per;
  if (int rc = mgrt_comm_all_to_all(group, send.data(), sendCounts.data(),
                                    recv.data(), recvCounts.data(), 0, dtype))
    return rc;
  const T *q = recv.data();
  for (int r = 0; r < C; ++r)
    for (int64_t a = 0; a < n0; ++a)
      for (int64_t h = 0; h < hl; ++h)
        for (int64_t i = 0; i < l.rows[r]; ++i)
          for (int64_t j = 0; j < n3; ++j)
            dst.at(a, h, l.first[r] + i, j) = *q++;
  return MGRT_OK;
}

/// Heads to rows, the inverse of toHeads: `src` [n0, hl, S, n3] all rows of
/// this rank's heads, `dst` [n0, n1, R, n3] this rank's rows; `split`: head
/// group c of dst comes from rank c; otherwise (n1 = hl = 1) dst is the sum
/// over the ranks' pieces.
int toRows(mgrt_comm_group *group, const Layout &l, const View4<float> &src,
           bool split, const View4<float> &dst) {
  const int C = l.size;
  const int64_t n0 = src.n[0], hl = src.n[1], n3 = src.n[3];
  const int64_t R = l.rows[l.rank], piece = n0 * hl * R * n3;
  Array<float> send(n0 * hl * l.total * n3), recv(piece * C);
  float *p = send.data();
  std::vector<int64_t> sendCounts(C), recvCounts(C, piece);
  for (int r = 0; r < C; ++r) {
    sendCounts[r] = n0 * hl * l.rows[r] * n3;
    for (int64_t a = 0; a < n0; ++a)
      for (int64_t h = 0; h < hl; ++h)
        for (int64_t i = 0; i < l.rows[r]; ++i)
          for (int64_t j = 0; j < n3; ++j)
            *p++ = src.at(a, h, l.first[r] + i, j);
  }
  if (int rc =
          mgrt_comm_all_to_all(group, send.data(), sendCounts.data(),
                               recv.data(), recvCounts.data(), 0, MGRT_F32))
    return rc;
  const float *q = recv.data();
  for (int c = 0; c < C; ++c)
    for (int64_t a = 0; a < n0; ++a)
      for (int64_t h = 0; h < hl; ++h)
        for (int64_t i = 0; i < R; ++i)
          for (int64_t j = 0; j < n3; ++j) {
            float &d = dst.at(a, split ? c * hl + h : h, i, j);
            d = (split || c == 0) ? *q : d + *q;
            ++q;
          }
  return MGRT_OK;
}

/// q, k, v or dO [B, R, H w] to the contiguous [B, S, (H / C) w] of this
/// rank's heads in `full`; returns its descriptor.
int activationToHeads(mgrt_comm_group *group, const Layout &l,
                      const mgrt_memref_f32_3 *x, int64_t H, Buffer &full,
                      mgrt_memref_f32_3 &d) {
  const int64_t B = x->sizes[0], w = x->sizes[2] / H, hl = H / l.size;
  full = Buffer(B * l.total * hl * w);
  d = desc3(full.data(), B, l.total, hl * w);
  return toHeads(group, l, headView(x, H), /*split=*/true, headView(&d, hl));
}

/// A bias or mask [Bb, H|1, R|1, K] moved to heads: [Bb, H/C|1, S|1, K]
/// (a query dimension of 1, broadcast, stays local). `data` holds it.
template <typename T, typename Desc>
int maskToHeads(mgrt_comm_group *group, const Layout &l, const Desc *x,
                int64_t H, Array<T> &data, Desc &d) {
  const bool split = x->sizes[1] == H && H > 1;
  const bool rows = queryRows(l, x->sizes[2]);
  if (rows && x->sizes[2] != l.rows[l.rank])
    return comm::fail(MGRT_ERR_ARGUMENT, "mgrt_cp_attention",
                      "bias or mask has %lld query rows, expected %lld or 1",
                      (long long)x->sizes[2], (long long)l.rows[l.rank]);
  const int64_t hl = split ? H / l.size : x->sizes[1];
  const int64_t S = rows ? l.total : x->sizes[2];
  data.assign(x->sizes[0] * hl * S * x->sizes[3]);
  d = contiguous4<Desc>(data.data(), x->sizes[0], hl, S, x->sizes[3]);
  View4<T> src = view4<T>(x), dst = view4<T>(&d);
  if (rows)
    return toHeads(group, l, src, split, dst);
  // Broadcast over the queries: this rank's heads, no transfer.
  for (int64_t a = 0; a < d.sizes[0]; ++a)
    for (int64_t h = 0; h < hl; ++h)
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < d.sizes[3]; ++j)
          dst.at(a, h, i, j) = src.at(a, split ? l.rank * hl + h : h, i, j);
  return MGRT_OK;
}

/// The dense bias and the mask (those the flags name) moved to this rank's
/// heads by maskToHeads, with their descriptors.
struct BiasMaskHeads {
  Array<float> biasData;
  Array<int8_t> maskData;
  mgrt_memref_f32_4 bh{};
  mgrt_memref_i8_4 mh{};
  bool hasBias = false, hasMask = false;
  mgrt_memref_f32_4 *bias() { return hasBias ? &bh : nullptr; }
  mgrt_memref_i8_4 *mask() { return hasMask ? &mh : nullptr; }
};

int biasAndMaskToHeads(mgrt_comm_group *group, const Layout &l,
                       const mgrt_memref_f32_4 *bias,
                       const mgrt_memref_i8_4 *mask, int64_t H, int64_t flags,
                       BiasMaskHeads &o) {
  if ((flags & MGRT_ATTENTION_BIAS) && bias) {
    if (int rc = maskToHeads(group, l, bias, H, o.biasData, o.bh))
      return rc;
    o.hasBias = true;
  }
  if ((flags & MGRT_ATTENTION_MASK) && mask) {
    if (int rc = maskToHeads(group, l, mask, H, o.maskData, o.mh))
      return rc;
    o.hasMask = true;
  }
  return MGRT_OK;
}

/// The distance rows of every rank gathered by the last spatial call of a
/// group. The step's attentions, forward and backward, read the same
/// distances, so they travel once per step: a call reuses the gathered
/// rows when every rank's own rows equal the copy it kept (one all-reduce
/// of the verdict).
struct DistanceCache {
  mgrt_comm_group *group = nullptr;
  std::vector<int> members; // world ranks (a group freed and another made
                            // at its address is not the same group)
  int64_t Db = 0, R = 0, K = 0;
  std::vector<int64_t> rows;  // the layout's rows per rank
  std::vector<int16_t> local; // this rank's rows [Db, R, K]
  std::vector<int16_t> full;  // all rows [Db, S, K]
};
std::mutex gDistanceMutex;
std::vector<DistanceCache> gDistances; // one per group

/// The spatial bias of all S queries of this rank's heads: the distance
/// rows of all ranks in `dist` (gathered, or the cached ones), the table's
/// columns of the heads.
int spatialToHeads(mgrt_comm_group *group, const Layout &l, int64_t B,
                   int64_t H, const mgrt_memref_i16_3 *distance,
                   const mgrt_memref_f32_2 *table, const char *call,
                   Array<int16_t> &dist, std::vector<float> &tableT,
                   SpatialBias &spatial) {
  const int64_t Db = distance->sizes[0], R = distance->sizes[1],
                K = distance->sizes[2], hl = H / l.size;
  if (R != l.rows[l.rank])
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "distance has %lld rows, expected %lld", (long long)R,
                      (long long)l.rows[l.rank]);
  View4<int16_t> src;
  src.base = distance->aligned + distance->offset;
  src.n[0] = Db, src.n[2] = R, src.n[3] = K;
  src.s[0] = distance->strides[0], src.s[2] = distance->strides[1],
  src.s[3] = distance->strides[2];
  std::vector<int16_t> mine(Db * R * K);
  for (int64_t a = 0, x = 0; a < Db; ++a)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < K; ++j)
        mine[x++] = src.at(a, 0, i, j);
  std::vector<int> members(l.size);
  for (int r = 0; r < l.size; ++r)
    members[r] = mgrt_comm_world_rank_of(group, r);
  int same = 0;
  {
    std::lock_guard<std::mutex> lock(gDistanceMutex);
    for (const DistanceCache &c : gDistances)
      if (c.group == group)
        same = c.members == members && c.Db == Db && c.R == R && c.K == K &&
               c.rows == l.rows && c.local == mine;
  }
  int all = 0;
  if (int rc =
          mgrt_comm_all_reduce(group, &same, &all, 1, MGRT_I32, MGRT_COMM_MIN))
    return rc;
  if (all) {
    std::lock_guard<std::mutex> lock(gDistanceMutex);
    for (const DistanceCache &c : gDistances)
      if (c.group == group)
        if (!c.full.empty()) {
          dist.assign(c.full.size());
          std::memcpy(dist.data(), c.full.data(),
                      c.full.size() * sizeof(int16_t));
        }
  } else {
    dist.assign(Db * l.total * K);
    View4<int16_t> dst;
    dst.base = dist.data();
    dst.n[0] = Db, dst.n[2] = l.total, dst.n[3] = K;
    dst.s[0] = l.total * K, dst.s[2] = K, dst.s[3] = 1;
    if (int rc = toHeads(group, l, src, /*split=*/false, dst))
      return rc;
    std::lock_guard<std::mutex> lock(gDistanceMutex);
    DistanceCache *c = nullptr;
    for (DistanceCache &e : gDistances)
      if (e.group == group)
        c = &e;
    if (!c)
      c = &gDistances.emplace_back();
    c->group = group, c->members = members, c->Db = Db, c->R = R, c->K = K,
    c->rows = l.rows;
    c->local = std::move(mine);
    c->full.assign(dist.data(), dist.data() + Db * l.total * K);
  }
  mgrt_memref_i16_3 full{};
  full.allocated = full.aligned = dist.data();
  full.sizes[0] = Db, full.sizes[1] = l.total, full.sizes[2] = K;
  full.strides[0] = l.total * K, full.strides[1] = K, full.strides[2] = 1;
  mgrt_memref_f32_2 cols = *table;
  cols.offset += l.rank * hl * table->strides[1];
  cols.sizes[1] = hl;
  spatial = makeSpatialBias(&full, &cols, B, l.total, K, hl, call, tableT);
  return MGRT_OK;
}

/// Checks that the heads split over the group.
int checkHeads(const char *call, const Layout &l, int64_t H) {
  if (H % l.size)
    return comm::fail(MGRT_ERR_ARGUMENT, call,
                      "ulysses needs the group size %d to divide the %lld "
                      "heads",
                      l.size, (long long)H);
  return MGRT_OK;
}

/// q, k, v, the dense bias and the mask moved to this rank's heads (both
/// directions of the attention need them).
struct HeadOperands {
  Buffer qb, kb, vb;
  mgrt_memref_f32_3 qh, kh, vh;
  BiasMaskHeads bm;
};

int operandsToHeads(mgrt_comm_group *group, const Layout &l,
                    const mgrt_memref_f32_3 *q, const mgrt_memref_f32_3 *k,
                    const mgrt_memref_f32_3 *v, const mgrt_memref_f32_4 *bias,
                    const mgrt_memref_i8_4 *mask, int64_t H, int64_t flags,
                    HeadOperands &o) {
  if (int rc = activationToHeads(group, l, q, H, o.qb, o.qh))
    return rc;
  if (int rc = activationToHeads(group, l, k, H, o.kb, o.kh))
    return rc;
  if (int rc = activationToHeads(group, l, v, H, o.vb, o.vh))
    return rc;
  return biasAndMaskToHeads(group, l, bias, mask, H, flags, o.bm);
}

} // namespace

int ulyssesForward(const char *call, mgrt_comm_group *group, const Layout &l,
                   mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                   mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                   mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                   const mgrt_memref_i16_3 *distance,
                   const mgrt_memref_f32_2 *table, int64_t H, float scale,
                   int64_t flags) {
  if (int rc = checkHeads(call, l, H))
    return rc;
  const int64_t hl = H / l.size;
  HeadOperands in;
  if (int rc = operandsToHeads(group, l, q, k, v, bias, mask, H, flags, in))
    return rc;
  mgrt_memref_f32_3 &qh = in.qh, &kh = in.kh, &vh = in.vh;
  mgrt_memref_f32_4 *bp = in.bm.bias();
  mgrt_memref_i8_4 *mp = in.bm.mask();
  Array<int16_t> dist;
  std::vector<float> tableT;
  SpatialBias spatial;
  if (distance)
    if (int rc = spatialToHeads(group, l, q->sizes[0], H, distance, table, call,
                                dist, tableT, spatial))
      return rc;
  const int64_t B = q->sizes[0], Dv = v->sizes[2];
  Buffer ob(B * l.total * (Dv / H) * hl);
  mgrt_memref_f32_3 oh = desc3(ob.data(), B, l.total, Dv / H * hl);
  if (l.total > 0)
    attentionForward(&oh, &qh, &kh, &vh, bp, mp, hl, scale, flags, nullptr,
                     spatial ? &spatial : nullptr);
  return toRows(group, l, headView(&oh, hl), /*split=*/true, headView(out, H));
}

int ulyssesBackward(const char *call, mgrt_comm_group *group, const Layout &l,
                    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                    mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                    mgrt_memref_f32_2 *dtable, mgrt_memref_f32_3 *dout,
                    mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
                    mgrt_memref_i8_4 *mask, const mgrt_memref_i16_3 *distance,
                    const mgrt_memref_f32_2 *table, int64_t H, float scale,
                    int64_t flags) {
  if (int rc = checkHeads(call, l, H))
    return rc;
  const int64_t hl = H / l.size;
  HeadOperands in;
  if (int rc = operandsToHeads(group, l, q, k, v, bias, mask, H, flags, in))
    return rc;
  mgrt_memref_f32_3 &qh = in.qh, &kh = in.kh, &vh = in.vh;
  mgrt_memref_f32_4 *bp = in.bm.bias();
  mgrt_memref_i8_4 *mp = in.bm.mask();
  Buffer ob;
  mgrt_memref_f32_3 oh;
  if (int rc = activationToHeads(group, l, dout, H, ob, oh))
    return rc;
  Array<float> dbiasData;
  mgrt_memref_f32_4 dbh{}, *dbp = nullptr;
  // dbias of this rank's heads over all S query rows (a query dimension
  // of 1 stays 1: the sum over all S queries of these heads).
  const bool dbiasRows = dbias && queryRows(l, dbias->sizes[2]);
  const bool dbiasSplit = dbias && dbias->sizes[1] == H && H > 1;
  if ((flags & MGRT_ATTENTION_DBIAS) && dbias) {
    const int64_t dh = dbiasSplit ? hl : dbias->sizes[1];
    const int64_t dS = dbiasRows ? l.total : dbias->sizes[2];
    dbiasData.assign(dbias->sizes[0] * dh * dS * dbias->sizes[3]);
    dbh = contiguous4<mgrt_memref_f32_4>(dbiasData.data(), dbias->sizes[0], dh,
                                         dS, dbias->sizes[3]);
    dbp = &dbh;
  }
  Array<int16_t> dist;
  std::vector<float> tableT;
  SpatialBias spatial;
  mgrt_memref_f32_2 dcols{}, *dtp = nullptr;
  if (distance) {
    if (int rc = spatialToHeads(group, l, q->sizes[0], H, distance, table, call,
                                dist, tableT, spatial))
      return rc;
    // Only this rank's heads' columns; the other columns are the other
    // ranks' share of the table gradient.
    zero2(dtable);
    dcols = *dtable;
    dcols.offset += l.rank * hl * dtable->strides[1];
    dcols.sizes[1] = hl;
    dtp = &dcols;
  }
  const int64_t B = q->sizes[0], D = q->sizes[2], Dv = v->sizes[2];
  Buffer dqb(B * l.total * D / H * hl), dkb(B * l.total * D / H * hl),
      dvb(B * l.total * Dv / H * hl);
  mgrt_memref_f32_3 dqh = desc3(dqb.data(), B, l.total, D / H * hl),
                    dkh = desc3(dkb.data(), B, l.total, D / H * hl),
                    dvh = desc3(dvb.data(), B, l.total, Dv / H * hl);
  if (l.total > 0)
    attentionBackward(&dqh, &dkh, &dvh, dbp, &oh, &qh, &kh, &vh, bp, mp, hl,
                      scale, flags, nullptr, nullptr, false,
                      spatial ? &spatial : nullptr, dtp);
  in.qb.reset(), in.kb.reset(), in.vb.reset(), ob.reset();
  if (int rc = toRows(group, l, headView(&dqh, hl), true, headView(dq, H)))
    return rc;
  if (int rc = toRows(group, l, headView(&dkh, hl), true, headView(dk, H)))
    return rc;
  if (int rc = toRows(group, l, headView(&dvh, hl), true, headView(dv, H)))
    return rc;
  if (!dbp)
    return MGRT_OK;
  View4<float> from = view4<float>(&dbh), to = view4<float>(dbias);
  if (dbiasRows)
    return toRows(group, l, from, dbiasSplit, to);
  // dbias broadcast over the queries: a partial that the caller sums over
  // the group (this rank's heads, zero on the others).
  zero4(dbias);
  for (int64_t a = 0; a < dbh.sizes[0]; ++a)
    for (int64_t h = 0; h < dbh.sizes[1]; ++h)
      for (int64_t i = 0; i < dbh.sizes[2]; ++i)
        for (int64_t j = 0; j < dbh.sizes[3]; ++j) {
          float &d = to.at(a, dbiasSplit ? l.rank * hl + h : h, i, j);
          d += from.at(a, h, i, j);
        }
  return MGRT_OK;
}

} // namespace mgrt::cp
