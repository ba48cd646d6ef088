//===- StateLayout.cpp - The model's state independent of the plan -------===//
//
// See StateLayout.h.
//
//===----------------------------------------------------------------------===//

#include "driver/StateLayout.h"

#include "driver/CheckpointReader.h"
#include "driver/Roles.h"
#include "support/Error.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace mgrt {
namespace {

/// The stage whose update entry takes each gradient, by the name of its
/// parameter or ZeRO bucket (pipelined models only).
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

bool inBucketStorage(const mgrt_model_info &model, const mgrt_state_info &s) {
  return s.kind == MGRT_STATE_PARAMETER && s.bucket >= 0 &&
         s.bucket < model.num_state && model.state[s.bucket].data;
}

bool isSavedState(const mgrt_model_info &model, const mgrt_state_info &s) {
  return s.data && !inBucketStorage(model, s);
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

std::vector<int> stateStages(const mgrt_model_info &model) {
  std::vector<int> out(model.num_state, -1);
  if (!model.plan || model.plan->pp <= 1 || model.num_entries <= 0)
    return out;
  // The parameters' stages, then each ZeRO bucket's (its parameters'),
  // then the moments `<parameter or bucket>.<moment>`.
  std::map<std::string, int> stages = stageOfParameters(model);
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    auto it = stages.find(s.tensor.name);
    if (it != stages.end() && s.bucket >= 0 && s.bucket < model.num_state)
      stages.emplace(model.state[s.bucket].tensor.name, it->second);
  }
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    auto it = stages.find(s.tensor.name);
    if (it == stages.end() && s.bucket >= 0 && s.bucket < model.num_state)
      it = stages.find(model.state[s.bucket].tensor.name);
    if (it == stages.end())
      it = stages.find(parameterOfMoment(s.tensor.name, stages));
    if (it != stages.end())
      out[i] = it->second;
  }
  return out;
}

namespace {
/// localStateModel's tables, by the compiled model.
struct LocalState {
  mgrt_model_info model;
  std::vector<mgrt_state_info> state;
  std::vector<bool> held;
};

std::map<const mgrt_model_info *, LocalState> &localStates() {
  static auto *states = new std::map<const mgrt_model_info *, LocalState>;
  return *states;
}

const LocalState *localStateOf(const mgrt_model_info &model) {
  for (const auto &[compiled, local] : localStates())
    if (&local.model == &model)
      return &local;
  return nullptr;
}
} // namespace

const mgrt_model_info &localStateModel(const mgrt_model_info &compiled,
                                       int stage) {
  // Only pipelined host programs go through mgrt_stage_global (the CUDA
  // runtime keeps device copies of its own, mgrt_cuda_global).
  std::string onDevice;
  if (!compiled.plan || compiled.plan->pp <= 1 || compiled.num_entries <= 0 ||
      !stateIsOnHost(onDevice))
    return compiled;
  auto found = localStates().find(&compiled);
  if (found != localStates().end())
    return found->second.model;
  LocalState &local = localStates()[&compiled];
  local.model = compiled;
  local.state.assign(compiled.state, compiled.state + compiled.num_state);
  local.held.assign(compiled.num_state, true);
  const std::vector<int> stages = stateStages(compiled);
  for (int i = 0; i < compiled.num_state; ++i) {
    mgrt_state_info &s = local.state[i];
    if (!isSavedState(compiled, s))
      continue;
    if (stages[i] >= 0 && stages[i] != stage) {
      local.held[i] = false;
      continue;
    }
    s.data = mgrt_stage_global(s.data,
                               static_cast<int64_t>(bytesOfTensor(s.tensor)));
  }
  local.model.state = local.state.data();
  return local.model;
}

bool holdsState(const mgrt_model_info &model, int i) {
  const LocalState *local = localStateOf(model);
  return !local || local->held[i];
}

size_t heldStateBytes(const mgrt_model_info &model) {
  // A pipelined program's mutable globals all live in mgrt_stage_global's
  // storage: what this process has materialised, by the driver or by the
  // compiled entries (another stage's global touched would show here).
  if (localStateOf(model))
    return mgrt_stage_global_bytes();
  size_t n = 0;
  for (int i = 0; i < model.num_state; ++i)
    if (isSavedState(model, model.state[i]) && holdsState(model, i))
      n += bytesOfTensor(model.state[i].tensor);
  return n;
}

bool computeStateLayout(const mgrt_model_info &model, StateLayout &out,
                        std::string &error) {
  out = StateLayout();
  const mgrt_plan *plan = model.plan;
  const bool pipelined = plan && plan->pp > 1 && model.num_entries > 0;
  const std::map<std::string, int> stages =
      pipelined ? stageOfParameters(model) : std::map<std::string, int>();
  const int64_t cp = plan && plan->cp > 0 ? plan->cp : 1;
  const int64_t pp = pipelined ? plan->pp : 1;
  const int64_t size = plan ? std::max<int64_t>(1, plan->dp) *
                                  std::max<int64_t>(1, plan->pp) * cp
                            : 1;
  // The ranks that share a bucket of stage `k`'s parameters: those whose
  // pp coordinate in the grid dp x pp x cp is k, ascending.
  auto group = [&](int k) {
    std::vector<int> ranks;
    for (int64_t r = 0; r < size; ++r)
      if ((r / cp) % pp == k)
        ranks.push_back(static_cast<int>(r));
    return ranks;
  };
  // The stage that updates state tensor `i` (0 without pp): the one whose
  // update entry takes its gradient, its ZeRO bucket's gradient, or, for a
  // moment `<parameter>.<moment>`, its parameter's.
  auto stageOf = [&](int i) {
    const mgrt_state_info &s = model.state[i];
    auto it = stages.find(s.tensor.name);
    if (it == stages.end() && s.bucket >= 0 && s.bucket < model.num_state)
      it = stages.find(model.state[s.bucket].tensor.name);
    if (it == stages.end())
      it = stages.find(parameterOfMoment(s.tensor.name, stages));
    return it == stages.end() ? 0 : it->second;
  };
  // Where each saved tensor starts in a state file.
  std::vector<int64_t> fileOffset(model.num_state, -1);
  int64_t at = 0;
  for (int i = 0; i < model.num_state; ++i)
    if (isSavedState(model, model.state[i])) {
      fileOffset[i] = at;
      at += static_cast<int64_t>(bytesOfTensor(model.state[i].tensor));
    }
  auto elems = [&](int i) {
    return static_cast<int64_t>(bytesOfTensor(model.state[i].tensor) /
                                mgrt_dtype_size(model.state[i].tensor.dtype));
  };
  // ZeRO buckets, by name: their parameters' state indices.
  std::map<std::string, std::vector<int>> buckets;
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    if (s.kind == MGRT_STATE_PARAMETER && s.bucket >= 0 &&
        s.bucket < model.num_state)
      buckets[model.state[s.bucket].tensor.name].push_back(i);
  }
  for (int i = 0; i < model.num_state; ++i) {
    const mgrt_state_info &s = model.state[i];
    const std::string name = s.tensor.name;
    if (!isSavedState(model, s))
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
      const std::vector<int> &params = buckets[bucket];
      const std::vector<int> shards = group(stageOf(params.front()));
      for (int p : params) {
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
        t.shards = shards;
        t.offset = param.offset;
        if (param.offset < 0 ||
            param.offset + t.numel() >
                t.storageElems * static_cast<int64_t>(shards.size()))
          return setError(error,
                          "'" + name + "' (" + std::to_string(t.storageElems) +
                              " elements on each of " +
                              std::to_string(shards.size()) +
                              " ranks) cannot hold '" + t.name +
                              "' at element " + std::to_string(param.offset));
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
    // Under pp replica 0's rank of the owning stage (grid dp x pp x cp, dp
    // outermost); state of no stage (the step counter) from rank 0.
    t.rank = static_cast<int>(stageOf(i) * cp);
    out.tensors.push_back(std::move(t));
  }
  return true;
}

std::string formatLogical(const LogicalTensor &t) {
  std::ostringstream os;
  os << "logical " << t.kind << " " << t.dtype << " " << t.fileOffset << " "
     << t.storageElems << " ";
  if (t.shards.empty())
    os << t.rank;
  for (int r : t.shards)
    os << r << ",";
  os << " " << t.offset << " " << t.shape.size();
  for (int64_t d : t.shape)
    os << " " << d;
  os << " " << t.name;
  return os.str();
}

bool parseLogical(const std::string &text, LogicalTensor &t) {
  std::istringstream is(text);
  size_t rank = 0;
  std::string place;
  if (!(is >> t.kind >> t.dtype >> t.fileOffset >> t.storageElems >> place >>
        t.offset >> rank) ||
      rank > MGRT_MAX_RANK)
    return false;
  // A rank, -1 (an older manifest), or the shards' ranks, each with a comma.
  t.shards.clear();
  t.rank = -1;
  char *end = nullptr;
  if (place.back() != ',') {
    const long r = std::strtol(place.c_str(), &end, 10);
    if (*end || r < -1 || r > INT_MAX)
      return false;
    t.rank = static_cast<int>(r);
  } else {
    for (const char *p = place.c_str(); *p; p = end + 1) {
      const long r = std::strtol(p, &end, 10);
      if (end == p || *end != ',' || r < 0 || r > INT_MAX)
        return false;
      t.shards.push_back(static_cast<int>(r));
    }
  }
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
