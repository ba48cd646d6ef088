//===- MopMoa.cpp - The accelerator pipelines across a layout switch ------===//
//
// _mlir_ciface_mgrt_mop_moa_{spmm_linear,linear_spmm}_f32 (contracts in
// megagraph/RuntimeMoa.h): gt.spmm_linear and gt.linear_spmm with
// gt.mop_switch, MixGCN's mixture of accelerators under its mixture of
// parallelism. The aggregation is feature-parallel (every rank all N
// rows, its D / P columns), the transform node-parallel (its N / P rows,
// all D columns); one all-to-all switches between them. Aggregation first:
// pipelined over chunks of every
// block: chunk c is rows [c n / K, (c + 1) n / K) of each block of n = N / P
// rows. Region r, one parallel region of the pool, aggregates chunk r (the
// rows q n + [b_r, e_r) for every rank q), exchanges chunk r - 1 with one
// all-to-all and transforms chunk r - 2 (received in region r - 1): the
// workers take the aggregation's and the transform's row blocks, and the
// calling thread, the only one that may call MPI (MPI_THREAD_FUNNELED),
// runs the exchange before its first block (or after the region, if the
// other workers took every block). So chunk i's exchange and chunk i - 1's
// transform overlap chunk i + 1's aggregation, on however many threads
// the pool has. Each aggregated row is the SpMM kernel's loop over its
// edges (bit-identical to the unchunked aggregation), each transformed
// block one GEMM of at most kMoaGemmRows rows.
//
// The transform-first kernel mirrors it: region r transforms chunk r of
// the block, exchanges chunk r - 1 (this block's rows of it, rank q's
// columns to rank q) and aggregates the output rows whose neighbours all
// lie in chunks 0..r - 2 of their blocks (MixGCN's reordering as a
// schedule, as in MoaLinearSpmm.cpp, with a column's chunk taken within
// its block).
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeMoa.h"

#include "comm/CommGroup.h"
#include "comm/ShardCalls.h"
#include "kernels/Csr.h"
#include "kernels/MoaPipeline.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace mgrt;

namespace {

constexpr const char *kName = MGRT_KERNEL_MOP_MOA_SPMM_LINEAR;
constexpr const char *kLinearFirstName = MGRT_KERNEL_MOP_MOA_LINEAR_SPMM;

/// A tracked float buffer (mgrt_alloc: counted in mgrt_peak_bytes).
struct Floats {
  float *data;
  explicit Floats(int64_t n)
      : data(static_cast<float *>(mgrt_alloc(sizeof(float) * (n ? n : 1)))) {
    MGRT_CHECK(data, kName, "out of memory (%lld floats)", (long long)n);
  }
  ~Floats() { mgrt_free(data); }
  Floats(const Floats &) = delete;
  Floats &operator=(const Floats &) = delete;
};

/// One region of a chunk pipeline: `task(i)` for the round's `tasks` items
/// on the pool, and chunk `switched`'s all-to-all (`exchange(switched)`,
/// collective, so only on the calling thread, worker 0) before that
/// thread's first item, or after the region if the other workers took
/// every item. A `switched` outside [0, chunks) has no exchange. Returns
/// whether the exchange ran inside the region.
template <typename Exchange, typename Task>
bool pipelineRound(int64_t tasks, int64_t switched, int64_t chunks,
                   Exchange &&exchange, Task &&task) {
  bool exchanged = switched < 0 || switched >= chunks;
  const bool due = !exchanged;
  parallelFor(tasks, [&](int64_t i, int worker) {
    if (worker == 0 && !exchanged) {
      exchanged = true; // read and written by the calling thread only
      exchange(switched);
    }
    task(i);
  });
  if (!exchanged) {
    exchange(switched);
    return false;
  }
  return due;
}

/// With MEGAGRAPH_MOA_STATS=1, prints once per process how many of the
/// chunks' exchanges ran inside a parallel region (alongside aggregation
/// and transform blocks) rather than after it.
void printOverlap(int64_t inside, int64_t chunks) {
  static std::atomic<bool> printed{false};
  const char *env = std::getenv("MEGAGRAPH_MOA_STATS");
  if (!env || std::atoi(env) == 0 || printed.exchange(true))
    return;
  if (numThreads() == 1) {
    std::fprintf(stderr,
                 "%s: one thread: the %lld chunk exchanges overlap "
                 "nothing\n",
                 kName, (long long)chunks);
    return;
  }
  std::fprintf(stderr,
               "%s: %lld of %lld chunk exchanges ran alongside the pool's "
               "aggregation and transform blocks\n",
               kName, (long long)inside, (long long)chunks);
}

} // namespace

extern "C" void _mlir_ciface_mgrt_mop_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *rowPtr,
    mgrt_memref_i64_1 *colIdx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags, int64_t g0,
    int64_t g1, int64_t g2, int64_t g3, int64_t axes) {
  MGRT_CHECK(out && agg && rowPtr && colIdx && values && x && scale && weight &&
                 bias,
             kName, "null operand descriptor");
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, kName);
  const int P = group->size;
  const bool hasScale = flags & 1, hasBias = flags & 2;
  const int64_t N = rowPtr->sizes[0] - 1, M = x->sizes[0], Dp = x->sizes[1],
                D = Dp * P, F = weight->sizes[1];
  MGRT_CHECK(N >= 0 && N % P == 0, kName,
             "%lld CSR rows do not split into %d equal blocks", (long long)N,
             P);
  const int64_t n = N / P;
  MGRT_CHECK(
      agg->sizes[0] == n && agg->sizes[1] == D && weight->sizes[0] == D &&
          out->sizes[0] == n && out->sizes[1] == F &&
          values->sizes[0] == colIdx->sizes[0] &&
          (!hasScale || (scale->sizes[0] == N && scale->sizes[1] == 1)) &&
          (!hasBias || bias->sizes[0] == F),
      kName,
      "shape mismatch: %lld CSR rows over %d ranks, x [%lld,%lld] agg "
      "[%lld,%lld] weight [%lld,%lld] out [%lld,%lld]",
      (long long)N, P, (long long)M, (long long)Dp, (long long)agg->sizes[0],
      (long long)agg->sizes[1], (long long)weight->sizes[0], (long long)F,
      (long long)out->sizes[0], (long long)out->sizes[1]);
  MGRT_CHECK(chunks >= 1 && (chunks <= n || n == 0), kName,
             "chunks = %lld must be in [1, N / P = %lld]", (long long)chunks,
             (long long)n);
  MGRT_CHECK(x->strides[1] == 1 && agg->strides[1] == 1 && out->strides[1] == 1,
             kName, "innermost strides of x, agg and out must be 1");
  const CsrView graph = csrView(kName, rowPtr, colIdx, N, M);
  if (n == 0)
    return;
  const float *xData = x->aligned + x->offset;
  const float *valueData = values->aligned + values->offset;
  const float *scaleData = scale->aligned + scale->offset;
  const float *biasData = hasBias ? bias->aligned + bias->offset : nullptr;
  float *aggData = agg->aligned + agg->offset;
  float *outData = out->aligned + out->offset;
  const int64_t aggStride = agg->strides[0], outStride = out->strides[0];

  // The feature-parallel rows, all N of this rank's columns (the unchunked
  // aggregation's result), and one chunk of every block, packed by rank.
  Floats cols(N * Dp);
  const int64_t maxChunk = (n + chunks - 1) / chunks;
  Floats send(P * maxChunk * Dp), recv(P * maxChunk * Dp);
  auto chunkBegin = [&](int64_t c) { return c * n / chunks; };
  const int64_t spmmRows = csrRowsPerTask(graph, std::max<int64_t>(Dp, 1));
  const GemmBackend backend = defaultGemmBackend();
  struct Item {
    bool gemm;
    int64_t r0, r1; // SpMM: rows of the N; GEMM: rows of the block
  };
  std::vector<Item> items;
  std::vector<int64_t> counts(P);
  // Chunk c switched: block q's rows of it to rank q, this block's rows of
  // every rank's columns back into agg. Collective; on the calling thread.
  auto exchange = [&](int64_t c) {
    const int64_t b = chunkBegin(c), rows = chunkBegin(c + 1) - b;
    for (int q = 0; q < P; ++q) {
      std::memcpy(send.data + q * rows * Dp, cols.data + (q * n + b) * Dp,
                  sizeof(float) * rows * Dp);
      counts[q] = rows * Dp;
    }
    const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
    mgrt_comm_all_to_all(group, send.data, counts.data(), recv.data,
                         counts.data(), 0, MGRT_F32);
    mgrt_comm_set_error_mode(prev);
    for (int q = 0; q < P; ++q)
      for (int64_t i = 0; i < rows; ++i)
        std::memcpy(aggData + (b + i) * aggStride + q * Dp,
                    recv.data + (q * rows + i) * Dp, sizeof(float) * Dp);
  };
  // Region r aggregates chunk r, exchanges chunk r - 1 and transforms
  // chunk r - 2: the pool's workers take the row blocks of both, and the
  // calling thread (worker 0) runs the exchange before its first block, or
  // after the region if the other workers took every block.
  int64_t insideRegion = 0; // exchanges run while the pool computed
  for (int64_t r = 0; r <= chunks + 1; ++r) {
    items.clear();
    if (r < chunks)
      for (int q = 0; q < P; ++q)
        for (int64_t i = q * n + chunkBegin(r), e = q * n + chunkBegin(r + 1);
             i < e; i += spmmRows)
          items.push_back({false, i, std::min(e, i + spmmRows)});
    if (r >= 2)
      for (int64_t i = chunkBegin(r - 2), e = chunkBegin(r - 1); i < e;
           i += kMoaGemmRows)
        items.push_back({true, i, std::min(e, i + kMoaGemmRows)});
    const auto task = [&](int64_t i) {
      const Item &it = items[i];
      if (it.gemm) {
        moaGemmRows(aggData, aggStride, 1, weight, biasData, bias->strides[0],
                    nullptr, 0, outData, outStride, it.r0, it.r1, backend);
        return;
      }
      spmmRowRange(graph, valueData, values->strides[0], xData, x->strides[0],
                   cols.data, Dp, Dp, it.r0, it.r1);
      if (hasScale)
        for (int64_t row = it.r0; row < it.r1; ++row) {
          const float sc = scaleData[row * scale->strides[0]];
          float *v = cols.data + row * Dp;
          for (int64_t d = 0; d < Dp; ++d)
            v[d] *= sc;
        }
    };
    insideRegion += pipelineRound(static_cast<int64_t>(items.size()), r - 1,
                                  chunks, exchange, task);
  }
  printOverlap(insideRegion, chunks);
}

extern "C" void _mlir_ciface_mgrt_mop_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags, int64_t g0, int64_t g1, int64_t g2, int64_t g3,
    int64_t axes) {
  const char *name = kLinearFirstName;
  MGRT_CHECK(out && transformed && rowPtr && colIdx && values && x && scale &&
                 weight && bias,
             name, "null operand descriptor");
  mgrt_comm_group *group = comm::shardGroup({{g0, g1, g2, g3}, axes}, name);
  const int P = group->size;
  const bool hasScale = flags & 1, hasBias = flags & 2;
  const int64_t N = rowPtr->sizes[0] - 1, D = x->sizes[1], F = weight->sizes[1];
  MGRT_CHECK(N >= 0 && N % P == 0 && F % P == 0, name,
             "%lld CSR rows or %lld transformed columns do not split into "
             "%d equal blocks",
             (long long)N, (long long)F, P);
  const int64_t n = N / P, Fp = F / P;
  MGRT_CHECK(
      x->sizes[0] == n && weight->sizes[0] == D && transformed->sizes[0] == n &&
          transformed->sizes[1] == F && out->sizes[0] == N &&
          out->sizes[1] == Fp && values->sizes[0] == colIdx->sizes[0] &&
          (!hasScale || ((scale->sizes[0] == n || scale->sizes[0] == N) &&
                         scale->sizes[1] == 1)) &&
          (!hasBias || bias->sizes[0] == F),
      name,
      "shape mismatch: %lld CSR rows over %d ranks, x [%lld,%lld] "
      "weight [%lld,%lld] transformed [%lld,%lld] out [%lld,%lld]",
      (long long)N, P, (long long)x->sizes[0], (long long)D,
      (long long)weight->sizes[0], (long long)F,
      (long long)transformed->sizes[0], (long long)transformed->sizes[1],
      (long long)out->sizes[0], (long long)out->sizes[1]);
  MGRT_CHECK(chunks >= 1 && (chunks <= n || n == 0), name,
             "chunks = %lld must be in [1, N / P = %lld]", (long long)chunks,
             (long long)n);
  MGRT_CHECK(transformed->strides[1] == 1 && out->strides[1] == 1, name,
             "innermost strides of transformed and out must be 1");
  const CsrView graph = csrView(name, rowPtr, colIdx, N, N);
  if (n == 0)
    return;
  const float *xData = x->aligned + x->offset;
  const float *valueData = values->aligned + values->offset;
  // A scale of the N switched rows applies after the switch, one of the
  // block's n rows to the transformed rows (the same when P = 1).
  const bool scaleSwitched = hasScale && P > 1 && scale->sizes[0] == N;
  const float *scaleData = hasScale ? scale->aligned + scale->offset : nullptr;
  const float *rowScale = scaleSwitched ? nullptr : scaleData;
  const float *biasData = hasBias ? bias->aligned + bias->offset : nullptr;
  float *tData = transformed->aligned + transformed->offset;
  float *outData = out->aligned + out->offset;
  const int64_t tStride = transformed->strides[0], outStride = out->strides[0];
  auto chunkBegin = [&](int64_t c) { return c * n / chunks; };

  // 1. The output rows by the latest chunk their neighbours are in (column
  //    j is row j mod n of block j / n, in that block's chunk of it), rows
  //    without edges with chunk 0; a counting sort, O(N + E).
  std::vector<int64_t> chunkOfColumn(N), level(N, 0), begin(chunks + 1, 0),
      order(N);
  for (int64_t j = 0; j < N; ++j)
    chunkOfColumn[j] = moaChunkOf(j % n, n, chunks);
  const int64_t levelRows = csrRowsPerTask(graph, 1);
  parallelFor((N + levelRows - 1) / levelRows, [&](int64_t task, int) {
    for (int64_t i = task * levelRows, i1 = std::min(N, i + levelRows); i < i1;
         ++i) {
      int64_t latest = 0;
      for (int64_t e = graph.rowBegin(i), e1 = graph.rowEnd(i); e < e1; ++e)
        latest = std::max(latest, chunkOfColumn[graph.col(e, i)]);
      level[i] = latest;
    }
  });
  for (int64_t i = 0; i < N; ++i)
    ++begin[level[i] + 1];
  for (int64_t k = 0; k < chunks; ++k)
    begin[k + 1] += begin[k];
  {
    std::vector<int64_t> next(begin.begin(), begin.end() - 1);
    for (int64_t i = 0; i < N; ++i)
      order[next[level[i]]++] = i;
  }

  // 2. The switched rows (all N of this rank's F / P columns) and one chunk
  //    of every block, packed by rank.
  Floats cols(N * Fp);
  const int64_t maxChunk = (n + chunks - 1) / chunks;
  Floats send(P * maxChunk * Fp), recv(P * maxChunk * Fp);
  std::vector<int64_t> counts(P);
  // Chunk c of this block's transformed rows: rank q's columns to rank q;
  // every block's rows of it back, this rank's columns, into cols.
  auto exchange = [&](int64_t c) {
    const int64_t b = chunkBegin(c), rows = chunkBegin(c + 1) - b;
    for (int q = 0; q < P; ++q) {
      for (int64_t i = 0; i < rows; ++i)
        std::memcpy(send.data + (q * rows + i) * Fp,
                    tData + (b + i) * tStride + q * Fp, sizeof(float) * Fp);
      counts[q] = rows * Fp;
    }
    const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
    mgrt_comm_all_to_all(group, send.data, counts.data(), recv.data,
                         counts.data(), 0, MGRT_F32);
    mgrt_comm_set_error_mode(prev);
    for (int q = 0; q < P; ++q) {
      float *dst = cols.data + (q * n + b) * Fp;
      const float *src = recv.data + q * rows * Fp;
      if (!scaleSwitched) {
        std::memcpy(dst, src, sizeof(float) * rows * Fp);
        continue;
      }
      for (int64_t i = 0; i < rows; ++i) {
        const float sc = scaleData[(q * n + b + i) * scale->strides[0]];
        for (int64_t d = 0; d < Fp; ++d)
          dst[i * Fp + d] = src[i * Fp + d] * sc;
      }
    }
  };

  // 3. Region r transforms chunk r, exchanges chunk r - 1 and aggregates
  //    the rows ready after chunk r - 2 (as the aggregation-first kernel,
  //    the calling thread runs the exchange before its first block or
  //    after the region).
  struct Item {
    bool gemm;
    int64_t r0, r1; // GEMM: rows of the block; SpMM: positions of `order`
  };
  std::vector<Item> items;
  const int64_t spmmRows = csrRowsPerTask(graph, std::max<int64_t>(Fp, 1));
  const GemmBackend backend = defaultGemmBackend();
  for (int64_t r = 0; r <= chunks + 1; ++r) {
    items.clear();
    if (r < chunks)
      for (int64_t i = chunkBegin(r), e = chunkBegin(r + 1); i < e;
           i += kMoaGemmRows)
        items.push_back({true, i, std::min(e, i + kMoaGemmRows)});
    if (r >= 2)
      for (int64_t p = begin[r - 2], e = begin[r - 1]; p < e; p += spmmRows)
        items.push_back({false, p, std::min(e, p + spmmRows)});
    const auto task = [&](int64_t i) {
      const Item &it = items[i];
      if (it.gemm)
        moaGemmRows(xData, x->strides[0], x->strides[1], weight, biasData,
                    bias->strides[0], rowScale, scale->strides[0], tData,
                    tStride, it.r0, it.r1, backend);
      else
        spmmRowsOf(graph, valueData, values->strides[0], cols.data, Fp, outData,
                   outStride, Fp, order.data() + it.r0, it.r1 - it.r0);
    };
    pipelineRound(static_cast<int64_t>(items.size()), r - 1, chunks, exchange,
                  task);
  }
}
