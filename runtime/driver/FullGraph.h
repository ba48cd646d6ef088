//===- FullGraph.h - Full-graph training inputs -----------------*- C++ -*-===//
//
// Internal to the runtime. The batch source of a full-graph model (B = 1,
// S = N: the whole graph in every step, as GCN-family models written the
// PyG way train). Its inputs, by role:
//   x | features | node_feat  f32 [R, F]   node features
//   edge_index                i64 | i32 [2, E]  row 0 the source, row 1 the
//                             target of every directed edge of the data set
//                             (an undirected graph gives both directions)
//   adj_norm                  f32 [R, N]  D^-1/2 (A + I) D^-1/2, dense (N at
//                             most 32768; a model compiled with
//                             --input-shape edge_index=2xE takes
//                             edge_index instead: gt-sparse-adjacency)
//   in_degree | out_degree    i64 | i32 [R]
//   labels, label_mask, eval_mask  [R] (gt-autodiff's)
// R is N, or N / P on a rank of a plan that splits the rows over P ranks
// (mop, gp): rank r fills rows [r R, (r + 1) R) of the node order, which is
// the data set's, or with gp the METIS parts one after the other. The
// compiled shapes must match the data set (N nodes, E directed edges, F
// features); otherwise the error gives the --input-shape flags that
// compile the model for it.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_FULLGRAPH_H
#define MEGAGRAPH_RUNTIME_DRIVER_FULLGRAPH_H

#include "megagraph/ModelABI.h"

#include "driver/BatchSource.h"
#include "driver/Topology.h"

#include <memory>
#include <string>
#include <vector>

namespace mgrt {

/// True when `model` trains on one whole graph: it has an edge_index input,
/// or its node features (or dense adjacency) have no batch dimension.
bool isFullGraphModel(const mgrt_model_info &model);

/// Appends to `errors` every input of `model` that does not fit the data
/// set: a role without a full-graph convention, a dtype or rank, or a shape
/// that differs from the data's N / E / F (R = N, or N / ranks when the
/// plan splits the rows over `ranks`). Shape errors end with the
/// --input-shape flags for this data set.
void checkFullGraphInputs(const mgrt_model_info &model, const GraphData &data,
                          int ranks, std::vector<std::string> &errors);

/// The node order of `parts` METIS parts of exactly N / parts nodes each,
/// part p at [p N / parts, (p + 1) N / parts) (opts.seed seeds METIS); the
/// identity for one part. Prints the edge cut unless opts.quiet or not
/// `lead`.
bool partitionNodes(const GraphData &data, const Options &opts, int parts,
                    bool lead, std::vector<int64_t> &order, std::string &error);

/// --mode graph-stats: what the plan search needs to know of the graph of
/// --data (GcnPlan.h's GraphStats): N, directed E, the degree mean, maximum
/// and coefficient of variation, and for each P of --parts that divides N
/// the METIS partition gp=P would use (halo rows summed over the parts and
/// the largest part's, the busiest part's edges). Writes one JSON object to
/// --log-json FILE, or stdout. Returns the exit code.
int writeGraphStats(const Options &opts);

class FullGraphBatches : public BatchSource {
public:
  /// Who last wrote the step's input tensors; shared by the sources that
  /// fill the same tensors (training and evaluation), so that each writes
  /// them only when the other did last.
  using Owner = std::shared_ptr<const FullGraphBatches *>;

  /// `order[k]` is the data set's node at position k (a permutation);
  /// `counted` the nodes the label mask counts, `isEval` the evaluated
  /// ones. `data` must outlive the source.
  FullGraphBatches(const GraphData &data, std::vector<int64_t> order,
                   std::vector<uint8_t> counted, std::vector<uint8_t> isEval,
                   const mgrt_model_info &model, int rank, int ranks,
                   Owner owner);

  /// Every step is the whole graph: the inputs are written once (and again
  /// after another source wrote them); `counts` are this rank's rows.
  bool fill(long step, std::vector<mgrt_tensor> &inputs, BatchCounts &counts,
            std::string &error) override;

private:
  /// First row and row count of input `t` on this rank.
  void rowsOf(const mgrt_tensor &t, int64_t &first, int64_t &rows) const;

  const GraphData &data;
  std::vector<int64_t> order;
  std::vector<uint8_t> counted, isEval;
  const mgrt_model_info &model;
  int rank, ranks;
  Owner owner;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_FULLGRAPH_H
