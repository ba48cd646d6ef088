//===- Train.cpp - mgrt_main --mode train ---------------------------------===//
//
// Conventions (input names, batches, log format) are documented in Train.h.
// train() checks the model's inputs and outputs and puts the parts
// together: a batch source (GraphBatches over the topology of a graph data
// set, or NpyBatches), a step runner (StepRunner.h) and the metrics log
// (MetricsLog.h); runSteps is the one loop over them. Messages go to
// stderr; step lines and the summary to stdout.
//
//===----------------------------------------------------------------------===//

#include "driver/Train.h"

#include "driver/Checkpoint.h"
#include "driver/ContextParallel.h"
#include "driver/Export.h"
#include "driver/FullGraph.h"
#include "driver/GraphBatches.h"
#include "driver/Inputs.h"
#include "driver/MetricsLog.h"
#include "driver/NodeOrder.h"
#include "driver/NpyBatches.h"
#include "driver/Roles.h"
#include "driver/StateLayout.h"
#include "driver/StepRunner.h"
#include "driver/Topology.h"
#include "megagraph/Comm.h"
#include "support/Blas.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

// Defined when the program links the CUDA runtime (--target cuda).
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

int reportAll(const std::vector<std::string> &errors) {
  for (const std::string &e : errors)
    reportError(e);
  return 1;
}

/// Output indices of the training step the loop reads.
struct StepOutputs {
  int loss = -1, correct = -1, evalCorrect = -1;

  explicit StepOutputs(const mgrt_model_info &model)
      : loss(findRole(model.outputs, model.num_outputs, MGRT_ROLE_LOSS)),
        correct(findRole(model.outputs, model.num_outputs, MGRT_ROLE_CORRECT)),
        evalCorrect(findRole(model.outputs, model.num_outputs,
                             MGRT_ROLE_EVAL_CORRECT)) {}
};

/// The step's input and output tensors; released by the destructor.
struct StepTensors {
  std::vector<mgrt_tensor> inputs, outputs;

  StepTensors() = default;
  StepTensors(const StepTensors &) = delete;
  StepTensors &operator=(const StepTensors &) = delete;
  ~StepTensors() {
    for (mgrt_tensor &t : inputs)
      mgrt_tensor_free(&t);
    for (mgrt_tensor &t : outputs)
      mgrt_tensor_free(&t);
  }

  /// Allocates them with the model's shapes; false with `error` naming the
  /// tensor.
  bool allocate(const mgrt_model_info &model, std::string &error) {
    inputs.assign(model.num_inputs, mgrt_tensor{});
    outputs.assign(model.num_outputs, mgrt_tensor{});
    for (int k = 0; k < 2; ++k) {
      const int n = k ? model.num_outputs : model.num_inputs;
      const mgrt_tensor_info *infos = k ? model.outputs : model.inputs;
      std::vector<mgrt_tensor> &ts = k ? outputs : inputs;
      for (int i = 0; i < n; ++i)
        if (mgrt_tensor_alloc(&ts[i], infos[i].dtype, infos[i].rank,
                              infos[i].shape) != MGRT_OK)
          return setError(error, "out of memory allocating " +
                                     std::string(k ? "output '" : "input '") +
                                     infos[i].name + "'");
    }
    return true;
  }
};

/// What the loop reports besides loss and accuracy.
struct LoopConfig {
  /// --eval-every: the batches of the evaluated split, and how many.
  BatchSource *evalSource = nullptr;
  long evalBatches = 0;
  /// Graph data sets: memory, throughput, epoch, the pooled test accuracy
  /// over the last `stepsPerEpoch` steps, and --dump-inputs.
  bool graphMetrics = false;
  int64_t tokensPerStep = 0;
  int64_t stepsPerEpoch = 0;
  /// A full graph whose rows are not the data set's order: the data set's
  /// node at each row, written as --dump-inputs DIR/node_order.npy.
  const std::vector<int64_t> *nodeOrder = nullptr;
};

/// The export flags' early check, before any step runs.
int checkExportFlags(const mgrt_model_info &model, const Options &opts) {
  std::string error;
  if (!opts.sourceModel.empty() && opts.exportOnnx.empty())
    return reportError("--source-model is the model --export-onnx rewrites; "
                       "give --export-onnx FILE");
  if (!opts.exportNpy.empty()) {
    if (!canExportParameters(model, error))
      return reportError("--export-npy: " + error);
    // The folder is made now: a run is not lost to a bad path at its end.
    error = makeDirectories(opts.exportNpy);
    if (!error.empty())
      return reportError("--export-npy: " + error);
  }
  if (!opts.exportOnnx.empty()) {
    // A dry run of the rewrite: the source is readable and every
    // parameter is one of its float initializers.
    const std::string source = opts.sourceModel;
    std::vector<ParameterValues> params;
    std::string bytes;
    if (source.empty())
      return reportError("--export-onnx needs --source-model FILE, the ONNX "
                         "model the executable was compiled from");
    if (!readParameters(model, params, error, /*gather=*/false) ||
        !rewriteOnnx(source, params, bytes, error))
      return reportError("--export-onnx: " + error);
  }
  return 0;
}

/// The checkpoint flags' early check, before any step runs.
int checkCheckpointFlags(const mgrt_model_info &model, const Options &opts) {
  std::string error;
  if (opts.checkpointEvery > 0 && opts.checkpointDir.empty())
    return reportError("--checkpoint-every needs --checkpoint-dir DIR");
  if ((!opts.checkpointDir.empty() || !opts.resume.empty() ||
       opts.onNonfinite == "skip-step") &&
      !canCheckpoint(model, error))
    return reportError((!opts.resume.empty()          ? "--resume: "
                        : !opts.checkpointDir.empty() ? "--checkpoint-dir: "
                                                      : "--on-nonfinite: ") +
                       error);
  if (!opts.checkpointDir.empty()) {
    error = makeDirectories(opts.checkpointDir);
    if (!error.empty())
      return reportError("--checkpoint-dir: " + error);
  }
  return 0;
}

/// This process in the whole job (every rank of dp x pp x cp).
JobRank jobRank() {
  JobRank job;
  if (mgrt_comm_initialized() && mgrt_comm_world()) {
    job.rank = mgrt_comm_rank(mgrt_comm_world());
    job.size = mgrt_comm_size(mgrt_comm_world());
  }
  return job;
}

/// --export-npy / --export-onnx after the last step: every rank reads
/// (ZeRO-3 gathers), the lead writes.
int exportParameters(const mgrt_model_info &model, const Options &opts,
                     bool lead) {
  std::vector<ParameterValues> params;
  std::string error;
  if (!readParameters(model, params, error))
    return reportError("--export: " + error);
  if (!lead)
    return 0;
  if (!opts.exportNpy.empty()) {
    if (!writeParametersNpy(params, opts.exportNpy, error))
      return reportError("--export-npy: " + error);
    if (!opts.quiet)
      std::fprintf(stderr, "train: wrote %zu parameter(s) to %s\n",
                   params.size(), opts.exportNpy.c_str());
  }
  if (!opts.exportOnnx.empty()) {
    std::string bytes;
    if (!rewriteOnnx(opts.sourceModel, params, bytes, error) ||
        !writeBytes(opts.exportOnnx, bytes, error))
      return reportError("--export-onnx: " + error);
    if (!opts.quiet)
      std::fprintf(stderr, "train: wrote the trained model to %s\n",
                   opts.exportOnnx.c_str());
  }
  return 0;
}

/// An evaluation pass: `batches` batches of `source` through the training
/// step, the state put back after each (no update); logs and prints the
/// loss (mean over the counted nodes) and accuracy. Returns the exit code.
int evaluate(const mgrt_model_info &model, const Options &opts,
             BatchSource &source, long batches, StepRunner &runner,
             StepTensors &t, MetricsLog &log, long doneSteps) {
  const StepOutputs outs(model);
  auto scalar = [&](int i) {
    return static_cast<double>(*static_cast<const float *>(t.outputs[i].data));
  };
  StateSnapshot snapshot(model);
  snapshot.save();
  EvalMetrics e;
  e.step = doneSteps;
  e.split = opts.data.compare(0, 4, "npy:") == 0 ? "npy" : opts.split;
  double lossSum = 0, correct = 0;
  std::string error;
  for (long b = 0; b < batches; ++b) {
    BatchCounts counts;
    if (!source.fill(b, t.inputs, counts, error))
      return reportError(error);
    if (!runner.step(error))
      return reportError(error);
    snapshot.restore();
    const int64_t n =
        runner.dataParallel().size > 1
            ? static_cast<int64_t>(runner.sumOverReplicas(counts.counted))
            : counts.counted;
    lossSum += scalar(outs.loss) * static_cast<double>(n);
    if (outs.correct >= 0)
      correct += scalar(outs.correct);
    e.counted += n;
    ++e.batches;
  }
  e.loss = e.counted > 0 ? lossSum / static_cast<double>(e.counted) : NAN;
  e.accuracy = outs.correct >= 0 && e.counted > 0
                   ? correct / static_cast<double>(e.counted)
                   : NAN;
  if (!runner.lead())
    return 0;
  std::printf("%s\n", MetricsLog::evalLine(e).c_str());
  std::fflush(stdout);
  if (log.isOpen() && !log.write(e, error))
    return reportError(error);
  return 0;
}

/// --mode eval: the weights of --checkpoint DIR (or the compiled ones),
/// one evaluation pass. Returns the exit code.
int runEval(const mgrt_model_info &model, const Options &opts,
            BatchSource &source, long batches, StepRunner &runner,
            StepTensors &t, MetricsLog &log) {
  long done = 0;
  std::string error;
  runner.bind(t.inputs, t.outputs);
  if (!opts.checkpoint.empty()) {
    if (!canCheckpoint(model, error) ||
        !readCheckpoint(model, opts, jobRank(), opts.checkpoint, done, error))
      return reportError("--checkpoint: " + error);
  }
  if (batches < 1)
    return reportError("--mode eval: the split has no batch");
  return evaluate(model, opts, source, batches, runner, t, log, done);
}

/// The evaluation flags' checks.
int checkEvalFlags(const mgrt_model_info &model, const Options &opts) {
  std::string error;
  if (opts.split != "test" && opts.split != "train")
    return reportError("--split '" + opts.split +
                       "' is not a split (expected test or train)");
  if (opts.onNonfinite != "stop" && opts.onNonfinite != "skip-step")
    return reportError("--on-nonfinite '" + opts.onNonfinite +
                       "' is not a policy (expected stop or skip-step)");
  if (opts.mode != "eval" && !opts.checkpoint.empty())
    return reportError(
        "--checkpoint DIR is the weights of --mode eval and infer; "
        "--resume DIR continues training");
  // An evaluation puts the state table back after each step.
  if ((opts.mode == "eval" || opts.evalEvery > 0) &&
      !canCheckpoint(model, error))
    return reportError(
        (opts.mode == "eval" ? "--mode eval: " : "--eval-every: ") + error);
  if (opts.mode == "eval" &&
      (!opts.checkpointDir.empty() || !opts.resume.empty() ||
       !opts.exportNpy.empty() || !opts.exportOnnx.empty() || opts.evalEvery))
    return reportError("--mode eval does not train: --checkpoint-dir, "
                       "--resume, --export-* and --eval-every are options "
                       "of --mode train");
  return 0;
}

/// The checks of the evaluation, export and checkpoint flags, before any
/// data is read: a bad flag must not cost a run.
int checkRunFlags(const mgrt_model_info &model, const Options &opts) {
  if (int rc = checkEvalFlags(model, opts))
    return rc;
  if (int rc = checkExportFlags(model, opts))
    return rc;
  return checkCheckpointFlags(model, opts);
}

/// The training loop: per step fill the batch (untimed), run the step
/// (timed), gather the figures, print and log. Returns the exit code.
int runSteps(const mgrt_model_info &model, const Options &opts,
             BatchSource &source, StepRunner &runner, StepTensors &t,
             MetricsLog &log, const LoopConfig &config) {
  const StepOutputs outs(model);
  const bool lead = runner.lead();
  const bool hasEvalMask =
      findRole(model.inputs, model.num_inputs, MGRT_ROLE_EVAL_MASK) >= 0;
  auto scalar = [&](int i) {
    return static_cast<double>(*static_cast<const float *>(t.outputs[i].data));
  };
  runner.bind(t.inputs, t.outputs);
  RunSummary summary;
  summary.modelName = model.model_name ? model.model_name : "model";
  summary.hasMemory = config.graphMetrics;
  summary.tokensPerStep = static_cast<double>(config.tokensPerStep);
  summary.lastLoss = summary.lastAccuracy = NAN;
  std::vector<std::pair<double, double>> window; // (eval_correct, count)
  std::string error;
  char err[512];
  int status = 0;
  const JobRank job = jobRank();
  const bool skipNonFinite = opts.onNonfinite == "skip-step";
  StateSnapshot beforeStep(model);
  long skipped = 0;
  long first = 0;
  if (!opts.resume.empty()) {
    if (!readCheckpoint(model, opts, job, opts.resume, first, error))
      return reportError("--resume: " + error);
    if (first >= opts.steps)
      return reportError("--resume: the checkpoint has done " +
                         std::to_string(first) + " step(s), --steps is " +
                         std::to_string(opts.steps));
    if (lead && !opts.quiet)
      std::fprintf(stderr, "train: resumed from %s after step %ld\n",
                   opts.resume.c_str(), first);
  }
  for (long step = first; step < opts.steps; ++step) {
    BatchCounts counts;
    if (!source.fill(step, t.inputs, counts, error))
      return reportError(error);

    // The exact inputs of this step, for replaying it elsewhere.
    if (config.graphMetrics && !opts.dumpInputs.empty()) {
      const std::string stepDir =
          opts.dumpInputs + "/step" + std::to_string(step + 1);
      std::string dirError = makeDirectories(stepDir);
      if (!dirError.empty())
        return reportError("--dump-inputs: " + dirError);
      if (config.nodeOrder && step == first) {
        const int64_t n = static_cast<int64_t>(config.nodeOrder->size());
        mgrt_tensor rows{};
        rows.dtype = MGRT_I64;
        rows.rank = 1;
        rows.shape[0] = n;
        rows.data = const_cast<int64_t *>(config.nodeOrder->data());
        const std::string path = opts.dumpInputs + "/node_order.npy";
        if (mgrt_npy_write(path.c_str(), &rows, err, sizeof err) != MGRT_OK)
          return reportError("--dump-inputs: " + std::string(err));
      }
      for (int i = 0; i < model.num_inputs; ++i) {
        const std::string path =
            stepDir + "/" + fileNameOf(model.inputs[i].name) + ".npy";
        if (mgrt_npy_write(path.c_str(), &t.inputs[i], err, sizeof err) !=
            MGRT_OK)
          return reportError("--dump-inputs: " + std::string(err));
      }
    }

    // The step. base_bytes: what the driver holds across it (data set,
    // inputs, outputs); peak_bytes - base_bytes is the step's own memory.
    const size_t base = mgrt_current_bytes();
    if (config.graphMetrics) {
      mgrt_reset_peak();
      if (mgrt_cuda_reset_peak)
        mgrt_cuda_reset_peak();
    }
    if (skipNonFinite)
      beforeStep.save();
    const uint64_t sentBefore = mgrt_comm_bytes_sent();
    const auto start = std::chrono::steady_clock::now();
    if (!runner.step(error)) {
      status = reportError(error);
      break;
    }
    const uint64_t sent = mgrt_comm_bytes_sent() - sentBefore;
    StepMetrics m;
    m.step = step + 1;
    m.stepSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (config.graphMetrics) {
      m.hasMemory = true;
      m.localPeakBytes = mgrt_peak_bytes();
      summary.maxPeakBytes = std::max(summary.maxPeakBytes, m.localPeakBytes);
      m.peakBytes = runner.gather(m.localPeakBytes);
      m.baseBytes = runner.gather(base);
      m.commBytes = runner.gather(static_cast<size_t>(sent));
      m.stateBytes = runner.gather(heldStateBytes(model));
      runner.addMetrics(m);
      m.epoch = counts.epoch;
      m.tokensPerSecond =
          m.stepSeconds > 0
              ? static_cast<double>(config.tokensPerStep) / m.stepSeconds
              : NAN;
    }
    // The step's loss and correct are the global batch's.
    if (runner.dataParallel().size > 1) {
      counts.counted =
          static_cast<int64_t>(runner.sumOverReplicas(counts.counted));
      counts.evalCounted =
          static_cast<int64_t>(runner.sumOverReplicas(counts.evalCounted));
    }
    summary.totalSeconds += m.stepSeconds;
    ++summary.steps;
    m.loss = scalar(outs.loss);
    m.accuracy =
        outs.correct >= 0 && counts.counted > 0
            ? scalar(outs.correct) / static_cast<double>(counts.counted)
            : NAN;
    m.testAccuracy = NAN;
    if (outs.evalCorrect >= 0 && hasEvalMask) {
      const double ec = scalar(outs.evalCorrect);
      if (counts.evalCounted > 0)
        m.testAccuracy = ec / static_cast<double>(counts.evalCounted);
      // The summary's window: the last steps of one epoch's length.
      if (config.graphMetrics) {
        window.push_back({ec, static_cast<double>(counts.evalCounted)});
        if (static_cast<int64_t>(window.size()) > config.stepsPerEpoch)
          window.erase(window.begin());
      }
    }
    summary.lastLoss = m.loss, summary.lastAccuracy = m.accuracy;
    if (!opts.quiet && lead) {
      std::printf("%s\n", MetricsLog::stepLine(m, opts.steps).c_str());
      std::fflush(stdout);
    }
    if (log.isOpen() && !log.write(m, error)) {
      status = reportError(error);
      break;
    }
    // The non-finite guard: the loss is the global batch's, so every rank
    // decides the same.
    if (!std::isfinite(m.loss)) {
      std::string what = firstNonFiniteState(model);
      std::string message =
          "loss is not finite at step " + std::to_string(step + 1) +
          (what.empty() ? " (the state is finite: the forward overflowed)"
                        : "; first non-finite tensor after the step: " + what);
      if (!skipNonFinite) {
        status = reportError(message +
                             (opts.checkpointDir.empty()
                                  ? ""
                                  : "; the last checkpoint in " +
                                        opts.checkpointDir + " is intact"));
        break;
      }
      beforeStep.restore();
      ++skipped;
      if (lead)
        std::fprintf(stderr, "warning: %s; step skipped (state restored)\n",
                     message.c_str());
    }
    const long done = step + 1;
    // Evaluation every K steps.
    if (config.evalSource && opts.evalEvery > 0 && done % opts.evalEvery == 0) {
      status = evaluate(model, opts, *config.evalSource, config.evalBatches,
                        runner, t, log, done);
      if (status)
        break;
    }
    // A checkpoint every K steps and after the last.
    if (!opts.checkpointDir.empty() &&
        ((opts.checkpointEvery > 0 && done % opts.checkpointEvery == 0) ||
         done == opts.steps)) {
      if (!writeCheckpoint(model, opts, job, done, error)) {
        status = reportError("--checkpoint-dir: " + error);
        break;
      }
    }
  }
  if (skipped && lead)
    std::fprintf(stderr, "train: skipped %ld step(s) with a non-finite loss\n",
                 skipped);
  if (status == 0 && (!opts.exportNpy.empty() || !opts.exportOnnx.empty()))
    status = exportParameters(model, opts, lead);
  for (auto [c, n] : window)
    summary.pooledCorrect += c, summary.pooledCounted += n;
  summary.pooledSteps = window.size();
  summary.failed = status != 0;
  if (!lead)
    return status;
  std::printf("%s\n", MetricsLog::summaryLine(summary).c_str());
  std::fflush(stdout);
  return status;
}

/// --data npy:DIR: the user's tensors, one process, no graph data set.
/// Logs as the graph loop does; `correct` and `eval_correct` are optional
/// (regression losses have none).
int trainOnNpy(const mgrt_model_info &model, const Options &opts) {
  if (model.plan &&
      (model.plan->dp > 1 || model.plan->pp > 1 || model.plan->cp > 1))
    return reportError("--data npy: runs one process; the model was compiled "
                       "for a parallel plan (dp x pp x cp > 1)");
  if (opts.steps < 1 && opts.mode == "train")
    return reportError("--steps K is required for --mode train");
  if (int rc = checkRunFlags(model, opts))
    return rc;
  NpyBatches batches;
  std::vector<std::string> errors;
  if (!batches.open(model, opts.data.substr(4), opts.quiet, errors))
    return reportAll(errors);
  StepTensors t;
  std::string error;
  if (!t.allocate(model, error))
    return reportError(error);
  MetricsLog log;
  if (!opts.logJson.empty() && !log.open(opts.logJson, error))
    return reportError(error);
  if (!opts.quiet)
    std::fprintf(stderr, "train: %s: %zu step(s) of tensors, cycled\n",
                 opts.data.c_str(), batches.size());
  std::unique_ptr<StepRunner> runner = makeSingleProcessRunner(model);
  // Evaluation: the user's batches as they are.
  const long evalBatches =
      opts.evalSteps ? opts.evalSteps : static_cast<long>(batches.size());
  if (opts.mode == "eval")
    return runEval(model, opts, batches, evalBatches, *runner, t, log);
  LoopConfig config;
  config.evalSource = &batches;
  config.evalBatches = evalBatches;
  return runSteps(model, opts, batches, *runner, t, log, config);
}

/// --data synthetic:...|ogb:DIR for a full-graph model (FullGraph.h): every
/// step is the whole graph; under --plan mop=P / gp=P each rank fills its
/// rows. Returns the exit code.
int trainFullGraph(const mgrt_model_info &model, const Options &opts,
                   StepRunner &runner) {
  std::vector<std::string> errors;
  if (opts.data.empty())
    errors.push_back("--data SPEC is required for --mode train");
  if (opts.steps < 1 && opts.mode == "train")
    errors.push_back("--steps K is required for --mode train");
  if (opts.batch > 1 || opts.seqLen)
    errors.push_back("--batch and --seq-len do not apply to a full-graph "
                     "model (B = 1, S = the data set's nodes)");
  const mgrt_plan *plan = model.plan;
  if (plan && (plan->dp > 1 || plan->pp > 1 || plan->cp > 1))
    errors.push_back(std::string("--plan ") + plan->text +
                     ": dp, pp and cp split batches and sequences; a "
                     "full-graph model splits its nodes with --plan mop=P "
                     "or gp=P");
  if (!errors.empty())
    return reportAll(errors);
  const int rank = runner.dataParallel().rank,
            ranks = runner.dataParallel().size;
  const bool lead = runner.lead();
  std::string error;
  GraphData data;
  if (!loadGraphData(opts, data, error))
    return reportError(error);
  checkFullGraphInputs(model, data, ranks, errors);
  for (int i = 0; i < model.num_inputs; ++i)
    if (roleOf(model.inputs[i]) == MGRT_ROLE_LABELS &&
        !checkLabelRange(data, opts, numClassesOf(model.inputs[i]),
                         model.inputs[i].name, error))
      errors.push_back(error);
  if (!errors.empty())
    return reportAll(errors);
  const int parts = plan && plan->gp > 1 ? static_cast<int>(plan->gp) : 1;
  std::vector<int64_t> order;
  if (!partitionNodes(data, opts, parts, lead, order, error))
    return reportError(error);
  // The accelerator pipeline's node renumbering (NodeOrder.h): within gp's
  // parts, or laid out over mop's row blocks, or over the one process.
  if (renumbersNodes(opts, plan)) {
    const int64_t blocks = parts > 1 ? parts : plan->mop > 1 ? plan->mop : 1;
    if (!localityNodeOrder(data, opts, blocks, /*keepBlocks=*/parts > 1,
                           std::max<int64_t>(1, plan->chunks), lead, order,
                           error))
      return reportError(error);
  }
  bool identity = true;
  for (int64_t k = 0; k < data.numNodes() && identity; ++k)
    identity = order[k] == k;
  std::vector<uint8_t> isTrain, isEval;
  drawSplit(data, opts, isTrain, isEval);
  const int64_t numTrain = std::count(isTrain.begin(), isTrain.end(), 1);
  const int64_t numEval = std::count(isEval.begin(), isEval.end(), 1);
  auto owner = std::make_shared<const FullGraphBatches *>(nullptr);
  FullGraphBatches evalBatches(data, order,
                               opts.split == "test" ? isEval : isTrain, isEval,
                               model, rank, ranks, owner);
  FullGraphBatches batches(data, order, std::move(isTrain), std::move(isEval),
                           model, rank, ranks, owner);
  StepTensors t;
  if (!t.allocate(model, error))
    return reportError(error);
  MetricsLog log;
  if (!opts.logJson.empty() && lead && !log.open(opts.logJson, error))
    return reportError(error);
  if (const char *hint = blasCoreHint(); hint && !opts.quiet && lead)
    std::fprintf(stderr, "note: %s\n", hint);
  if (!opts.quiet && lead)
    std::fprintf(stderr,
                 "train: the full graph (B = 1, S = %lld nodes, %lld edges) "
                 "every step%s%s, %lld training nodes, %lld test nodes\n",
                 (long long)data.numNodes(), (long long)data.graph.num_edges,
                 ranks > 1 ? ", plan " : "", ranks > 1 ? plan->text : "",
                 (long long)numTrain, (long long)numEval);
  if (opts.mode == "eval")
    return runEval(model, opts, evalBatches, 1, runner, t, log);
  LoopConfig config;
  config.evalSource = &evalBatches;
  config.evalBatches = 1;
  config.graphMetrics = true;
  config.tokensPerStep = data.numNodes();
  config.stepsPerEpoch = 1;
  config.nodeOrder = identity ? nullptr : &order;
  return runSteps(model, opts, batches, runner, t, log, config);
}

} // namespace

int train(const mgrt_model_info &compiled, const Options &opts) {
  if (opts.mode == "graph-stats")
    return writeGraphStats(opts);
  const StepOutputs outs(compiled);
  // The user's tensors: any input names, no graph data set.
  if (opts.data.compare(0, 4, "npy:") == 0) {
    if (outs.loss < 0)
      return reportError("--mode train: the model has no training step (no "
                         "output 'loss'); compile it with --train",
                         2);
    return trainOnNpy(compiled, opts);
  }
  // The step runner: data parallelism (runtime/comm/DriverComm.h: rank r of
  // P takes the sequences [r B, (r + 1) B) of each global batch of P B) or
  // pipeline parallelism (driver/Pipeline.h: the world is dp x pp, and dp
  // is this rank's replica); the lead rank logs.
  std::string error;
  std::unique_ptr<StepRunner> runner = makeStepRunner(compiled, error);
  if (!runner)
    return reportError(error);
  const DataParallel &dp = runner->dataParallel();
  const bool lead = runner->lead();
  // The state as this rank holds it: under pp its stage's tensors only
  // (the world is dp x pp x cp, cp innermost).
  int stage = 0;
  if (compiled.plan && compiled.plan->pp > 1) {
    const int64_t cpSize = std::max<int64_t>(1, compiled.plan->cp);
    stage = static_cast<int>((jobRank().rank / cpSize) % compiled.plan->pp);
  }
  const mgrt_model_info &model = localStateModel(compiled, stage);
  // Context parallelism (driver/ContextParallel.h): the world is dp x cp.
  ContextParallel cp;
  if (!setupContextParallel(model.plan, dp.rank, dp.size, cp, error))
    return reportError(error);
  // Outputs: loss (required), correct and eval_correct (optional), others
  // ignored.
  if (outs.loss < 0)
    return reportError(std::string("--mode train: model '") +
                           (model.model_name ? model.model_name : "model") +
                           "' has no training step (no output 'loss'); "
                           "compile it with --train",
                       2);
  for (int i : {outs.loss, outs.correct, outs.evalCorrect}) {
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

  if (int rc = checkRunFlags(model, opts))
    return rc;
  if (isFullGraphModel(model))
    return trainFullGraph(model, opts, *runner);
  // Options.
  std::vector<std::string> errors;
  if (opts.data.empty())
    errors.push_back("--data SPEC is required for --mode train");
  if (opts.steps < 1 && opts.mode == "train")
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
        (square && in.shape[2] != (cp.seq > 0 ? cp.seq : S * cp.size)))
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
  if (!errors.empty())
    return reportAll(errors);

  // Data: a generator, or a dataset in the OGB raw layout.
  GraphData data;
  if (!loadGraphData(opts, data, error))
    return reportError(error);
  const int64_t N = data.numNodes();
  const int64_t F = data.numFeatures();
  for (int i = 0; i < model.num_inputs; ++i)
    if (roles[i] == MGRT_ROLE_NODE_FEATURES && model.inputs[i].shape[2] != F)
      errors.push_back(
          "model input '" + std::string(model.inputs[i].name) + "' has " +
          std::to_string(model.inputs[i].shape[2]) +
          " features per node but --data has features=" + std::to_string(F));
  for (int i = 0; i < model.num_inputs; ++i)
    if (roles[i] == MGRT_ROLE_LABELS &&
        !checkLabelRange(data, opts, numClassesOf(model.inputs[i]),
                         model.inputs[i].name, error))
      errors.push_back(error);
  for (int i = 0; i < model.num_inputs; ++i)
    if (!checkFeatureIds(model.inputs[i], F, opts, error))
      errors.push_back(error);
  // With cp, the model's rows R are this rank's block of the S nodes (with
  // uneven blocks its mgrt_cp_block_rows first rows, then padding).
  BatchLayout layout;
  layout.B = B;
  layout.rows = S;
  layout.first = cp.rank * S;
  layout.S = S * cp.size;
  if (cp.seq > 0) {
    layout.S = cp.seq;
    layout.first = mgrt_cp_block_first(cp.seq, cp.size, cp.rank);
    layout.valid = mgrt_cp_block_rows(cp.seq, cp.size, cp.rank);
  }
  layout.replicas = cp.dpSize;
  layout.replica = cp.dpRank;
  S = layout.S;
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
  if (!errors.empty())
    return reportAll(errors);

  std::vector<int64_t> order;
  if (!partitionSequences(data, opts, S, cp.size, lead, order, error))
    return reportError(error);
  std::vector<uint8_t> isTrain, isEval;
  drawSplit(data, opts, isTrain, isEval);
  const int64_t numTrain = std::count(isTrain.begin(), isTrain.end(), 1);
  const int64_t numEval = std::count(isEval.begin(), isEval.end(), 1);
  // Evaluation batches: the split's nodes are the counted ones.
  GraphBatches evalBatches(data, order, opts.split == "test" ? isEval : isTrain,
                           isEval, roles, layout, opts, model.inputs);
  GraphBatches batches(data, order, std::move(isTrain), std::move(isEval),
                       roles, layout, opts, model.inputs);

  StepTensors t;
  if (!t.allocate(model, error))
    return reportError(error);
  MetricsLog log;
  if (!opts.logJson.empty() && lead && !log.open(opts.logJson, error))
    return reportError(error);
  if (const char *hint = blasCoreHint(); hint && !opts.quiet)
    std::fprintf(stderr, "note: %s\n", hint);
  if (!opts.quiet && dp.size > 1 && lead)
    std::fprintf(stderr,
                 "train: data parallel over %d ranks, context parallel over "
                 "%d (%lld of %lld nodes per rank)\n",
                 cp.dpSize, cp.size, (long long)layout.rows, (long long)S);
  if (!opts.quiet && lead)
    std::fprintf(stderr,
                 "train: B = %lld sequences of S = %lld nodes, %lld "
                 "sequences (%lld nodes unused), %lld steps per epoch, %lld "
                 "training nodes, %lld test nodes\n",
                 (long long)globalB, (long long)S, (long long)numSeq,
                 (long long)(N - numSeq * S),
                 (long long)batches.stepsPerEpoch(), (long long)numTrain,
                 (long long)numEval);
  const long numEvalBatches =
      opts.evalSteps ? opts.evalSteps
                     : static_cast<long>(evalBatches.stepsPerEpoch());
  if (opts.mode == "eval")
    return runEval(model, opts, evalBatches, numEvalBatches, *runner, t, log);
  LoopConfig config;
  config.evalSource = &evalBatches;
  config.evalBatches = numEvalBatches;
  config.graphMetrics = true;
  config.tokensPerStep = globalB * S;
  config.stepsPerEpoch = batches.stepsPerEpoch();
  return runSteps(model, opts, batches, *runner, t, log, config);
}

} // namespace mgrt
