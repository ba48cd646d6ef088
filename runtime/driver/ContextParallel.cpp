//===- ContextParallel.cpp - Context parallelism in the driver ------------===//

#include "driver/ContextParallel.h"

#include <vector>

namespace mgrt {

bool setupContextParallel(const mgrt_plan *plan, int worldRank, int worldSize,
                          ContextParallel &cp, std::string &error) {
  const int64_t planned = plan ? plan->cp : 1;
  if (planned < 1 || worldSize % planned != 0) {
    error = "the model was compiled with --plan cp=" + std::to_string(planned) +
            ", which does not divide the " + std::to_string(worldSize) +
            " process(es) of the job";
    return false;
  }
  cp.size = static_cast<int>(planned);
  cp.rank = worldRank % cp.size;
  cp.dpSize = worldSize / cp.size;
  cp.dpRank = worldRank / cp.size;
  cp.seq = plan && cp.size > 1 ? plan->cp_seq : 0;
  return true;
}

bool reorderForContextParallel(const mgrt_graph &g, int64_t *order,
                               int64_t numSeq, int64_t seqLen, int cp,
                               uint64_t seed, std::string &error,
                               int64_t *internal, int64_t *cut) {
  if (cp <= 1)
    return true;
  if (seqLen < cp) {
    error =
        "cp=" + std::to_string(cp) + " exceeds S = " + std::to_string(seqLen);
    return false;
  }
  std::vector<int64_t> local(g.num_nodes, -1), rowPtr(seqLen + 1), colIdx,
      part(seqLen), nodes(seqLen), sizes(cp);
  for (int c = 0; c < cp; ++c)
    sizes[c] = mgrt_cp_block_rows(seqLen, cp, c);
  char err[256];
  for (int64_t s = 0; s < numSeq; ++s) {
    int64_t *seq = order + s * seqLen;
    for (int64_t i = 0; i < seqLen; ++i)
      local[seq[i]] = i;
    // The induced subgraph, in local ids.
    colIdx.clear();
    for (int64_t i = 0; i < seqLen; ++i) {
      rowPtr[i] = static_cast<int64_t>(colIdx.size());
      const int64_t u = seq[i];
      for (int64_t e = g.row_ptr[u]; e < g.row_ptr[u + 1]; ++e)
        if (const int64_t v = local[g.col_idx[e]]; v >= 0)
          colIdx.push_back(v);
    }
    rowPtr[seqLen] = static_cast<int64_t>(colIdx.size());
    mgrt_graph sub = {seqLen, static_cast<int64_t>(colIdx.size()),
                      rowPtr.data(), colIdx.data()};
    // cp parts of exactly the blocks' sizes.
    if (mgrt_partition_metis_sizes(&sub, cp, sizes.data(), seed + s,
                                   part.data(), err, sizeof err) != MGRT_OK) {
      error = std::string("cp blocks (METIS): ") + err;
      return false;
    }
    for (int64_t i = 0; i < seqLen; ++i)
      nodes[i] = seq[part[i]];
    // Edges inside the sequence, and those between blocks (block of local
    // node v: the block holding its position in part[]).
    if (internal || cut) {
      std::vector<int64_t> block(seqLen);
      for (int64_t i = 0, c = 0; i < seqLen; ++i) {
        while (i >= mgrt_cp_block_first(seqLen, cp, c) + sizes[c])
          ++c;
        block[part[i]] = c;
      }
      int64_t in = 0, across = 0;
      for (int64_t u = 0; u < seqLen; ++u)
        for (int64_t e = rowPtr[u]; e < rowPtr[u + 1]; ++e)
          if (colIdx[e] != u)
            ++in, across += block[u] != block[colIdx[e]];
      if (internal)
        *internal += in;
      if (cut)
        *cut += across;
    }
    for (int64_t i = 0; i < seqLen; ++i) {
      local[seq[i]] = -1;
      seq[i] = nodes[i];
    }
  }
  return true;
}

} // namespace mgrt
