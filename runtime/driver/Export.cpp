//===- Export.cpp - The trained parameters out of a training run ----------===//
//
// See Export.h.
//
//===----------------------------------------------------------------------===//

#include "driver/Export.h"

#include "driver/Inputs.h"
#include "megagraph/Comm.h"
#include "support/Error.h"

#include <algorithm>
#include <cstring>

namespace mgrt {
namespace {

int64_t numel(const mgrt_tensor_info &t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d)
    n *= t.shape[d];
  return n;
}

/// The whole packed bucket `b`: this rank's shard gathered from every rank
/// of the world (the ZeRO grid is dp x cp, the whole job without pp).
bool gatherBucket(const mgrt_state_info &b, std::vector<float> &out,
                  std::string &error) {
  const int64_t shard = numel(b.tensor);
  mgrt_comm_group *world = mgrt_comm_world();
  const int size = world ? mgrt_comm_size(world) : 1;
  out.resize(static_cast<size_t>(shard) * size);
  if (size == 1) {
    std::memcpy(out.data(), b.data, shard * sizeof(float));
    return true;
  }
  if (mgrt_comm_all_gather(world, b.data, shard, out.data(), nullptr,
                           MGRT_F32) != MGRT_OK)
    return setError(error, std::string("cannot gather the ZeRO-3 shards of '") +
                               b.tensor.name + "'");
  return true;
}

} // namespace

bool canExportParameters(const mgrt_model_info &model, std::string &error) {
  if (model.plan && model.plan->pp > 1)
    return setError(error, "exporting parameters of a pipelined plan (pp > 1) "
                           "is not supported");
  int params = 0;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind != MGRT_STATE_PARAMETER)
      continue;
    ++params;
    const mgrt_state_info &storage = s.bucket >= 0 ? model.state[s.bucket] : s;
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
                    std::vector<ParameterValues> &out, std::string &error) {
  if (!canExportParameters(model, error))
    return false;
  out.clear();
  std::vector<std::vector<float>> buckets(model.num_state);
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind != MGRT_STATE_PARAMETER)
      continue;
    ParameterValues p;
    p.info = &s;
    const int64_t n = numel(s.tensor);
    const float *from = static_cast<const float *>(s.data);
    if (s.bucket >= 0) {
      std::vector<float> &bucket = buckets[s.bucket];
      if (bucket.empty() && !gatherBucket(model.state[s.bucket], bucket, error))
        return false;
      if (s.offset + n > static_cast<int64_t>(bucket.size()))
        return setError(error, std::string("parameter '") + s.tensor.name +
                                   "' lies outside its ZeRO-3 bucket");
      from = bucket.data() + s.offset;
    }
    p.values.assign(from, from + n);
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
