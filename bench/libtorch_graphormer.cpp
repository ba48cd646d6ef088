//===- libtorch_graphormer.cpp - LibTorch baseline of the Graphormer bench ===//
//
// The Graphormer-style model of examples/models/graphormer.py (exported at
// benchmark sizes by bench/graphormer_bench.py), written with LibTorch's C++
// tensor ops, op for op as the PyTorch module runs it in eager mode. It loads
// the same weights (params/<state_dict name>.npy) and inputs
// (inputs/<name>.npy) from a work directory, runs the forward under
// torch::NoGradGuard with at::set_num_threads(T), checks the output against
// PyTorch's (outputs/logits.npy), times N repeats after a warm-up and
// reports the peak RSS (getrusage). The model and the .npy I/O are shared
// with the training baseline (libtorch_graphormer_model.h).
//
//   megagraph-bench-libtorch --model-dir DIR [--repeat N] [--warmup W]
//                            [--threads T] [--output-dir OUT]
//
// Sizes (D, H, layers, classes) are read off the weight shapes. The summary
// line (stdout) is:
//   libtorch: infer ok, N run(s), mean X ms, min Y ms, max abs err E,
//   peak RSS R MiB (after load L MiB)
//
//===----------------------------------------------------------------------===//

#include "libtorch_graphormer_model.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace mgbench;

//===-- Command line ------------------------------------------------------===//

struct Options {
  std::string modelDir, outputDir;
  long repeat = 5, warmup = 1;
  int threads = 2;
};

[[noreturn]] void usage(const char *prog, const std::string &error) {
  if (!error.empty())
    std::fprintf(stderr, "error: %s\n", error.c_str());
  std::fprintf(stderr,
               "usage: %s --model-dir DIR [--repeat N] [--warmup W] "
               "[--threads T] [--output-dir OUT]\n"
               "  DIR as written by bench/graphormer_bench.py: params/, "
               "inputs/, outputs/logits.npy\n",
               prog);
  std::exit(error.empty() ? 0 : 1);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--model-dir")
      o.modelDir = value();
    else if (a == "--output-dir")
      o.outputDir = value();
    else if (a == "--repeat")
      o.repeat = std::stol(value());
    else if (a == "--warmup")
      o.warmup = std::stol(value());
    else if (a == "--threads")
      o.threads = std::stoi(value());
    else if (a == "--help" || a == "-h")
      usage(argv[0], "");
    else
      usage(argv[0], "unknown argument '" + a + "'");
  }
  if (o.modelDir.empty())
    usage(argv[0], "--model-dir DIR is required");
  if (o.repeat < 1 || o.warmup < 0 || o.threads < 1)
    usage(argv[0], "--repeat >= 1, --warmup >= 0, --threads >= 1");
  return o;
}

int run(const Options &o) {
  at::set_num_threads(o.threads);
  torch::NoGradGuard noGrad;

  Graphormer model(o.modelDir);
  const std::string in = o.modelDir + "/inputs/";
  const at::Tensor x = readNpy(in + "x.npy");
  const at::Tensor inDeg = readNpy(in + "in_degree.npy");
  const at::Tensor outDeg = readNpy(in + "out_degree.npy");
  const at::Tensor spd = readNpy(in + "spd.npy");
  const at::Tensor want = readNpy(o.modelDir + "/outputs/logits.npy");
  const double loadedMiB = maxRssMiB();
  std::fprintf(stderr,
               "libtorch %s: B=%ld S=%ld D=%ld H=%ld layers=%zu classes=%ld, "
               "%d intra-op thread(s)\n",
               TORCH_VERSION, long(x.size(0)), long(x.size(1)), long(model.dim),
               long(model.heads), model.numLayers(), long(model.numClasses()),
               at::get_num_threads());

  at::Tensor out;
  for (long r = 0; r < o.warmup; ++r)
    out = model.forward(x, inDeg, outDeg, spd);
  out.reset();
  double totalMs = 0, minMs = 0;
  for (long r = 0; r < o.repeat; ++r) {
    out.reset(); // as the compiled model, do not hold two results at once
    auto start = std::chrono::steady_clock::now();
    out = model.forward(x, inDeg, outDeg, spd);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    totalMs += ms;
    minMs = r == 0 || ms < minMs ? ms : minMs;
  }
  if (!out.sizes().equals(want.sizes())) {
    std::fprintf(stderr,
                 "error: output shape differs from outputs/logits.npy\n");
    return 1;
  }
  const double err = (out - want).abs().max().item<double>();
  if (!o.outputDir.empty()) {
    ::mkdir(o.outputDir.c_str(), 0777);
    writeNpy(o.outputDir + "/logits.npy", out);
  }
  std::printf("libtorch: infer ok, %ld run(s), mean %.3f ms, min %.3f ms, max "
              "abs err %.3e, peak RSS %.1f MiB (after load %.1f MiB)\n",
              o.repeat, totalMs / o.repeat, minMs, err, maxRssMiB(), loadedMiB);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
