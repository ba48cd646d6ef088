//===- StateLayout.h - The model's state independent of the plan -*- C++
//-*-===//
//
// Internal to the runtime. The state table (mgrt_model_info::state) lists
// the globals as this plan stores them; one model compiled for several
// plans stores the same logical tensors differently:
//   * one process, dp and cp (zero=0): every tensor whole on every rank,
//     all copies equal;
//   * pp: every tensor on every rank, but only the stage that owns a
//     parameter (its s<k>.update entry takes grad:<parameter>) updates it
//     and its moments `<parameter>.<moment>`: replica 0's rank of that
//     stage holds the current value;
//   * ZeRO-3: the parameters packed into buckets (each rank of the
//     bucket's group stores 1/n of the padded bucket) and their moments
//     packed the same way in `<bucket>.<moment>`; the flag
//     MGRT_STATE_ZERO_READY says the buckets are filled;
//   * ZeRO-1/2: the parameters whole on every rank (under pp: the owning
//     stage's ranks), their moments packed into `<bucket>.<moment>` like
//     ZeRO-3's; the bucket itself is an entry without storage that only
//     says where each parameter lies in it.
// A bucket is shared out among the ranks of its stage (all ranks without
// pp), in ascending rank order (mgrt_comm_grid_group's order).
// A StateLayout names each logical tensor (a parameter, a moment of one
// parameter, the step counter) and where its current values lie among the
// saved tensors (the order of a checkpoint's state file), so that a
// checkpoint of one plan resumes under another and pipelined or sharded
// parameters can be gathered for export.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H
#define MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H

#include "megagraph/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

/// Whether parameter `s` of `model` keeps its current values in its ZeRO-3
/// bucket (its own global holds the initial weights).
bool inBucketStorage(const mgrt_model_info &model, const mgrt_state_info &s);

/// Whether state tensor `s` of `model` is saved by a checkpoint: mutable
/// storage of this process (not ZeRO-3's read-only initial weights, not a
/// ZeRO-1/2 bucket, which has no storage).
bool isSavedState(const mgrt_model_info &model, const mgrt_state_info &s);

/// Bytes of `t` as stored.
size_t bytesOfTensor(const mgrt_tensor_info &t);

/// One logical tensor of the state and where a plan keeps its current
/// values.
struct LogicalTensor {
  std::string name;
  int kind = 0;  ///< an mgrt_state_kind
  int dtype = 0; ///< an mgrt_dtype
  std::vector<int64_t> shape;
  int stateIndex = -1;      ///< the storage: an index into model.state
  int64_t fileOffset = 0;   ///< the storage's first byte in a state file
  int64_t storageElems = 0; ///< elements of the storage on one rank
  /// The world rank whose copy is current, or -1: sharded (ZeRO).
  int rank = 0;
  /// Sharded: the world ranks that hold the storage's shards, in order;
  /// `offset` then counts from the first one's first element.
  std::vector<int> shards;
  int64_t offset = 0; ///< first element in the storage
  int64_t numel() const;
};

struct StateLayout {
  std::vector<LogicalTensor> tensors;
  /// The state index of MGRT_STATE_ZERO_READY, or -1.
  int readyFlag = -1;
};

/// Per state tensor of a pipelined model (pp > 1 with stage entries), the
/// stage whose update entry takes its gradient (or its ZeRO bucket's, or
/// for a moment `<parameter>.<moment>` its parameter's); -1 for state of
/// no stage (the step counter, flags) and for every tensor without pp.
std::vector<int> stateStages(const mgrt_model_info &model);

/// This rank's view of the model's state. A pipelined host program reaches
/// its mutable globals through mgrt_stage_global (gt-stage-globals): the
/// returned model's state table points at this rank's storage for the
/// tensors of its stage `stage` and of no stage (materialised here), and
/// at the static globals for the other stages' tensors, which this rank
/// neither holds nor updates. Other programs: `compiled` itself. The table
/// lives as long as the process.
const mgrt_model_info &localStateModel(const mgrt_model_info &compiled,
                                       int stage);

/// Whether this rank holds state tensor `i` of `model` (false only for
/// another stage's tensor of a model from localStateModel): a checkpoint
/// saves zeros for it and a resume leaves it alone.
bool holdsState(const mgrt_model_info &model, int i);

/// Bytes of the model state this rank holds: for a model from
/// localStateModel what the process materialised through
/// mgrt_stage_global (the driver and the compiled entries), else the saved
/// state tensors (isSavedState).
size_t heldStateBytes(const mgrt_model_info &model);

/// The layout of `model`'s state under the plan it was compiled for. False
/// with `error` when the table contradicts itself (a bucket too small for
/// its parameters).
bool computeStateLayout(const mgrt_model_info &model, StateLayout &out,
                        std::string &error);

/// The manifest line of `t`: `logical KIND DTYPE FILEOFFSET STORAGEELEMS
/// PLACE OFFSET NDIM DIMS... NAME` (NAME last: the rest of the line), PLACE
/// the rank or the shards' ranks, each followed by a comma (`0,2,`).
std::string formatLogical(const LogicalTensor &t);

/// The inverse of formatLogical for the text after "logical "; false when
/// malformed. A PLACE of -1 (an older manifest: shards on every rank of
/// the job) gives rank -1 and no shards.
bool parseLogical(const std::string &text, LogicalTensor &t);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H
