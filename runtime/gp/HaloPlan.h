//===- HaloPlan.h - The halo exchange of partition parallelism --*- C++ -*-===//
//
// Internal to the runtime. What the partition-parallel aggregations share
// (mgrt_halo_spmm_f32 and the mixture-of-accelerators kernels over a row
// block, HaloMoa.cpp): per distinct CSR and group, this rank's rows
// renumbered so that their columns index [x ; halo] (own block first, then
// the halo rows grouped by owner and sorted by id), the rows to send to
// each other rank, and the split of the rows into interior rows (reading
// only the block) and boundary rows; the exchange that fills the halo rows,
// blocking or started (HaloExchange) so that the interior rows are
// aggregated while it runs (computeWhileExchanging).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_GP_HALOPLAN_H
#define MEGAGRAPH_RUNTIME_GP_HALOPLAN_H

#include "megagraph/Comm.h"
#include "megagraph/Runtime.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mgrt::gp {

/// The exchange and the renumbered rows of one CSR on one rank.
struct HaloPlan {
  uint64_t hash = 0;
  const mgrt_comm_group *group = nullptr;
  int64_t N = 0, E = 0;
  int64_t first = 0, rows = 0;      // this rank's block
  int64_t e0 = 0;                   // its first edge
  std::vector<int64_t> rowPtr, col; // local CSR over [x ; halo]
  int64_t halo = 0;                 // H
  std::vector<int64_t> sendRows;    // local rows, by destination rank
  std::vector<int64_t> sendCounts, recvCounts; // rows per rank
  /// The local rows by what they read, each in ascending order: interior
  /// rows reference only this block's rows (computable before the halo
  /// arrives), boundary rows at least one halo row.
  std::vector<int64_t> interior, boundary;
};

/// The plan of one rank's block of a CSR (row_ptr [N+1] with row stride
/// `rs`, col_idx [E] with stride `cs`) split over the P ranks of `group`,
/// without the cache and the row pointer's checks of haloPlanOf.
std::unique_ptr<HaloPlan> buildHaloPlan(const mgrt_comm_group *group,
                                        const int64_t *rowPtr, int64_t rs,
                                        const int64_t *colIdx, int64_t cs,
                                        int64_t N, int64_t E,
                                        const char *kernel);

/// The plan of this CSR (row_ptr [N+1] over N = P blocks) on `group`, built
/// and checked on first use (`kernel` names the caller in errors).
const HaloPlan &haloPlanOf(const mgrt_comm_group *group,
                           mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
                           int64_t N, const char *kernel);

/// The environment variables of the overlapped exchange: MEGAGRAPH_GP_OVERLAP
/// (unset or 1: the aggregations compute the interior rows while the halo
/// is exchanged; 0: exchange, then every row, for A/B benches; `check`: as
/// 1, but the halo rows read NaN until the exchange is waited for - it
/// lands in a staging buffer copied in by wait() - so a row computed too
/// early shows, for tests) and MEGAGRAPH_GP_OVERLAP_STATS (1: at exit,
/// print how many exchanges completed while the interior rows were
/// computed, and the time spent waiting for the halo, overlapped or not).
inline constexpr const char *kGpOverlapEnv = "MEGAGRAPH_GP_OVERLAP";
inline constexpr const char *kGpOverlapStatsEnv = "MEGAGRAPH_GP_OVERLAP_STATS";

/// Whether MEGAGRAPH_GP_OVERLAP leaves the overlap on (read once).
bool haloOverlap();
/// Whether MEGAGRAPH_GP_OVERLAP is `check`.
bool haloOverlapCheck();

/// A halo exchange under way: the rows of `x` (row stride `xStride`, D
/// floats each) the other ranks need are packed and one non-blocking
/// all-to-all over `group` fills `halo` [H, D] (row stride D), counted by
/// mgrt_comm_bytes_sent as exchangeHalo's. test() and wait() drive it; only
/// the thread that initialised the communication runtime may construct,
/// test or wait. The destructor waits if wait() was not called. With
/// MEGAGRAPH_GP_OVERLAP=check, `halo` holds NaN until wait().
class HaloExchange {
public:
  HaloExchange(mgrt_comm_group *group, const HaloPlan &plan, const float *x,
               int64_t xStride, int64_t D, float *halo, const char *kernel);
  ~HaloExchange();
  HaloExchange(const HaloExchange &) = delete;
  HaloExchange &operator=(const HaloExchange &) = delete;
  /// Drives the transfer on; true once it is complete.
  bool test();
  /// Returns when the halo rows are in place.
  void wait();

private:
  float *send;
  float *halo, *staging = nullptr; // staging: the check mode's landing
  int64_t haloFloats = 0;
  mgrt_comm_request *request = nullptr;
  bool complete = false;
};

/// The overlap of one aggregation: runs rowsFn(rows, count) over `rows` in
/// tasks of `perTask` rows on the thread pool; the calling thread tests
/// `exchange` after each of its tasks. Then waits for the exchange. Returns
/// whether the exchange completed before the rows were done.
bool computeWhileExchanging(
    HaloExchange &exchange, const std::vector<int64_t> &rows, int64_t perTask,
    const std::function<void(const int64_t *, int64_t)> &rowsFn);

/// Counts one overlapped aggregation of `plan` for MEGAGRAPH_GP_OVERLAP_STATS
/// (`completed`: computeWhileExchanging's result).
void countOverlap(const HaloPlan &plan, bool completed);

/// rowsFn(rows, count) over `rows` in tasks of `perTask` rows on the pool.
void computeRows(const std::vector<int64_t> &rows, int64_t perTask,
                 const std::function<void(const int64_t *, int64_t)> &rowsFn);

/// Fills `halo` [H, D] (row stride D) with the rows of the other blocks
/// this rank's rows reference: packs the rows of `x` (n rows of D floats,
/// row stride `xStride`) the others need and runs one all-to-all over
/// `group` (counted by mgrt_comm_bytes_sent). Collective; call it from the
/// thread that initialised the communication runtime.
void exchangeHalo(mgrt_comm_group *group, const HaloPlan &plan, const float *x,
                  int64_t xStride, int64_t D, float *halo, const char *kernel);

/// [x ; halo] into `dst` ([n + H, D], row stride D): the rank's n rows of
/// `x` ([n, D], innermost stride 1), then the halo rows exchangeHalo brings.
/// Collective, as exchangeHalo.
void gatherWithHalo(mgrt_comm_group *group, const HaloPlan &plan,
                    const mgrt_memref_f32_2 *x, float *dst, const char *kernel);

/// The local CSR of `plan` over [x ; halo] (n rows, n + H columns) as
/// memref descriptors; `values` is the whole CSR's, viewed from the block's
/// first edge.
struct LocalCsr {
  mgrt_memref_i64_1 rowPtr, colIdx;
  mgrt_memref_f32_1 values;
};
LocalCsr localCsr(const HaloPlan &plan, const mgrt_memref_f32_1 *values);

/// A tracked float buffer (mgrt_alloc: counted in mgrt_peak_bytes).
struct HaloBuffer {
  float *data = nullptr;
  HaloBuffer(int64_t n, const char *kernel);
  ~HaloBuffer();
  HaloBuffer(const HaloBuffer &) = delete;
  HaloBuffer &operator=(const HaloBuffer &) = delete;
};

} // namespace mgrt::gp

#endif // MEGAGRAPH_RUNTIME_GP_HALOPLAN_H
