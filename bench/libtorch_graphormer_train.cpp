//===- libtorch_graphormer_train.cpp - LibTorch training-step baseline ----===//
//
// The LibTorch side of the training bench (bench/run_training_bench.sh): the
// training variant of the bench Graphormer (BenchGraphormerTrain of
// bench/graphormer_bench.py, via libtorch_graphormer_model.h) trained with
// LibTorch autograd and torch::optim on the same data as a model compiled by
// `megagraph-compile --train` and run with `--mode train`:
//
//   * the same synthetic SBM graph, features, labels and degrees (the
//     runtime's own mgrt_sbm_generate / mgrt_graph_degrees, linked in);
//   * the same sequences (mgrt_partition_sequences), train split, per-epoch
//     batch order and SPD (mgrt_spd_block capped at --max-distance), built
//     exactly as runtime/driver/Train.cpp builds them (conventions in
//     runtime/driver/Train.h), so step t sees the same batch in both;
//   * the same initial weights (params/*.npy of the exported model) and the
//     same loss: cross entropy averaged over the training nodes
//     (label_mask), the others ignored.
//
// Per step: build the batch (untimed), then time forward, loss, correct
// count, backward and the optimizer step (SGD: w -= lr (g + wd w); AdamW:
// torch::optim::AdamW, betas 0.9 / 0.999, eps 1e-8, decoupled decay).
//
//   megagraph-bench-libtorch-train --model-dir DIR --data SPEC --steps K
//       [--optimizer sgd|adamw] [--lr X] [--weight-decay Y] [--threads T]
//       [--max-distance D] [--train-fraction F] [--seed N] [--log-json FILE]
//
// --log-json appends one line per step in the driver's format
//   {"step":t,"loss":L,"accuracy":A,"step_time_s":T,"forward_s":F,
//    "backward_s":G,"rss_bytes":R,"peak_rss_bytes":P}
// (F = forward + loss, G = backward alone, the rest of T is the update; R =
// RSS after the step, P = the process's peak RSS so far). Summary line
// (stdout):
//   libtorch: train ok, K step(s), final loss L, median step X ms, peak RSS
//   P MiB (RSS before the first step R MiB)
// Exit status 1 on a usage, data or model error or a non-finite loss.
//
//===----------------------------------------------------------------------===//

#include "libtorch_graphormer_model.h"

#include "megagraph/RuntimeData.h"

// The runtime's fixed generators (splitmix64, xoshiro256**, mixSeed): the
// same streams as the training driver's batch order and split.
#include "data/GraphUtil.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace mgbench;

//===-- Command line ------------------------------------------------------===//

struct Options {
  std::string modelDir, data, optimizer = "sgd", logJson;
  long steps = 10, maxDistance = 8;
  double lr = 1e-3, weightDecay = 0, trainFraction = 0.8;
  uint64_t seed = 1;
  int threads = 2;
};

[[noreturn]] void usage(const char *prog, const std::string &error) {
  if (!error.empty())
    std::fprintf(stderr, "error: %s\n", error.c_str());
  std::fprintf(
      stderr,
      "usage: %s --model-dir DIR --data synthetic:sbm,... --steps K\n"
      "          [--optimizer sgd|adamw] [--lr X] [--weight-decay Y] "
      "[--threads T]\n"
      "          [--max-distance D] [--train-fraction F] [--seed N] "
      "[--log-json FILE]\n"
      "  DIR as written by bench/graphormer_bench.py --train (params/)\n",
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
    try {
      if (a == "--model-dir")
        o.modelDir = value();
      else if (a == "--data")
        o.data = value();
      else if (a == "--optimizer")
        o.optimizer = value();
      else if (a == "--log-json")
        o.logJson = value();
      else if (a == "--steps")
        o.steps = std::stol(value());
      else if (a == "--max-distance")
        o.maxDistance = std::stol(value());
      else if (a == "--lr")
        o.lr = std::stod(value());
      else if (a == "--weight-decay")
        o.weightDecay = std::stod(value());
      else if (a == "--train-fraction")
        o.trainFraction = std::stod(value());
      else if (a == "--seed")
        o.seed = std::stoull(value());
      else if (a == "--threads")
        o.threads = std::stoi(value());
      else if (a == "--help" || a == "-h")
        usage(argv[0], "");
      else
        usage(argv[0], "unknown argument '" + a + "'");
    } catch (const std::logic_error &) { // std::stol & co.
      usage(argv[0], "bad value for " + a);
    }
  }
  if (o.modelDir.empty() || o.data.empty())
    usage(argv[0], "--model-dir DIR and --data SPEC are required");
  if (o.steps < 1 || o.threads < 1 || o.maxDistance < 0 ||
      o.trainFraction < 0 || o.trainFraction > 1)
    usage(argv[0], "--steps >= 1, --threads >= 1, --max-distance >= 0, "
                   "--train-fraction in [0, 1]");
  if (o.optimizer != "sgd" && o.optimizer != "adamw")
    usage(argv[0], "--optimizer is sgd or adamw");
  return o;
}

//===-- Data: runtime/driver/Train.cpp's batches
//----------------------------===//

/// Train.cpp's Fisher-Yates shuffle (Lemire's bounded draw).
void shuffle(std::vector<int64_t> &v, uint64_t seed) {
  mgrt::Rng rng(seed);
  for (size_t i = v.size(); i > 1; --i) {
    const uint64_t j = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(rng.next()) * i) >> 64);
    std::swap(v[i - 1], v[j]);
  }
}

/// The graph, its per-node arrays and the batch order of the driver.
class SbmBatches {
public:
  SbmBatches(const Options &o, int64_t batch, int64_t seqLen)
      : B(batch), S(seqLen), seed(o.seed), maxDistance(o.maxDistance) {
    char err[512];
    if (mgrt_sbm_generate(o.data.c_str(), &graph, &features, &labels, err,
                          sizeof err) != MGRT_OK)
      throw std::runtime_error("--data '" + o.data + "': " + err);
    if (mgrt_graph_degrees(&graph, &inDegree, &outDegree, err, sizeof err) !=
        MGRT_OK)
      throw std::runtime_error(std::string("degrees: ") + err);
    N = graph.num_nodes;
    F = features.shape[1];
    numSeq = N / S;
    if (numSeq < B)
      throw std::runtime_error("--data has " + std::to_string(N) +
                               " nodes: fewer than B = " + std::to_string(B) +
                               " sequences of S = " + std::to_string(S));
    order.resize(N);
    if (mgrt_partition_sequences(&graph, S, order.data(), err, sizeof err) !=
        MGRT_OK)
      throw std::runtime_error(std::string("partition: ") + err);
    isTrain.assign(N, 0);
    std::vector<int64_t> perm(N);
    for (int64_t i = 0; i < N; ++i)
      perm[i] = i;
    shuffle(perm, mgrt::mixSeed(seed, 0x73706c6974ULL /* "split" */));
    const int64_t numTrain = std::llround(o.trainFraction * N);
    for (int64_t i = 0; i < numTrain; ++i)
      isTrain[perm[i]] = 1;
    epochOrder.resize(numSeq);
  }
  ~SbmBatches() {
    mgrt_graph_free(&graph);
    for (mgrt_tensor *t : {&features, &labels, &inDegree, &outDegree})
      mgrt_tensor_free(t);
  }
  SbmBatches(const SbmBatches &) = delete;
  SbmBatches &operator=(const SbmBatches &) = delete;

  /// Fills the batch of step `step` (from 0): x [B,S,F] f32, in/out degree
  /// [B,S], spd [B,S,S], labels [B,S] (int64), mask [B,S] (bool).
  void fill(long step, at::Tensor &x, at::Tensor &inDeg, at::Tensor &outDeg,
            at::Tensor &spd, at::Tensor &lab, at::Tensor &mask) {
    const int64_t perEpoch = numSeq / B;
    const int64_t e = step / perEpoch, k = step % perEpoch;
    if (e != epoch) {
      epoch = e;
      for (int64_t i = 0; i < numSeq; ++i)
        epochOrder[i] = i;
      shuffle(epochOrder, mgrt::mixSeed(seed, 0x65706f6368ULL /* "epoch" */,
                                        static_cast<uint64_t>(e)));
    }
    const float *feats = static_cast<const float *>(features.data);
    const int64_t *inD = static_cast<const int64_t *>(inDegree.data);
    const int64_t *outD = static_cast<const int64_t *>(outDegree.data);
    const int64_t *lbl = static_cast<const int64_t *>(labels.data);
    float *xp = x.data_ptr<float>();
    int64_t *ip = inDeg.data_ptr<int64_t>(), *op = outDeg.data_ptr<int64_t>();
    int64_t *lp = lab.data_ptr<int64_t>(), *sp = spd.data_ptr<int64_t>();
    bool *mp = mask.data_ptr<bool>();
    for (int64_t b = 0; b < B; ++b) {
      const int64_t *nodes = order.data() + epochOrder[k * B + b] * S;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t n = nodes[s], r = b * S + s;
        std::copy(feats + n * F, feats + (n + 1) * F, xp + r * F);
        ip[r] = inD[n], op[r] = outD[n], lp[r] = lbl[n];
        mp[r] = isTrain[n] != 0;
      }
      char err[512];
      if (mgrt_spd_block(&graph, nodes, S, 0, S, maxDistance, sp + b * S * S,
                         err, sizeof err) != MGRT_OK)
        throw std::runtime_error(std::string("spd: ") + err);
    }
  }

  int64_t numFeatures() const { return F; }
  int64_t maxDegree() const {
    int64_t m = 0;
    for (const mgrt_tensor *t : {&inDegree, &outDegree})
      for (int64_t i = 0; i < N; ++i)
        m = std::max(m, static_cast<const int64_t *>(t->data)[i]);
    return m;
  }

private:
  const int64_t B, S;
  const uint64_t seed;
  const long maxDistance;
  mgrt_graph graph{};
  mgrt_tensor features{}, labels{}, inDegree{}, outDegree{};
  int64_t N = 0, F = 0, numSeq = 0, epoch = -1;
  std::vector<int64_t> order, epochOrder;
  std::vector<uint8_t> isTrain;
};

/// Current resident set size, bytes (/proc/self/statm).
double rssBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * 4096.0;
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

//===-- The training loop -------------------------------------------------===//

int run(const Options &o) {
  at::set_num_threads(o.threads);

  Graphormer model(o.modelDir);
  if (!model.floatFeatures())
    throw std::runtime_error(o.modelDir + ": not a training model (export it "
                                          "with graphormer_bench.py --train)");
  const at::Tensor x0 = readNpy(o.modelDir + "/inputs/x.npy");
  const int64_t B = x0.size(0), S = x0.size(1), C = model.numClasses();
  // The exported reference output checks the model code before training.
  {
    at::NoGradGuard noGrad;
    const std::string in = o.modelDir + "/inputs/";
    const at::Tensor ref =
        model.forward(x0, readNpy(in + "in_degree.npy"),
                      readNpy(in + "out_degree.npy"), readNpy(in + "spd.npy"));
    const double err = (ref - readNpy(o.modelDir + "/outputs/logits.npy"))
                           .abs()
                           .max()
                           .item<double>();
    if (!(err <= 1e-3))
      throw std::runtime_error("forward differs from PyTorch's "
                               "outputs/logits.npy by " +
                               std::to_string(err));
  }

  SbmBatches data(o, B, S);
  if (data.numFeatures() != x0.size(2))
    throw std::runtime_error("the model has " + std::to_string(x0.size(2)) +
                             " features per node but --data has " +
                             std::to_string(data.numFeatures()));
  if (data.maxDegree() >= model.degreeTableSize())
    throw std::runtime_error(
        "--data has a node of degree " + std::to_string(data.maxDegree()) +
        ", beyond the model's degree tables (" +
        std::to_string(model.degreeTableSize()) + " rows)");

  std::vector<at::Tensor> params;
  for (auto &[name, p] : model.namedParameters()) {
    p.requires_grad_(true);
    params.push_back(p);
  }
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (o.optimizer == "sgd")
    opt = std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(o.lr).weight_decay(o.weightDecay));
  else
    opt = std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(o.lr)
                    .betas({0.9, 0.999})
                    .eps(1e-8)
                    .weight_decay(o.weightDecay));

  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  at::Tensor x = at::empty({B, S, x0.size(2)}, f32);
  at::Tensor inDeg = at::empty({B, S}, i64), outDeg = at::empty({B, S}, i64);
  at::Tensor spd = at::empty({B, S, S}, i64), labels = at::empty({B, S}, i64);
  at::Tensor mask = at::empty({B, S}, at::TensorOptions().dtype(at::kBool));

  FILE *log = nullptr;
  if (!o.logJson.empty() && !(log = std::fopen(o.logJson.c_str(), "a")))
    throw std::runtime_error("--log-json '" + o.logJson +
                             "': cannot open for appending");
  // Weights, data, libraries: the RSS now (the reference check's peak is
  // in maxRssMiB).
  const double rssBefore = rssBytes() / 1048576.0;
  std::fprintf(stderr,
               "libtorch %s: train B=%ld S=%ld D=%ld H=%ld layers=%zu "
               "classes=%ld, %s lr %g, %d intra-op thread(s)\n",
               TORCH_VERSION, long(B), long(S), long(model.dim),
               long(model.heads), model.numLayers(), long(C),
               o.optimizer.c_str(), o.lr, at::get_num_threads());

  std::vector<double> times;
  double loss = NAN;
  int status = 0;
  for (long step = 0; step < o.steps; ++step) {
    data.fill(step, x, inDeg, outDeg, spd, labels, mask);
    const double counted = mask.sum().item<double>();
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point t) {
      return std::chrono::duration<double>(Clock::now() - t).count();
    };
    const auto start = Clock::now();
    // The step: what the compiled @main does.
    at::Tensor logits = model.forward(x, inDeg, outDeg, spd).reshape({-1, C});
    at::Tensor target = labels.reshape({-1}).masked_fill(
        mask.reshape({-1}).logical_not(), -100); // ignore_index
    at::Tensor lossT = at::cross_entropy_loss(logits, target);
    at::Tensor correct = (logits.detach().argmax(-1).eq(labels.reshape({-1})) &
                          mask.reshape({-1}))
                             .sum();
    const double forwardS = since(start);
    opt->zero_grad();
    const auto backwardStart = Clock::now();
    lossT.backward();
    const double backwardS = since(backwardStart);
    opt->step();
    loss = lossT.item<double>();
    const double secs = since(start);
    logits.reset(), lossT.reset(), target.reset();
    times.push_back(secs);
    const double acc = counted > 0 ? correct.item<double>() / counted : NAN;
    std::printf("step %ld/%ld  loss %.4f  acc %.3f  %.3f s  peak RSS %.1f "
                "MiB\n",
                step + 1, o.steps, loss, acc, secs, maxRssMiB());
    std::fflush(stdout);
    if (log) {
      std::fprintf(log,
                   "{\"step\":%ld,\"loss\":%s,\"accuracy\":%s,"
                   "\"step_time_s\":%s,\"forward_s\":%s,\"backward_s\":%s,"
                   "\"rss_bytes\":%.0f,\"peak_rss_bytes\":%.0f}\n",
                   step + 1, jsonNumber(loss).c_str(), jsonNumber(acc).c_str(),
                   jsonNumber(secs).c_str(), jsonNumber(forwardS).c_str(),
                   jsonNumber(backwardS).c_str(), rssBytes(),
                   maxRssMiB() * 1048576.0);
      std::fflush(log);
    }
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "error: loss is not finite at step %ld\n", step + 1);
      status = 1;
      break;
    }
  }
  if (log)
    std::fclose(log);
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median =
      sorted.size() % 2
          ? sorted[sorted.size() / 2]
          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf(
      "libtorch: train %s, %zu step(s), final loss %.4f, median step "
      "%.3f ms, peak RSS %.1f MiB (RSS before the first step %.1f MiB)\n",
      status ? "FAILED" : "ok", times.size(), loss, median * 1e3, maxRssMiB(),
      rssBefore);
  return status;
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
