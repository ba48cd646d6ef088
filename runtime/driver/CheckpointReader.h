//===- CheckpointReader.h - A checkpoint's files, read alone ----*- C++ -*-===//
//
// Internal to the runtime. Reads a checkpoint folder (Checkpoint.h's
// layout) in one process, without the job that wrote it and without MPI:
// the manifest, and each logical tensor's full values cut out of the rank
// files (gathered from the ZeRO shards of the ranks that hold them, or
// taken from the rank whose copy is current; StateLayout.h). Used by --resume
// under another plan and by inference executables (--mode infer --checkpoint).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINTREADER_H
#define MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINTREADER_H

#include "driver/StateLayout.h"

#include <map>
#include <string>
#include <vector>

namespace mgrt {

/// The manifest's first line.
constexpr const char *kCheckpointFormat = "megagraph-checkpoint 1";
/// The manifest's second line: the executable's model name, for people
/// (the state lines identify the model; a renamed file is the same model).
constexpr const char *kManifestModelKey = "model ";
/// The manifest line of a plan whose state has no StateLayout.
constexpr const char *kManifestNoReshardKey = "reshard no: ";

/// The whole file at `path` into `out`; false when it cannot be read.
bool readWholeFile(const std::string &path, std::string &out);

class CheckpointReader {
public:
  /// Opens the newest checkpoint under `dir` (DIR/latest), or `dir` itself
  /// when it is one step-<t> folder. False with `error`.
  bool open(const std::string &dir, std::string &error);

  const std::string &folder() const { return folderPath; }
  /// The manifest between its model line and its step line.
  const std::string &description() const { return desc; }
  long step() const { return steps; }

  /// The value of the first manifest line `KEY VALUE`, or "".
  std::string value(const std::string &key) const;

  /// The logical tensors the manifest lists, in its order; false with
  /// `error` when a line is malformed, or the manifest says its plan has
  /// no layout (`error` says why).
  bool logicalTensors(std::vector<LogicalTensor> &out,
                      std::string &error) const;

  /// The full values of `t` (one of logicalTensors()); false with `error`.
  bool fetch(const LogicalTensor &t, std::vector<char> &out,
             std::string &error);

private:
  std::string folderPath, desc;
  long steps = 0;
  int ranks = 0;
  std::map<int, std::string> files;
  const std::string *rankFile(int rank, std::string &error);
};

/// Whether the state table's addresses hold the state the compiled step
/// updates: not in a --target cuda program, whose step updates device
/// copies. False with `error`.
bool stateIsOnHost(std::string &error);

/// Stores the parameters of the newest checkpoint under `dir` (taken under
/// any plan, by a training executable of the same model) into `model`'s
/// parameter globals, for an executable compiled without --train: its
/// state table lists the parameters only. Refuses, with one line, a
/// checkpoint that lacks one of them or has another shape, or holds
/// parameters the model does not have.
bool readCheckpointParameters(const mgrt_model_info &model,
                              const std::string &dir, std::string &error);

/// "parameter f32 [3, 6]" (or "optimizer state ...", "state ...").
std::string describeLogical(const LogicalTensor &t);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_CHECKPOINTREADER_H
