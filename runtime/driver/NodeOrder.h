//===- NodeOrder.h - Node renumbering for the MoA pipeline ------*- C++ -*-===//
//
// Internal to the runtime. The transform-first pipeline of --plan
// moa=1,chunks=K (gt.linear_spmm) aggregates an output row once the chunk
// of its largest neighbour is transformed, so the order of the nodes
// decides how much of the aggregation overlaps the transform. With
// --reorder auto (the default) a run whose plan has moa renumbers the
// nodes, once, before the first step: a locality order (MixGCN's node
// reordering) in which a row's neighbours sit in its own or nearby chunks
// and the rows that most rows read come first. FullGraphBatches writes
// every node input (x, labels, masks, degrees, both endpoints of
// edge_index) in that order; the losses are the same up to the order of
// float sums, the data set's node at row k is order[k] (--dump-inputs
// writes it as node_order.npy).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_NODEORDER_H
#define MEGAGRAPH_RUNTIME_DRIVER_NODEORDER_H

#include "megagraph/ModelABI.h"

#include "driver/Options.h"
#include "driver/Topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

/// True when the nodes are renumbered for `plan`: --reorder auto and a
/// plan with moa (alone, with mop or with gp).
bool renumbersNodes(const Options &opts, const mgrt_plan *plan);

/// The output rows of the transform-first pipeline that are ready before
/// its last chunk is transformed, with the nodes laid out by `order` in
/// `blocks` blocks of N / blocks rows (one process: 1; mop=P, gp=P: P),
/// each block cut into `chunks` chunks as the kernels cut it: the rows
/// whose neighbours, the row itself included (GCN's self loop), all lie in
/// chunks 0..chunks-2 of their blocks. With `sameBlock` (gp, whose rows
/// with a neighbour in another block wait for the halo) they must also lie
/// in the row's own block.
int64_t rowsReadyBeforeLastChunk(const mgrt_graph &g,
                                 const std::vector<int64_t> &order,
                                 int64_t blocks, int64_t chunks,
                                 bool sameBlock);

/// Renumbers `order` (a permutation of `blocks` blocks of N / blocks
/// nodes: partitionNodes') for a pipeline of `chunks` chunks. Two
/// candidate sequences of all nodes: the BFS locality order
/// (mgrt_order_locality) and `chunks` METIS parts laid out one after the
/// other (the parts most other nodes read first), each part in BFS order.
/// With `keepBlocks` (gp) every block keeps its nodes, sorted by their
/// place in the sequence; otherwise (one process, mop) node i of the
/// sequence goes to row i / blocks of block i % blocks, so chunk c of each
/// block holds about the sequence's c-th K-th. Of the two layouts the one
/// with more rows ready before the last chunk is kept (ties: BFS).
/// Prints the shares unless opts.quiet or not `lead`.
bool localityNodeOrder(const GraphData &data, const Options &opts,
                       int64_t blocks, bool keepBlocks, int64_t chunks,
                       bool lead, std::vector<int64_t> &order,
                       std::string &error);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_NODEORDER_H
