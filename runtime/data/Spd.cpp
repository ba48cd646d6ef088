//===- Spd.cpp - Shortest-path distances of a sequence, by row block ------===//
//
// mgrt_spd_block (contract in RuntimeData.h): maps the sequence's node ids
// to positions (a dense table when the graph is not much larger than the
// sequence, else a sorted index searched per edge), builds the CSR of the
// induced subgraph over positions, then runs the owned rows' truncated
// BFS 64 at a time, bit-parallel (a 64-bit word per position), writing
// each distance into its output row as the search reaches it.
//
//===----------------------------------------------------------------------===//

#include "data/GraphUtil.h"

#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

using namespace mgrt;

namespace {

constexpr int64_t kChunk = 4096; // sequence nodes per parallel task

/// Position of a node id in the sequence, -1 if absent.
class PositionIndex {
public:
  PositionIndex(const int64_t *nodes, int64_t s, int64_t graphNodes)
      : dense(graphNodes <= 4 * s + 4096) {
    if (dense) {
      table.assign(static_cast<size_t>(graphNodes), -1);
      for (int64_t p = 0; p < s; ++p)
        if (nodes[p] >= 0 && nodes[p] < graphNodes && table[nodes[p]] < 0)
          table[nodes[p]] = p;
    } else {
      sorted.reserve(static_cast<size_t>(s));
      for (int64_t p = 0; p < s; ++p)
        sorted.emplace_back(nodes[p], p);
      std::sort(sorted.begin(), sorted.end());
    }
  }

  int64_t find(int64_t v) const {
    if (dense)
      return table[v];
    auto it = std::lower_bound(sorted.begin(), sorted.end(),
                               std::make_pair(v, int64_t(-1)));
    return it != sorted.end() && it->first == v ? it->second : -1;
  }

private:
  bool dense;
  std::vector<int64_t> table;
  std::vector<std::pair<int64_t, int64_t>> sorted;
};

} // namespace

extern "C" {

int mgrt_spd_block(const mgrt_graph *g, const int64_t *nodes, int64_t num_nodes,
                   int64_t row_begin, int64_t row_end, int64_t max_distance,
                   int64_t *out, char *err, size_t errlen) {
  const char *W = "mgrt_spd_block";
  if (int rc = checkGraphHeader(g, W, err, errlen))
    return rc;
  const int64_t S = num_nodes, n = g->num_nodes;
  if (S < 0 || (S > 0 && !nodes))
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: num_nodes = %lld with nodes %s", W, (long long)S,
                    nodes ? "given" : "NULL");
  if (row_begin < 0 || row_begin > row_end || row_end > S)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: row block [%lld, %lld) is not within [0, %lld)", W,
                    (long long)row_begin, (long long)row_end, (long long)S);
  if (max_distance < 0)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: max_distance = %lld, expected >= 0", W,
                    (long long)max_distance);
  const int64_t rows = row_end - row_begin;
  if (rows > 0 && !out)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT, "%s: out is NULL", W);
  for (int64_t p = 0; p < S; ++p)
    if (nodes[p] < 0 || nodes[p] >= n)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%s: nodes[%lld] = %lld is not a node of the graph "
                      "[0, %lld)",
                      W, (long long)p, (long long)nodes[p], (long long)n);
  if (rows == 0)
    return MGRT_OK;
  if (max_distance == 0) { // every distance truncates to 0
    std::fill(out, out + rows * S, int64_t(0));
    return MGRT_OK;
  }

  const PositionIndex index(nodes, S, n);
  for (int64_t p = 0; p < S; ++p) {
    const int64_t first = index.find(nodes[p]);
    if (first != p)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%s: node %lld appears twice in the sequence "
                      "(positions %lld and %lld)",
                      W, (long long)nodes[p], (long long)std::min(first, p),
                      (long long)std::max(first, p));
  }

  // Induced subgraph over positions: count, prefix sum, fill.
  std::vector<int64_t> lptr(static_cast<size_t>(S) + 1, 0);
  std::atomic<int64_t> badRow{-1};
  const int64_t chunks = (S + kChunk - 1) / kChunk;
  auto forEachLocalEdge = [&](int64_t c, auto &&edge) {
    const int64_t end = std::min(S, (c + 1) * kChunk);
    for (int64_t p = c * kChunk; p < end; ++p) {
      const int64_t u = nodes[p];
      const int64_t b = g->row_ptr[u], e = g->row_ptr[u + 1];
      if (b > e || b < 0 || e > g->num_edges) {
        badRow.store(u, std::memory_order_relaxed);
        return;
      }
      for (int64_t k = b; k < e; ++k) {
        const int64_t v = g->col_idx[k];
        if (v < 0 || v >= n) {
          badRow.store(u, std::memory_order_relaxed);
          return;
        }
        const int64_t q = index.find(v);
        if (q >= 0)
          edge(p, q);
      }
    }
  };
  parallelFor(chunks, [&](int64_t c, int) {
    forEachLocalEdge(c, [&](int64_t p, int64_t) { ++lptr[p + 1]; });
  });
  if (badRow.load() >= 0)
    return dataFail(err, errlen, MGRT_ERR_FORMAT,
                    "%s: row %lld of the graph breaks the CSR contract "
                    "(decreasing row_ptr or col_idx out of [0, %lld)); see "
                    "mgrt_graph_check",
                    W, (long long)badRow.load(), (long long)n);
  for (int64_t p = 0; p < S; ++p)
    lptr[p + 1] += lptr[p];
  std::vector<int64_t> ladj(static_cast<size_t>(lptr[S]));
  parallelFor(chunks, [&](int64_t c, int) {
    const int64_t begin = c * kChunk;
    int64_t at = lptr[begin], prev = begin;
    forEachLocalEdge(c, [&](int64_t p, int64_t q) {
      if (p != prev) {
        at = lptr[p];
        prev = p;
      }
      ladj[at++] = q;
    });
  });

  // The owned rows' BFS, 64 sources at a time, bit-parallel: bit i of a
  // word per position says whether source row0 + i has reached it, so one
  // pass over the edges advances 64 searches by a level. A level costs
  // O(S + edges) word operations for the 64, where 64 queue-based searches
  // cost 64 times the edges they reach; the searches stop after level
  // max_distance - 1 (farther positions keep max_distance) or when no
  // search gains a position.
  const int64_t blocks = (rows + 63) / 64;
  struct Words {
    std::vector<uint64_t> frontier, next, visited;
  };
  std::vector<Words> scratch(static_cast<size_t>(numThreads()));
  parallelFor(blocks, [&](int64_t blk, int worker) {
    Words &w = scratch[worker];
    w.frontier.assign(static_cast<size_t>(S), 0);
    w.next.assign(static_cast<size_t>(S), 0);
    w.visited.assign(static_cast<size_t>(S), 0);
    const int64_t r0 = blk * 64;
    const int64_t count = std::min<int64_t>(64, rows - r0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t *dist = out + (r0 + i) * S;
      std::fill(dist, dist + S, max_distance);
      const int64_t src = row_begin + r0 + i;
      dist[src] = 0;
      w.frontier[src] |= uint64_t(1) << i;
    }
    for (int64_t p = 0; p < S; ++p)
      w.visited[p] = w.frontier[p];
    for (int64_t level = 1; level < max_distance; ++level) {
      // Push: every position on a frontier hands its searches on.
      for (int64_t u = 0; u < S; ++u) {
        const uint64_t f = w.frontier[u];
        if (!f)
          continue;
        for (int64_t k = lptr[u]; k < lptr[u + 1]; ++k)
          w.next[ladj[k]] |= f;
      }
      bool gained = false;
      for (int64_t v = 0; v < S; ++v) {
        uint64_t fresh = w.next[v] & ~w.visited[v];
        w.next[v] = 0;
        w.frontier[v] = fresh;
        if (!fresh)
          continue;
        gained = true;
        w.visited[v] |= fresh;
        for (; fresh; fresh &= fresh - 1)
          out[(r0 + __builtin_ctzll(fresh)) * S + v] = level;
      }
      if (!gained)
        break;
    }
  });
  return MGRT_OK;
}

} // extern "C"
