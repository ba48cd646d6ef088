//===- Train.cpp - mgrt_main --mode train ---------------------------------===//
//
// Conventions (input names, batches, log format) are documented in Train.h.
// Steps: check the model's inputs and outputs, generate the data, partition
// it into sequences, draw the train split, then per step build the batch,
// run the entry, log. Messages go to stderr; step lines and the summary to
// stdout.
//
//===----------------------------------------------------------------------===//

#include "driver/Train.h"

#include "megagraph/RuntimeData.h"

#include "comm/DriverComm.h"
#include "data/GraphUtil.h"
#include "driver/ContextParallel.h"
#include "driver/Descriptor.h"
#include "driver/Inputs.h"
#include "driver/NpyBatches.h"
#include "driver/Pipeline.h"
#include "driver/Roles.h"
#include "support/Blas.h"
#include "support/Error.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

// Defined when the program links the CUDA runtime (--target cuda).
extern "C" size_t mgrt_cuda_peak_bytes(void) __attribute__((weak));
extern "C" void mgrt_cuda_reset_peak(void) __attribute__((weak));

namespace mgrt {
namespace {

/// The graph-input roles the driver fills.
bool isNodeInput(mgrt_tensor_role role) {
  return role >= MGRT_ROLE_NODE_FEATURES && role <= MGRT_ROLE_EVAL_MASK;
}

/// What the input of `role` must look like: rank and allowed dtypes.
void expected(mgrt_tensor_role role, int &rank, int &dtypeA, int &dtypeB,
              const char *&shapeText) {
  switch (role) {
  case MGRT_ROLE_NODE_FEATURES: // i64: categorical, see --categories
    rank = 3, dtypeA = MGRT_F32, dtypeB = MGRT_I64, shapeText = "[B, S, F]";
    return;
  case MGRT_ROLE_ADJ_NORM:
    rank = 3, dtypeA = dtypeB = MGRT_F32, shapeText = "[B, S, S]";
    return;
  case MGRT_ROLE_SPD:
    rank = 3, dtypeA = MGRT_I64, dtypeB = MGRT_I32, shapeText = "[B, S, S]";
    return;
  case MGRT_ROLE_LABEL_MASK:
    rank = 2, dtypeA = MGRT_BOOL, dtypeB = MGRT_U8, shapeText = "[B, S]";
    return;
  case MGRT_ROLE_EVAL_MASK:
    rank = 2, dtypeA = dtypeB = MGRT_F32, shapeText = "[B, S]";
    return;
  default:
    rank = 2, dtypeA = MGRT_I64, dtypeB = MGRT_I32, shapeText = "[B, S]";
    return;
  }
}

/// Uniform in [0, n) (Lemire's multiply; bias below 2^-64 n).
uint64_t below(Rng &rng, uint64_t n) {
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(rng.next()) * n) >> 64);
}

void shuffle(std::vector<int64_t> &v, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[below(rng, i)]);
}

/// Stores integer `v` at element i of an i64 or i32 tensor.
inline void storeInt(const mgrt_tensor &t, int64_t i, int64_t v) {
  if (t.dtype == MGRT_I64)
    static_cast<int64_t *>(t.data)[i] = v;
  else
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(v);
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// Everything the loop owns; released by the destructor.
struct State {
  mgrt_graph graph{};
  mgrt_tensor features{}, labels{}, inDegree{}, outDegree{}, split{};
  std::vector<mgrt_tensor> inputs, outputs;
  FILE *log = nullptr;
  ~State() {
    mgrt_graph_free(&graph);
    for (mgrt_tensor *t : {&features, &labels, &inDegree, &outDegree, &split})
      mgrt_tensor_free(t);
    for (mgrt_tensor &t : inputs)
      mgrt_tensor_free(&t);
    for (mgrt_tensor &t : outputs)
      mgrt_tensor_free(&t);
    if (log)
      std::fclose(log);
  }
};

/// True for `ogb:DIR[,split=NAME]` or an existing directory.
bool isOgbSpec(const std::string &spec) {
  if (spec.compare(0, 4, "ogb:") == 0)
    return true;
  struct stat sb;
  return spec.compare(0, 10, "synthetic:") != 0 &&
         ::stat(spec.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
}

/// DIR and split scheme ("" = the only one) of an OGB spec.
void splitOgbSpec(const std::string &spec, std::string &dir,
                  std::string &scheme) {
  dir = spec.compare(0, 4, "ogb:") == 0 ? spec.substr(4) : spec;
  scheme.clear();
  const size_t at = dir.rfind(",split=");
  if (at != std::string::npos) {
    scheme = dir.substr(at + 7);
    dir.resize(at);
  }
}

bool hasFlag(const Options &opts, const char *flag) {
  return std::find(opts.trainFlags.begin(), opts.trainFlags.end(), flag) !=
         opts.trainFlags.end();
}

/// "P0,P1,..." for the log's peak_bytes list, one per rank.
std::string peakList(const std::vector<size_t> &peaks) {
  std::string s;
  for (size_t p : peaks)
    s += (s.empty() ? "" : ",") + std::to_string(p);
  return s;
}

/// Output indices of the training step the loop reads.
struct StepOutputs {
  int loss = -1, correct = -1, evalCorrect = -1;
};

/// --data npy:DIR: the user's tensors, one process, no graph data set.
/// Logs as the graph loop does; `correct` and `eval_correct` are optional
/// (regression losses have none).
/// Allocates the step's input and output tensors with the model's shapes;
/// on failure returns the message naming the tensor.
std::string allocateTensors(const mgrt_model_info &model, State &st) {
  st.inputs.assign(model.num_inputs, mgrt_tensor{});
  st.outputs.assign(model.num_outputs, mgrt_tensor{});
  for (int k = 0; k < 2; ++k) {
    const int n = k ? model.num_outputs : model.num_inputs;
    const mgrt_tensor_info *infos = k ? model.outputs : model.inputs;
    std::vector<mgrt_tensor> &ts = k ? st.outputs : st.inputs;
    for (int i = 0; i < n; ++i)
      if (mgrt_tensor_alloc(&ts[i], infos[i].dtype, infos[i].rank,
                            infos[i].shape) != MGRT_OK)
        return "out of memory allocating " +
               std::string(k ? "output '" : "input '") + infos[i].name + "'";
  }
  return "";
}

int trainOnNpy(const mgrt_model_info &model, const Options &opts,
               const StepOutputs &outs) {
  if (model.plan &&
      (model.plan->dp > 1 || model.plan->pp > 1 || model.plan->cp > 1))
    return reportError(
        "--data npy: runs one process; the model was compiled for a "
        "parallel plan (dp x pp x cp > 1)");
  if (opts.steps < 1)
    return reportError("--steps K is required for --mode train");
  NpyBatches batches;
  std::vector<std::string> errors;
  if (!batches.open(model, opts.data.substr(4), opts.quiet, errors)) {
    for (const std::string &e : errors)
      reportError(e);
    return 1;
  }
  State st;
  if (std::string error = allocateTensors(model, st); !error.empty())
    return reportError(error);
  std::vector<std::vector<int64_t>> descriptors;
  for (const mgrt_tensor &t : st.inputs)
    descriptors.push_back(descriptorOf(t));
  for (const mgrt_tensor &t : st.outputs)
    descriptors.push_back(descriptorOf(t));
  std::vector<void *> args;
  for (std::vector<int64_t> &d : descriptors)
    args.push_back(d.data());
  if (!opts.logJson.empty()) {
    st.log = std::fopen(opts.logJson.c_str(), "a");
    if (!st.log)
      return reportError(
          "--log-json '" + opts.logJson +
          "': cannot open for appending: " + std::strerror(errno));
  }
  if (!opts.quiet)
    std::fprintf(stderr, "train: %s: %zu step(s) of tensors, cycled\n",
                 opts.data.c_str(), batches.size());
  auto scalar = [&](int i) {
    return static_cast<double>(*static_cast<const float *>(st.outputs[i].data));
  };
  double lastLoss = NAN, lastAcc = NAN, totalS = 0;
  long done = 0;
  int status = 0;
  for (long step = 0; step < opts.steps; ++step) {
    int64_t evalCounted = 0;
    const int64_t counted = batches.fill(step, st.inputs, evalCounted);
    auto start = std::chrono::steady_clock::now();
    model.entry(args.data());
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    totalS += secs;
    ++done;
    const double loss = scalar(outs.loss);
    const double acc =
        outs.correct >= 0 && counted > 0 ? scalar(outs.correct) / counted : NAN;
    const double testAcc = outs.evalCorrect >= 0 && evalCounted > 0
                               ? scalar(outs.evalCorrect) / evalCounted
                               : NAN;
    lastLoss = loss, lastAcc = acc;
    if (!opts.quiet) {
      char accText[32] = "-", testText[32] = "";
      if (std::isfinite(acc))
        std::snprintf(accText, sizeof accText, "%.3f", acc);
      if (std::isfinite(testAcc))
        std::snprintf(testText, sizeof testText, "  test %.3f", testAcc);
      std::printf("step %ld/%ld  loss %.4f  acc %s%s  %.3f s\n", step + 1,
                  opts.steps, loss, accText, testText, secs);
      std::fflush(stdout);
    }
    if (st.log) {
      const std::string line = "{\"step\":" + std::to_string(step + 1) +
                               ",\"loss\":" + jsonNumber(loss) +
                               ",\"accuracy\":" + jsonNumber(acc) +
                               ",\"test_accuracy\":" + jsonNumber(testAcc) +
                               ",\"step_time_s\":" + jsonNumber(secs) + "}\n";
      if (std::fputs(line.c_str(), st.log) < 0 || std::fflush(st.log) != 0) {
        status = reportError("--log-json '" + opts.logJson +
                             "': write failed: " + std::strerror(errno));
        break;
      }
    }
    if (!std::isfinite(loss)) {
      status =
          reportError("loss is not finite at step " + std::to_string(step + 1));
      break;
    }
  }
  char accBuf[32] = "-";
  if (std::isfinite(lastAcc))
    std::snprintf(accBuf, sizeof accBuf, "%.4f", lastAcc);
  std::printf("%s: train %s, %ld step(s), final loss %.4f, final acc %s, "
              "mean step %.3f s\n",
              model.model_name ? model.model_name : "model",
              status ? "FAILED" : "ok", done, lastLoss, accBuf,
              done ? totalS / done : 0.0);
  std::fflush(stdout);
  return status;
}

} // namespace

int train(const mgrt_model_info &model, const Options &opts) {
  // The user's tensors: any input names, no graph data set.
  if (opts.data.compare(0, 4, "npy:") == 0) {
    StepOutputs outs;
    outs.loss = findRole(model.outputs, model.num_outputs, MGRT_ROLE_LOSS);
    outs.correct =
        findRole(model.outputs, model.num_outputs, MGRT_ROLE_CORRECT);
    outs.evalCorrect =
        findRole(model.outputs, model.num_outputs, MGRT_ROLE_EVAL_CORRECT);
    if (outs.loss < 0)
      return reportError(
          "--mode train: the model has no training step (no output "
          "'loss'); compile it with --train",
          2);
    return trainOnNpy(model, opts, outs);
  }
  // Data parallelism (runtime/comm/DriverComm.h): rank r of P takes the
  // sequences [r B, (r + 1) B) of each global batch of P B; rank 0 logs.
  DataParallel dp;
  // Pipeline parallelism (driver/Pipeline.h): the world is dp x pp, and
  // dp is this rank's replica.
  Pipeline pipe;
  const bool pipelined = isPipelined(model);
  if (std::string error; pipelined ? !setupPipeline(model, pipe, dp, error)
                                   : !setupDataParallel(model.plan, dp, error))
    return reportError(error);
  const bool lead = dp.rank == 0 && pipe.stage == 0;
  // Context parallelism (driver/ContextParallel.h): the world is dp x cp.
  ContextParallel cp;
  if (std::string error;
      !setupContextParallel(model.plan, dp.rank, dp.size, cp, error))
    return reportError(error);
  // Outputs: loss (required), correct (optional), others ignored.
  // Outputs: loss (required), correct and eval_correct (optional), others
  // ignored.
  const int lossIndex =
      findRole(model.outputs, model.num_outputs, MGRT_ROLE_LOSS);
  const int correctIndex =
      findRole(model.outputs, model.num_outputs, MGRT_ROLE_CORRECT);
  const int evalCorrectIndex =
      findRole(model.outputs, model.num_outputs, MGRT_ROLE_EVAL_CORRECT);
  if (lossIndex < 0)
    return reportError(
        std::string("--mode train: model '") +
            (model.model_name ? model.model_name : "model") +
            "' has no training step (no output 'loss'); compile it "
            "with --train",
        2);
  for (int i : {lossIndex, correctIndex, evalCorrectIndex}) {
    if (i < 0)
      continue;
    const mgrt_tensor_info &o = model.outputs[i];
    int64_t n = 1;
    for (int d = 0; d < o.rank; ++d)
      n *= o.shape[d];
    if (o.dtype != MGRT_F32 || n != 1)
      return reportError("output '" + std::string(o.name) +
                         "' must be one f32 element, the model has " +
                         describe(o.dtype, o.rank, o.shape));
  }

  // Options.
  std::vector<std::string> errors;
  if (opts.data.empty())
    errors.push_back("--data SPEC is required for --mode train");
  if (opts.steps < 1)
    errors.push_back("--steps K is required for --mode train");
  if (opts.partition != "metis" && opts.partition != "greedy")
    errors.push_back("--partition '" + opts.partition +
                     "' is not a partitioner (expected metis or greedy)");

  // Inputs: roles, dtypes, ranks, one B and S for all.
  std::vector<mgrt_tensor_role> roles(model.num_inputs);
  int64_t B = -1, S = -1;
  std::string bsFrom;
  for (int i = 0; i < model.num_inputs; ++i) {
    const mgrt_tensor_info &in = model.inputs[i];
    const std::string name = in.name;
    roles[i] = roleOf(in);
    if (!isNodeInput(roles[i])) {
      errors.push_back("model input '" + name +
                       "' has no training data convention (supported: " +
                       MGRT_NODE_INPUT_NAMES ")");
      continue;
    }
    int rank, dtA, dtB;
    const char *shapeText;
    expected(roles[i], rank, dtA, dtB, shapeText);
    const std::string what = "model input '" + name + "' is " +
                             describe(in.dtype, in.rank, in.shape);
    if (in.rank != rank || (in.dtype != dtA && in.dtype != dtB)) {
      errors.push_back(what + ", expected " + mgrt_dtype_name(dtA) + " " +
                       shapeText);
      continue;
    }
    const bool square =
        roles[i] == MGRT_ROLE_SPD || roles[i] == MGRT_ROLE_ADJ_NORM;
    if (B < 0)
      B = in.shape[0], S = in.shape[1], bsFrom = name;
    if (in.shape[0] != B || in.shape[1] != S ||
        (square && in.shape[2] != S * cp.size))
      errors.push_back(what + ", expected " + mgrt_dtype_name(dtA) + " " +
                       shapeText + " with B = " + std::to_string(B) + ", S = " +
                       std::to_string(S) + " (from input '" + bsFrom + "')");
  }
  if (errors.empty() && B < 0)
    errors.push_back("the model has no node inputs to take the batch shape "
                     "[B, S] from");
  if (errors.empty() && (B < 1 || S < 1))
    errors.push_back("the model's batch shape [B, S] = [" + std::to_string(B) +
                     ", " + std::to_string(S) + "] is empty");
  if (errors.empty() && opts.batch && opts.batch != B)
    errors.push_back("--batch " + std::to_string(opts.batch) +
                     " does not match the model, compiled for B = " +
                     std::to_string(B) + " (input '" + bsFrom + "')");
  if (errors.empty() && opts.seqLen && opts.seqLen != S)
    errors.push_back("--seq-len " + std::to_string(opts.seqLen) +
                     " does not match the model, compiled for S = " +
                     std::to_string(S) + " (input '" + bsFrom + "')");
  if (!errors.empty()) {
    for (const std::string &e : errors)
      reportError(e);
    return 1;
  }

  // Data: a generator, or a dataset in the OGB raw layout.
  State st;
  char err[512];
  const bool ogb = isOgbSpec(opts.data);
  {
    struct stat sb;
    const bool synthetic = opts.data.compare(0, 10, "synthetic:") == 0;
    if (!synthetic && !ogb && ::stat(opts.data.c_str(), &sb) == 0)
      return reportError(
          "--data '" + opts.data +
          "': loading a dataset file is not supported; give a "
          "directory in the OGB raw layout (ogb:DIR) or a generator "
          "such as synthetic:sbm,nodes=4096,classes=8");
    auto start = std::chrono::steady_clock::now();
    if (ogb) {
      std::string dir, scheme;
      splitOgbSpec(opts.data, dir, scheme);
      if (mgrt_ogb_load(dir.c_str(), scheme.c_str(), &st.graph, &st.features,
                        &st.labels, &st.split, err, sizeof err) != MGRT_OK)
        return reportError("--data '" + opts.data + "': " + err);
      if (!opts.quiet && hasFlag(opts, "--train-fraction"))
        std::fprintf(stderr, "note: --train-fraction is ignored: the "
                             "dataset's split is used\n");
    } else if (mgrt_sbm_generate(opts.data.c_str(), &st.graph, &st.features,
                                 &st.labels, err, sizeof err) != MGRT_OK) {
      return reportError("--data '" + opts.data + "': " + err);
    }
    if (mgrt_graph_degrees(&st.graph, &st.inDegree, &st.outDegree, err,
                           sizeof err) != MGRT_OK)
      return reportError(std::string("degrees: ") + err);
    if (!opts.quiet)
      std::fprintf(stderr,
                   "data: %s: %lld nodes, %lld edges, %lld features (%.2f "
                   "s)\n",
                   opts.data.c_str(), (long long)st.graph.num_nodes,
                   (long long)st.graph.num_edges,
                   (long long)st.features.shape[1],
                   std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count());
  }
  const int64_t N = st.graph.num_nodes;
  const int64_t F = st.features.shape[1];
  for (int i = 0; i < model.num_inputs; ++i)
    if (roles[i] == MGRT_ROLE_NODE_FEATURES && model.inputs[i].shape[2] != F)
      errors.push_back(
          "model input '" + std::string(model.inputs[i].name) + "' has " +
          std::to_string(model.inputs[i].shape[2]) +
          " features per node but --data has features=" + std::to_string(F));
  // Integer feature inputs get each float column quantized into
  // --categories bins over its range: id = 1 + f * V + bin.
  std::vector<float> colLo(F, 0.f), colScale(F, 0.f);
  {
    const float *x = static_cast<const float *>(st.features.data);
    for (int64_t f = 0; f < F; ++f) {
      float lo = N ? x[f] : 0.f, hi = lo;
      for (int64_t i = 0; i < N; ++i)
        lo = std::min(lo, x[i * F + f]), hi = std::max(hi, x[i * F + f]);
      colLo[f] = lo;
      colScale[f] = hi > lo ? opts.categories / (hi - lo) : 0.f;
    }
  }
  // With cp, the model's rows R are this rank's block of the S nodes.
  const int64_t R = S, first = cp.rank * R;
  S *= cp.size;
  const int64_t numSeq = N / S;
  const int64_t globalB = B * cp.dpSize;
  if (cp.size > 1 && std::count(roles.begin(), roles.end(), MGRT_ROLE_ADJ_NORM))
    errors.push_back("context parallelism (cp=" + std::to_string(cp.size) +
                     ") does not support the dense adjacency input yet");
  if (numSeq < globalB)
    errors.push_back("--data has " + std::to_string(N) + " nodes, " +
                     std::to_string(numSeq) +
                     " sequence(s) of S = " + std::to_string(S) +
                     " nodes; a batch needs B = " + std::to_string(globalB));
  if (!errors.empty()) {
    for (const std::string &e : errors)
      reportError(e);
    return 1;
  }

  std::vector<int64_t> order(N);
  {
    auto start = std::chrono::steady_clock::now();
    const bool metis = opts.partition == "metis";
    if ((metis ? mgrt_partition_metis(&st.graph, S, opts.seed, order.data(),
                                      err, sizeof err)
               : mgrt_partition_sequences(&st.graph, S, order.data(), err,
                                          sizeof err)) != MGRT_OK)
      return reportError("partition (" + opts.partition + "): " + err);
    int64_t internal = 0, cpCut = 0;
    if (std::string error;
        !reorderForContextParallel(st.graph, order.data(), numSeq, S, cp.size,
                                   opts.seed, error, &internal, &cpCut))
      return reportError(error);
    if (!opts.quiet && cp.size > 1 && lead)
      std::fprintf(stderr,
                   "partition: cp blocks of %lld nodes (METIS) cut %.1f%% of "
                   "the edges inside the sequences\n",
                   (long long)(S / cp.size),
                   internal ? 100.0 * cpCut / internal : 0.0);
    int64_t cut = 0;
    if (!opts.quiet && mgrt_partition_edge_cut(&st.graph, order.data(), S, &cut,
                                               err, sizeof err) == MGRT_OK)
      std::fprintf(stderr,
                   "partition: %s, sequences of %lld nodes cut %.1f%% of the "
                   "edges (%.2f s)\n",
                   opts.partition.c_str(), (long long)S,
                   st.graph.num_edges ? 100.0 * cut / st.graph.num_edges : 0.0,
                   std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count());
  }
  // Train and evaluation (test) nodes. SBM: the first round(f N) nodes of a
  // seeded shuffle train, the rest are evaluated. OGB: the split's train
  // and test nodes that have a label.
  std::vector<uint8_t> isTrain(N, 0), isEval(N, 0);
  if (ogb) {
    const uint8_t *split = static_cast<const uint8_t *>(st.split.data);
    const int64_t *lab = static_cast<const int64_t *>(st.labels.data);
    for (int64_t i = 0; i < N; ++i) {
      isTrain[i] = lab[i] >= 0 && split[i] == MGRT_SPLIT_TRAIN;
      isEval[i] = lab[i] >= 0 && split[i] == MGRT_SPLIT_TEST;
    }
  } else {
    std::vector<int64_t> perm(N);
    for (int64_t i = 0; i < N; ++i)
      perm[i] = i;
    shuffle(perm, mixSeed(opts.seed, 0x73706c6974ULL /* "split" */));
    const int64_t numTrain = std::llround(opts.trainFraction * N);
    for (int64_t i = 0; i < N; ++i)
      isTrain[perm[i]] = i < numTrain, isEval[perm[i]] = i >= numTrain;
  }

  // Input and output tensors, descriptors.
  if (std::string error = allocateTensors(model, st); !error.empty())
    return reportError(error);
  std::vector<std::vector<int64_t>> descriptors;
  for (const mgrt_tensor &t : st.inputs)
    descriptors.push_back(descriptorOf(t));
  for (const mgrt_tensor &t : st.outputs)
    descriptors.push_back(descriptorOf(t));
  std::vector<void *> args;
  for (std::vector<int64_t> &d : descriptors)
    args.push_back(d.data());

  if (!opts.logJson.empty() && lead) {
    st.log = std::fopen(opts.logJson.c_str(), "a");
    if (!st.log)
      return reportError(
          "--log-json '" + opts.logJson +
          "': cannot open for appending: " + std::strerror(errno));
  }
  if (const char *hint = blasCoreHint(); hint && !opts.quiet)
    std::fprintf(stderr, "note: %s\n", hint);
  if (!opts.quiet && dp.size > 1 && lead)
    std::fprintf(stderr,
                 "train: data parallel over %d ranks, context parallel over "
                 "%d (%lld of %lld nodes per rank)\n",
                 cp.dpSize, cp.size, (long long)R, (long long)S);
  if (!opts.quiet && lead)
    std::fprintf(stderr,
                 "train: B = %lld sequences of S = %lld nodes, %lld "
                 "sequences (%lld nodes unused), %lld steps per epoch, %lld "
                 "training nodes, %lld test nodes\n",
                 (long long)globalB, (long long)S, (long long)numSeq,
                 (long long)(N - numSeq * S), (long long)(numSeq / globalB),
                 (long long)std::count(isTrain.begin(), isTrain.end(), 1),
                 (long long)std::count(isEval.begin(), isEval.end(), 1));

  const int64_t *inDeg = static_cast<const int64_t *>(st.inDegree.data);
  const int64_t *outDeg = static_cast<const int64_t *>(st.outDegree.data);
  const int64_t *labels = static_cast<const int64_t *>(st.labels.data);
  const float *feats = static_cast<const float *>(st.features.data);
  const int64_t perEpoch = numSeq / globalB;
  std::vector<int64_t> epochOrder(numSeq);
  int64_t epoch = -1;
  std::vector<int64_t> pos(N, -1); // node -> position in the sequence
  std::vector<int64_t> spdTmp;
  std::vector<float> adj, dinv(S);

  double totalS = 0, lastLoss = NAN, lastAcc = NAN;
  int evalMaskIndex = -1;
  for (int i = 0; i < model.num_inputs; ++i)
    if (roles[i] == MGRT_ROLE_EVAL_MASK)
      evalMaskIndex = i;
  std::vector<std::pair<double, double>> window; // (eval_correct, count)
  size_t maxPeak = 0;
  long done = 0;
  int status = 0;
  for (long step = 0; step < opts.steps; ++step) {
    // Which sequences.
    const int64_t e = step / perEpoch, k = step % perEpoch;
    if (e != epoch) {
      epoch = e;
      for (int64_t i = 0; i < numSeq; ++i)
        epochOrder[i] = i;
      shuffle(epochOrder, mixSeed(opts.seed, 0x65706f6368ULL /* "epoch" */,
                                  static_cast<uint64_t>(e)));
    }
    int64_t counted = 0, evalCounted = 0;
    for (int64_t b = 0; b < B; ++b) {
      // The sequence, and this rank's rows [first, first + R) of it.
      const int64_t *seq =
          order.data() + epochOrder[k * globalB + cp.dpRank * B + b] * S;
      const int64_t *nodes = seq + first;
      for (int64_t s = 0; s < R; ++s)
        counted += isTrain[nodes[s]], evalCounted += isEval[nodes[s]];
      for (int i = 0; i < model.num_inputs; ++i) {
        const mgrt_tensor &t = st.inputs[i];
        const int64_t base = b * R; // row (b, 0) in node units
        switch (roles[i]) {
        case MGRT_ROLE_NODE_FEATURES:
          if (t.dtype == MGRT_I64) {
            const int64_t V = opts.categories;
            for (int64_t s = 0; s < R; ++s)
              for (int64_t f = 0; f < F; ++f) {
                const float x = feats[nodes[s] * F + f];
                const int64_t bin = std::min<int64_t>(
                    V - 1, static_cast<int64_t>((x - colLo[f]) * colScale[f]));
                storeInt(t, (base + s) * F + f,
                         1 + f * V + std::max<int64_t>(0, bin));
              }
            break;
          }
          for (int64_t s = 0; s < R && F > 0; ++s)
            std::memcpy(static_cast<float *>(t.data) + (base + s) * F,
                        feats + nodes[s] * F, F * sizeof(float));
          break;
        case MGRT_ROLE_IN_DEGREE:
        case MGRT_ROLE_OUT_DEGREE:
        case MGRT_ROLE_LABELS: {
          const int64_t *src = roles[i] == MGRT_ROLE_IN_DEGREE    ? inDeg
                               : roles[i] == MGRT_ROLE_OUT_DEGREE ? outDeg
                                                                  : labels;
          // Unlabelled nodes (-1, never in a mask) get class 0.
          for (int64_t s = 0; s < R; ++s)
            storeInt(t, base + s, std::max<int64_t>(0, src[nodes[s]]));
          break;
        }
        case MGRT_ROLE_LABEL_MASK:
          for (int64_t s = 0; s < R; ++s)
            static_cast<uint8_t *>(t.data)[base + s] = isTrain[nodes[s]];
          break;
        case MGRT_ROLE_EVAL_MASK:
          for (int64_t s = 0; s < R; ++s)
            static_cast<float *>(t.data)[base + s] = isEval[nodes[s]];
          break;
        case MGRT_ROLE_SPD: {
          int64_t *out = static_cast<int64_t *>(t.data) + base * S;
          if (t.dtype != MGRT_I64) {
            spdTmp.resize(R * S);
            out = spdTmp.data();
          }
          if (mgrt_spd_block(&st.graph, seq, S, first, first + R,
                             opts.maxDistance, out, err, sizeof err) != MGRT_OK)
            return reportError(std::string("spd: ") + err);
          if (t.dtype != MGRT_I64)
            for (int64_t j = 0; j < R * S; ++j)
              storeInt(t, base * S + j, out[j]);
          break;
        }
        case MGRT_ROLE_ADJ_NORM: {
          float *a = static_cast<float *>(t.data) + base * S;
          std::fill(a, a + S * S, 0.f);
          for (int64_t s = 0; s < S; ++s)
            pos[nodes[s]] = s;
          for (int64_t r = 0; r < S; ++r) {
            a[r * S + r] = 1.f;
            const int64_t u = nodes[r];
            for (int64_t ed = st.graph.row_ptr[u]; ed < st.graph.row_ptr[u + 1];
                 ++ed) {
              const int64_t c = pos[st.graph.col_idx[ed]];
              if (c >= 0)
                a[r * S + c] = a[c * S + r] = 1.f;
            }
          }
          for (int64_t s = 0; s < S; ++s)
            pos[nodes[s]] = -1;
          for (int64_t r = 0; r < S; ++r) {
            double d = 0;
            for (int64_t c = 0; c < S; ++c)
              d += a[r * S + c];
            dinv[r] = static_cast<float>(1.0 / std::sqrt(d));
          }
          for (int64_t r = 0; r < S; ++r)
            for (int64_t c = 0; c < S; ++c)
              a[r * S + c] *= dinv[r] * dinv[c];
          break;
        }
        default: // checked above: every input has a node role
          break;
        }
      }
    }

    // The exact inputs of this step, for replaying it elsewhere.
    if (!opts.dumpInputs.empty()) {
      const std::string stepDir =
          opts.dumpInputs + "/step" + std::to_string(step + 1);
      std::string dirError = makeDirectories(stepDir);
      if (!dirError.empty())
        return reportError("--dump-inputs: " + dirError);
      for (int i = 0; i < model.num_inputs; ++i) {
        const std::string path =
            stepDir + "/" + fileNameOf(model.inputs[i].name) + ".npy";
        if (mgrt_npy_write(path.c_str(), &st.inputs[i], err, sizeof err) !=
            MGRT_OK)
          return reportError("--dump-inputs: " + std::string(err));
      }
    }

    // The step. base_bytes: what the driver holds across it (data set,
    // inputs, outputs); peak_bytes - base_bytes is the step's own memory.
    const size_t base = mgrt_current_bytes();
    mgrt_reset_peak();
    if (mgrt_cuda_reset_peak)
      mgrt_cuda_reset_peak();
    auto start = std::chrono::steady_clock::now();
    if (!pipelined) {
      model.entry(args.data());
    } else if (std::string error;
               !pipelineStep(pipe, model, st.inputs, st.outputs, error)) {
      status = reportError(error);
      break;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    const size_t peak = mgrt_peak_bytes();
    maxPeak = std::max(maxPeak, peak);
    const std::vector<size_t> peaks =
        pipelined ? pipelineGather(pipe, peak) : gatherOverRanks(dp, peak);
    const std::vector<size_t> bases =
        pipelined ? pipelineGather(pipe, base) : gatherOverRanks(dp, base);
    // --target cuda programs: the GPU's peak (parameters, optimizer state
    // and the step's buffers), per rank.
    std::string devicePeaks;
    if (mgrt_cuda_peak_bytes && !pipelined)
      devicePeaks = ",\"device_peak_bytes\":[" +
                    peakList(gatherOverRanks(dp, mgrt_cuda_peak_bytes())) + "]";
    // Pipelined: seconds (wall, process CPU) in stage entries per rank.
    std::string computeList, computeCpuList;
    if (pipelined) {
      for (double c : pipelineGatherSeconds(pipe, pipe.computeSeconds))
        computeList += (computeList.empty() ? "" : ",") + jsonNumber(c);
      for (double c : pipelineGatherSeconds(pipe, pipe.computeCpuSeconds))
        computeCpuList += (computeCpuList.empty() ? "" : ",") + jsonNumber(c);
    }
    if (dp.size > 1) { // the step's loss and correct are the global batch's
      counted = static_cast<int64_t>(
          pipelined ? pipelineSumOverReplicas(pipe, counted)
                    : sumOverRanks(dp, counted));
      evalCounted = static_cast<int64_t>(
          pipelined ? pipelineSumOverReplicas(pipe, evalCounted)
                    : sumOverRanks(dp, evalCounted));
    }
    totalS += secs;
    ++done;
    const double loss = *static_cast<const float *>(st.outputs[lossIndex].data);
    const double acc =
        correctIndex >= 0 && counted > 0
            ? *static_cast<const float *>(st.outputs[correctIndex].data) /
                  static_cast<double>(counted)
            : NAN;
    double testAcc = NAN;
    if (evalCorrectIndex >= 0 && evalMaskIndex >= 0) {
      const double ec =
          *static_cast<const float *>(st.outputs[evalCorrectIndex].data);
      if (evalCounted > 0)
        testAcc = ec / static_cast<double>(evalCounted);
      // The summary's window: the last steps of one epoch's length.
      window.push_back({ec, static_cast<double>(evalCounted)});
      if (static_cast<int64_t>(window.size()) > perEpoch)
        window.erase(window.begin());
    }
    const double tokens =
        secs > 0 ? static_cast<double>(globalB * S) / secs : NAN;
    lastLoss = loss, lastAcc = acc;
    if (!opts.quiet && lead) {
      char accText[32] = "-";
      if (std::isfinite(acc))
        std::snprintf(accText, sizeof accText, "%.3f", acc);
      char testText[32] = "";
      if (std::isfinite(testAcc))
        std::snprintf(testText, sizeof testText, "  test %.3f", testAcc);
      std::printf("step %ld/%ld  loss %.4f  acc %s%s  %.3f s  peak %.1f MiB\n",
                  step + 1, opts.steps, loss, accText, testText, secs,
                  peak / 1048576.0);
      std::fflush(stdout);
    }
    if (st.log) {
      std::string line =
          "{\"step\":" + std::to_string(step + 1) +
          ",\"loss\":" + jsonNumber(loss) + ",\"accuracy\":" + jsonNumber(acc) +
          ",\"test_accuracy\":" + jsonNumber(testAcc) +
          ",\"step_time_s\":" + jsonNumber(secs) + ",\"peak_bytes\":[" +
          peakList(peaks) + "],\"base_bytes\":[" + peakList(bases) + "]" +
          devicePeaks +
          (pipelined ? ",\"compute_s\":[" + computeList +
                           "],\"compute_cpu_s\":[" + computeCpuList + "]"
                     : "") +
          ",\"tokens_per_s\":" + jsonNumber(tokens) +
          ",\"epoch\":" + std::to_string(epoch) + "}\n";
      if (std::fputs(line.c_str(), st.log) < 0 || std::fflush(st.log) != 0) {
        status = reportError("--log-json '" + opts.logJson +
                             "': write failed: " + std::strerror(errno));
        break;
      }
    }
    if (!std::isfinite(loss)) {
      status =
          reportError("loss is not finite at step " + std::to_string(step + 1));
      break;
    }
  }

  char accBuf[32] = "-", testBuf[64] = "-";
  if (std::isfinite(lastAcc))
    std::snprintf(accBuf, sizeof accBuf, "%.4f", lastAcc);
  {
    double ec = 0, en = 0;
    for (auto [c, n] : window)
      ec += c, en += n;
    if (en > 0)
      std::snprintf(testBuf, sizeof testBuf, "%.4f (last %zu step(s))", ec / en,
                    window.size());
  }
  if (!lead)
    return status;
  std::printf(
      "%s: train %s, %ld step(s), final loss %.4f, final acc %s, "
      "test acc %s, mean step %.3f s, %.0f tokens/s, peak memory %zu "
      "bytes (%.1f MiB)\n",
      model.model_name ? model.model_name : "model", status ? "FAILED" : "ok",
      done, lastLoss, accBuf, testBuf, done ? totalS / done : 0.0,
      totalS > 0 ? static_cast<double>(globalB * S) * done / totalS : 0.0,
      maxPeak, maxPeak / 1048576.0);
  std::fflush(stdout);
  return status;
}

} // namespace mgrt
