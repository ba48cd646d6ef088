//===- StateLayout.cpp - The model's state independent of the plan -------===//
//
// See StateLayout.h.
//
//===----------------------------------------------------------------------===//

#include "driver/StateLayout.h"

#include "driver/Roles.h"
#include "support/Error.h"

#include <cstring>
#include <map>
#include <sstream>

namespace mgrt {
namespace {

/// The stage whose update entry takes each parameter's gradient, by
/// parameter name (pipelined models only).
std::map<std::string, int> stageOfParameters(const mgrt_model_info &model) {
  std::map<std::string, int> stage;
  const int pp = static_cast<int>(model.plan->pp);
  for (int k = 0; k < pp; ++k) {
    char name[32];
    mgrt_stage_entry_name(name, sizeof name, k, MGRT_STAGE_UPDATE);
    for (int e = 0; e < model.num_entries; ++e) {
      const mgrt_entry_info &entry = model.entries[e];
      if (std::strcmp(entry.name, name) != 0)
        continue;
      const size_t prefix = std::strlen(MGRT_PREFIX_GRADIENT);
      for (int i = 0; i < entry.num_inputs; ++i)
        if (roleOf(entry.inputs[i]) == MGRT_ROLE_GRADIENT)
          stage[entry.inputs[i].name + prefix] = k;
    }
  }
  return stage;
}

/// The parameter `name` is a moment of (`<parameter>.<moment>`, the
/// longest such parameter), or "".
std::string parameterOfMoment(const std::string &name,
                              const std::map<std::string, int> &params) {
  std::string best;
  for (const auto &[param, stage] : params)
    if (name.size() > param.size() + 1 &&
        name.compare(0, param.size(), param) == 0 &&
        name[param.size()] == '.' && param.size() > best.size())
      best = param;
  return best;
}

} // namespace

bool isSavedState(const mgrt_state_info &s) {
  return s.data && !(s.kind == MGRT_STATE_PARAMETER && s.bucket >= 0);
}

size_t bytesOfTensor(const mgrt_tensor_info &t) {
  size_t n = mgrt_dtype_size(t.dtype);
  for (int d = 0; d < t.rank; ++d)
    n *= static_cast<size_t>(t.shape[d]);
  return n;
}

int64_t LogicalTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool computeStateLayout(const mgrt_model_info &model, StateLayout &out,
                        std::string &error) {
  out = StateLayout();
  const mgrt_plan *plan = model.plan;
  if (plan && (plan->zero == 1 || plan->zero == 2))
    return setError(error, std::string("plan '") +
                               (plan->text ? plan->text : "") +
                               "' keeps ZeRO-1/2 shards of the optimizer "
                               "state, which are not re-sharded");
  const bool pipelined = plan && plan->pp > 1 && model.num_entries > 0;
  const std::map<std::string, int> stages =
      pipelined ? stageOfParameters(model) : std::map<std::string, int>();
  const int64_t cp = plan && plan->cp > 0 ? plan->cp : 1;
  // Where each saved tensor starts in a state file.
  std::vector<int64_t> fileOffset(model.num_state, -1);
  int64_t at = 0;
  for (int i = 0; i < model.num_state; ++i)
    if (isSavedState(model.state[i])) {
      fileOffset[i] = at;
      at += static_cast<int64_t>(bytesOfTensor(model.state[i].tensor));
    }
  auto elems = [&](int i) {
    return static_cast<int64_t>(bytesOfTensor(model.state[i].tensor) /
                                mgrt_dtype_size(model.state[i].tensor.dtype));
  };
  // ZeRO-3 buckets, by name: their parameters' state indices.
  std::map<std::string, std::vector<int>> buckets;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind == MGRT_STATE_PARAMETER && s.bucket >= 0)
      buckets[model.state[s.bucket].tensor.name].push_back(i);
  }
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    const std::string name = s.tensor.name;
    if (!isSavedState(s))
      continue;
    if (name == MGRT_STATE_ZERO_READY) {
      out.readyFlag = i;
      continue;
    }
    // A bucket of parameters, or of one moment of each: the bucket's name,
    // then ".<moment>".
    std::string bucket, suffix;
    for (const auto &[b, params] : buckets)
      if (name == b ||
          (name.size() > b.size() + 1 && name.compare(0, b.size(), b) == 0 &&
           name[b.size()] == '.' && b.size() > bucket.size())) {
        bucket = b;
        suffix = name.substr(b.size());
      }
    if (!bucket.empty()) {
      for (int p : buckets[bucket]) {
        const mgrt_state_info &param = model.state[p];
        LogicalTensor t;
        t.name = param.tensor.name + suffix;
        t.kind = suffix.empty() ? MGRT_STATE_PARAMETER : s.kind;
        t.dtype = s.tensor.dtype;
        t.shape.assign(param.tensor.shape,
                       param.tensor.shape + param.tensor.rank);
        t.stateIndex = i;
        t.fileOffset = fileOffset[i];
        t.storageElems = elems(i);
        t.rank = -1;
        t.offset = param.offset;
        out.tensors.push_back(std::move(t));
      }
      continue;
    }
    LogicalTensor t;
    t.name = name;
    t.kind = s.kind;
    t.dtype = s.tensor.dtype;
    t.shape.assign(s.tensor.shape, s.tensor.shape + s.tensor.rank);
    t.stateIndex = i;
    t.fileOffset = fileOffset[i];
    t.storageElems = elems(i);
    if (pipelined) {
      // Replica 0's rank of the owning stage (grid dp x pp x cp, dp
      // outermost); state of no stage (the step counter) from rank 0.
      auto it = stages.find(name);
      if (it == stages.end())
        it = stages.find(parameterOfMoment(name, stages));
      t.rank = it == stages.end() ? 0 : static_cast<int>(it->second * cp);
    }
    out.tensors.push_back(std::move(t));
  }
  return true;
}

std::string formatLogical(const LogicalTensor &t) {
  std::ostringstream os;
  os << "logical " << t.kind << " " << t.dtype << " " << t.fileOffset << " "
     << t.storageElems << " " << t.rank << " " << t.offset << " "
     << t.shape.size();
  for (int64_t d : t.shape)
    os << " " << d;
  os << " " << t.name;
  return os.str();
}

bool parseLogical(const std::string &text, LogicalTensor &t) {
  std::istringstream is(text);
  size_t rank = 0;
  if (!(is >> t.kind >> t.dtype >> t.fileOffset >> t.storageElems >> t.rank >>
        t.offset >> rank) ||
      rank > MGRT_MAX_RANK)
    return false;
  t.shape.assign(rank, 0);
  for (int64_t &d : t.shape)
    if (!(is >> d) || d < 0)
      return false;
  if (is.get() != ' ')
    return false;
  std::getline(is, t.name);
  return !t.name.empty() && t.storageElems >= 0 && t.offset >= 0 &&
         t.fileOffset >= 0 && mgrt_dtype_size(t.dtype) > 0;
}

} // namespace mgrt
