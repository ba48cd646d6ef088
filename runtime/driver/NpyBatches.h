//===- NpyBatches.h - Training batches from .npy files ----------*- C++ -*-===//
//
// Internal to the runtime. The batch source of `--mode train --data
// npy:DIR`: the user's own tensors for every input of the training step,
// whatever their names, as `--dump-inputs DIR` writes them.
//
//   DIR/<input>.npy ...          one step, used for every step, or
//   DIR/step1/<input>.npy ...    steps 1, 2, ... used in order and cycled
//
// One file per step input (the name with '/' as '_'), including `labels`
// (int64 class ids or float targets, as compiled). `label_mask` may be
// left out (all items count) and so may `eval_mask` (no item is
// evaluated).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_NPYBATCHES_H
#define MEGAGRAPH_RUNTIME_DRIVER_NPYBATCHES_H

#include "driver/BatchSource.h"

#include <string>
#include <vector>

namespace mgrt {

/// The steps' tensors, loaded and checked against the model up front.
class NpyBatches : public BatchSource {
public:
  NpyBatches() = default;
  NpyBatches(const NpyBatches &) = delete;
  NpyBatches &operator=(const NpyBatches &) = delete;
  ~NpyBatches() override;

  /// Loads every step under `dir`. A missing file, a wrong shape or dtype
  /// and negative class labels are appended to `errors`, each naming the
  /// file and what the model expects. Returns errors.empty().
  bool open(const mgrt_model_info &model, const std::string &dir, bool quiet,
            std::vector<std::string> &errors);

  /// Number of distinct steps (at least 1 after a successful open).
  size_t size() const { return steps.size(); }

  /// Copies the tensors of step `step` (cycled) into `inputs`; `counts`
  /// gets the items the label and eval masks count (epoch: how many times
  /// the steps were cycled).
  bool fill(long step, std::vector<mgrt_tensor> &inputs, BatchCounts &counts,
            std::string &error) override;

private:
  std::vector<std::vector<mgrt_tensor>> steps;
  std::vector<int64_t> counted, evalCounts;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_NPYBATCHES_H
