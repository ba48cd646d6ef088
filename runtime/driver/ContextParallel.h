//===- ContextParallel.h - Context parallelism in the driver ----*- C++ -*-===//
//
// Internal to the runtime. What `--mode train` does for a model compiled
// with --plan cp=C (gt-context-parallel): the world of dp x cp
// ranks has the cp ranks innermost (rank = d * cp + c); the cp ranks of one
// dp replica take the same sequences, and rank c fills only its block of
// S / cp rows [c S / cp, (c + 1) S / cp) of every input: features,
// degrees, labels and masks, and SPD rows [S / cp, S] from the row-block
// BFS. When cp does not divide S (mgrt_plan::cp_seq), block c holds
// mgrt_cp_block_rows(S, cp, c) rows from mgrt_cp_block_first, in the first
// rows of the ceil(S / cp) compiled ones; the rest are zero padding, never
// counted. The nodes of every sequence are first reordered so that each
// block is a METIS part of the sequence's induced subgraph (exact sizes).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_CONTEXTPARALLEL_H
#define MEGAGRAPH_RUNTIME_DRIVER_CONTEXTPARALLEL_H

#include "megagraph/ModelABI.h"
#include "megagraph/RuntimeData.h"

#include <cstdint>
#include <string>

namespace mgrt {

struct ContextParallel {
  int size = 1;   ///< cp, the ranks sharing one sequence
  int rank = 0;   ///< this rank's block, 0 <= rank < size
  int dpSize = 1; ///< dp = world / cp, the replicas taking other sequences
  int dpRank = 0; ///< this rank's replica
  /// The sequence length of uneven blocks (mgrt_plan::cp_seq: cp does not
  /// divide it, block c holds mgrt_cp_block_rows rows); 0: S / cp each.
  int64_t seq = 0;
};

/// Reads the model's cp (`plan`; NULL = 1) and splits the world rank
/// `worldRank` of `worldSize` into (dpRank, rank). False with `error` if cp
/// does not divide the world.
bool setupContextParallel(const mgrt_plan *plan, int worldRank, int worldSize,
                          ContextParallel &cp, std::string &error);

/// Reorders the nodes of each of the `numSeq` sequences of `seqLen` nodes
/// in `order` (as from mgrt_partition_metis) so that the cp blocks of
/// consecutive nodes (mgrt_cp_block_rows(seqLen, cp, c) each: seqLen / cp
/// when cp divides seqLen) are the parts of a METIS cp-way partition of the
/// sequence's induced subgraph. No-op for cp = 1. `internal` and
/// `cut` (if given) receive the number of directed edges inside the
/// sequences and how many of them join two different blocks.
bool reorderForContextParallel(const mgrt_graph &g, int64_t *order,
                               int64_t numSeq, int64_t seqLen, int cp,
                               uint64_t seed, std::string &error,
                               int64_t *internal = nullptr,
                               int64_t *cut = nullptr);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_CONTEXTPARALLEL_H
