//===- Checkpoint.cpp - Checkpoints of a training run ---------------------===//
//
// See Checkpoint.h. POSIX file calls, for fsync and rename.
//
//===----------------------------------------------------------------------===//

#include "driver/Checkpoint.h"

#include "driver/Inputs.h"
#include "megagraph/Comm.h"
#include "support/Error.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Defined when the program links the CUDA runtime (--target cuda): the
// compiled step then works on device copies of the globals.
extern "C" void *mgrt_cuda_global(const void *host, int64_t bytes)
    __attribute__((weak));

namespace mgrt {
namespace {

constexpr const char *kFormat = "megagraph-checkpoint 1";
/// The manifest's second line: the executable's model name, for people
/// (the state lines identify the model; a renamed file is the same model).
constexpr const char *kModelKey = "model ";

/// Whether state tensor `s` is saved: mutable storage of this process.
bool isSaved(const mgrt_state_info &s) {
  return s.data && !(s.kind == MGRT_STATE_PARAMETER && s.bucket >= 0);
}

size_t bytesOf(const mgrt_tensor_info &t) {
  size_t n = mgrt_dtype_size(t.dtype);
  for (int d = 0; d < t.rank; ++d)
    n *= static_cast<size_t>(t.shape[d]);
  return n;
}

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
    if (!isSaved(s))
      continue;
    os << "state " << s.kind << " "
       << describe(s.tensor.dtype, s.tensor.rank, s.tensor.shape) << " "
       << s.tensor.name << "\n";
  }
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

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream os;
  os << in.rdbuf();
  out = os.str();
  return true;
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
    if (!isSaved(s))
      continue;
    const char *p = static_cast<const char *>(s.data);
    bytes.insert(bytes.end(), p, p + bytesOf(s.tensor));
  }
  return bytes;
}

// The inverse of packState: `bytes` holds exactly the saved tensors.
void unpackState(const mgrt_model_info &model, const char *bytes) {
  size_t offset = 0;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSaved(s))
      continue;
    const size_t n = bytesOf(s.tensor);
    std::memcpy(s.data, bytes + offset, n);
    offset += n;
  }
}

} // namespace

std::string firstNonFiniteState(const mgrt_model_info &model) {
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (!isSaved(s) || s.tensor.dtype != MGRT_F32)
      continue;
    const float *v = static_cast<const float *>(s.data);
    const size_t n = bytesOf(s.tensor) / sizeof(float);
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

bool stateIsOnHost(std::string &error) {
  if (mgrt_cuda_global)
    return setError(error, "the state of a --target cuda program lives on "
                           "the GPU; checkpoints, export, evaluation and "
                           "--on-nonfinite skip-step run on CPU programs "
                           "only");
  return true;
}

bool canCheckpoint(const mgrt_model_info &model, std::string &error) {
  if (!stateIsOnHost(error))
    return false;
  for (int i = 0; i < model.num_state; ++i)
    if (isSaved(model.state[i]))
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
  std::string manifest = std::string(kFormat) + "\n" + kModelKey +
                         (model.model_name ? model.model_name : "model") +
                         "\n" + describeRun(model, opts, job) + "step " +
                         std::to_string(step) + "\n";
  std::string previous;
  readFile(dir + "/latest", previous);
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
  std::string folder = dir, latest;
  if (readFile(dir + "/latest", latest)) {
    while (!latest.empty() && latest.back() == '\n')
      latest.pop_back();
    folder = dir + "/" + latest;
  }
  std::string manifest;
  if (!readFile(folder + "/manifest", manifest))
    return setError(error, "'" + dir +
                               "' holds no checkpoint (no latest, no "
                               "manifest)");
  const std::string format = std::string(kFormat) + "\n" + kModelKey;
  const size_t modelEnd = manifest.find('\n', format.size());
  if (manifest.compare(0, format.size(), format) != 0 ||
      modelEnd == std::string::npos)
    return setError(error, "'" + folder +
                               "/manifest' is not a megagraph "
                               "checkpoint manifest");
  const std::string head = manifest.substr(0, modelEnd + 1);
  // The run description, then `step <t>`.
  size_t at = manifest.rfind("\nstep ");
  if (at == std::string::npos)
    return setError(error, "'" + folder + "/manifest' has no step");
  char *end = nullptr;
  const std::string stepText = manifest.substr(at + 6);
  step = std::strtol(stepText.c_str(), &end, 10);
  if (end == stepText.c_str() || step < 0)
    return setError(error, "'" + folder + "/manifest' has a bad step");
  const std::string there = manifest.substr(head.size(), at + 1 - head.size());
  const std::string here = describeRun(model, opts, job);
  if (there != here)
    return setError(error, "'" + folder + "' is a checkpoint of another run: " +
                               firstDifference(there, here));
  std::string bytes;
  const std::string file =
      folder + "/rank" + std::to_string(job.rank) + ".state";
  if (!readFile(file, bytes))
    return setError(error, "cannot read '" + file + "'");
  size_t want = 0;
  for (int i = 0; i < model.num_state; ++i)
    if (isSaved(model.state[i]))
      want += bytesOf(model.state[i].tensor);
  if (bytes.size() != want)
    return setError(error,
                    "'" + file + "' has " + std::to_string(bytes.size()) +
                        " bytes, the model's state " + std::to_string(want));
  unpackState(model, bytes.data());
  return true;
}

} // namespace mgrt
