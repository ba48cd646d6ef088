//===- Locality.cpp - A locality order of the nodes of a graph ------------===//
//
// mgrt_order_locality (contract in RuntimeData.h). The transform-first
// accelerator pipeline aggregates an output row once the chunk of its
// largest neighbour is transformed; on a graph whose ids are shuffled
// nearly every row has a neighbour in the last chunk. A breadth-first
// order puts a node's neighbours in its own or the adjacent levels, so most
// rows only wait for the chunk after theirs; starting from the hubs puts
// the rows most nodes read first, and the nodes without edges, which read
// only themselves, fill the last positions.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include "data/GraphUtil.h"

#include <cstdint>
#include <vector>

using namespace mgrt;

int mgrt_order_locality(const mgrt_graph *g, int64_t *order, char *err,
                        size_t errlen) {
  constexpr const char *kWho = "mgrt_order_locality";
  if (int rc = checkGraphHeader(g, kWho, err, errlen))
    return rc;
  const int64_t n = g->num_nodes;
  if (n > 0 && !order)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT, "%s: order is NULL", kWho);
  // 1. Each node's edges to other nodes (rows checked on the way).
  std::vector<int64_t> degree(static_cast<size_t>(n), 0);
  int64_t maxDegree = 0;
  for (int64_t u = 0; u < n; ++u) {
    if (int rc = checkGraphRow(g, u, kWho, err, errlen))
      return rc;
    for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; ++e)
      degree[u] += g->col_idx[e] != u;
    maxDegree = degree[u] > maxDegree ? degree[u] : maxDegree;
  }
  // 2. The search roots: nodes by decreasing degree, ties by id (a
  //    counting sort), those without edges left out.
  std::vector<int64_t> start(static_cast<size_t>(maxDegree) + 2, 0);
  for (int64_t u = 0; u < n; ++u)
    ++start[maxDegree - degree[u] + 1];
  for (int64_t d = 1; d <= maxDegree + 1; ++d)
    start[d] += start[d - 1];
  std::vector<int64_t> byDegree(static_cast<size_t>(n));
  for (int64_t u = 0; u < n; ++u)
    byDegree[start[maxDegree - degree[u]]++] = u;
  // 3. Breadth-first from each root not yet reached; `order` is the queue.
  std::vector<char> placed(static_cast<size_t>(n), 0);
  int64_t filled = 0;
  for (int64_t root : byDegree) {
    if (placed[root] || degree[root] == 0)
      continue;
    placed[root] = 1;
    int64_t head = filled;
    order[filled++] = root;
    while (head < filled) {
      const int64_t u = order[head++];
      for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; ++e) {
        const int64_t v = g->col_idx[e];
        if (!placed[v]) {
          placed[v] = 1;
          order[filled++] = v;
        }
      }
    }
  }
  // 4. The nodes without edges, last.
  for (int64_t u = 0; u < n; ++u)
    if (!placed[u])
      order[filled++] = u;
  return MGRT_OK;
}
