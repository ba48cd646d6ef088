//===- CpCommon.h - Shared pieces of context-parallel attention -*- C++ -*-===//
//
// Internal to the runtime. CpAttention.cpp holds the C entries
// (megagraph/RuntimeCp.h) and the all-gather variant, CpRing.cpp the ring
// variant, CpUlysses.cpp the Ulysses variant; all work on this rank's row
// block, described by a Layout of the whole group, with an optional spatial
// bias (the distance rows of the local queries over all S keys and the table,
// SpatialBias.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_CP_CPCOMMON_H
#define MEGAGRAPH_RUNTIME_CP_CPCOMMON_H

#include "megagraph/RuntimeCp.h"

#include "kernels/SpatialBias.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mgrt::cp {

/// A tracked (mgrt_alloc) float buffer, freed when it goes out of scope or
/// on reset(); movable, so two of them can be swapped.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t floats);
  Buffer(Buffer &&o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  Buffer &operator=(Buffer &&o) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { reset(); }
  void reset();
  float *data() const { return data_; }

private:
  float *data_ = nullptr;
};

/// The row blocks of the group: rank r holds global rows
/// [first[r], first[r] + rows[r]) of every sequence.
struct Layout {
  int size = 1, rank = 0;
  std::vector<int64_t> rows, first;
  int64_t total = 0, maxRows = 0;
};

/// All-gathers every rank's row count into `layout`.
int gatherLayout(mgrt_comm_group *group, int64_t rows, Layout &layout);

/// A contiguous [d0,d1,d2] descriptor over `data`.
mgrt_memref_f32_3 desc3(float *data, int64_t d0, int64_t d1, int64_t d2);
/// Whether `d` is laid out as a contiguous row-major array.
bool isContiguous(const mgrt_memref_f32_3 *d);
/// Copies `src` (any strides) into the contiguous array `dst`, and back.
void packRows(const mgrt_memref_f32_3 *src, float *dst);
void unpackRows(const float *src, mgrt_memref_f32_3 *dst);
/// Zeroes every element through the strides.
void zero3(mgrt_memref_f32_3 *d);
void zero4(mgrt_memref_f32_4 *d);

/// Key columns [j0, j0 + n) of a bias, mask or dbias descriptor (the
/// descriptor itself when its key dimension is broadcast).
template <typename Desc> Desc keySlice(const Desc *d, int64_t j0, int64_t n) {
  Desc s = *d;
  if (d->sizes[3] != 1) {
    s.offset += j0 * d->strides[3];
    s.sizes[3] = n;
  }
  return s;
}

/// Key columns [j0, ...) of a spatial bias over all S keys: the same
/// distance rows (and row stride) starting at column j0.
inline SpatialBias keyColumns(const SpatialBias &s, int64_t j0) {
  SpatialBias c = s;
  c.dist += j0;
  return c;
}

/// Zeroes a [V,H] table gradient through its strides.
void zero2(mgrt_memref_f32_2 *d);

/// Ring variant (CpRing.cpp). ringForward also writes the row log-sum-exps
/// of the full key range into `lse` ([B,H,S_r], contiguous). `spatial`
/// (optional): the spatial bias of the local rows over all S keys (each
/// step reads its key block's columns); ringBackward then sums the table
/// gradient of the local rows into `dtable` (overwritten).
int ringForward(mgrt_comm_group *group, const Layout &layout,
                mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                int64_t numHeads, float scale, int64_t flags, float *lse,
                const SpatialBias *spatial = nullptr);
int ringBackward(mgrt_comm_group *group, const Layout &layout,
                 mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                 mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                 mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                 mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                 mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                 int64_t numHeads, float scale, int64_t flags,
                 const SpatialBias *spatial = nullptr,
                 mgrt_memref_f32_2 *dtable = nullptr);

/// Ulysses variant (CpUlysses.cpp): q, k, v (and dO) moved from rows to
/// heads by all-to-all, the single-process kernel on this rank's H / C
/// heads over all S rows, the results moved back. The bias, mask and dbias
/// travel too (to heads and back); `distance` (optional, with `table` and
/// in the backward `dtable`): the rank's [B|1, S_r, S] distance rows,
/// all-gathered (once while every rank's rows stay the same: a step's
/// attentions reuse them), and dtable gets this rank's heads' columns (the
/// others zero). The working buffers are tracked (mgrt_alloc). Fails
/// unless the group size divides `numHeads`.
int ulyssesForward(const char *call, mgrt_comm_group *group,
                   const Layout &layout, mgrt_memref_f32_3 *out,
                   mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
                   mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
                   mgrt_memref_i8_4 *mask, const mgrt_memref_i16_3 *distance,
                   const mgrt_memref_f32_2 *table, int64_t numHeads,
                   float scale, int64_t flags);
int ulyssesBackward(const char *call, mgrt_comm_group *group,
                    const Layout &layout, mgrt_memref_f32_3 *dq,
                    mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
                    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_2 *dtable,
                    mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                    mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                    const mgrt_memref_i16_3 *distance,
                    const mgrt_memref_f32_2 *table, int64_t numHeads,
                    float scale, int64_t flags);

/// Whether a ring step overlaps its transfer with its attention (compute on
/// a helper thread, MPI on the calling one). MEGAGRAPH_CP_OVERLAP=0 / 1
/// turns it off / on; by default it is on only when the rank has a core
/// its kernel threads leave free (rankCores() > numThreads()): a shared-
/// memory transfer is copied by a core, and the thread polling MPI would
/// take one from the attention (4 ranks on 2 cores: a cp=4 ring step of
/// 44 ms overlapped, 22 ms not; 2 ranks: 11.9 and 11.2 ms). Read once.
bool overlapEnabled();

} // namespace mgrt::cp

#endif // MEGAGRAPH_RUNTIME_CP_CPCOMMON_H
