//===- Topology.h - The graph data set cut into sequences -------*- C++ -*-===//
//
// Internal to the runtime. The topology builder of `--mode train` on a graph
// data set (synthetic:... or ogb:DIR; Train.h documents the conventions):
// loads the graph, its degrees, features and labels; cuts the nodes into
// sequences of S nodes (METIS or greedy, reordered into cp blocks); draws
// the train / test split; computes the binning of float feature columns
// into categorical ids; and normalizes a sequence's adjacency. Nothing here
// runs a model, so each part is testable alone.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_TOPOLOGY_H
#define MEGAGRAPH_RUNTIME_DRIVER_TOPOLOGY_H

#include "megagraph/RuntimeData.h"

#include "driver/Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

/// A loaded data set; released by the destructor.
struct GraphData {
  mgrt_graph graph{};
  /// features f32 [N, F], labels i64 [N] (-1: unlabelled), degrees i64
  /// [N], split u8 [N] (OGB only: an mgrt_split).
  mgrt_tensor features{}, labels{}, inDegree{}, outDegree{}, split{};
  bool ogb = false;
  /// classes= of a synthetic spec (labels are in [0, classes)); -1 for
  /// OGB.
  int64_t classes = -1;

  GraphData() = default;
  GraphData(const GraphData &) = delete;
  GraphData &operator=(const GraphData &) = delete;
  ~GraphData();

  int64_t numNodes() const { return graph.num_nodes; }
  int64_t numFeatures() const { return features.shape[1]; }
};

/// True for `ogb:DIR[,split=NAME]` or an existing directory.
bool isOgbSpec(const std::string &spec);

/// Loads --data (synthetic generator or OGB directory) and the degrees;
/// prints the "data:" line unless opts.quiet. False with `error`.
bool loadGraphData(const Options &opts, GraphData &data, std::string &error);

/// Refuses class labels the model cannot take: `classes` is the number of
/// classes of its labels input `input` (numClassesOf, Roles.h; -1:
/// unknown, nothing is checked). The error names the source: classes= of
/// a synthetic spec, or the row of the OGB label file.
bool checkLabelRange(const GraphData &data, const Options &opts,
                     int64_t classes, const std::string &input,
                     std::string &error);

/// The node order whose consecutive runs of `seqLen` nodes are the
/// sequences (opts.partition, opts.seed), reordered into `cp` blocks per
/// sequence (ContextParallel.h). Prints the "partition:" lines unless
/// opts.quiet (the cp one only on the `lead` rank).
bool partitionSequences(const GraphData &data, const Options &opts,
                        int64_t seqLen, int cp, bool lead,
                        std::vector<int64_t> &order, std::string &error);

/// Train and evaluation (test) nodes. SBM: the first round(f N) nodes of a
/// seeded shuffle train, the rest are evaluated. OGB: the split's train and
/// test nodes that have a label.
void drawSplit(const GraphData &data, const Options &opts,
               std::vector<uint8_t> &isTrain, std::vector<uint8_t> &isEval);

/// Quantization of float feature columns into `categories` bins over each
/// column's range: bin = floor((x - lo) * scale), the maximum into the last
/// bin; the id of column f is 1 + f * categories + bin.
struct FeatureBins {
  int64_t categories = 0;
  std::vector<float> lo, scale;

  FeatureBins() = default;
  FeatureBins(const mgrt_tensor &features, int64_t categories);
  int64_t id(int64_t column, float x) const;
};

/// D^-1/2 (A + I) D^-1/2 of the subgraph induced by `nodes[0, S)` into
/// `out` [S, S], A the symmetrized 0/1 adjacency. `pos` is scratch of
/// num_nodes entries, all -1 (and left so).
void normalizedAdjacency(const mgrt_graph &g, const int64_t *nodes, int64_t S,
                         std::vector<int64_t> &pos, float *out);

/// Uniform in [0, n) (Lemire's multiply) and a seeded Fisher-Yates shuffle,
/// the same on every platform.
void shuffleSeeded(std::vector<int64_t> &v, uint64_t seed);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_TOPOLOGY_H
