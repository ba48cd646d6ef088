//===- MoaSpmmLinear.cpp - Aggregation and transform pipelined ------------===//
//
// _mlir_ciface_mgrt_moa_spmm_linear_f32, MixGCN's mixture of accelerators on
// the CPU: agg = scale * (A x), out = agg @ W + bias, over `chunks` row
// chunks. The pool's threads form two groups: the aggregation group takes
// SpMM row blocks in chunk order, the transform group takes the GEMM row
// blocks of the chunks whose aggregation is complete, so chunk i's GEMM
// runs while chunk i+1 is aggregated.
//
// Work items live in two queues claimed with atomic counters (SpMM blocks in
// row order, GEMM blocks in chunk order); a chunk counts its SpMM blocks
// still running. A thread of either group that finds no ready item of its
// own kind takes one of the other kind; a GEMM thread whose claimed chunk is
// still being aggregated aggregates unclaimed blocks meanwhile, and only
// spins (yielding) when every block of that chunk is claimed by threads
// that are running it. No item waits on an unclaimed item, so the call
// completes with any subset of the pool's workers (a late worker finds the
// queues empty and returns).
//
// The blocks are fixed by N, the chunk count and the degree, never by the
// thread count, and each output row is computed by one block, so the result
// does not depend on the threads or on which group ran what.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeMoa.h"

#include "kernels/Csr.h"
#include "kernels/MoaPipeline.h"
#include "support/Check.h"
#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using namespace mgrt;

namespace {

constexpr const char *kName = MGRT_KERNEL_MOA_SPMM_LINEAR;

} // namespace

extern "C" void _mlir_ciface_mgrt_moa_spmm_linear_f32(
    mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg, mgrt_memref_i64_1 *rowPtr,
    mgrt_memref_i64_1 *colIdx, mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
    mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
    mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags) {
  moaSpmmLinear(out, agg, rowPtr, colIdx, values, x, scale, weight, bias,
                chunks, flags, nullptr);
}

void mgrt::moaSpmmLinear(mgrt_memref_f32_2 *out, mgrt_memref_f32_2 *agg,
                         mgrt_memref_i64_1 *rowPtr, mgrt_memref_i64_1 *colIdx,
                         mgrt_memref_f32_1 *values, mgrt_memref_f32_2 *x,
                         mgrt_memref_f32_2 *scale, mgrt_memref_f32_2 *weight,
                         mgrt_memref_f32_1 *bias, int64_t chunks, int64_t flags,
                         const std::vector<int64_t> *todo) {
  MGRT_CHECK(out && agg && rowPtr && colIdx && values && x && scale && weight &&
                 bias,
             kName, "null operand descriptor");
  const bool hasScale = flags & 1, hasBias = flags & 2;
  const int64_t N = agg->sizes[0], D = agg->sizes[1], M = x->sizes[0],
                F = weight->sizes[1];
  MGRT_CHECK(
      x->sizes[1] == D && values->sizes[0] == colIdx->sizes[0] &&
          weight->sizes[0] == D && out->sizes[0] == N && out->sizes[1] == F &&
          (!hasScale || (scale->sizes[0] == N && scale->sizes[1] == 1)) &&
          (!hasBias || bias->sizes[0] == F),
      kName,
      "shape mismatch: agg [%lld,%lld] x [%lld,%lld] weight [%lld,%lld] "
      "out [%lld,%lld] values [%lld] col_idx [%lld]",
      (long long)N, (long long)D, (long long)M, (long long)x->sizes[1],
      (long long)weight->sizes[0], (long long)F, (long long)out->sizes[0],
      (long long)out->sizes[1], (long long)values->sizes[0],
      (long long)colIdx->sizes[0]);
  MGRT_CHECK(chunks >= 1 && (chunks <= N || N == 0), kName,
             "chunks = %lld must be in [1, N = %lld]", (long long)chunks,
             (long long)N);
  MGRT_CHECK(x->strides[1] == 1 && agg->strides[1] == 1 && out->strides[1] == 1,
             kName, "innermost strides of x, agg and out must be 1");
  const CsrView graph = csrView(kName, rowPtr, colIdx, N, M);
  if (N == 0)
    return;
  float *aggData = agg->aligned + agg->offset;
  float *outData = out->aligned + out->offset;
  const int64_t aggStride = agg->strides[0], outStride = out->strides[0];
  const float *scaleData = scale->aligned + scale->offset;
  const float *biasData = bias->aligned + bias->offset;

  // Chunk c has rows [c * N / K, (c + 1) * N / K) (sizes differ by at most
  // one); its SpMM blocks are sized by the degree, its GEMM blocks by
  // kMoaGemmRows.
  auto chunkBegin = [&](int64_t c) { return c * N / chunks; };
  const int64_t spmmRows = csrRowsPerTask(graph, std::max<int64_t>(D, 1));
  struct Block {
    int64_t chunk, r0, r1;
  };
  std::vector<Block> spmmBlocks, gemmBlocks;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = chunkBegin(c), e = chunkBegin(c + 1);
    for (int64_t r = b; r < e; r += spmmRows)
      spmmBlocks.push_back({c, r, std::min(e, r + spmmRows)});
    for (int64_t r = b; r < e; r += kMoaGemmRows)
      gemmBlocks.push_back({c, r, std::min(e, r + kMoaGemmRows)});
  }
  std::unique_ptr<std::atomic<int64_t>[]> pending(
      new std::atomic<int64_t>[chunks]);
  for (int64_t c = 0; c < chunks; ++c)
    pending[c].store(0, std::memory_order_relaxed);
  for (const Block &b : spmmBlocks)
    pending[b.chunk].fetch_add(1, std::memory_order_relaxed);
  std::atomic<int64_t> nextSpmm{0}, nextGemm{0};
  const int64_t numSpmm = static_cast<int64_t>(spmmBlocks.size()),
                numGemm = static_cast<int64_t>(gemmBlocks.size());

  const float *valueData = values->aligned + values->offset;
  const float *xData = x->aligned + x->offset;
  // Claims and runs one SpMM block (and its rows' scale); false when none
  // is left.
  auto scaleRow = [&](int64_t r) {
    const float s = scaleData[r * scale->strides[0]]; // scale [N, 1]: column 0
    float *row = aggData + r * aggStride;
    for (int64_t d = 0; d < D; ++d)
      row[d] *= s;
  };
  auto runSpmm = [&]() {
    const int64_t i = nextSpmm.fetch_add(1, std::memory_order_relaxed);
    if (i >= numSpmm)
      return false;
    const Block &b = spmmBlocks[i];
    if (todo) {
      // Only the block's rows the caller left (each as spmmRowRange
      // computes it).
      const auto lo = std::lower_bound(todo->begin(), todo->end(), b.r0);
      const auto hi = std::lower_bound(lo, todo->end(), b.r1);
      spmmRowsOf(graph, valueData, values->strides[0], xData, x->strides[0],
                 aggData, aggStride, D, todo->data() + (lo - todo->begin()),
                 hi - lo);
      if (hasScale)
        for (auto r = lo; r != hi; ++r)
          scaleRow(*r);
    } else {
      spmmRowRange(graph, valueData, values->strides[0], xData, x->strides[0],
                   aggData, aggStride, D, b.r0, b.r1);
      if (hasScale)
        for (int64_t r = b.r0; r < b.r1; ++r)
          scaleRow(r);
    }
    pending[b.chunk].fetch_sub(1, std::memory_order_release);
    return true;
  };
  const GemmBackend backend = defaultGemmBackend();
  auto gemm = [&](const Block &b) {
    moaGemmRows(aggData, aggStride, 1, weight, hasBias ? biasData : nullptr,
                bias->strides[0], nullptr, 0, outData, outStride, b.r0, b.r1,
                backend);
  };
  // Claims and runs one GEMM block, aggregating while its chunk is not
  // ready; false when none is left.
  auto runGemm = [&]() {
    const int64_t i = nextGemm.fetch_add(1, std::memory_order_relaxed);
    if (i >= numGemm)
      return false;
    const Block &b = gemmBlocks[i];
    while (pending[b.chunk].load(std::memory_order_acquire) != 0)
      if (!runSpmm())
        std::this_thread::yield(); // the chunk's last blocks are running
    gemm(b);
    return true;
  };
  // Whether the next GEMM block's chunk is aggregated.
  auto gemmReady = [&]() {
    const int64_t i = nextGemm.load(std::memory_order_relaxed);
    return i < numGemm &&
           pending[gemmBlocks[i].chunk].load(std::memory_order_acquire) == 0;
  };

  const int threads = numThreads();
  const int spmmGroup =
      moaSpmmThreads(threads, double(graph.edges) * D, double(N) * D * F);
  // One task per thread; task t < spmmGroup aggregates first, the others
  // transform first. parallelFor hands the tasks to whichever workers run.
  parallelFor(threads, [&](int64_t task, int) {
    if (task < spmmGroup) {
      while (runSpmm()) {
      }
      while (runGemm()) {
      }
      return;
    }
    for (;;) {
      if (gemmReady()) {
        if (!runGemm())
          return;
        continue;
      }
      if (runSpmm())
        continue;
      if (!runGemm()) // waits on its chunk's running blocks
        return;
    }
  });
}
