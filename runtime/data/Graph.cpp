//===- Graph.cpp - CSR graphs: free, check, degrees, partition ------------===//
//
// mgrt_graph's lifetime and contract check, degrees, and the greedy
// graph-growing partition of the nodes into sequences (a stand-in for METIS;
// see RuntimeData.h).
//
//===----------------------------------------------------------------------===//

#include "data/GraphUtil.h"

#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mgrt {

int checkGraphHeader(const mgrt_graph *g, const char *who, char *err,
                     size_t errlen) {
  if (!g)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT, "%s: graph is NULL", who);
  if (g->num_nodes < 0 || g->num_edges < 0)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: negative size (num_nodes = %lld, num_edges = %lld)",
                    who, (long long)g->num_nodes, (long long)g->num_edges);
  if (!g->row_ptr || (g->num_edges > 0 && !g->col_idx))
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: graph has a NULL row_ptr or col_idx", who);
  if (g->row_ptr[0] != 0 || g->row_ptr[g->num_nodes] != g->num_edges)
    return dataFail(err, errlen, MGRT_ERR_FORMAT,
                    "%s: row_ptr[0] = %lld and row_ptr[%lld] = %lld, expected "
                    "0 and num_edges = %lld",
                    who, (long long)g->row_ptr[0], (long long)g->num_nodes,
                    (long long)g->row_ptr[g->num_nodes],
                    (long long)g->num_edges);
  return MGRT_OK;
}

int checkGraphRow(const mgrt_graph *g, int64_t u, const char *who, char *err,
                  size_t errlen) {
  const int64_t n = g->num_nodes;
  const int64_t b = g->row_ptr[u], e = g->row_ptr[u + 1];
  if (b > e || e > g->num_edges)
    return dataFail(err, errlen, MGRT_ERR_FORMAT,
                    "%s: row %lld breaks the CSR contract; see "
                    "mgrt_graph_check",
                    who, (long long)u);
  for (int64_t k = b; k < e; ++k)
    if (g->col_idx[k] < 0 || g->col_idx[k] >= n)
      return dataFail(err, errlen, MGRT_ERR_FORMAT,
                      "%s: col_idx[%lld] = %lld is out of range [0, %lld)", who,
                      (long long)k, (long long)g->col_idx[k], (long long)n);
  return MGRT_OK;
}

} // namespace mgrt

using namespace mgrt;

namespace {
constexpr int64_t kChunk = 16384; // nodes per parallel task
} // namespace

extern "C" {

void mgrt_graph_free(mgrt_graph *g) {
  if (!g)
    return;
  mgrt_free(g->row_ptr);
  mgrt_free(g->col_idx);
  std::memset(g, 0, sizeof *g);
}

int mgrt_graph_check(const mgrt_graph *g, char *err, size_t errlen) {
  if (int rc = checkGraphHeader(g, "mgrt_graph_check", err, errlen))
    return rc;
  const int64_t n = g->num_nodes;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = g->row_ptr[i], e = g->row_ptr[i + 1];
    if (e < b)
      return dataFail(err, errlen, MGRT_ERR_FORMAT,
                      "mgrt_graph_check: row_ptr decreases at row %lld "
                      "(%lld > %lld)",
                      (long long)i, (long long)b, (long long)e);
    if (e > g->num_edges)
      return dataFail(err, errlen, MGRT_ERR_FORMAT,
                      "mgrt_graph_check: row_ptr[%lld] = %lld exceeds "
                      "num_edges = %lld",
                      (long long)(i + 1), (long long)e,
                      (long long)g->num_edges);
    for (int64_t k = b; k < e; ++k)
      if (g->col_idx[k] < 0 || g->col_idx[k] >= n)
        return dataFail(err, errlen, MGRT_ERR_FORMAT,
                        "mgrt_graph_check: col_idx[%lld] = %lld (an edge of "
                        "row %lld) is out of range [0, %lld)",
                        (long long)k, (long long)g->col_idx[k], (long long)i,
                        (long long)n);
  }
  return MGRT_OK;
}

int mgrt_graph_degrees(const mgrt_graph *g, mgrt_tensor *in_degree,
                       mgrt_tensor *out_degree, char *err, size_t errlen) {
  if (in_degree)
    std::memset(in_degree, 0, sizeof *in_degree);
  if (out_degree)
    std::memset(out_degree, 0, sizeof *out_degree);
  if (int rc = checkGraphHeader(g, "mgrt_graph_degrees", err, errlen))
    return rc;
  const int64_t n = g->num_nodes;
  const int64_t shape[1] = {n};
  mgrt_tensor in{}, out{};
  if (in_degree && mgrt_tensor_alloc(&in, MGRT_I64, 1, shape) != MGRT_OK)
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_graph_degrees: cannot allocate %lld degrees",
                    (long long)n);
  if (out_degree && mgrt_tensor_alloc(&out, MGRT_I64, 1, shape) != MGRT_OK) {
    mgrt_tensor_free(&in);
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_graph_degrees: cannot allocate %lld degrees",
                    (long long)n);
  }
  int64_t *inDeg = static_cast<int64_t *>(in.data);
  int64_t *outDeg = static_cast<int64_t *>(out.data);
  std::atomic<int64_t> badRow{-1}; // a row with a bad row_ptr or edge
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, [&](int64_t c, int) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) {
      const int64_t b = g->row_ptr[i], e = g->row_ptr[i + 1];
      if (b > e || e > g->num_edges) {
        badRow.store(i, std::memory_order_relaxed);
        return;
      }
      if (outDeg)
        outDeg[i] = e - b;
      if (!inDeg)
        continue;
      for (int64_t k = b; k < e; ++k) {
        const int64_t j = g->col_idx[k];
        if (j < 0 || j >= n) {
          badRow.store(i, std::memory_order_relaxed);
          return;
        }
        __atomic_fetch_add(&inDeg[j], 1, __ATOMIC_RELAXED);
      }
    }
  });
  if (badRow.load() >= 0) {
    mgrt_tensor_free(&in);
    mgrt_tensor_free(&out);
    return dataFail(err, errlen, MGRT_ERR_FORMAT,
                    "mgrt_graph_degrees: row %lld breaks the CSR contract "
                    "(decreasing row_ptr or col_idx out of [0, %lld)); see "
                    "mgrt_graph_check",
                    (long long)badRow.load(), (long long)n);
  }
  if (in_degree)
    *in_degree = in;
  if (out_degree)
    *out_degree = out;
  return MGRT_OK;
}

int mgrt_partition_sequences(const mgrt_graph *g, int64_t seq_len,
                             int64_t *order, char *err, size_t errlen) {
  if (int rc = checkGraphHeader(g, "mgrt_partition_sequences", err, errlen))
    return rc;
  if (seq_len < 1)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_sequences: seq_len = %lld, expected >= 1",
                    (long long)seq_len);
  const int64_t n = g->num_nodes;
  if (n > 0 && !order)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_sequences: order is NULL");
  // Greedy graph growing: the next node of a sequence is the unassigned one
  // with the most edges into it (lazy max-heap, stale entries skipped),
  // ties broken first-discovered-first, so it is a BFS among equals.
  struct Entry {
    int64_t gain, stamp, node;
    bool operator<(const Entry &o) const { // std heap: max at the top
      return gain != o.gain ? gain < o.gain : stamp > o.stamp;
    }
  };
  std::vector<char> assigned(static_cast<size_t>(n), 0);
  std::vector<int64_t> gain(static_cast<size_t>(n), 0), touched;
  std::vector<Entry> heap;
  int64_t filled = 0, cursor = 0, stamp = 0, nextSeed = -1;
  auto popValid = [&]() -> int64_t {
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Entry e = heap.back();
      heap.pop_back();
      if (!assigned[e.node] && gain[e.node] == e.gain)
        return e.node;
    }
    return -1;
  };
  while (filled < n) {
    const int64_t stop = std::min(n, filled + seq_len);
    for (int64_t v : touched)
      gain[v] = 0;
    touched.clear();
    heap.clear();
    // Seed: the best candidate left by the previous sequence (a neighbour,
    // keeping consecutive sequences adjacent), else the smallest free id.
    int64_t v = nextSeed;
    while (filled < stop) {
      if (v < 0) {
        while (assigned[cursor])
          ++cursor;
        v = cursor;
      }
      assigned[v] = 1;
      order[filled++] = v;
      const int64_t b = g->row_ptr[v], e = g->row_ptr[v + 1];
      if (b > e || e > g->num_edges)
        return dataFail(err, errlen, MGRT_ERR_FORMAT,
                        "mgrt_partition_sequences: row %lld breaks the CSR "
                        "contract (row_ptr %lld > %lld or past num_edges); "
                        "see mgrt_graph_check",
                        (long long)v, (long long)b, (long long)e);
      for (int64_t k = b; k < e; ++k) {
        const int64_t w = g->col_idx[k];
        if (w < 0 || w >= n)
          return dataFail(err, errlen, MGRT_ERR_FORMAT,
                          "mgrt_partition_sequences: col_idx[%lld] = %lld "
                          "(an edge of row %lld) is out of range [0, %lld)",
                          (long long)k, (long long)w, (long long)v,
                          (long long)n);
        if (assigned[w])
          continue;
        if (gain[w] == 0)
          touched.push_back(w);
        heap.push_back({++gain[w], stamp++, w});
        std::push_heap(heap.begin(), heap.end());
      }
      v = popValid();
    }
    nextSeed = v;
  }
  return MGRT_OK;
}

} // extern "C"
