//===- Metis.cpp - METIS partition of a graph into sequences --------------===//
//
// mgrt_partition_metis and mgrt_partition_edge_cut (contracts in
// RuntimeData.h). METIS balances parts only up to a tolerance, while a
// training batch needs sequences of exactly S nodes, so a repair pass moves
// the loosest nodes of overfull parts into the underfull parts they are
// best connected to.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include "data/GraphUtil.h"

#include <metis.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

using namespace mgrt;

namespace {

/// The symmetrized graph in METIS's CSR (idx_t), no self loops or
/// duplicates. Returns MGRT_OK or an error code with the message written.
int symmetrize(const mgrt_graph *g, std::vector<idx_t> &xadj,
               std::vector<idx_t> &adjncy, char *err, size_t errlen) {
  const int64_t n = g->num_nodes;
  std::vector<int64_t> count(n + 1, 0);
  for (int64_t u = 0; u < n; ++u) {
    if (int rc = checkGraphRow(g, u, "mgrt_partition_metis", err, errlen))
      return rc;
    const int64_t b = g->row_ptr[u], e = g->row_ptr[u + 1];
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = g->col_idx[k];
      if (v != u)
        ++count[u + 1], ++count[v + 1];
    }
  }
  for (int64_t i = 0; i < n; ++i)
    count[i + 1] += count[i];
  if (count[n] > std::numeric_limits<idx_t>::max())
    return dataFail(err, errlen, MGRT_ERR_UNSUPPORTED,
                    "mgrt_partition_metis: %lld symmetrized edges do not fit "
                    "METIS's 32-bit indices",
                    (long long)count[n]);
  std::vector<idx_t> adj(count[n]);
  std::vector<int64_t> fill(count.begin(), count.end() - 1);
  for (int64_t u = 0; u < n; ++u)
    for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; ++k) {
      const int64_t v = g->col_idx[k];
      if (v == u)
        continue;
      adj[fill[u]++] = static_cast<idx_t>(v);
      adj[fill[v]++] = static_cast<idx_t>(u);
    }
  xadj.assign(n + 1, 0);
  adjncy.clear();
  adjncy.reserve(adj.size());
  for (int64_t u = 0; u < n; ++u) {
    auto b = adj.begin() + count[u], e = adj.begin() + count[u + 1];
    std::sort(b, e);
    adjncy.insert(adjncy.end(), b, std::unique(b, e));
    xadj[u + 1] = static_cast<idx_t>(adjncy.size());
  }
  return MGRT_OK;
}

/// Makes every part p hold exactly sizes[p] nodes (see RuntimeData.h).
void repair(const std::vector<idx_t> &xadj, const std::vector<idx_t> &adjncy,
            int64_t k, const int64_t *sizes, int64_t n,
            std::vector<idx_t> &part) {
  auto target = [&](int64_t p) { return sizes[p]; };
  std::vector<int64_t> size(k, 0);
  for (int64_t v = 0; v < n; ++v)
    ++size[part[v]];
  std::vector<std::vector<int64_t>> members(k);
  for (int64_t v = 0; v < n; ++v)
    if (size[part[v]] > target(part[v]))
      members[part[v]].push_back(v);
  auto inside = [&](int64_t v) {
    int64_t c = 0;
    for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e)
      c += part[adjncy[e]] == part[v];
    return c;
  };
  // 1. Overfull parts release their loosest nodes (fewest edges inside).
  std::vector<int64_t> pool;
  for (int64_t p = 0; p < k; ++p) {
    if (size[p] <= target(p))
      continue;
    std::vector<std::pair<int64_t, int64_t>> byInside;
    for (int64_t v : members[p])
      byInside.push_back({inside(v), v});
    std::sort(byInside.begin(), byInside.end());
    for (int64_t i = 0; i < size[p] - target(p); ++i)
      pool.push_back(byInside[i].second);
  }
  for (int64_t v : pool)
    --size[part[v]], part[v] = -1;
  // 2. Each released node joins the underfull part with most of its
  // neighbours, else the first underfull one.
  std::sort(pool.begin(), pool.end());
  std::vector<int64_t> votes(k, 0), seen;
  int64_t cursor = 0;
  for (int64_t v : pool) {
    int64_t best = -1;
    for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e) {
      const idx_t q = part[adjncy[e]];
      if (q < 0 || size[q] >= target(q))
        continue;
      if (votes[q]++ == 0)
        seen.push_back(q);
      if (best < 0 || votes[q] > votes[best] ||
          (votes[q] == votes[best] && q < best))
        best = q;
    }
    for (int64_t q : seen)
      votes[q] = 0;
    seen.clear();
    if (best < 0) {
      while (size[cursor] >= target(cursor))
        ++cursor;
      best = cursor;
    }
    part[v] = static_cast<idx_t>(best);
    ++size[best];
  }
}

} // namespace

extern "C" {

int mgrt_partition_metis(const mgrt_graph *g, int64_t seq_len, uint64_t seed,
                         int64_t *order, char *err, size_t errlen) {
  if (int rc = checkGraphHeader(g, "mgrt_partition_metis", err, errlen))
    return rc;
  if (seq_len < 1)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_metis: seq_len = %lld, expected >= 1",
                    (long long)seq_len);
  const int64_t n = g->num_nodes;
  // Parts of seq_len nodes, the last one the remainder.
  const int64_t k = std::max<int64_t>(1, (n + seq_len - 1) / seq_len);
  std::vector<int64_t> sizes(k, seq_len);
  sizes.back() = n - (k - 1) * seq_len;
  return mgrt_partition_metis_sizes(g, k, sizes.data(), seed, order, err,
                                    errlen);
}

int mgrt_partition_metis_sizes(const mgrt_graph *g, int64_t nparts,
                               const int64_t *sizes, uint64_t seed,
                               int64_t *order, char *err, size_t errlen) {
  if (int rc = checkGraphHeader(g, "mgrt_partition_metis", err, errlen))
    return rc;
  const int64_t n = g->num_nodes;
  int64_t total = 0, largest = 0;
  for (int64_t p = 0; sizes && p < nparts; ++p) {
    if (sizes[p] < 0)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "mgrt_partition_metis: part %lld has size %lld",
                      (long long)p, (long long)sizes[p]);
    total += sizes[p];
    largest = std::max(largest, sizes[p]);
  }
  if (nparts < 1 || !sizes || total != n)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_metis: %lld part sizes summing to %lld "
                    "for %lld nodes",
                    (long long)nparts, (long long)total, (long long)n);
  if (n > 0 && !order)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_metis: order is NULL");
  if (n >= std::numeric_limits<idx_t>::max())
    return dataFail(err, errlen, MGRT_ERR_UNSUPPORTED,
                    "mgrt_partition_metis: %lld nodes do not fit METIS's "
                    "32-bit indices",
                    (long long)n);
  std::vector<idx_t> xadj, adjncy;
  if (int rc = symmetrize(g, xadj, adjncy, err, errlen))
    return rc;
  const int64_t k = nparts;
  std::vector<idx_t> part(n, 0);
  if (k > 1 && largest > 1 && !adjncy.empty()) {
    // 1. METIS with target part weights sizes[p] / N.
    idx_t nvtxs = static_cast<idx_t>(n), ncon = 1,
          numParts = static_cast<idx_t>(k), objval = 0;
    std::vector<real_t> tpwgts(k);
    for (int64_t p = 0; p < k; ++p)
      tpwgts[p] = static_cast<real_t>(static_cast<double>(sizes[p]) /
                                      static_cast<double>(n));
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
    options[METIS_OPTION_UFACTOR] = 10; // 1% imbalance; repaired below
    const int rc = METIS_PartGraphKway(
        &nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr,
        &numParts, tpwgts.data(), nullptr, options, &objval, part.data());
    if (rc != METIS_OK)
      return dataFail(err, errlen,
                      rc == METIS_ERROR_MEMORY ? MGRT_ERR_NOMEM
                                               : MGRT_ERR_ARGUMENT,
                      "mgrt_partition_metis: METIS_PartGraphKway failed "
                      "(%s) on %lld nodes, %lld parts",
                      rc == METIS_ERROR_MEMORY  ? "out of memory"
                      : rc == METIS_ERROR_INPUT ? "input error"
                                                : "error",
                      (long long)n, (long long)k);
    // 2. Exact sizes.
    repair(xadj, adjncy, k, sizes, n, part);
  } else {
    // One part, single-node parts or no edges: any order is as good.
    for (int64_t v = 0, p = 0, filled = 0; v < n; ++v) {
      while (filled == sizes[p])
        ++p, filled = 0;
      part[v] = static_cast<idx_t>(p);
      ++filled;
    }
  }
  // 3. Sequence p = part p, nodes in increasing id (a counting sort).
  std::vector<int64_t> start(k + 1, 0);
  for (int64_t v = 0; v < n; ++v)
    ++start[part[v] + 1];
  for (int64_t p = 0; p < k; ++p)
    start[p + 1] += start[p];
  for (int64_t v = 0; v < n; ++v)
    order[start[part[v]]++] = v;
  return MGRT_OK;
}

int mgrt_partition_edge_cut(const mgrt_graph *g, const int64_t *order,
                            int64_t seq_len, int64_t *cut, char *err,
                            size_t errlen) {
  if (int rc = checkGraphHeader(g, "mgrt_partition_edge_cut", err, errlen))
    return rc;
  const int64_t n = g->num_nodes;
  if (seq_len < 1 || !cut || (n > 0 && !order))
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_partition_edge_cut: needs seq_len >= 1 (got %lld), "
                    "order and cut",
                    (long long)seq_len);
  std::vector<int64_t> seq(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = order[i];
    if (v < 0 || v >= n || seq[v] >= 0)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "mgrt_partition_edge_cut: order[%lld] = %lld is out of "
                      "range or repeated; order must be a permutation of "
                      "[0, %lld)",
                      (long long)i, (long long)v, (long long)n);
    seq[v] = i / seq_len;
  }
  int64_t c = 0;
  for (int64_t u = 0; u < n; ++u) {
    if (int rc = checkGraphRow(g, u, "mgrt_partition_edge_cut", err, errlen))
      return rc;
    const int64_t b = g->row_ptr[u], e = g->row_ptr[u + 1];
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = g->col_idx[k];
      c += v != u && seq[u] != seq[v];
    }
  }
  *cut = c;
  return MGRT_OK;
}

} // extern "C"
