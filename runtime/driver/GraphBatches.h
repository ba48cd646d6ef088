//===- GraphBatches.h - Training batches of a graph data set ----*- C++ -*-===//
//
// Internal to the runtime. The batch source of `--mode train --data
// synthetic:...|ogb:DIR` (Train.h documents the conventions): each epoch
// visits the sequences of the topology (Topology.h) in a seeded shuffled
// order, B per step and replica; row b of every input is filled from its
// sequence by the input's role (features, categorical feature ids,
// degrees, labels, masks, SPD, normalized adjacency). Under context
// parallelism a rank fills only its block of rows [first, first + R).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_GRAPHBATCHES_H
#define MEGAGRAPH_RUNTIME_DRIVER_GRAPHBATCHES_H

#include "megagraph/ModelABI.h"

#include "driver/BatchSource.h"
#include "driver/Topology.h"

namespace mgrt {

/// How this rank takes its part of each global batch.
struct BatchLayout {
  int64_t B = 1;     ///< sequences per replica and step
  int64_t S = 1;     ///< nodes per sequence
  int64_t rows = 1;  ///< R: the rows of a sequence this rank fills
  int64_t first = 0; ///< its first row (cp block)
  /// The rows of its block, <= R (uneven cp blocks: the rest are padding,
  /// filled with zeros and never counted); -1: R.
  int64_t valid = -1;
  int64_t replicas = 1; ///< dp replicas taking other sequences
  int64_t replica = 0;  ///< this rank's replica
};

/// Checks that the categorical feature ids of model input `in` (role
/// MGRT_ROLE_NODE_FEATURES, i64) fit its embedding table: with
/// `numFeatures` columns and --categories V the ids reach numFeatures * V
/// (FeatureBins). False with `error` naming the largest V that fits;
/// true for other inputs or when the table's size is unknown.
bool checkFeatureIds(const mgrt_tensor_info &in, int64_t numFeatures,
                     const Options &opts, std::string &error);

class GraphBatches : public BatchSource {
public:
  /// `roles[i]` is the role of model input i; `data` and `order` (the
  /// sequences, as from partitionSequences) must outlive the source.
  /// `inputs` (the model's input table, in the order of `roles`; may be
  /// null) gives the embedding tables' sizes (mgrt_index_bound): degrees
  /// are capped at rows - 1 (Graphormer's max_degree) and distances at
  /// min(--max-distance, rows - 1) (its num_spatial), so that every id the
  /// batches hold indexes the model's table.
  GraphBatches(const GraphData &data, const std::vector<int64_t> &order,
               std::vector<uint8_t> isTrain, std::vector<uint8_t> isEval,
               std::vector<mgrt_tensor_role> roles, const BatchLayout &layout,
               const Options &opts, const mgrt_tensor_info *inputs = nullptr);

  bool fill(long step, std::vector<mgrt_tensor> &inputs, BatchCounts &counts,
            std::string &error) override;

  int64_t numSequences() const { return numSeq; }
  /// Steps per epoch: floor(sequences / (B * replicas)).
  int64_t stepsPerEpoch() const { return perEpoch; }

private:
  const GraphData &data;
  const std::vector<int64_t> &order;
  std::vector<uint8_t> isTrain, isEval;
  std::vector<mgrt_tensor_role> roles;
  BatchLayout layout;
  int64_t numSeq, perEpoch;
  uint64_t seed;
  long maxDistance;
  FeatureBins bins;
  /// Per input: the largest id it may hold (rows - 1), or -1 for no cap.
  std::vector<int64_t> maxId;
  int64_t epoch = -1;
  std::vector<int64_t> epochOrder, pos, spdTmp;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_GRAPHBATCHES_H
