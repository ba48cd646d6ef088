//===- Pipeline.cpp - Pipeline-parallel training steps --------------------===//
//
// Part of MegaGraph. See Pipeline.h.
//
//===----------------------------------------------------------------------===//

#include "driver/Pipeline.h"

#include "megagraph/Comm.h"

#include "driver/Descriptor.h"
#include "driver/PipelineSchedule.h"
#include "driver/Roles.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <time.h>

namespace mgrt {
namespace {

constexpr int kTag = 8;

int64_t numelOf(const mgrt_tensor_info &info) {
  int64_t n = 1;
  for (int d = 0; d < info.rank; ++d)
    n *= info.shape[d];
  return n;
}

const mgrt_entry_info *findEntry(const mgrt_model_info &model, int stage,
                                 mgrt_stage_entry_kind kind) {
  char name[32];
  mgrt_stage_entry_name(name, sizeof name, stage, kind);
  for (int i = 0; i < model.num_entries; ++i)
    if (std::strcmp(name, model.entries[i].name) == 0)
      return &model.entries[i];
  return nullptr;
}

double processCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Layout of the activations a stage receives (or sends): one contiguous
/// f32 buffer, act<j> at offset[j].
struct Pack {
  std::vector<int64_t> offset;
  int64_t total = 0;
};

} // namespace

struct PipelineState {
  /// This stage's actions of one step (PipelineSchedule.h).
  std::vector<PipelineAction> schedule;
  Pack in, out; // received act<j> (this stage's inputs), sent act<j>
  std::vector<float> outBuf, cotBuf, dactBuf;
  // Stashed stage inputs (f32) and saved values (bytes) per in-flight
  // slot: runtime-tracked allocations, so peak_bytes counts them.
  std::vector<mgrt_tensor> slots;
  // Without recomputation: the forward's saved<i> outputs (any dtype) at
  // savedOffset[i] bytes of a per-slot buffer, read by the backward.
  std::vector<int64_t> savedOffset;
  int64_t savedBytes = 0;
  std::vector<mgrt_tensor> savedSlots;
  std::vector<int> gradOfBwdOutput; // bwd output -> acc index or -1
  std::vector<mgrt_tensor> bwdOut;  // non-gradient bwd outputs
  std::vector<mgrt_tensor> acc;     // update inputs (accumulators)
  int lossOut = -1, correctOut = -1, evalOut = -1;

  ~PipelineState() {
    for (mgrt_tensor &t : acc)
      mgrt_tensor_free(&t);
    for (mgrt_tensor &t : bwdOut)
      mgrt_tensor_free(&t);
    for (mgrt_tensor &t : slots)
      mgrt_tensor_free(&t);
    for (mgrt_tensor &t : savedSlots)
      mgrt_tensor_free(&t);
  }
};

namespace {

/// setError with the "pipeline: " prefix of this file's messages.
bool fail(std::string &error, const std::string &message) {
  return setError(error, "pipeline: " + message);
}

} // namespace

Pipeline::Pipeline() = default;
Pipeline::~Pipeline() = default;

bool isPipelined(const mgrt_model_info &model) {
  return model.num_entries > 0 && model.entries;
}

bool setupPipeline(const mgrt_model_info &model, Pipeline &pipe,
                   DataParallel &dp, std::string &error) {
  const mgrt_plan none = {1, 1, 1, 1, 0, 0, MGRT_CP_ALLGATHER, ""};
  const mgrt_plan &plan = model.plan ? *model.plan : none;
  const std::string planText = plan.text ? plan.text : "";
  pipe.pp = static_cast<int>(plan.pp);
  pipe.mb = static_cast<int>(plan.micro_batches);
  pipe.dp = static_cast<int>(plan.dp);
  pipe.cp = static_cast<int>(plan.cp);
  pipe.zero = static_cast<int>(plan.zero);
  if (pipe.pp < 1 || pipe.mb < 1 || pipe.dp < 1 || pipe.cp < 1)
    return fail(error, "the model's plan '" + planText +
                           "' is not a pipeline plan this driver runs "
                           "(pp, mb, dp, cp >= 1)");
  const int planned = pipe.pp * pipe.dp * pipe.cp;
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  const int rc = mgrt_comm_init(nullptr, nullptr);
  mgrt_comm_set_error_mode(prev);
  if (rc != MGRT_OK)
    return fail(error, std::string("cannot initialize MPI: ") +
                           mgrt_comm_last_error());
  const int world = mgrt_comm_size(mgrt_comm_world());
  if (world != planned)
    return fail(error, "the model was compiled with --plan " + planText + " (" +
                           std::to_string(planned) +
                           " processes), but the job has " +
                           std::to_string(world) +
                           " process(es); launch it with mpirun -np " +
                           std::to_string(planned));
  pipe.worldRank = mgrt_comm_rank(mgrt_comm_world());
  const int64_t shape[3] = {pipe.dp, pipe.pp, pipe.cp};
  int64_t coords[3];
  mgrt_comm_grid_coords(3, shape, pipe.worldRank, coords);
  pipe.replica = static_cast<int>(coords[0]);
  pipe.stage = static_cast<int>(coords[1]);
  pipe.cpRank = static_cast<int>(coords[2]);
  // Activations go to the same cp block of the next stage; the gradients
  // of a stage's parameters are summed over its replicas and cp blocks.
  mgrt_comm_grid_group(3, shape, 1u << MGRT_COMM_AXIS_PP, &pipe.ppGroup);
  mgrt_comm_grid_group(3, shape,
                       (1u << MGRT_COMM_AXIS_DP) | (1u << MGRT_COMM_AXIS_CP),
                       &pipe.dpGroup);
  // The driver's view (ContextParallel.h splits it again): dp x cp ranks
  // fill the batch, cp innermost.
  dp.rank = pipe.replica * pipe.cp + pipe.cpRank;
  dp.size = pipe.dp * pipe.cp;

  const bool last = pipe.stage + 1 == pipe.pp;
  pipe.fwd = last ? nullptr : findEntry(model, pipe.stage, MGRT_STAGE_FORWARD);
  pipe.bwd = findEntry(model, pipe.stage, MGRT_STAGE_BACKWARD);
  pipe.update = findEntry(model, pipe.stage, MGRT_STAGE_UPDATE);
  if ((!last && !pipe.fwd) || !pipe.bwd || !pipe.update)
    return fail(error, "the model lacks the entries of stage " +
                           std::to_string(pipe.stage));

  pipe.state = std::make_unique<PipelineState>();
  PipelineState &st = *pipe.state;
  // Received activations: the bwd inputs act<j>, in j order.
  for (int i = 0; i < pipe.bwd->num_inputs; ++i) {
    const mgrt_tensor_info &in = pipe.bwd->inputs[i];
    int j;
    if (roleOf(in, &j) != MGRT_ROLE_ACTIVATION)
      continue;
    if (in.dtype != MGRT_F32)
      return fail(error,
                  std::string("activation '") + in.name + "' is not f32");
    if (j != static_cast<int>(st.in.offset.size()))
      return fail(error, "activations out of order");
    st.in.offset.push_back(st.in.total);
    st.in.total += numelOf(in);
  }
  if (pipe.fwd)
    for (int i = 0; i < pipe.fwd->num_outputs; ++i) {
      const mgrt_tensor_info &o = pipe.fwd->outputs[i];
      int j;
      const mgrt_tensor_role role = roleOf(o, &j);
      if (role == MGRT_ROLE_SAVED &&
          j == static_cast<int>(st.savedOffset.size())) {
        st.savedOffset.push_back(st.savedBytes);
        // 64-byte aligned pieces.
        const int64_t bytes =
            numelOf(o) * static_cast<int64_t>(mgrt_dtype_size(o.dtype));
        st.savedBytes += (bytes + 63) / 64 * 64;
        continue;
      }
      if (o.dtype != MGRT_F32 || role != MGRT_ROLE_ACTIVATION || j != i)
        return fail(error,
                    std::string("unexpected forward output '") + o.name + "'");
      st.out.offset.push_back(st.out.total);
      st.out.total += numelOf(o);
    }
  st.outBuf.assign(st.out.total, 0.f);
  st.cotBuf.assign(st.out.total, 0.f);
  st.dactBuf.assign(st.in.total, 0.f);
  // The schedule, and the input slots it needs (1F1B: stage k has at most
  // pp - k micro-batches in flight; GPipe all).
  if (const char *schedule = std::getenv("MEGAGRAPH_PP_SCHEDULE");
      schedule && !parsePipelineSchedule(schedule, pipe.schedule))
    return fail(error, std::string("MEGAGRAPH_PP_SCHEDULE='") + schedule +
                           "' is not a schedule (1f1b or gpipe)");
  st.schedule =
      buildPipelineSchedule(pipe.schedule, pipe.pp, pipe.stage, pipe.mb);
  const int slots = pipelineSlots(st.schedule);
  st.slots.assign(slots, mgrt_tensor{});
  st.savedSlots.assign(slots, mgrt_tensor{});
  for (int i = 0; i < slots; ++i) {
    const int64_t in = std::max<int64_t>(1, st.in.total);
    const int64_t saved = std::max<int64_t>(1, st.savedBytes);
    if (mgrt_tensor_alloc(&st.slots[i], MGRT_F32, 1, &in) != MGRT_OK ||
        mgrt_tensor_alloc(&st.savedSlots[i], MGRT_U8, 1, &saved) != MGRT_OK)
      return fail(error, "out of memory");
  }

  // Gradient accumulators in the update's input order.
  std::map<std::string, int> accIndex;
  st.acc.assign(pipe.update->num_inputs, mgrt_tensor{});
  for (int i = 0; i < pipe.update->num_inputs; ++i) {
    const mgrt_tensor_info &in = pipe.update->inputs[i];
    if (roleOf(in) != MGRT_ROLE_GRADIENT || in.dtype != MGRT_F32)
      return fail(error,
                  std::string("unexpected update input '") + in.name + "'");
    accIndex[in.name] = i;
    if (mgrt_tensor_alloc(&st.acc[i], in.dtype, in.rank, in.shape) != MGRT_OK)
      return fail(error, "out of memory");
  }
  st.gradOfBwdOutput.assign(pipe.bwd->num_outputs, -1);
  st.bwdOut.assign(pipe.bwd->num_outputs, mgrt_tensor{});
  for (int i = 0; i < pipe.bwd->num_outputs; ++i) {
    const mgrt_tensor_info &o = pipe.bwd->outputs[i];
    const std::string name = o.name;
    const mgrt_tensor_role role = roleOf(o);
    if (role == MGRT_ROLE_LOSS)
      st.lossOut = i;
    else if (role == MGRT_ROLE_CORRECT)
      st.correctOut = i;
    else if (role == MGRT_ROLE_EVAL_CORRECT)
      st.evalOut = i;
    if (role == MGRT_ROLE_ACTIVATION_GRAD)
      continue; // written into dactBuf
    // A gradient accumulates into the update input of its parameter.
    auto it = accIndex.find(name);
    if (role == MGRT_ROLE_GRADIENT) {
      if (it == accIndex.end())
        return fail(error, "gradient '" + name + "' has no update input");
      st.gradOfBwdOutput[i] = it->second;
    }
    if (mgrt_tensor_alloc(&st.bwdOut[i], o.dtype, o.rank, o.shape) != MGRT_OK)
      return fail(error, "out of memory");
  }
  pipe.heldBytes = 0;
  for (const std::vector<mgrt_tensor> *held :
       {&st.slots, &st.savedSlots, &st.acc, &st.bwdOut})
    for (const mgrt_tensor &t : *held)
      pipe.heldBytes +=
          static_cast<size_t>(mgrt_tensor_numel(&t)) * mgrt_dtype_size(t.dtype);
  if (last && st.lossOut < 0)
    return fail(error, "the last stage's backward has no 'loss'");
  if (last &&
      findRole(pipe.bwd->inputs, pipe.bwd->num_inputs, MGRT_ROLE_LOSS_SEED) < 0)
    return fail(error, "the last stage's backward has no input '" +
                           std::string(MGRT_NAME_LOSS_SEED) +
                           "'; recompile the model");
  return true;
}

bool pipelineStep(Pipeline &pipe, const mgrt_model_info &model,
                  std::vector<mgrt_tensor> &inputs,
                  std::vector<mgrt_tensor> &outputs, std::string &error) {
  PipelineState &st = *pipe.state;
  const int K = pipe.pp, s = pipe.stage, M = pipe.mb;
  const bool last = s + 1 == K;
  // Micro-batch m of a driver input: rows [m B/M, (m+1) B/M).
  std::map<std::string, int> inputIndex;
  for (int i = 0; i < model.num_inputs; ++i)
    inputIndex[model.inputs[i].name] = i;
  auto slice = [&](int i, int m) -> void * {
    const mgrt_tensor &t = inputs[i];
    const int64_t per = mgrt_tensor_numel(&t) / M;
    return static_cast<char *>(t.data) + m * per * mgrt_dtype_size(t.dtype);
  };
  // Weights n_m / N (labelled nodes), N over the global batch (summed over
  // the dp x cp ranks: each cp rank counts its own rows).
  std::vector<double> weight(M, 0.0);
  {
    const int maskIndex =
        findRole(model.inputs, model.num_inputs, MGRT_ROLE_LABEL_MASK);
    if (maskIndex < 0)
      return fail(error, "the model has no input '" MGRT_NAME_LABEL_MASK "'");
    const mgrt_tensor &mask = inputs[maskIndex];
    const int64_t per = mgrt_tensor_numel(&mask) / M;
    double total = 0;
    for (int m = 0; m < M; ++m) {
      int64_t n = 0;
      for (int64_t j = 0; j < per; ++j)
        n += static_cast<const uint8_t *>(mask.data)[m * per + j] != 0;
      weight[m] = static_cast<double>(n);
      total += n;
    }
    total = pipelineSumOverReplicas(pipe, total);
    for (double &w : weight)
      w = total > 0 ? w / total : 0.0;
  }
  for (mgrt_tensor &a : st.acc)
    std::memset(a.data, 0, mgrt_tensor_numel(&a) * sizeof(float));
  double loss = 0, correct = 0, evalCorrect = 0;
  const int slots = static_cast<int>(st.slots.size());
  pipe.computeSeconds = pipe.computeCpuSeconds = 0;

  // The last stage's loss seed: the weight of the micro-batch it runs.
  float seed = 0.f;
  // Calls `e` on micro-batch m (stage inputs from slot m % slots).
  auto call = [&](const mgrt_entry_info *e, int m, bool forward) -> bool {
    seed = static_cast<float>(weight[m]);
    std::vector<std::vector<int64_t>> descs;
    float *slot = static_cast<float *>(st.slots[m % slots].data);
    // 64-byte aligned (mgrt_tensor_alloc) base of the saved values.
    char *savedBase = static_cast<char *>(st.savedSlots[m % slots].data);
    for (int i = 0; i < e->num_inputs; ++i) {
      const mgrt_tensor_info &in = e->inputs[i];
      void *data = nullptr;
      int j;
      const mgrt_tensor_role role = roleOf(in, &j);
      if (auto it = inputIndex.find(in.name); it != inputIndex.end())
        data = slice(it->second, m);
      else if (role == MGRT_ROLE_ACTIVATION)
        data = slot + st.in.offset[j];
      else if (role == MGRT_ROLE_ACTIVATION_GRAD)
        data = st.cotBuf.data() + st.out.offset[j];
      else if (role == MGRT_ROLE_SAVED &&
               j < static_cast<int>(st.savedOffset.size()))
        data = savedBase + st.savedOffset[j];
      else if (role == MGRT_ROLE_LOSS_SEED && in.dtype == MGRT_F32)
        data = &seed;
      else
        return fail(error,
                    std::string("no data for entry input '") + in.name + "'");
      descs.push_back(rowMajorDescriptor(data, in.rank, in.shape));
    }
    for (int i = 0; i < e->num_outputs; ++i) {
      const mgrt_tensor_info &o = e->outputs[i];
      void *data;
      int j;
      const mgrt_tensor_role role = roleOf(o, &j);
      if (forward && role == MGRT_ROLE_SAVED)
        data = savedBase + st.savedOffset[j];
      else if (forward)
        data = st.outBuf.data() + st.out.offset[i];
      else if (role == MGRT_ROLE_ACTIVATION_GRAD)
        data = st.dactBuf.data() + st.in.offset[j];
      else
        data = st.bwdOut[i].data;
      descs.push_back(rowMajorDescriptor(data, o.rank, o.shape));
    }
    std::vector<void *> args;
    for (std::vector<int64_t> &d : descs)
      args.push_back(d.data());
    const double cpuStart = processCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    e->fn(args.data());
    pipe.computeSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    pipe.computeCpuSeconds += processCpuSeconds() - cpuStart;
    return true;
  };
  // After backward(m): the weighted loss and the counts (last stage),
  // accumulate the gradients (already weighted: the last stage's backward
  // starts from its seed, the others from weighted cotangents).
  auto collect = [&](int m) {
    if (last) {
      loss +=
          weight[m] * *static_cast<const float *>(st.bwdOut[st.lossOut].data);
      if (st.correctOut >= 0)
        correct += *static_cast<const float *>(st.bwdOut[st.correctOut].data);
      if (st.evalOut >= 0)
        evalCorrect += *static_cast<const float *>(st.bwdOut[st.evalOut].data);
    }
    for (size_t i = 0; i < st.gradOfBwdOutput.size(); ++i) {
      const int a = st.gradOfBwdOutput[i];
      if (a < 0)
        continue;
      float *dst = static_cast<float *>(st.acc[a].data);
      const float *src = static_cast<const float *>(st.bwdOut[i].data);
      const int64_t n = mgrt_tensor_numel(&st.acc[a]);
      for (int64_t j = 0; j < n; ++j)
        dst[j] += src[j];
    }
  };
  // One loop runs the stage's actions.
  auto slotData = [&](int m) {
    return static_cast<float *>(st.slots[m % slots].data);
  };
  for (const PipelineAction &a : st.schedule) {
    const int m = a.microBatch;
    switch (a.kind) {
    case PipelineAction::RecvActivations:
      mgrt_comm_recv(pipe.ppGroup, slotData(m), st.in.total, MGRT_F32, s - 1,
                     kTag);
      break;
    case PipelineAction::Forward:
      if (!call(pipe.fwd, m, true))
        return false;
      break;
    case PipelineAction::SendActivations:
      mgrt_comm_send(pipe.ppGroup, st.outBuf.data(), st.out.total, MGRT_F32,
                     s + 1, kTag);
      break;
    case PipelineAction::RecvGradients:
      mgrt_comm_recv(pipe.ppGroup, st.cotBuf.data(), st.out.total, MGRT_F32,
                     s + 1, kTag);
      break;
    case PipelineAction::Backward:
      if (!call(pipe.bwd, m, false))
        return false;
      collect(m);
      break;
    case PipelineAction::SendGradients:
      mgrt_comm_send(pipe.ppGroup, st.dactBuf.data(), st.in.total, MGRT_F32,
                     s - 1, kTag);
      break;
    case PipelineAction::SendActivationsRecvGradients:
      mgrt_comm_sendrecv(pipe.ppGroup, st.outBuf.data(), st.out.total, s + 1,
                         st.cotBuf.data(), st.out.total, s + 1, MGRT_F32, kTag);
      break;
    case PipelineAction::SendGradientsRecvActivations:
      mgrt_comm_sendrecv(pipe.ppGroup, st.dactBuf.data(), st.in.total, s - 1,
                         slotData(m), st.in.total, s - 1, MGRT_F32, kTag);
      break;
    }
  }

  // Gradients of the replicas, then the update (with ZeRO the update
  // reduce-scatters them itself).
  if (pipe.dp * pipe.cp > 1 && pipe.zero == 0)
    for (mgrt_tensor &a : st.acc)
      mgrt_comm_all_reduce(pipe.dpGroup, a.data, a.data, mgrt_tensor_numel(&a),
                           MGRT_F32, MGRT_COMM_SUM);
  {
    std::vector<std::vector<int64_t>> descs;
    for (int i = 0; i < pipe.update->num_inputs; ++i)
      descs.push_back(descriptorOf(st.acc[i]));
    std::vector<void *> args;
    for (std::vector<int64_t> &d : descs)
      args.push_back(d.data());
    pipe.update->fn(args.data());
  }

  // Loss and counts: summed over replicas, from the last stage to all.
  double values[3] = {loss, correct, evalCorrect};
  if (pipe.dp * pipe.cp > 1)
    mgrt_comm_all_reduce(pipe.dpGroup, values, values, 3, MGRT_F64,
                         MGRT_COMM_SUM);
  mgrt_comm_broadcast(pipe.ppGroup, values, 3, MGRT_F64, K - 1);
  for (int i = 0; i < model.num_outputs; ++i) {
    const mgrt_tensor_role role = roleOf(model.outputs[i]);
    float *out = static_cast<float *>(outputs[i].data);
    if (role == MGRT_ROLE_LOSS)
      *out = static_cast<float>(values[0]);
    else if (role == MGRT_ROLE_CORRECT)
      *out = static_cast<float>(values[1]);
    else if (role == MGRT_ROLE_EVAL_CORRECT)
      *out = static_cast<float>(values[2]);
  }
  return true;
}

double pipelineSumOverReplicas(const Pipeline &pipe, double v) {
  if (pipe.dp * pipe.cp == 1)
    return v;
  double sum = 0;
  mgrt_comm_all_reduce(pipe.dpGroup, &v, &sum, 1, MGRT_F64, MGRT_COMM_SUM);
  return sum;
}

std::vector<size_t> pipelineGather(const Pipeline &pipe, size_t v) {
  const int world = mgrt_comm_size(mgrt_comm_world());
  std::vector<int64_t> all(world);
  const int64_t mine = static_cast<int64_t>(v);
  mgrt_comm_all_gather(mgrt_comm_world(), &mine, 1, all.data(), nullptr,
                       MGRT_I64);
  return std::vector<size_t>(all.begin(), all.end());
}

std::vector<double> pipelineGatherSeconds(const Pipeline &pipe, double v) {
  (void)pipe;
  const int world = mgrt_comm_size(mgrt_comm_world());
  std::vector<double> all(world);
  mgrt_comm_all_gather(mgrt_comm_world(), &v, 1, all.data(), nullptr, MGRT_F64);
  return all;
}

} // namespace mgrt
