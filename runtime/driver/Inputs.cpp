//===- Inputs.cpp - Loading and checking a model's inputs -----------------===//

#include "driver/Inputs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace mgrt {

std::string makeDirectories(const std::string &dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty())
      continue;
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
      return "cannot create directory '" + path + "': " + std::strerror(errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "'" + dir + "' is not a directory";
  return "";
}

std::string fileNameOf(const char *name) {
  std::string s = name;
  for (char &c : s)
    if (c == '/')
      c = '_';
  return s;
}

namespace {

/// Converts `t` in place to `to` when that is a lossless-enough conversion
/// the driver allows; returns false (t untouched) otherwise, or sets
/// `error` when the values do not fit.
bool convert(mgrt_tensor &t, int to, std::string &error) {
  const int from = t.dtype;
  const bool allowed = (from == MGRT_F64 && to == MGRT_F32) ||
                       (from == MGRT_I32 && to == MGRT_I64) ||
                       (from == MGRT_I64 && to == MGRT_I32) ||
                       (from == MGRT_U8 && to == MGRT_BOOL) ||
                       (from == MGRT_BOOL && to == MGRT_U8);
  if (!allowed)
    return false;
  mgrt_tensor c;
  if (mgrt_tensor_alloc(&c, to, t.rank, t.shape) != MGRT_OK) {
    error = "out of memory converting to " + std::string(mgrt_dtype_name(to));
    return true;
  }
  const int64_t n = mgrt_tensor_numel(&t);
  for (int64_t i = 0; i < n; ++i) {
    if (from == MGRT_F64) {
      static_cast<float *>(c.data)[i] =
          static_cast<float>(static_cast<const double *>(t.data)[i]);
    } else if (from == MGRT_I32) {
      static_cast<int64_t *>(c.data)[i] =
          static_cast<const int32_t *>(t.data)[i];
    } else if (from == MGRT_I64) {
      int64_t v = static_cast<const int64_t *>(t.data)[i];
      if (v < INT32_MIN || v > INT32_MAX) {
        error = "value " + std::to_string(v) + " at index " +
                std::to_string(i) + " does not fit in i32";
        mgrt_tensor_free(&c);
        return true;
      }
      static_cast<int32_t *>(c.data)[i] = static_cast<int32_t>(v);
    } else { // u8 <-> bool
      uint8_t v = static_cast<const uint8_t *>(t.data)[i];
      static_cast<uint8_t *>(c.data)[i] = to == MGRT_BOOL ? v != 0 : v;
    }
  }
  mgrt_tensor_free(&t);
  t = c;
  return true;
}

/// "[1, 2, 0]": the multi-index of flat element `i` of a `rank`-D array.
std::string indexText(int64_t i, int rank, const int64_t *shape) {
  std::string s;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t n = shape[d] > 0 ? shape[d] : 1;
    s = std::to_string(i % n) + (d + 1 < rank ? ", " : "") + s;
    i /= n;
  }
  return "[" + s + "]";
}

} // namespace

std::string checkIndexRange(const mgrt_tensor_info &info,
                            const mgrt_tensor &t) {
  const int64_t rows = mgrt_index_bound(&info);
  if (rows < 1 || (t.dtype != MGRT_I64 && t.dtype != MGRT_I32))
    return "";
  const int64_t n = mgrt_tensor_numel(&t);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = t.dtype == MGRT_I64
                          ? static_cast<const int64_t *>(t.data)[i]
                          : static_cast<const int32_t *>(t.data)[i];
    if (v >= 0 && v < rows)
      continue;
    return "value " + std::to_string(v) + " at " +
           indexText(i, t.rank, t.shape) +
           " is out of range: the model's input '" + info.name +
           "' indexes an embedding table of " + std::to_string(rows) +
           " rows (0 to " + std::to_string(rows - 1) + ")";
  }
  return "";
}

std::string describe(int dtype, int rank, const int64_t *shape) {
  std::string s = std::string(mgrt_dtype_name(dtype)) + " [";
  for (int i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool loadInputs(const mgrt_model_info &model,
                const std::vector<std::pair<std::string, std::string>> &given,
                bool quiet, std::vector<mgrt_tensor> &tensors,
                std::vector<std::string> &errors) {
  const int n = model.num_inputs;
  std::vector<const std::string *> files(n, nullptr);
  for (const auto &[name, file] : given) {
    int idx = -1;
    for (int i = 0; i < n; ++i)
      if (name == model.inputs[i].name)
        idx = i;
    if (idx < 0) {
      std::string names;
      for (int i = 0; i < n; ++i)
        names += (i ? ", " : "") + std::string(model.inputs[i].name);
      errors.push_back("unknown input '" + name + "' (the model's inputs: " +
                       (n ? names : std::string("none")) + ")");
    } else if (files[idx]) {
      errors.push_back("input '" + name + "' given twice");
    } else {
      files[idx] = &file;
    }
  }
  for (int i = 0; i < n; ++i) {
    const mgrt_tensor_info &info = model.inputs[i];
    if (!files[i])
      errors.push_back("missing input '" + std::string(info.name) +
                       "' (expected " +
                       describe(info.dtype, info.rank, info.shape) +
                       "); pass --input " + info.name + "=FILE.npy");
  }
  if (!errors.empty())
    return false;

  tensors.assign(n, mgrt_tensor{});
  for (int i = 0; i < n; ++i) {
    const mgrt_tensor_info &info = model.inputs[i];
    const std::string where =
        "input '" + std::string(info.name) + "' (" + *files[i] + ")";
    mgrt_tensor &t = tensors[i];
    char err[512];
    if (mgrt_npy_read(files[i]->c_str(), &t, err, sizeof err) != MGRT_OK) {
      errors.push_back("input '" + std::string(info.name) + "': " + err);
      continue;
    }
    if (t.dtype != info.dtype) {
      std::string convError;
      const int from = t.dtype;
      if (!convert(t, info.dtype, convError)) {
        errors.push_back(where + ": expected dtype " +
                         mgrt_dtype_name(info.dtype) + ", got " +
                         mgrt_dtype_name(t.dtype));
        continue;
      }
      if (!convError.empty()) {
        errors.push_back(where + ": " + convError);
        continue;
      }
      if (!quiet)
        std::fprintf(stderr, "note: %s: converted %s to %s\n", where.c_str(),
                     mgrt_dtype_name(from), mgrt_dtype_name(info.dtype));
    }
    bool sameShape = t.rank == info.rank;
    for (int d = 0; sameShape && d < t.rank; ++d)
      sameShape = t.shape[d] == info.shape[d];
    if (!sameShape) {
      errors.push_back(where + ": expected shape " +
                       describe(info.dtype, info.rank, info.shape) + ", got " +
                       describe(t.dtype, t.rank, t.shape));
      continue;
    }
    if (std::string range = checkIndexRange(info, t); !range.empty())
      errors.push_back("'" + *files[i] + "': " + range);
  }
  if (!errors.empty()) {
    for (mgrt_tensor &t : tensors)
      mgrt_tensor_free(&t);
    tensors.clear();
    return false;
  }
  return true;
}

} // namespace mgrt
