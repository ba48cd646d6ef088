//===- MoaLinearSpmm.cpp - Transform and aggregation pipelined ------------===//
//
// _mlir_ciface_mgrt_moa_linear_spmm_f32, the transform-first half of
// MixGCN's mixture of accelerators on the CPU (GCN's forward A (X W)):
// t = scale * (x W + bias), out = A t, over `chunks` chunks of t's rows.
// An output row needs the transformed rows of all its neighbours, so it can
// be aggregated once the chunk of its largest neighbour, and every chunk
// before it, is transformed: the rows are grouped by that chunk (MixGCN's
// node reordering as a schedule: a counting sort of the rows, O(N + E) per
// call; the driver renumbers the nodes once per run, runtime/driver/
// NodeOrder.h, so that most rows' neighbours lie in early chunks) and group
// k is aggregated while chunks k+1.. are transformed.
//
// Work items live in two queues claimed with atomic counters: GEMM blocks
// of t in chunk order (always ready: x is an input) and SpMM blocks of the
// sorted rows in group order (group k ready once chunks 0..k are done; a
// per-chunk count of unfinished GEMM blocks and a watermark of the chunks
// done so far). The transform group takes GEMM blocks, then helps
// aggregating; the aggregation group takes ready SpMM blocks, transforms
// when none is ready, and a thread that claimed a block that is not ready
// yet transforms unclaimed blocks meanwhile, spinning (yielding) only when
// every missing block is being computed by a running thread. GEMM blocks
// wait on nothing, so the call completes with any subset of the pool's
// workers (a late worker finds the queues empty and returns).
//
// The blocks are fixed by M, N, the chunk count and the degree, never by
// the thread count; an output row is computed by spmmRowsOf with the SpMM
// kernel's arithmetic over its edges in order, so out is bit-identical to
// mgrt_spmm_f32 on t, whatever the chunks or threads.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeMoa.h"

#include "kernels/Csr.h"
#include "kernels/MoaPipeline.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

using namespace mgrt;

namespace {

constexpr const char *kName = MGRT_KERNEL_MOA_LINEAR_SPMM;

/// With MEGAGRAPH_MOA_STATS=1, prints once per process how many output rows
/// wait for each chunk and the share ready before the last one.
void printReadiness(const MoaRowOrder &order, int64_t chunks) {
  static std::atomic<bool> printed{false};
  const char *env = std::getenv("MEGAGRAPH_MOA_STATS");
  if (!env || std::atoi(env) == 0 || printed.exchange(true))
    return;
  const int64_t n = order.begin[chunks];
  const int64_t early = order.begin[chunks - 1];
  std::fprintf(stderr,
               "%s: %lld rows over %lld chunks, rows per chunk of "
               "their largest neighbour:",
               kName, (long long)n, (long long)chunks);
  for (int64_t k = 0; k < chunks; ++k)
    std::fprintf(stderr, " %lld",
                 (long long)(order.begin[k + 1] - order.begin[k]));
  std::fprintf(stderr, "; ready before the last chunk: %lld (%.1f%%)\n",
               (long long)early, n ? 100.0 * double(early) / double(n) : 0.0);
}

} // namespace

extern "C" void _mlir_ciface_mgrt_moa_linear_spmm_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *transformed,
    mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
    mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x, mgrt_memref_f32_2 *scale,
    mgrt_memref_f32_2 *weight, mgrt_memref_f32_1 *bias, int64_t chunks,
    int64_t flags) {
  MGRT_CHECK(out && transformed && rowPtr && colIdx && values && x && scale &&
                 weight && bias,
             kName, "null operand descriptor");
  const bool hasScale = flags & 1, hasBias = flags & 2;
  const int64_t N = out->sizes[0], F = out->sizes[1], M = x->sizes[0],
                D = x->sizes[1];
  MGRT_CHECK(
      transformed->sizes[0] == M && transformed->sizes[1] == F &&
          weight->sizes[0] == D && weight->sizes[1] == F &&
          values->sizes[0] == colIdx->sizes[0] &&
          (!hasScale || (scale->sizes[0] == M && scale->sizes[1] == 1)) &&
          (!hasBias || bias->sizes[0] == F),
      kName,
      "shape mismatch: x [%lld,%lld] weight [%lld,%lld] transformed "
      "[%lld,%lld] out [%lld,%lld] values [%lld] col_idx [%lld]",
      (long long)M, (long long)D, (long long)weight->sizes[0],
      (long long)weight->sizes[1], (long long)transformed->sizes[0],
      (long long)transformed->sizes[1], (long long)N, (long long)F,
      (long long)values->sizes[0], (long long)colIdx->sizes[0]);
  MGRT_CHECK(chunks >= 1 && (chunks <= M || M == 0), kName,
             "chunks = %lld must be in [1, M = %lld]", (long long)chunks,
             (long long)M);
  MGRT_CHECK(transformed->strides[1] == 1 && out->strides[1] == 1, kName,
             "innermost strides of transformed and out must be 1");
  const CsrView graph = csrView(kName, rowPtr, colIdx, N, M);
  float *tData = transformed->aligned + transformed->offset;
  float *outData = out->aligned + out->offset;
  const int64_t tStride = transformed->strides[0], outStride = out->strides[0];
  const float *scaleData = hasScale ? scale->aligned + scale->offset : nullptr;
  const float *biasData = hasBias ? bias->aligned + bias->offset : nullptr;
  const float *valueData = values->aligned + values->offset;
  if (M == 0) { // no columns: no edges (csrView checked them) and t is empty
    for (int64_t i = 0; i < N; ++i)
      std::fill(outData + i * outStride, outData + i * outStride + F, 0.f);
    return;
  }

  // 1. The output rows by the chunk of their largest neighbour (checks
  //    every column index).
  const MoaRowOrder order = moaRowsByLargestColumn(graph, chunks);
  printReadiness(order, chunks);
  // 2. The pipeline.
  moaLinearSpmmPipeline(graph, order, valueData, values->strides[0], x, weight,
                        biasData, bias->strides[0], scaleData,
                        scale->strides[0], tData, tStride, outData, outStride,
                        chunks);
}

void mgrt::moaLinearSpmmPipeline(const CsrView &graph, const MoaRowOrder &order,
                                 const float *valueData, int64_t valueStride,
                                 const mgrt_memref_f32_2 *x,
                                 const mgrt_memref_f32_2 *weight,
                                 const float *biasData, int64_t biasStride,
                                 const float *scaleData, int64_t scaleStride,
                                 float *tData, int64_t tStride, float *outData,
                                 int64_t outStride, int64_t chunks) {
  const int64_t M = x->sizes[0], D = x->sizes[1], F = weight->sizes[1];
  const float *xData = x->aligned + x->offset;
  // 1. The blocks. Chunk c of t has rows [c * M / K, (c + 1) * M / K), cut
  //    into GEMM blocks of kMoaGemmRows; group k of the sorted output rows
  //    into SpMM blocks sized by the degree.
  struct Block {
    int64_t chunk, r0, r1; // SpMM: positions [r0, r1) of order.rows
  };
  std::vector<Block> gemmBlocks, spmmBlocks;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = c * M / chunks, e = (c + 1) * M / chunks;
    for (int64_t r = b; r < e; r += kMoaGemmRows)
      gemmBlocks.push_back({c, r, std::min(e, r + kMoaGemmRows)});
  }
  const int64_t spmmRows = csrRowsPerTask(graph, std::max<int64_t>(F, 1));
  for (int64_t k = 0; k < chunks; ++k)
    for (int64_t p = order.begin[k]; p < order.begin[k + 1]; p += spmmRows)
      spmmBlocks.push_back({k, p, std::min(order.begin[k + 1], p + spmmRows)});
  std::unique_ptr<std::atomic<int64_t>[]> pending(
      new std::atomic<int64_t>[chunks]);
  for (int64_t c = 0; c < chunks; ++c)
    pending[c].store(0, std::memory_order_relaxed);
  for (const Block &b : gemmBlocks)
    pending[b.chunk].fetch_add(1, std::memory_order_relaxed);
  // Chunks [0, done) are transformed. Advanced by whoever sees the next
  // chunk's count reach zero, so a finished chunk is never missed.
  std::atomic<int64_t> done{0};
  auto chunksDone = [&]() {
    int64_t d = done.load(std::memory_order_acquire);
    while (d < chunks && pending[d].load(std::memory_order_acquire) == 0)
      if (done.compare_exchange_weak(d, d + 1, std::memory_order_acq_rel))
        ++d;
    return d;
  };
  std::atomic<int64_t> nextGemm{0}, nextSpmm{0};
  const int64_t numGemm = static_cast<int64_t>(gemmBlocks.size()),
                numSpmm = static_cast<int64_t>(spmmBlocks.size());

  // 2. The work items.
  const GemmBackend backend = defaultGemmBackend();
  // Claims and runs one GEMM block; false when none is left.
  auto runGemm = [&]() {
    const int64_t i = nextGemm.fetch_add(1, std::memory_order_relaxed);
    if (i >= numGemm)
      return false;
    const Block &b = gemmBlocks[i];
    moaGemmRows(xData, x->strides[0], x->strides[1], weight, biasData,
                biasStride, scaleData, scaleStride, tData, tStride, b.r0, b.r1,
                backend);
    pending[b.chunk].fetch_sub(1, std::memory_order_release);
    return true;
  };
  // Claims and runs one SpMM block, transforming while the chunks it reads
  // are not done; false when none is left.
  auto runSpmm = [&]() {
    const int64_t i = nextSpmm.fetch_add(1, std::memory_order_relaxed);
    if (i >= numSpmm)
      return false;
    const Block &b = spmmBlocks[i];
    while (chunksDone() <= b.chunk)
      if (!runGemm())
        std::this_thread::yield(); // the missing blocks are running
    spmmRowsOf(graph, valueData, valueStride, tData, tStride, outData,
               outStride, F, order.rows.data() + b.r0, b.r1 - b.r0);
    return true;
  };
  // Whether the next SpMM block's rows are ready.
  auto spmmReady = [&]() {
    const int64_t i = nextSpmm.load(std::memory_order_relaxed);
    return i < numSpmm && chunksDone() > spmmBlocks[i].chunk;
  };

  // 3. One task per thread; task t < spmmGroup aggregates what is ready
  //    and transforms otherwise (with one thread: chunk by chunk, each
  //    chunk's ready rows right after it), the others transform first.
  //    parallelFor hands the tasks to whichever workers run.
  const int threads = numThreads();
  const int spmmGroup =
      moaSpmmThreads(threads, double(graph.edges) * F, double(M) * D * F);
  parallelFor(threads, [&](int64_t task, int) {
    if (task >= spmmGroup) {
      while (runGemm()) {
      }
      while (runSpmm()) {
      }
      return;
    }
    for (;;) {
      if (spmmReady()) {
        if (!runSpmm())
          return;
        continue;
      }
      if (runGemm())
        continue;
      if (!runSpmm()) // waits on the running GEMM blocks it reads
        return;
    }
  });
}
