//===- Options.cpp - Command line of a compiled model ---------------------===//
//
// Accepts "--flag value" and "--flag=value" spellings.
//
//===----------------------------------------------------------------------===//

#include "driver/Options.h"
#include "megagraph/Runtime.h"
#include "support/LocalRank.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mgrt {

std::string usage(const char *prog) {
  std::string p = prog ? prog : "model";
  return "usage: " + p +
         " --mode infer --input NAME=FILE.npy ... --output-dir DIR\n"
         "       [--repeat N] [--quiet]\n"
         "       " +
         p +
         " --mode train --data SPEC --steps K [--batch B]\n"
         "       [--seq-len S] [--log-json FILE] [--seed N]\n"
         "       [--max-distance D] [--categories V] [--train-fraction F]\n"
         "       [--partition metis|greedy] [--reorder none|auto]\n"
         "       [--dump-inputs DIR]\n"
         "       [--export-npy DIR] [--export-onnx FILE --source-model SRC]\n"
         "       [--checkpoint-dir DIR\n"
         "       [--checkpoint-every K]] [--resume DIR] [--quiet]\n"
         "       " +
         p +
         " --help\n"
         "\n"
         "  --mode MODE          infer (default), train (a model compiled\n"
         "                       with a training step: outputs loss, correct)\n"
         "                       or eval (train's flags: loss and accuracy\n"
         "                       over --split, no update), or graph-stats\n"
         "                       (--data's size, degrees and the METIS\n"
         "                       halo of gp=P for P in --parts, default\n"
         "                       2,4,8, as JSON for megagraph-compile\n"
         "                       --graph-stats; to --log-json or stdout)\n"
         "  --input NAME=FILE    a model input as a .npy file (one per input)\n"
         "  --output-dir DIR     where each output is written as NAME.npy\n"
         "                       (created if missing)\n"
         "  --repeat N           run the model N times, report the mean time\n"
         "  --quiet              print only the summary line\n"
         "train:\n"
         "  --data SPEC          synthetic:sbm,nodes=N,classes=C,...,\n"
         "                       synthetic:rmat,nodes=N,edges=E,... (power\n"
         "                       law) or\n"
         "                       ogb:DIR[,split=NAME] (or just DIR): the OGB\n"
         "                       node-property-prediction raw layout\n"
         "                       or npy:DIR, the user's tensors: DIR/<input>"
         ".npy\n"
         "                       per step input (labels.npy included;\n"
         "                       label_mask.npy optional), or DIR/step<k>/\n"
         "                       folders of them (as --dump-inputs writes)\n"
         "                       used in order and cycled\n"
         "  --steps K            number of training steps\n"
         "  --batch B, --seq-len S  must equal the model's static [B, S, ...]\n"
         "                       input shapes (default: taken from them)\n"
         "  --log-json FILE      append one JSON object per step\n"
         "  --seed N             batch order and train split seed (default 1)\n"
         "  --max-distance D     cap of the spd input (default 8)\n"
         "  --categories V       values per column of an integer "
         "(categorical)\n"
         "                       feature input (default 16): column f of node\n"
         "                       features quantized into V bins, stored as\n"
         "                       1 + f*V + bin (Graphormer's single-embedding\n"
         "                       offsets, 0 = padding)\n"
         "  --train-fraction F   share of nodes in label_mask (default 0.8;\n"
         "                       the rest are test nodes); OGB: its split\n"
         "  --partition P        metis (default) or greedy: how the graph is\n"
         "                       cut into sequences of S nodes\n"
         "  --reorder R          full-graph models: auto (default) renumbers\n"
         "                       the nodes once, in a locality order, when\n"
         "                       the plan has moa (the pipeline then\n"
         "                       aggregates most rows before its last\n"
         "                       chunk); none keeps the data set's order\n"
         "                       (gp: its METIS parts' order)\n"
         "  --dump-inputs DIR    write each step's inputs to\n"
         "                       DIR/step<t>/<input>.npy (t from 1); for a\n"
         "                       full-graph model whose rows are not the\n"
         "                       data set's order (gp, --reorder) also\n"
         "                       DIR/node_order.npy, the data set's node\n"
         "                       at each row\n"
         "  --export-npy DIR     after training, write each trained parameter\n"
         "                       as DIR/<ONNX initializer name>.npy (f32, its\n"
         "                       ONNX shape)\n"
         "  --export-onnx FILE   after training, write the ONNX model SRC the\n"
         "                       executable was compiled from (--source-model\n"
         "                       SRC) with the trained values in its\n"
         "                       initializers\n"
         "  --eval-every K       train: evaluate on --split every K steps\n"
         "  --eval-steps N       batches per evaluation (default: one epoch)\n"
         "  --split test|train   the nodes evaluated (default test)\n"
         "  --checkpoint DIR     eval, infer: the weights of DIR's newest\n"
         "                       checkpoint (taken under any plan)\n"
         "  --on-nonfinite M     a non-finite loss: stop (default; exit 1,\n"
         "                       naming the step and the first non-finite\n"
         "                       tensor) or skip-step (undo the step, go on)\n"
         "  --checkpoint-dir DIR save parameters, optimizer state and step to\n"
         "                       DIR after the last step, and every K steps\n"
         "                       with --checkpoint-every K (atomic; only the\n"
         "                       newest is kept, named by DIR/latest)\n"
         "  --resume DIR         continue from DIR's newest checkpoint to "
         "step\n"
         "                       --steps (same data flags, plan and ranks)\n"
         "  --device-memory BYTES  per-rank cap of the runtime's memory (e.g.\n"
         "                       2GiB; also MEGAGRAPH_DEVICE_MEMORY): going\n"
         "                       over it stops with exit code 3\n"
         "  MEGAGRAPH_NUM_THREADS=N in the environment sets the kernel "
         "threads\n"
         "\n"
         "exit codes: 0 ok, 1 usage / input / output / data error,\n"
         "            2 unsupported mode (train on a model without a training\n"
         "            step), 3 out of device memory (--device-memory)\n";
}

bool parseOptions(int argc, char **argv, Options &opts, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    if (arg.compare(0, 2, "--") == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasValue = true;
      }
    }
    // Fetches the value of a flag that takes one.
    auto takeValue = [&]() {
      if (hasValue)
        return true;
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return false;
      }
      value = argv[++i];
      return true;
    };

    if (arg == "--help" || arg == "-h") {
      opts.help = true;
    } else if (arg == "--quiet") {
      opts.quiet = true;
    } else if (arg == "--mode") {
      if (!takeValue())
        return false;
      opts.mode = value;
    } else if (arg == "--device-memory") {
      // Per-rank cap of the runtime allocator (runtime/memory/Memory.cpp).
      if (!takeValue())
        return false;
      size_t cap = 0;
      if (mgrt_parse_bytes(value.c_str(), &cap) != MGRT_OK || cap == 0) {
        error = "--device-memory needs a positive byte count such as "
                "536870912, 512MiB or 2GiB, got '" +
                value + "'";
        return false;
      }
      mgrt_set_memory_cap(cap);
    } else if (arg == "--output-dir") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = "--output-dir needs a non-empty directory";
        return false;
      }
      opts.outputDir = value;
      opts.inferFlags.push_back(arg);
    } else if (arg == "--repeat") {
      if (!takeValue())
        return false;
      char *end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno || n < 1) {
        error = "--repeat needs a positive integer, got '" + value + "'";
        return false;
      }
      opts.repeat = n;
      opts.inferFlags.push_back(arg);
    } else if (arg == "--data" || arg == "--log-json" || arg == "--partition" ||
               arg == "--dump-inputs" || arg == "--export-npy" ||
               arg == "--export-onnx" || arg == "--source-model" ||
               arg == "--checkpoint-dir" || arg == "--resume" ||
               arg == "--checkpoint" || arg == "--split" ||
               arg == "--on-nonfinite" || arg == "--parts" ||
               arg == "--reorder") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = arg + " needs a non-empty value";
        return false;
      }
      if (arg == "--reorder" && value != "none" && value != "auto") {
        error = "--reorder needs none or auto, got '" + value + "'";
        return false;
      }
      (arg == "--data"             ? opts.data
       : arg == "--log-json"       ? opts.logJson
       : arg == "--partition"      ? opts.partition
       : arg == "--export-npy"     ? opts.exportNpy
       : arg == "--export-onnx"    ? opts.exportOnnx
       : arg == "--source-model"   ? opts.sourceModel
       : arg == "--checkpoint-dir" ? opts.checkpointDir
       : arg == "--resume"         ? opts.resume
       : arg == "--checkpoint"     ? opts.checkpoint
       : arg == "--split"          ? opts.split
       : arg == "--on-nonfinite"   ? opts.onNonfinite
       : arg == "--parts"          ? opts.parts
       : arg == "--reorder"        ? opts.reorder
                                   : opts.dumpInputs) = value;
      // --checkpoint DIR: the weights of --mode eval and --mode infer.
      if (arg != "--checkpoint")
        opts.trainFlags.push_back(arg);
    } else if (arg == "--steps" || arg == "--batch" || arg == "--seq-len" ||
               arg == "--max-distance" || arg == "--categories" ||
               arg == "--seed" || arg == "--checkpoint-every" ||
               arg == "--eval-every" || arg == "--eval-steps") {
      if (!takeValue())
        return false;
      char *end = nullptr;
      errno = 0;
      const bool isSeed = arg == "--seed";
      const bool allowZero = arg == "--max-distance";
      unsigned long long u = 0;
      long n = 0;
      if (isSeed)
        u = std::strtoull(value.c_str(), &end, 10);
      else
        n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno || value[0] == '-' ||
          (!isSeed && n < (allowZero ? 0 : 1))) {
        error = arg + " needs a " +
                (isSeed || allowZero ? "non-negative" : "positive") +
                " integer, got '" + value + "'";
        return false;
      }
      if (isSeed)
        opts.seed = u;
      else
        (arg == "--steps"              ? opts.steps
         : arg == "--batch"            ? opts.batch
         : arg == "--seq-len"          ? opts.seqLen
         : arg == "--categories"       ? opts.categories
         : arg == "--checkpoint-every" ? opts.checkpointEvery
         : arg == "--eval-every"       ? opts.evalEvery
         : arg == "--eval-steps"       ? opts.evalSteps
                                       : opts.maxDistance) = n;
      opts.trainFlags.push_back(arg);
    } else if (arg == "--train-fraction") {
      if (!takeValue())
        return false;
      char *end = nullptr;
      errno = 0;
      double f = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno || !(f >= 0 && f <= 1)) {
        error =
            "--train-fraction needs a number in [0, 1], got '" + value + "'";
        return false;
      }
      opts.trainFraction = f;
      opts.trainFlags.push_back(arg);
    } else if (arg == "--input") {
      if (!takeValue())
        return false;
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
        error = "--input needs NAME=FILE.npy, got '" + value + "'";
        return false;
      }
      opts.inputs.emplace_back(value.substr(0, eq), value.substr(eq + 1));
      opts.inferFlags.push_back(arg);
    } else {
      error = "unknown argument '" + std::string(argv[i]) + "'";
      return false;
    }
  }
  // The kernels' pool (support/ThreadPool.cpp) would silently take its
  // default thread count for a value that is not a positive integer.
  if (const char *env = std::getenv(kNumThreadsEnv); env && *env) {
    char *end = nullptr;
    errno = 0;
    const long n = std::strtol(env, &end, 10);
    if (*end != '\0' || errno || n < 1) {
      error = std::string(kNumThreadsEnv) + " needs a positive integer, got '" +
              std::string(env) + "'";
      return false;
    }
  }
  return true;
}

} // namespace mgrt
