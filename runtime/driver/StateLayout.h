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
//   * ZeRO-3: the parameters packed into buckets (each rank stores 1/size
//     of the padded bucket, in world-rank order) and their moments packed
//     the same way in `<bucket>.<moment>`; the flag MGRT_STATE_ZERO_READY
//     says the buckets are filled.
// A StateLayout names each logical tensor (a parameter, a moment of one
// parameter, the step counter) and where its current values lie among the
// saved tensors (the order of a checkpoint's state file), so that a
// checkpoint of one plan resumes under another and pipelined parameters can
// be gathered for export. ZeRO-1/2 store moments in shards whose layout the
// table does not carry: they have no layout.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H
#define MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H

#include "megagraph/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

/// Whether state tensor `s` is saved by a checkpoint: mutable storage of
/// this process (not ZeRO-3's read-only initial weights).
bool isSavedState(const mgrt_state_info &s);

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
  /// The world rank whose copy is current, or -1: sharded over all ranks
  /// in rank order (ZeRO-3), `offset` then counting from rank 0's first.
  int rank = 0;
  int64_t offset = 0; ///< first element in the storage
  int64_t numel() const;
};

struct StateLayout {
  std::vector<LogicalTensor> tensors;
  /// The state index of MGRT_STATE_ZERO_READY, or -1.
  int readyFlag = -1;
};

/// The layout of `model`'s state under the plan it was compiled for. False
/// with `error` when the plan's state cannot be mapped (ZeRO-1/2).
bool computeStateLayout(const mgrt_model_info &model, StateLayout &out,
                        std::string &error);

/// The manifest line of `t`: `logical KIND DTYPE FILEOFFSET STORAGEELEMS
/// RANK OFFSET NDIM DIMS... NAME` (NAME last: the rest of the line).
std::string formatLogical(const LogicalTensor &t);

/// The inverse of formatLogical for the text after "logical "; false when
/// malformed.
bool parseLogical(const std::string &text, LogicalTensor &t);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_STATELAYOUT_H
