//===- Checkpoint.cpp - Checkpoints of a training run ---------------------===//
//
// See Checkpoint.h. POSIX file calls, for fsync and rename.
//
//===----------------------------------------------------------------------===//

#include "driver/Checkpoint.h"

#include "driver/CheckpointReader.h"
#include "driver/Inputs.h"
#include "megagraph/Comm.h"
#include "support/Error.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace mgrt {
namespace {

/// The manifest's description of what decides the run's data and state
/// (plan, ranks, data flags, the state tensors); two runs with equal
/// descriptions continue each other.
std::string describeRun(const mgrt_model_info &model, const Options &opts,
                        const JobRank &job) {
  std::ostringstream os;
  os.precision(17); // --train-fraction exactly
  os << "plan " << (model.plan && model.plan->text ? model.plan->text : "-")
     << "\n";
  os << "ranks " << job.size << "\n";
  os << "data " << opts.data << "\n";
  os << "seed " << opts.seed << "\n";
  os << "max-distance " << opts.maxDistance << "\n";
  os << "categories " << opts.categories << "\n";
  os << "train-fraction " << opts.trainFraction << "\n";
  os << "partition " << opts.partition << "\n";
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSavedState(model, s))
      continue;
    os << "state " << s.kind << " "
       << describe(s.tensor.dtype, s.tensor.rank, s.tensor.shape) << " "
       << s.tensor.name << "\n";
  }
  // Where the logical tensors lie, for a resume under another plan.
  StateLayout layout;
  std::string why;
  if (!computeStateLayout(model, layout, why))
    os << kManifestNoReshardKey << why << "\n";
  for (const LogicalTensor &t : layout.tensors)
    os << formatLogical(t) << "\n";
  return os.str();
}

std::string errnoText() { return std::strerror(errno); }

/// Writes `size` bytes of `data` to `path` through `path`.tmp, fsynced and
/// renamed.
bool writeFileAtomic(const std::string &path, const void *data, size_t size,
                     std::string &error) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return setError(error, "cannot create '" + tmp + "': " + errnoText());
  const char *p = static_cast<const char *>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = errnoText();
      ::close(fd);
      return setError(error, "cannot write '" + tmp + "': " + why);
    }
    p += n, left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return setError(error, "cannot sync '" + tmp + "': " + errnoText());
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return setError(error, "cannot rename '" + tmp + "': " + errnoText());
  return true;
}

/// fsync of a directory, so that the renames in it are durable.
bool syncDirectory(const std::string &dir, std::string &error) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0 || ::fsync(fd) != 0) {
    if (fd >= 0)
      ::close(fd);
    return setError(error, "cannot sync '" + dir + "': " + errnoText());
  }
  ::close(fd);
  return true;
}

/// rm -r of a checkpoint folder (plain files only).
void removeFolder(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        ::unlink((dir + "/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The ranks meet (no-op for one process).
void barrier(const JobRank &job) {
  if (job.size > 1 && mgrt_comm_world())
    mgrt_comm_barrier(mgrt_comm_world());
}

/// The first line where `a` and `b` differ, as "KEY: A there, B here".
std::string firstDifference(const std::string &there, const std::string &here) {
  std::istringstream a(there), b(here);
  std::string la, lb;
  while (true) {
    bool ga = static_cast<bool>(std::getline(a, la));
    bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb)
      return "";
    if (!ga)
      la = "(nothing)";
    if (!gb)
      lb = "(nothing)";
    if (la != lb)
      return "'" + la + "' in the checkpoint, '" + lb + "' in this run";
  }
}

// The saved state tensors, in table order, as one byte string: what a
// checkpoint file and a StateSnapshot hold.
std::vector<char> packState(const mgrt_model_info &model) {
  std::vector<char> bytes;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSavedState(model, s))
      continue;
    // Another stage's tensor (a pipelined program): not on this rank, and
    // never read from its file (the stage's ranks save the current one).
    const size_t n = bytesOfTensor(s.tensor);
    if (!holdsState(model, i)) {
      bytes.insert(bytes.end(), n, 0);
      continue;
    }
    const char *p = static_cast<const char *>(s.data);
    bytes.insert(bytes.end(), p, p + n);
  }
  return bytes;
}

// The inverse of packState: `bytes` holds exactly the saved tensors.
void unpackState(const mgrt_model_info &model, const char *bytes) {
  size_t offset = 0;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSavedState(model, s))
      continue;
    const size_t n = bytesOfTensor(s.tensor);
    if (holdsState(model, i))
      std::memcpy(s.data, bytes + offset, n);
    offset += n;
  }
}

/// The lines of a run description that the plan does not decide (model
/// and data; not plan, ranks, the stored tensors and their layout).
std::string withoutPlanLines(const std::string &desc) {
  std::istringstream is(desc);
  std::string line, rest;
  while (std::getline(is, line)) {
    const bool byPlan =
        line.rfind("plan ", 0) == 0 || line.rfind("ranks ", 0) == 0 ||
        line.rfind("state ", 0) == 0 || line.rfind("logical ", 0) == 0 ||
        line.rfind("reshard ", 0) == 0;
    if (!byPlan)
      rest += line + "\n";
  }
  return rest;
}

/// Restores a checkpoint taken under another plan into this plan's
/// state: every logical tensor is cut out of the checkpoint's rank files
/// and stored as this plan stores it (this rank's shard of a ZeRO bucket).
bool readResharded(const mgrt_model_info &model, const JobRank &job,
                   CheckpointReader &ck, std::string &error) {
  StateLayout here;
  std::string why;
  if (!computeStateLayout(model, here, why))
    return setError(error, "'" + ck.folder() + "' was taken under plan '" +
                               ck.value("plan") + "', and this run's " + why);
  std::vector<LogicalTensor> there;
  if (!ck.logicalTensors(there, error))
    return setError(error, error + "; resume it under that plan");
  std::map<std::string, const LogicalTensor *> byName;
  for (const LogicalTensor &t : there)
    byName[t.name] = &t;
  const std::string other =
      "'" + ck.folder() + "' is a checkpoint of another model: ";
  std::vector<const LogicalTensor *> sources;
  for (const LogicalTensor &t : here.tensors) {
    auto it = byName.find(t.name);
    if (it == byName.end())
      return setError(error, other + describeLogical(t) + " '" + t.name +
                                 "' of this run is not in it");
    const LogicalTensor &src = *it->second;
    if (src.kind != t.kind || src.dtype != t.dtype || src.shape != t.shape)
      return setError(error, other + "'" + t.name + "' is " +
                                 describeLogical(src) + " in the checkpoint, " +
                                 describeLogical(t) + " in this run");
    sources.push_back(&src);
  }
  if (sources.size() != there.size())
    for (const LogicalTensor &t : there) {
      bool found = false;
      for (const LogicalTensor &h : here.tensors)
        found |= h.name == t.name;
      if (!found)
        return setError(error, other + describeLogical(t) + " '" + t.name +
                                   "' of the checkpoint is not in this run");
    }
  std::vector<char> full;
  for (size_t k = 0; k < here.tensors.size(); ++k) {
    const LogicalTensor &t = here.tensors[k];
    if (!holdsState(model, t.stateIndex))
      continue; // another stage's, not on this rank
    if (!ck.fetch(*sources[k], full, error))
      return false;
    const size_t es = mgrt_dtype_size(t.dtype);
    char *storage = static_cast<char *>(model.state[t.stateIndex].data);
    if (t.shards.empty()) {
      std::memcpy(storage + t.offset * es, full.data(), full.size());
      continue;
    }
    // This rank's shard, the k-th: elements [k * shard, (k + 1) * shard)
    // of the packed bucket.
    auto mine = std::find(t.shards.begin(), t.shards.end(), job.rank);
    if (mine == t.shards.end())
      continue;
    const int64_t lo = (mine - t.shards.begin()) * t.storageElems;
    const int64_t from = std::max(lo, t.offset);
    const int64_t to = std::min(lo + t.storageElems, t.offset + t.numel());
    if (from < to)
      std::memcpy(storage + (from - lo) * es,
                  full.data() + (from - t.offset) * es, (to - from) * es);
  }
  if (here.readyFlag >= 0) {
    // The buckets are filled: the first step must not cut them again from
    // the initial weights.
    const mgrt_state_info &flag = model.state[here.readyFlag];
    std::memset(flag.data, 0, bytesOfTensor(flag.tensor));
    if (flag.tensor.dtype == MGRT_I32)
      *static_cast<int32_t *>(flag.data) = 1;
    else if (flag.tensor.dtype == MGRT_I64)
      *static_cast<int64_t *>(flag.data) = 1;
    else
      *static_cast<char *>(flag.data) = 1;
  }
  return true;
}

} // namespace

std::string firstNonFiniteState(const mgrt_model_info &model) {
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSavedState(model, s) || s.tensor.dtype != MGRT_F32 ||
        !holdsState(model, i))
      continue;
    const float *v = static_cast<const float *>(s.data);
    const size_t n = bytesOfTensor(s.tensor) / sizeof(float);
    for (size_t k = 0; k < n; ++k)
      if (!std::isfinite(v[k]))
        return std::string(s.kind == MGRT_STATE_PARAMETER ? "parameter '"
                           : s.kind == MGRT_STATE_OPTIMIZER
                               ? "optimizer state '"
                               : "state '") +
               s.tensor.name + "' (element " + std::to_string(k) + ")";
  }
  return "";
}

StateSnapshot::StateSnapshot(const mgrt_model_info &model) : model(model) {}

void StateSnapshot::save() { bytes = packState(model); }

void StateSnapshot::restore() const { unpackState(model, bytes.data()); }

bool canCheckpoint(const mgrt_model_info &model, std::string &error) {
  if (!stateIsOnHost(error))
    return false;
  for (int i = 0; i < model.num_state; ++i)
    if (isSavedState(model, model.state[i]))
      return true;
  return setError(error, std::string("model '") +
                             (model.model_name ? model.model_name : "model") +
                             "' has no state table (compiled by an older "
                             "megagraph-compile?)");
}

bool writeCheckpoint(const mgrt_model_info &model, const Options &opts,
                     const JobRank &job, long step, std::string &error) {
  const std::string &dir = opts.checkpointDir;
  const std::string name = "step-" + std::to_string(step);
  const std::string tmpDir = dir + "/" + name + ".tmp";
  bool ok = true;
  std::string dirError = makeDirectories(tmpDir);
  if (!dirError.empty())
    ok = setError(error, dirError);
  // 1. Every rank its tensors.
  if (ok) {
    const std::vector<char> bytes = packState(model);
    ok = writeFileAtomic(tmpDir + "/rank" + std::to_string(job.rank) + ".state",
                         bytes.data(), bytes.size(), error);
  }
  barrier(job);
  if (job.rank != 0)
    return ok;
  // 2. The lead completes it: manifest, folder rename, `latest`.
  std::string manifest =
      std::string(kCheckpointFormat) + "\n" + kManifestModelKey +
      (model.model_name ? model.model_name : "model") + "\n" +
      describeRun(model, opts, job) + "step " + std::to_string(step) + "\n";
  std::string previous;
  readWholeFile(dir + "/latest", previous);
  while (!previous.empty() && previous.back() == '\n')
    previous.pop_back();
  const std::string final = dir + "/" + name;
  // Every rank's file, or the checkpoint is not complete.
  for (int r = 0; ok && r < job.size; ++r) {
    const std::string file = tmpDir + "/rank" + std::to_string(r) + ".state";
    struct stat st;
    if (::stat(file.c_str(), &st) != 0)
      ok = setError(error,
                    "rank " + std::to_string(r) + " wrote no '" + file + "'");
  }
  if (ok)
    ok = writeFileAtomic(tmpDir + "/manifest", manifest.data(), manifest.size(),
                         error) &&
         syncDirectory(tmpDir, error);
  if (ok && isDirectory(final) && previous != name)
    removeFolder(final);
  if (ok && previous == name) {
    // Overwriting the checkpoint `latest` names: move it aside first.
    if (::rename(final.c_str(), (final + ".old").c_str()) != 0)
      ok = setError(error, "cannot rename '" + final + "': " + errnoText());
    previous = name + ".old";
  }
  if (ok && ::rename(tmpDir.c_str(), final.c_str()) != 0)
    ok = setError(error, "cannot rename '" + tmpDir + "': " + errnoText());
  const std::string latest = name + "\n";
  if (ok)
    ok =
        syncDirectory(dir, error) &&
        writeFileAtomic(dir + "/latest", latest.data(), latest.size(), error) &&
        syncDirectory(dir, error);
  if (ok && !previous.empty() && previous != name)
    removeFolder(dir + "/" + previous);
  return ok;
}

bool readCheckpoint(const mgrt_model_info &model, const Options &opts,
                    const JobRank &job, const std::string &dir, long &step,
                    std::string &error) {
  CheckpointReader ck;
  if (!ck.open(dir, error))
    return false;
  step = ck.step();
  const std::string &folder = ck.folder();
  const std::string &there = ck.description();
  const std::string here = describeRun(model, opts, job);
  if (there != here) {
    const std::string restThere = withoutPlanLines(there);
    const std::string restHere = withoutPlanLines(here);
    // Under the same plan every line must match; under another one the
    // data must, and the state is re-sharded.
    const bool samePlan =
        ck.value("plan") ==
            (model.plan && model.plan->text ? model.plan->text : "-") &&
        ck.value("ranks") == std::to_string(job.size);
    if (samePlan || restThere != restHere)
      return setError(error,
                      "'" + folder + "' is a checkpoint of another run: " +
                          (samePlan ? firstDifference(there, here)
                                    : firstDifference(restThere, restHere)));
    return readResharded(model, job, ck, error);
  }
  std::string bytes;
  const std::string file =
      folder + "/rank" + std::to_string(job.rank) + ".state";
  if (!readWholeFile(file, bytes))
    return setError(error, "cannot read '" + file + "'");
  size_t want = 0;
  for (int i = 0; i < model.num_state; ++i)
    if (isSavedState(model, model.state[i]))
      want += bytesOfTensor(model.state[i].tensor);
  if (bytes.size() != want)
    return setError(error,
                    "'" + file + "' has " + std::to_string(bytes.size()) +
                        " bytes, the model's state " + std::to_string(want));
  unpackState(model, bytes.data());
  return true;
}

} // namespace mgrt
