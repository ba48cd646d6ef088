//===- Export.cpp - The trained parameters out of a training run ----------===//
//
// See Export.h.
//
//===----------------------------------------------------------------------===//

#include "driver/Export.h"

#include "driver/Checkpoint.h"
#include "driver/Inputs.h"
#include "driver/StateLayout.h"
#include "megagraph/Comm.h"
#include "support/Error.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace mgrt {
namespace {

int64_t numel(const mgrt_tensor_info &t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d)
    n *= t.shape[d];
  return n;
}

/// Every rank's copy of the f32 storage `b` (`elems` a rank), in world
/// rank order: a ZeRO bucket's shards are among them.
bool gatherStorage(const mgrt_state_info &b, int64_t elems,
                   std::vector<float> &out, std::string &error) {
  mgrt_comm_group *world = mgrt_comm_world();
  const int size = world ? mgrt_comm_size(world) : 1;
  out.resize(static_cast<size_t>(elems) * size);
  if (size == 1) {
    std::memcpy(out.data(), b.data, elems * sizeof(float));
    return true;
  }
  if (mgrt_comm_all_gather(world, b.data, elems, out.data(), nullptr,
                           MGRT_F32) != MGRT_OK)
    return setError(error, std::string("cannot gather the ZeRO shards of '") +
                               b.tensor.name + "'");
  return true;
}

/// Protobuf wire types.
enum WireType { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

/// One field of a protobuf message: its number, wire type, and where its
/// whole encoding (key included) and its payload (kLength) lie.
struct Field {
  uint64_t number = 0;
  int type = 0;
  size_t begin = 0, end = 0;               ///< key .. end of the field
  size_t payloadBegin = 0, payloadEnd = 0; ///< kLength: the bytes
  uint64_t value = 0;                      ///< kVarint: the value
};

bool readVarint(const std::string &b, size_t &at, size_t end, uint64_t &v) {
  v = 0;
  for (int shift = 0; shift < 64 && at < end; shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(b[at++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void writeKey(std::string &out, uint64_t number, int type) {
  writeVarint(out, (number << 3) | static_cast<uint64_t>(type));
}

void writeLength(std::string &out, uint64_t number, const std::string &bytes) {
  writeKey(out, number, kLength);
  writeVarint(out, bytes.size());
  out += bytes;
}

/// The fields of the message in b[begin, end); false when malformed.
bool parseFields(const std::string &b, size_t begin, size_t end,
                 std::vector<Field> &fields) {
  fields.clear();
  size_t at = begin;
  while (at < end) {
    Field f;
    f.begin = at;
    uint64_t key;
    if (!readVarint(b, at, end, key))
      return false;
    f.number = key >> 3;
    f.type = static_cast<int>(key & 7);
    switch (f.type) {
    case kVarint:
      if (!readVarint(b, at, end, f.value))
        return false;
      break;
    case kFixed64:
      at += 8;
      break;
    case kFixed32:
      at += 4;
      break;
    case kLength: {
      uint64_t n;
      if (!readVarint(b, at, end, n) || n > end - at)
        return false;
      f.payloadBegin = at;
      f.payloadEnd = at + n;
      at += n;
      break;
    }
    default:
      return false;
    }
    if (at > end)
      return false;
    f.end = at;
    fields.push_back(f);
  }
  return true;
}

// Field numbers of onnx.proto.
constexpr uint64_t kModelGraph = 7;
constexpr uint64_t kGraphInitializer = 5;
constexpr uint64_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8,
                   kTensorRawData = 9, kTensorFloatData = 4,
                   kTensorExternalData = 13, kTensorDataLocation = 14;
constexpr uint64_t kOnnxFloat = 1;

/// The initializer `t` (TensorProto bytes) with `values`, or false with
/// `error`.
bool rewriteTensor(const std::string &t, const ParameterValues &p,
                   std::string &out, std::string &error) {
  std::vector<Field> fields;
  if (!parseFields(t, 0, t.size(), fields))
    return setError(error, std::string("initializer '") + p.info->tensor.name +
                               "' is malformed");
  int64_t numel = 1;
  out.clear();
  for (const Field &f : fields) {
    if (f.number == kTensorDataType && f.type == kVarint &&
        f.value != kOnnxFloat)
      return setError(error, std::string("initializer '") +
                                 p.info->tensor.name +
                                 "' is not FLOAT (data_type " +
                                 std::to_string(f.value) + ")");
    if (f.number == kTensorDims) {
      // Packed or one value per field.
      size_t at = f.type == kLength ? f.payloadBegin : f.begin;
      if (f.type == kLength) {
        while (at < f.payloadEnd) {
          uint64_t d;
          if (!readVarint(t, at, f.payloadEnd, d))
            return setError(error, "malformed dims");
          numel *= static_cast<int64_t>(d);
        }
      } else {
        numel *= static_cast<int64_t>(f.value);
      }
    }
    if (f.number == kTensorDataType || f.number == kTensorRawData ||
        f.number == kTensorFloatData || f.number == kTensorExternalData ||
        f.number == kTensorDataLocation)
      continue;
    out.append(t, f.begin, f.end - f.begin);
  }
  if (numel != static_cast<int64_t>(p.values.size()))
    return setError(error, std::string("initializer '") + p.info->tensor.name +
                               "' has " + std::to_string(numel) +
                               " values, the trained parameter " +
                               std::to_string(p.values.size()));
  writeKey(out, kTensorDataType, kVarint);
  writeVarint(out, kOnnxFloat);
  std::string raw(p.values.size() * sizeof(float), '\0');
  // onnx raw_data is little-endian, as the hosts the runtime builds for.
  std::memcpy(&raw[0], p.values.data(), raw.size());
  writeLength(out, kTensorRawData, raw);
  return true;
}

/// The name (field 8) of TensorProto t, or "".
std::string tensorName(const std::string &t) {
  std::vector<Field> fields;
  if (!parseFields(t, 0, t.size(), fields))
    return "";
  for (const Field &f : fields)
    if (f.number == kTensorName && f.type == kLength)
      return t.substr(f.payloadBegin, f.payloadEnd - f.payloadBegin);
  return "";
}

} // namespace

bool rewriteOnnx(const std::string &source,
                 const std::vector<ParameterValues> &params, std::string &out,
                 std::string &error) {
  std::ifstream in(source, std::ios::binary);
  if (!in)
    return setError(error, "cannot read the source model '" + source + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string model = ss.str();
  std::map<std::string, const ParameterValues *> byName;
  for (const ParameterValues &p : params)
    byName[p.info->tensor.name] = &p;
  std::vector<Field> top, graph;
  if (!parseFields(model, 0, model.size(), top))
    return setError(error, "'" + source + "' is not an ONNX model");
  bool sawGraph = false;
  out.clear();
  for (const Field &f : top) {
    if (f.number != kModelGraph || f.type != kLength) {
      out.append(model, f.begin, f.end - f.begin);
      continue;
    }
    sawGraph = true;
    if (!parseFields(model, f.payloadBegin, f.payloadEnd, graph))
      return setError(error, "'" + source + "' has a malformed graph");
    std::string g;
    for (const Field &gf : graph) {
      std::string t;
      if (gf.number == kGraphInitializer && gf.type == kLength)
        t = model.substr(gf.payloadBegin, gf.payloadEnd - gf.payloadBegin);
      auto it = t.empty() ? byName.end() : byName.find(tensorName(t));
      if (it == byName.end()) {
        g.append(model, gf.begin, gf.end - gf.begin);
        continue;
      }
      std::string rewritten;
      if (!rewriteTensor(t, *it->second, rewritten, error))
        return setError(error, "'" + source + "': " + error);
      writeLength(g, kGraphInitializer, rewritten);
      byName.erase(it);
    }
    writeLength(out, kModelGraph, g);
  }
  if (!sawGraph)
    return setError(error, "'" + source + "' has no graph");
  if (!byName.empty())
    return setError(error, "parameter '" + byName.begin()->first +
                               "' is no initializer of '" + source +
                               "' (an untied copy of a shared initializer? "
                               "compile with --keep-tied-initializers)");
  return true;
}

bool writeBytes(const std::string &path, const std::string &bytes,
                std::string &error) {
  const std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return setError(error, "cannot create '" + tmp + "'");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok)
    return setError(error, "cannot write '" + tmp + "'");
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return setError(error, "cannot rename '" + tmp + "' to '" + path + "'");
  return true;
}

bool canExportParameters(const mgrt_model_info &model, std::string &error) {
  if (!stateIsOnHost(error))
    return false;
  int params = 0;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind != MGRT_STATE_PARAMETER)
      continue;
    ++params;
    const mgrt_state_info &storage =
        inBucketStorage(model, s) ? model.state[s.bucket] : s;
    if (!storage.data || storage.tensor.dtype != MGRT_F32)
      return setError(error, std::string("parameter '") + s.tensor.name +
                                 "' has no f32 storage in the executable");
  }
  if (params == 0)
    return setError(error,
                    std::string("model '") +
                        (model.model_name ? model.model_name : "model") +
                        "' lists no parameters (compiled before the state "
                        "table existed, or it has none)");
  return true;
}

bool readParameters(const mgrt_model_info &model,
                    std::vector<ParameterValues> &out, std::string &error,
                    bool gather) {
  if (!canExportParameters(model, error))
    return false;
  out.clear();
  // Where each parameter's current values lie: on a rank (under pp the
  // stage that updates it) or in a ZeRO-3 bucket's shards.
  StateLayout layout;
  if (!computeStateLayout(model, layout, error))
    return false;
  std::map<std::string, const LogicalTensor *> where;
  for (const LogicalTensor &t : layout.tensors)
    if (t.kind == MGRT_STATE_PARAMETER)
      where[t.name] = &t;
  const bool pipelined = model.plan && model.plan->pp > 1;
  mgrt_comm_group *world = mgrt_comm_world();
  const int size = world ? mgrt_comm_size(world) : 1;
  std::map<int, std::vector<float>> buckets; // gathered, by state index
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind != MGRT_STATE_PARAMETER)
      continue;
    auto it = where.find(s.tensor.name);
    if (it == where.end())
      return setError(error, std::string("parameter '") + s.tensor.name +
                                 "' has no place in the state layout");
    const LogicalTensor &t = *it->second;
    ParameterValues p;
    p.info = &s;
    const int64_t n = numel(s.tensor);
    p.values.assign(n, 0.0f);
    if (!gather) { // the shapes only
      out.push_back(std::move(p));
      continue;
    }
    const mgrt_state_info &storage = model.state[t.stateIndex];
    if (t.shards.empty()) {
      // Under pp only the owning stage's ranks hold it (holdsState); the
      // owner's values are broadcast.
      if (holdsState(model, t.stateIndex)) {
        const float *from = static_cast<const float *>(storage.data) + t.offset;
        p.values.assign(from, from + n);
      }
      if (pipelined && size > 1 &&
          mgrt_comm_broadcast(world, p.values.data(), n, MGRT_F32, t.rank) !=
              MGRT_OK)
        return setError(error, std::string("cannot gather parameter '") +
                                   s.tensor.name + "' from its stage's rank " +
                                   std::to_string(t.rank));
    } else {
      // Element e of the packed bucket is element e % shard of the
      // (e / shard)-th shard's rank.
      if (t.storageElems <= 0)
        return setError(error, std::string("parameter '") + s.tensor.name +
                                   "' lies in an empty ZeRO bucket");
      std::vector<float> &all = buckets[t.stateIndex];
      if (all.empty() && !gatherStorage(storage, t.storageElems, all, error))
        return false;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t e = t.offset + j;
        const size_t k = static_cast<size_t>(e / t.storageElems);
        if (k >= t.shards.size() || t.shards[k] >= size)
          return setError(error, std::string("parameter '") + s.tensor.name +
                                     "' lies outside its ZeRO bucket");
        p.values[j] = all[static_cast<size_t>(t.shards[k]) * t.storageElems +
                          e % t.storageElems];
      }
    }
    out.push_back(std::move(p));
  }
  return true;
}

bool writeParametersNpy(const std::vector<ParameterValues> &params,
                        const std::string &dir, std::string &error) {
  std::string dirError = makeDirectories(dir);
  if (!dirError.empty())
    return setError(error, dirError);
  char err[512];
  for (const ParameterValues &p : params) {
    mgrt_tensor t{};
    t.dtype = MGRT_F32;
    t.rank = p.info->tensor.rank;
    std::copy(p.info->tensor.shape, p.info->tensor.shape + t.rank, t.shape);
    t.data = const_cast<float *>(p.values.data());
    const std::string path =
        dir + "/" + fileNameOf(p.info->tensor.name) + ".npy";
    if (mgrt_npy_write(path.c_str(), &t, err, sizeof err) != MGRT_OK)
      return setError(error, err);
  }
  return true;
}

} // namespace mgrt
