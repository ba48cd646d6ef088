//===- CheckpointReader.cpp - A checkpoint's files, read alone ------------===//
//
// See CheckpointReader.h.
//
//===----------------------------------------------------------------------===//

#include "driver/CheckpointReader.h"

#include "driver/Inputs.h"
#include "support/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

// Defined when the program links the CUDA runtime (--target cuda): the
// compiled step then works on device copies of the globals.
extern "C" void *mgrt_cuda_global(const void *host, int64_t bytes)
    __attribute__((weak));

namespace mgrt {

bool stateIsOnHost(std::string &error) {
  if (mgrt_cuda_global)
    return setError(error, "the state of a --target cuda program lives on "
                           "the GPU; checkpoints, export, evaluation and "
                           "--on-nonfinite skip-step run on CPU programs "
                           "only");
  return true;
}

bool readWholeFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream os;
  os << in.rdbuf();
  out = os.str();
  return true;
}

std::string describeLogical(const LogicalTensor &t) {
  return std::string(t.kind == MGRT_STATE_PARAMETER   ? "parameter"
                     : t.kind == MGRT_STATE_OPTIMIZER ? "optimizer state"
                                                      : "state") +
         " " +
         describe(t.dtype, static_cast<int>(t.shape.size()), t.shape.data());
}

bool CheckpointReader::open(const std::string &dir, std::string &error) {
  folderPath = dir;
  files.clear();
  std::string latest;
  if (readWholeFile(dir + "/latest", latest)) {
    while (!latest.empty() && latest.back() == '\n')
      latest.pop_back();
    folderPath = dir + "/" + latest;
  }
  std::string manifest;
  if (!readWholeFile(folderPath + "/manifest", manifest))
    return setError(error, "'" + dir +
                               "' holds no checkpoint (no latest, no "
                               "manifest)");
  const std::string format =
      std::string(kCheckpointFormat) + "\n" + kManifestModelKey;
  const size_t modelEnd = manifest.find('\n', format.size());
  if (manifest.compare(0, format.size(), format) != 0 ||
      modelEnd == std::string::npos)
    return setError(error, "'" + folderPath +
                               "/manifest' is not a megagraph "
                               "checkpoint manifest");
  // The run description, then `step <t>`.
  const size_t at = manifest.rfind("\nstep ");
  if (at == std::string::npos || at < modelEnd)
    return setError(error, "'" + folderPath + "/manifest' has no step");
  char *end = nullptr;
  const std::string stepText = manifest.substr(at + 6);
  steps = std::strtol(stepText.c_str(), &end, 10);
  if (end == stepText.c_str() || steps < 0)
    return setError(error, "'" + folderPath + "/manifest' has a bad step");
  desc = manifest.substr(modelEnd + 1, at - modelEnd);
  const std::string ranksText = value("ranks");
  ranks = static_cast<int>(std::strtol(ranksText.c_str(), &end, 10));
  if (ranks < 1 || end == ranksText.c_str())
    return setError(error, "'" + folderPath + "/manifest' has no rank count");
  return true;
}

std::string CheckpointReader::value(const std::string &key) const {
  std::istringstream is(desc);
  std::string line;
  while (std::getline(is, line))
    if (line.rfind(key + " ", 0) == 0)
      return line.substr(key.size() + 1);
  return "";
}

bool CheckpointReader::logicalTensors(std::vector<LogicalTensor> &out,
                                      std::string &error) const {
  out.clear();
  const std::string noReshard = std::string(kManifestNoReshardKey);
  std::istringstream is(desc);
  std::string line;
  while (std::getline(is, line)) {
    if (line.rfind(noReshard, 0) == 0)
      return setError(error, "'" + folderPath + "' was taken under plan '" +
                                 value("plan") +
                                 "': " + line.substr(noReshard.size()));
    if (line.rfind("logical ", 0) != 0)
      continue;
    LogicalTensor t;
    const bool parsed = parseLogical(line.substr(8), t);
    // An older manifest's -1: shards on every rank of the job.
    if (parsed && t.rank < 0 && t.shards.empty())
      for (int r = 0; r < ranks; ++r)
        t.shards.push_back(r);
    if (!parsed || t.rank >= ranks ||
        std::any_of(t.shards.begin(), t.shards.end(),
                    [&](int r) { return r >= ranks; }))
      return setError(error, "'" + folderPath + "/manifest' has a bad line '" +
                                 line + "'");
    out.push_back(std::move(t));
  }
  return true;
}

const std::string *CheckpointReader::rankFile(int rank, std::string &error) {
  auto it = files.find(rank);
  if (it != files.end())
    return &it->second;
  std::string bytes;
  const std::string path =
      folderPath + "/rank" + std::to_string(rank) + ".state";
  if (!readWholeFile(path, bytes)) {
    setError(error, "cannot read '" + path + "'");
    return nullptr;
  }
  return &(files[rank] = std::move(bytes));
}

bool CheckpointReader::fetch(const LogicalTensor &t, std::vector<char> &out,
                             std::string &error) {
  const size_t es = mgrt_dtype_size(t.dtype);
  const int64_t n = t.numel();
  out.assign(static_cast<size_t>(n) * es, 0);
  // Elements [first, first + count) of rank `rank`'s storage of `t`.
  auto copy = [&](int rank, int64_t first, int64_t count, char *to) {
    const std::string *file = rankFile(rank, error);
    if (!file)
      return false;
    const size_t begin = static_cast<size_t>(t.fileOffset + first * es);
    if (first + count > t.storageElems || begin + count * es > file->size())
      return setError(error, "'" + folderPath + "/rank" + std::to_string(rank) +
                                 ".state' is shorter than its manifest says");
    std::memcpy(to, file->data() + begin, count * es);
    return true;
  };
  if (t.shards.empty())
    return copy(t.rank, t.offset, n, out.data());
  // ZeRO: element e of the packed bucket is element e % shard of the
  // (e / shard)-th shard's rank.
  const int64_t shard = t.storageElems;
  for (int64_t j = 0; j < n;) {
    const int64_t e = t.offset + j;
    if (shard <= 0 || e / shard >= static_cast<int64_t>(t.shards.size()))
      return setError(error, "'" + folderPath + "': '" + t.name +
                                 "' lies outside its ZeRO bucket");
    const int64_t run = std::min(n - j, shard - e % shard);
    if (!copy(t.shards[e / shard], e % shard, run, out.data() + j * es))
      return false;
    j += run;
  }
  return true;
}

bool readCheckpointParameters(const mgrt_model_info &model,
                              const std::string &dir, std::string &error) {
  if (!stateIsOnHost(error))
    return false;
  CheckpointReader ck;
  std::vector<LogicalTensor> saved;
  if (!ck.open(dir, error) || !ck.logicalTensors(saved, error))
    return false;
  const std::string other =
      "'" + ck.folder() + "' is a checkpoint of another model: ";
  int params = 0;
  std::vector<char> values;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind != MGRT_STATE_PARAMETER)
      continue;
    if (!s.data || inBucketStorage(model, s))
      return setError(error, std::string("parameter '") + s.tensor.name +
                                 "' has no storage of its own in this "
                                 "executable");
    ++params;
    const std::vector<int64_t> shape(s.tensor.shape,
                                     s.tensor.shape + s.tensor.rank);
    const LogicalTensor *src = nullptr;
    for (const LogicalTensor &t : saved)
      if (t.kind == MGRT_STATE_PARAMETER && t.name == s.tensor.name)
        src = &t;
    LogicalTensor mine;
    mine.name = s.tensor.name;
    mine.kind = s.kind;
    mine.dtype = s.tensor.dtype;
    mine.shape = shape;
    if (!src)
      return setError(error, other + describeLogical(mine) + " '" + mine.name +
                                 "' of this model is not in it");
    if (src->dtype != mine.dtype || src->shape != shape)
      return setError(error, other + "'" + mine.name + "' is " +
                                 describeLogical(*src) +
                                 " in the checkpoint, " +
                                 describeLogical(mine) + " in this model");
    if (!holdsState(model, i))
      continue; // another stage's, not on this rank
    if (!ck.fetch(*src, values, error))
      return false;
    std::memcpy(s.data, values.data(), values.size());
  }
  for (const LogicalTensor &t : saved) {
    if (t.kind != MGRT_STATE_PARAMETER)
      continue;
    bool found = false;
    for (int i = 0; i < model.num_state && !found; ++i)
      found = model.state[i].kind == MGRT_STATE_PARAMETER &&
              t.name == model.state[i].tensor.name;
    if (!found)
      return setError(error, other + describeLogical(t) + " '" + t.name +
                                 "' of the checkpoint is not in this model");
  }
  if (params == 0)
    return setError(error, std::string("model '") +
                               (model.model_name ? model.model_name : "model") +
                               "' lists no parameters (compiled before the "
                               "state table existed, or it has none)");
  return true;
}

} // namespace mgrt
