//===- BatchSource.h - Where a training step's inputs come from -*- C++ -*-===//
//
// Internal to the runtime. The training loop (Train.cpp) asks a batch
// source for each step's inputs; the sources are
//   GraphBatches (GraphBatches.h)  sequences of a graph data set, synthetic
//                                  (--data synthetic:...) or OGB
//                                  (--data ogb:DIR), cut by the topology
//                                  builder (Topology.h)
//   NpyBatches (NpyBatches.h)      the user's tensors (--data npy:DIR)
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_BATCHSOURCE_H
#define MEGAGRAPH_RUNTIME_DRIVER_BATCHSOURCE_H

#include "megagraph/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

/// What a filled batch counts, for the metrics.
struct BatchCounts {
  int64_t counted = 0;     ///< items the label mask counts (this rank)
  int64_t evalCounted = 0; ///< items the eval mask counts (this rank)
  int64_t epoch = 0;       ///< the epoch the step belongs to
};

class BatchSource {
public:
  virtual ~BatchSource() = default;

  /// Writes the inputs of step `step` (from 0) into `inputs` (model order,
  /// allocated with the model's shapes). False with `error` when the data
  /// cannot make the batch.
  virtual bool fill(long step, std::vector<mgrt_tensor> &inputs,
                    BatchCounts &counts, std::string &error) = 0;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_BATCHSOURCE_H
