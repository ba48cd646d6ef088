//===- Checkpoint.h - Checkpoints of a training run -------------*- C++ -*-===//
//
// Internal to the runtime. --checkpoint-dir DIR --checkpoint-every K saves
// the run after every K-th step (and after the last); --resume DIR
// continues from the newest checkpoint there. What a checkpoint holds:
// every mutable global of the model's state table (mgrt_model_info::state:
// parameters, optimizer moments, the step counter of the learning-rate
// schedule and bias corrections, ZeRO shards and flags) as each rank
// stores it, the step, and what decides the batches: the batch sources
// are pure functions of the step given --data, --seed and the data flags,
// so the data order and the split are restored by recording those and
// refusing a resume that changes them. The plan is recorded too: under
// the plan it was taken with a checkpoint resumes bit for bit (each rank
// its own file); under another plan of the same model (another dp, ZeRO
// stage, pp, cp, rank count) each logical tensor is gathered from the
// rank files and stored as the new plan stores it (StateLayout.h,
// CheckpointReader.h): the same values, so the run continues as the
// uninterrupted one of the new plan up to rounding.
//
// Layout (DIR/latest names the newest complete checkpoint):
//   DIR/latest                 "step-<t>\n"
//   DIR/step-<t>/manifest      text: format, model, plan, ranks, step,
//                              the data flags, one `state` line per tensor,
//                              one `logical` line per logical tensor
//                              (StateLayout.h: where it lies in the files)
//   DIR/step-<t>/rank<r>.state rank r's tensors, raw, in manifest order
// Writing is atomic: every rank writes its file under DIR/step-<t>.tmp/
// (temporary name, fsync, rename), the ranks meet, then the lead writes
// the manifest, renames the folder to DIR/step-<t>, replaces DIR/latest
// the same way (fsync of the file and of DIR) and only then removes the
// previous checkpoint. A crash at any point leaves the previous
// checkpoint complete and named by DIR/latest.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINT_H
#define MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINT_H

#include "megagraph/Runtime.h"

#include "driver/CheckpointReader.h"
#include "driver/Options.h"

#include <string>
#include <vector>

namespace mgrt {

/// This process's place in the job: rank `rank` of `size` (the whole
/// world: dp x pp x cp).
struct JobRank {
  int rank = 0, size = 1;
};

/// The tensors a checkpoint saves: mutable state with storage in this
/// process (not ZeRO-3's read-only initial weights). False with `error`
/// when the model has no state table or its state is not on the host.
bool canCheckpoint(const mgrt_model_info &model, std::string &error);

/// Saves the state after `step` steps under `dir`. Every rank of the job
/// calls it. False with `error`.
bool writeCheckpoint(const mgrt_model_info &model, const Options &opts,
                     const JobRank &job, long step, std::string &error);

/// Restores the newest checkpoint under `dir` (or `dir` itself when it is
/// one step-<t> folder) into the model's state; `step` receives the steps
/// it has done. A checkpoint of another plan or job size is re-sharded;
/// one of another model or data is refused with one line naming the
/// difference. Every rank calls it.
bool readCheckpoint(const mgrt_model_info &model, const Options &opts,
                    const JobRank &job, const std::string &dir, long &step,
                    std::string &error);

/// "parameter 'NAME'" (or "optimizer state", "state") of the first state
/// tensor with a NaN or an infinity, or "" when all are finite.
std::string firstNonFiniteState(const mgrt_model_info &model);

/// A copy of the model's saved state (the tensors a checkpoint holds):
/// evaluation runs the training step and puts the state back after it.
class StateSnapshot {
public:
  explicit StateSnapshot(const mgrt_model_info &model);
  /// Copies the state now into the snapshot.
  void save();
  /// Writes the snapshot back into the state.
  void restore() const;

private:
  const mgrt_model_info &model;
  std::vector<char> bytes;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINT_H
