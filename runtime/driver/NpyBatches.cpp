//===- NpyBatches.cpp - Training batches from .npy files ------------------===//
//
// See NpyBatches.h. The files are read through loadInputs (Inputs.h), which
// converts the lossless dtype variants and checks shapes; this file finds
// them, fills the optional masks and checks the labels.
//
//===----------------------------------------------------------------------===//

#include "driver/NpyBatches.h"

#include "driver/Inputs.h"
#include "driver/Roles.h"

#include <cstring>
#include <sys/stat.h>
#include <utility>

namespace mgrt {
namespace {

bool isFile(const std::string &path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}

bool isDirectory(const std::string &path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
}

/// Items of a bool/u8 mask that are set, or the sum of an f32 one.
int64_t countSet(const mgrt_tensor &t) {
  const int64_t n = mgrt_tensor_numel(&t);
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i)
    c += t.dtype == MGRT_F32 ? static_cast<const float *>(t.data)[i] != 0.f
                             : static_cast<const uint8_t *>(t.data)[i] != 0;
  return c;
}

/// Loads the step in `dir` into `tensors` (model order).
bool loadStep(const mgrt_model_info &model, const std::string &dir, bool quiet,
              std::vector<mgrt_tensor> &tensors,
              std::vector<std::string> &errors) {
  const int n = model.num_inputs;
  std::vector<mgrt_tensor_info> present;
  std::vector<int> where;
  std::vector<std::pair<std::string, std::string>> given;
  const size_t before = errors.size();
  for (int i = 0; i < n; ++i) {
    const mgrt_tensor_info &info = model.inputs[i];
    const std::string path = dir + "/" + fileNameOf(info.name) + ".npy";
    const mgrt_tensor_role role = roleOf(info);
    if (!isFile(path)) {
      if (role == MGRT_ROLE_LABEL_MASK || role == MGRT_ROLE_EVAL_MASK)
        continue;
      errors.push_back("--data npy: missing file '" + path + "' for input '" +
                       info.name + "' (expected " +
                       describe(info.dtype, info.rank, info.shape) + ")");
      continue;
    }
    present.push_back(info);
    where.push_back(i);
    given.push_back({info.name, path});
  }
  if (errors.size() != before)
    return false;
  mgrt_model_info sub = model;
  sub.num_inputs = static_cast<int>(present.size());
  sub.inputs = present.data();
  std::vector<mgrt_tensor> loaded;
  std::vector<std::string> loadErrors;
  if (!loadInputs(sub, given, quiet, loaded, loadErrors)) {
    for (const std::string &e : loadErrors)
      errors.push_back("--data npy: " + e);
    return false;
  }
  tensors.assign(n, mgrt_tensor{});
  for (size_t k = 0; k < where.size(); ++k)
    tensors[where[k]] = loaded[k];
  for (int i = 0; i < n; ++i) {
    const mgrt_tensor_info &info = model.inputs[i];
    mgrt_tensor &t = tensors[i];
    if (!t.data) { // an optional mask: all items count, none is evaluated
      if (mgrt_tensor_alloc(&t, info.dtype, info.rank, info.shape) != MGRT_OK) {
        errors.push_back("out of memory allocating input '" +
                         std::string(info.name) + "'");
        continue;
      }
      if (roleOf(info) == MGRT_ROLE_LABEL_MASK)
        std::memset(t.data, 1, mgrt_tensor_numel(&t));
      continue;
    }
    // Class labels index the prediction's last axis: [0, classes) when the
    // table says how many classes there are.
    if (roleOf(info) == MGRT_ROLE_LABELS &&
        (t.dtype == MGRT_I64 || t.dtype == MGRT_I32)) {
      const int64_t classes = numClassesOf(info);
      const int64_t m = mgrt_tensor_numel(&t);
      for (int64_t j = 0; j < m; ++j) {
        const int64_t v = t.dtype == MGRT_I64
                              ? static_cast<const int64_t *>(t.data)[j]
                              : static_cast<const int32_t *>(t.data)[j];
        const std::string what = "--data npy: '" + dir + "/" +
                                 fileNameOf(info.name) + ".npy': class label " +
                                 std::to_string(v) + " at index " +
                                 std::to_string(j) + " is out of range";
        if (v < 0) {
          errors.push_back(what + " (< 0)");
          break;
        }
        if (classes > 0 && v >= classes) {
          errors.push_back(what + ": the model's input '" + info.name +
                           "' takes " + std::to_string(classes) +
                           " classes (0 to " + std::to_string(classes - 1) +
                           ")");
          break;
        }
      }
    }
  }
  if (errors.size() != before) {
    for (mgrt_tensor &t : tensors)
      mgrt_tensor_free(&t);
    tensors.clear();
    return false;
  }
  return true;
}

} // namespace

NpyBatches::~NpyBatches() {
  for (std::vector<mgrt_tensor> &step : steps)
    for (mgrt_tensor &t : step)
      mgrt_tensor_free(&t);
}

bool NpyBatches::open(const mgrt_model_info &model, const std::string &dir,
                      bool quiet, std::vector<std::string> &errors) {
  if (!isDirectory(dir)) {
    errors.push_back("--data npy:" + dir + ": not a directory");
    return false;
  }
  std::vector<std::string> dirs;
  for (int k = 1; isDirectory(dir + "/step" + std::to_string(k)); ++k)
    dirs.push_back(dir + "/step" + std::to_string(k));
  if (dirs.empty())
    dirs.push_back(dir);
  for (const std::string &d : dirs) {
    std::vector<mgrt_tensor> tensors;
    if (!loadStep(model, d, quiet, tensors, errors))
      return false;
    int64_t c = 0, e = 0;
    for (int i = 0; i < model.num_inputs; ++i) {
      const mgrt_tensor_role role = roleOf(model.inputs[i]);
      if (role == MGRT_ROLE_LABEL_MASK)
        c = countSet(tensors[i]);
      else if (role == MGRT_ROLE_EVAL_MASK)
        e = countSet(tensors[i]);
    }
    steps.push_back(std::move(tensors));
    counted.push_back(c);
    evalCounts.push_back(e);
  }
  return true;
}

bool NpyBatches::fill(long step, std::vector<mgrt_tensor> &inputs,
                      BatchCounts &counts, std::string &) {
  const size_t k = static_cast<size_t>(step) % steps.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const mgrt_tensor &src = steps[k][i];
    std::memcpy(inputs[i].data, src.data,
                mgrt_tensor_numel(&src) * mgrt_dtype_size(src.dtype));
  }
  counts.counted = counted[k];
  counts.evalCounted = evalCounts[k];
  counts.epoch = static_cast<int64_t>(static_cast<size_t>(step) / steps.size());
  return true;
}

} // namespace mgrt
