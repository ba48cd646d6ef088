//===- Infer.cpp - The command line of a compiled model, --mode infer -----===//
//
// Steps: parse the options, load and check the inputs, with --checkpoint DIR
// store a checkpoint's trained parameters into the model's parameter
// globals (CheckpointReader.h: no MPI needed), allocate the outputs,
// build one memref descriptor per input and output, run the entry (--repeat
// times), write every output to DIR/<name>.npy, print a summary line.
// --mode train goes to the training mode the caller passes: driver/Main.cpp
// (mgrt_main) passes driver/Train.cpp's; mgrt_infer_main, what inference
// executables call, has none, so they link neither the data layer (METIS,
// zlib) nor the communication runtime (MPI).
// Messages go to stderr except the summary (stdout).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "driver/Infer.h"

#include "driver/CheckpointReader.h"
#include "driver/Descriptor.h"
#include "driver/Inputs.h"
#include "support/Blas.h"
#include "support/Error.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace mgrt {
namespace {

/// Checks what the compiler wrote into the model info.
bool validModel(const mgrt_model_info *model, std::string &error) {
  if (!model || !model->entry || model->num_inputs < 0 ||
      model->num_outputs < 0 || (model->num_inputs && !model->inputs) ||
      (model->num_outputs && !model->outputs)) {
    error = "invalid model description";
    return false;
  }
  for (int k = 0; k < 2; ++k) {
    const int n = k ? model->num_outputs : model->num_inputs;
    const mgrt_tensor_info *infos = k ? model->outputs : model->inputs;
    for (int i = 0; i < n; ++i) {
      const mgrt_tensor_info &t = infos[i];
      bool ok = t.name && *t.name && mgrt_dtype_size(t.dtype) != 0 &&
                t.rank >= 0 && t.rank <= MGRT_MAX_RANK;
      for (int d = 0; ok && d < t.rank; ++d)
        ok = t.shape[d] >= 0;
      if (!ok) {
        error = std::string("invalid model description of ") +
                (k ? "output " : "input ") + std::to_string(i);
        return false;
      }
    }
  }
  return true;
}

std::string modelSummary(const mgrt_model_info &model) {
  std::string s;
  for (int k = 0; k < 2; ++k) {
    const int n = k ? model.num_outputs : model.num_inputs;
    const mgrt_tensor_info *infos = k ? model.outputs : model.inputs;
    s += k ? "outputs:\n" : "inputs:\n";
    for (int i = 0; i < n; ++i)
      s += "  " + std::string(infos[i].name) + ": " +
           describe(infos[i].dtype, infos[i].rank, infos[i].shape) + "\n";
  }
  return s;
}

/// Runs an inference end to end; returns the exit code.
int infer(const mgrt_model_info &model, const Options &opts) {
  // A pipelined model's @main is a stub; its stages run in --mode train.
  if (model.num_entries > 0) {
    std::fprintf(stderr,
                 "error: model '%s' was compiled for pipeline "
                 "parallelism (--plan pp=...): it has no inference "
                 "entry; train it with --mode train under mpirun\n",
                 model.model_name ? model.model_name : "model");
    return 1;
  }
  std::vector<mgrt_tensor> inputs;
  std::vector<std::string> errors;
  if (opts.outputDir.empty())
    errors.push_back("--output-dir DIR is required");
  if (!loadInputs(model, opts.inputs, opts.quiet, inputs, errors) ||
      !errors.empty()) {
    for (const std::string &e : errors)
      reportError(e);
    for (mgrt_tensor &t : inputs)
      mgrt_tensor_free(&t);
    return 1;
  }
  // The trained weights of a checkpoint replace the compiled ones.
  if (!opts.checkpoint.empty()) {
    std::string error;
    if (!readCheckpointParameters(model, opts.checkpoint, error)) {
      reportError("--checkpoint: " + error);
      for (mgrt_tensor &t : inputs)
        mgrt_tensor_free(&t);
      return 1;
    }
  }
  if (const char *hint = blasCoreHint(); hint && !opts.quiet)
    std::fprintf(stderr, "note: %s\n", hint);
  std::string dirError = makeDirectories(opts.outputDir);
  if (!dirError.empty()) {
    reportError(dirError);
    for (mgrt_tensor &t : inputs)
      mgrt_tensor_free(&t);
    return 1;
  }

  std::vector<mgrt_tensor> outputs(model.num_outputs);
  int status = 0;
  for (int i = 0; i < model.num_outputs && !status; ++i) {
    const mgrt_tensor_info &o = model.outputs[i];
    if (mgrt_tensor_alloc(&outputs[i], o.dtype, o.rank, o.shape) != MGRT_OK) {
      std::fprintf(stderr, "error: out of memory allocating output '%s'\n",
                   o.name);
      status = 1;
    }
  }
  if (!status) {
    std::vector<std::vector<int64_t>> descriptors;
    for (const mgrt_tensor &t : inputs)
      descriptors.push_back(descriptorOf(t));
    for (const mgrt_tensor &t : outputs)
      descriptors.push_back(descriptorOf(t));
    std::vector<void *> args;
    for (std::vector<int64_t> &d : descriptors)
      args.push_back(d.data());

    double totalMs = 0, minMs = 0;
    for (long r = 0; r < opts.repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      model.entry(args.data());
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
      totalMs += ms;
      minMs = r == 0 || ms < minMs ? ms : minMs;
    }

    for (int i = 0; i < model.num_outputs; ++i) {
      const std::string path =
          opts.outputDir + "/" + fileNameOf(model.outputs[i].name) + ".npy";
      char err[512];
      if (mgrt_npy_write(path.c_str(), &outputs[i], err, sizeof err) !=
          MGRT_OK) {
        std::fprintf(stderr, "error: output '%s': %s\n", model.outputs[i].name,
                     err);
        status = 1;
      } else if (!opts.quiet) {
        std::fprintf(
            stderr, "wrote %s (%s)\n", path.c_str(),
            describe(outputs[i].dtype, outputs[i].rank, outputs[i].shape)
                .c_str());
      }
    }
    const size_t peak = mgrt_peak_bytes();
    std::printf("%s: infer %s, %ld run(s), mean %.3f ms, min %.3f ms, peak "
                "memory %zu bytes (%.1f MiB)\n",
                model.model_name ? model.model_name : "model",
                status ? "FAILED" : "ok", opts.repeat, totalMs / opts.repeat,
                minMs, peak, peak / 1048576.0);
    std::fflush(stdout);
  }
  for (mgrt_tensor &t : outputs)
    mgrt_tensor_free(&t);
  for (mgrt_tensor &t : inputs)
    mgrt_tensor_free(&t);
  return status;
}

/// The training mode of an executable compiled without --train: exit code
/// 2, as the training driver answers for a model without a `loss` output.
int noTrainingStep(const mgrt_model_info &model, const Options &) {
  std::fprintf(stderr,
               "error: --mode train: model '%s' has no training step (no "
               "output 'loss'); compile it with --train\n",
               model.model_name ? model.model_name : "model");
  return 2;
}

} // namespace
} // namespace mgrt

int mgrt::runCommandLine(int argc, char **argv, const mgrt_model_info *model,
                         TrainMode trainMode) {
  const char *prog = argc > 0 && argv && argv[0] ? argv[0] : "model";
  std::string error;
  if (!validModel(model, error))
    return reportError(error);
  Options opts;
  // Usage errors are one line; the full usage is --help's.
  auto usageError = [&](const std::string &message) {
    std::fprintf(stderr, "error: %s (see %s --help)\n", message.c_str(), prog);
    return 1;
  };
  if (!parseOptions(argc, argv, opts, error))
    return usageError(error);
  if (opts.help) {
    std::printf("%s (%s, megagraph runtime %s)\n%s\n%s",
                model->model_name ? model->model_name : "model", prog,
                mgrt_version(), usage(prog).c_str(),
                modelSummary(*model).c_str());
    return 0;
  }
  if (opts.mode != "infer" && opts.mode != "train" && opts.mode != "eval" &&
      opts.mode != "graph-stats")
    return usageError("unknown mode '" + opts.mode +
                      "' (expected infer, train, eval or graph-stats)");
  // --mode eval runs the training driver's batches without updating;
  // --mode graph-stats measures --data for the plan search.
  const bool training =
      opts.mode == "train" || opts.mode == "eval" || opts.mode == "graph-stats";
  const std::vector<std::string> &wrong =
      training ? opts.inferFlags : opts.trainFlags;
  if (!wrong.empty())
    return usageError(wrong.front() + " is not an option of --mode " +
                      opts.mode);
  return training ? trainMode(*model, opts) : infer(*model, opts);
}

extern "C" int mgrt_infer_main(int argc, char **argv,
                               const mgrt_model_info *model) {
  return mgrt::runCommandLine(argc, argv, model, mgrt::noTrainingStep);
}
