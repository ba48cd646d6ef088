//===- NodeOrder.cpp - Node renumbering for the MoA pipeline --------------===//
//
// See NodeOrder.h.
//
//===----------------------------------------------------------------------===//

#include "driver/NodeOrder.h"

#include "kernels/MoaPipeline.h"
#include "megagraph/RuntimeData.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace mgrt {
namespace {

/// The layout of sequence `seq` (seq[i] the i-th node) over `blocks`
/// blocks: with `keepBlocks`, `order`'s blocks each sorted by place in
/// `seq`; otherwise node i of `seq` at row i / blocks of block i % blocks.
std::vector<int64_t> layOut(const std::vector<int64_t> &seq,
                            const std::vector<int64_t> &order, int64_t blocks,
                            bool keepBlocks) {
  const int64_t N = static_cast<int64_t>(seq.size()), n = N / blocks;
  std::vector<int64_t> out(N);
  if (!keepBlocks) {
    for (int64_t i = 0; i < N; ++i)
      out[(i % blocks) * n + i / blocks] = seq[i];
    return out;
  }
  // A counting sort by block, in the sequence's order: O(N).
  std::vector<int64_t> blockOf(N), next(blocks);
  for (int64_t k = 0; k < N; ++k)
    blockOf[order[k]] = k / n;
  for (int64_t b = 0; b < blocks; ++b)
    next[b] = b * n;
  for (int64_t v : seq)
    out[next[blockOf[v]]++] = v;
  return out;
}

/// `chunks` METIS parts of the chunks' sizes laid out one after the
/// other, the parts that the most rows of other parts read first (the last
/// chunk is then the part fewest other rows wait for), each part in the
/// order of `bfs`. False when METIS fails (the caller keeps BFS).
bool metisChunks(const mgrt_graph &g, const std::vector<int64_t> &bfs,
                 int64_t chunks, uint64_t seed, std::vector<int64_t> &seq) {
  const int64_t N = g.num_nodes;
  std::vector<int64_t> sizes(chunks), parts(N);
  for (int64_t c = 0; c < chunks; ++c)
    sizes[c] = (c + 1) * N / chunks - c * N / chunks;
  char err[256];
  if (mgrt_partition_metis_sizes(&g, chunks, sizes.data(), seed, parts.data(),
                                 err, sizeof err) != MGRT_OK)
    return false;
  std::vector<int64_t> partOf(N);
  for (int64_t c = 0, k = 0; c < chunks; ++c)
    for (int64_t j = 0; j < sizes[c]; ++j, ++k)
      partOf[parts[k]] = c;
  // readers[q]: the rows outside part q with a neighbour in it.
  std::vector<int64_t> readers(chunks, 0), lastRow(chunks, -1);
  for (int64_t u = 0; u < N; ++u)
    for (int64_t e = g.row_ptr[u]; e < g.row_ptr[u + 1]; ++e) {
      const int64_t q = partOf[g.col_idx[e]];
      if (q != partOf[u] && lastRow[q] != u)
        lastRow[q] = u, ++readers[q];
    }
  std::vector<int64_t> rankOfPart(chunks);
  for (int64_t c = 0; c < chunks; ++c)
    rankOfPart[c] = c;
  std::stable_sort(
      rankOfPart.begin(), rankOfPart.end(),
      [&](int64_t a, int64_t b) { return readers[a] > readers[b]; });
  std::vector<int64_t> placeOf(chunks), next(chunks + 1, 0);
  for (int64_t r = 0; r < chunks; ++r)
    placeOf[rankOfPart[r]] = r;
  for (int64_t r = 0; r < chunks; ++r)
    next[r + 1] = next[r] + sizes[rankOfPart[r]];
  seq.assign(N, 0);
  for (int64_t v : bfs)
    seq[next[placeOf[partOf[v]]]++] = v;
  return true;
}

double share(int64_t rows, int64_t N) {
  return N ? 100.0 * static_cast<double>(rows) / static_cast<double>(N) : 0.0;
}

} // namespace

bool renumbersNodes(const Options &opts, const mgrt_plan *plan) {
  return opts.reorder == "auto" && plan && plan->moa;
}

int64_t rowsReadyBeforeLastChunk(const mgrt_graph &g,
                                 const std::vector<int64_t> &order,
                                 int64_t blocks, int64_t chunks,
                                 bool sameBlock) {
  const int64_t N = g.num_nodes, n = N / blocks;
  if (N == 0 || n == 0 || chunks < 1)
    return 0;
  std::vector<int64_t> pos(N);
  for (int64_t k = 0; k < N; ++k)
    pos[order[k]] = k;
  int64_t ready = 0;
  for (int64_t k = 0; k < N; ++k) {
    const int64_t u = order[k], block = k / n;
    bool early = moaChunkOf(k % n, n, chunks) < chunks - 1;
    for (int64_t e = g.row_ptr[u]; early && e < g.row_ptr[u + 1]; ++e) {
      const int64_t p = pos[g.col_idx[e]];
      early = moaChunkOf(p % n, n, chunks) < chunks - 1 &&
              (!sameBlock || p / n == block);
    }
    ready += early;
  }
  return ready;
}

bool localityNodeOrder(const GraphData &data, const Options &opts,
                       int64_t blocks, bool keepBlocks, int64_t chunks,
                       bool lead, std::vector<int64_t> &order,
                       std::string &error) {
  const mgrt_graph &g = data.graph;
  const int64_t N = g.num_nodes;
  if (blocks < 1 || N % blocks != 0 || chunks < 1)
    return setError(error, "--reorder: " + std::to_string(N) +
                               " nodes cannot be laid out in " +
                               std::to_string(blocks) + " blocks of " +
                               std::to_string(chunks) + " chunks");
  const auto start = std::chrono::steady_clock::now();
  std::vector<int64_t> bfs(N);
  char err[512];
  if (mgrt_order_locality(&g, bfs.data(), err, sizeof err) != MGRT_OK)
    return setError(error, std::string("--reorder: ") + err);
  const int64_t before =
      rowsReadyBeforeLastChunk(g, order, blocks, chunks, keepBlocks);
  std::vector<int64_t> best = layOut(bfs, order, blocks, keepBlocks);
  int64_t bestReady =
      rowsReadyBeforeLastChunk(g, best, blocks, chunks, keepBlocks);
  const char *how = "BFS";
  std::vector<int64_t> seq;
  if (chunks > 1 && metisChunks(g, bfs, chunks, opts.seed, seq)) {
    std::vector<int64_t> parts = layOut(seq, order, blocks, keepBlocks);
    const int64_t ready =
        rowsReadyBeforeLastChunk(g, parts, blocks, chunks, keepBlocks);
    if (ready > bestReady)
      best.swap(parts), bestReady = ready, how = "METIS-part";
  }
  order.swap(best);
  if (!opts.quiet && lead)
    std::fprintf(
        stderr,
        "reorder: nodes renumbered for moa chunks=%lld (%s order): "
        "%.1f%% of the rows ready before the last chunk (%.1f%% "
        "unrenumbered; %.2f s)\n",
        (long long)chunks, how, share(bestReady, N), share(before, N),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  return true;
}

} // namespace mgrt
