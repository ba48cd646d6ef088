//===- Topology.cpp - The graph data set cut into sequences ---------------===//
//
// See Topology.h.
//
//===----------------------------------------------------------------------===//

#include "driver/Topology.h"

#include "data/GraphUtil.h"
#include "driver/ContextParallel.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sys/stat.h>

namespace mgrt {
namespace {

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

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Uniform in [0, n) (Lemire's multiply; bias below 2^-64 n).
uint64_t below(Rng &rng, uint64_t n) {
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(rng.next()) * n) >> 64);
}

} // namespace

GraphData::~GraphData() {
  mgrt_graph_free(&graph);
  for (mgrt_tensor *t : {&features, &labels, &inDegree, &outDegree, &split})
    mgrt_tensor_free(t);
}

bool isOgbSpec(const std::string &spec) {
  if (spec.compare(0, 4, "ogb:") == 0)
    return true;
  struct stat sb;
  return spec.compare(0, 10, "synthetic:") != 0 &&
         ::stat(spec.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool loadGraphData(const Options &opts, GraphData &data, std::string &error) {
  char err[512];
  data.ogb = isOgbSpec(opts.data);
  struct stat sb;
  const bool synthetic = opts.data.compare(0, 10, "synthetic:") == 0;
  if (!synthetic && !data.ogb && ::stat(opts.data.c_str(), &sb) == 0) {
    error = "--data '" + opts.data +
            "': loading a dataset file is not supported; give a directory in "
            "the OGB raw layout (ogb:DIR) or a generator such as "
            "synthetic:sbm,nodes=4096,classes=8";
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  if (data.ogb) {
    std::string dir, scheme;
    splitOgbSpec(opts.data, dir, scheme);
    if (mgrt_ogb_load(dir.c_str(), scheme.c_str(), &data.graph, &data.features,
                      &data.labels, &data.split, err, sizeof err) != MGRT_OK) {
      error = "--data '" + opts.data + "': " + err;
      return false;
    }
    if (!opts.quiet && hasFlag(opts, "--train-fraction"))
      std::fprintf(stderr, "note: --train-fraction is ignored: the "
                           "dataset's split is used\n");
  } else {
    if (mgrt_synthetic_generate(opts.data.c_str(), &data.graph, &data.features,
                                &data.labels, err, sizeof err) != MGRT_OK) {
      error = "--data '" + opts.data + "': " + err;
      return false;
    }
    // Every class of a generator holds nodes: the classes are 0 .. max.
    const int64_t *lab = static_cast<const int64_t *>(data.labels.data);
    for (int64_t i = 0; i < data.graph.num_nodes; ++i)
      data.classes = std::max(data.classes, lab[i] + 1);
  }
  if (mgrt_graph_degrees(&data.graph, &data.inDegree, &data.outDegree, err,
                         sizeof err) != MGRT_OK) {
    error = std::string("degrees: ") + err;
    return false;
  }
  if (!opts.quiet)
    std::fprintf(stderr,
                 "data: %s: %lld nodes, %lld edges, %lld features (%.2f s)\n",
                 opts.data.c_str(), (long long)data.graph.num_nodes,
                 (long long)data.graph.num_edges,
                 (long long)data.features.shape[1], secondsSince(start));
  return true;
}

bool checkLabelRange(const GraphData &data, const Options &opts,
                     int64_t classes, const std::string &input,
                     std::string &error) {
  if (classes < 1)
    return true;
  const std::string model = "the model's input '" + input + "' takes " +
                            std::to_string(classes) + " classes (0 to " +
                            std::to_string(classes - 1) + ")";
  if (!data.ogb) {
    if (data.classes > classes)
      return setError(error, "--data '" + opts.data +
                                 "': classes=" + std::to_string(data.classes) +
                                 " gives labels up to " +
                                 std::to_string(data.classes - 1) + ", but " +
                                 model);
    return true;
  }
  const int64_t *lab = static_cast<const int64_t *>(data.labels.data);
  for (int64_t i = 0; i < data.graph.num_nodes; ++i)
    if (lab[i] >= classes) {
      std::string dir, scheme;
      splitOgbSpec(opts.data, dir, scheme);
      return setError(
          error, "--data '" + opts.data + "': '" + dir +
                     "/raw/node-label.csv.gz' row " + std::to_string(i + 1) +
                     " (node " + std::to_string(i) + "): class label " +
                     std::to_string(lab[i]) + " is out of range: " + model);
    }
  return true;
}

bool partitionSequences(const GraphData &data, const Options &opts, int64_t S,
                        int cp, bool lead, std::vector<int64_t> &order,
                        std::string &error) {
  char err[512];
  const mgrt_graph &g = data.graph;
  const int64_t N = g.num_nodes, numSeq = N / S;
  order.assign(N, 0);
  const auto start = std::chrono::steady_clock::now();
  const bool metis = opts.partition == "metis";
  if ((metis ? mgrt_partition_metis(&g, S, opts.seed, order.data(), err,
                                    sizeof err)
             : mgrt_partition_sequences(&g, S, order.data(), err,
                                        sizeof err)) != MGRT_OK) {
    error = "partition (" + opts.partition + "): " + err;
    return false;
  }
  int64_t internal = 0, cpCut = 0;
  if (!reorderForContextParallel(g, order.data(), numSeq, S, cp, opts.seed,
                                 error, &internal, &cpCut))
    return false;
  if (!opts.quiet && cp > 1 && lead) {
    // Uneven blocks (cp does not divide S): S / cp or one more node.
    const std::string sizes =
        std::to_string(S / cp) +
        (S % cp ? " to " + std::to_string(S / cp + 1) : std::string());
    std::fprintf(stderr,
                 "partition: cp blocks of %s nodes (METIS) cut %.1f%% of "
                 "the edges inside the sequences\n",
                 sizes.c_str(), internal ? 100.0 * cpCut / internal : 0.0);
  }
  int64_t cut = 0;
  if (!opts.quiet && mgrt_partition_edge_cut(&g, order.data(), S, &cut, err,
                                             sizeof err) == MGRT_OK)
    std::fprintf(stderr,
                 "partition: %s, sequences of %lld nodes cut %.1f%% of the "
                 "edges (%.2f s)\n",
                 opts.partition.c_str(), (long long)S,
                 g.num_edges ? 100.0 * cut / g.num_edges : 0.0,
                 secondsSince(start));
  return true;
}

void shuffleSeeded(std::vector<int64_t> &v, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[below(rng, i)]);
}

void drawSplit(const GraphData &data, const Options &opts,
               std::vector<uint8_t> &isTrain, std::vector<uint8_t> &isEval) {
  const int64_t N = data.graph.num_nodes;
  isTrain.assign(N, 0);
  isEval.assign(N, 0);
  if (data.ogb) {
    const uint8_t *split = static_cast<const uint8_t *>(data.split.data);
    const int64_t *lab = static_cast<const int64_t *>(data.labels.data);
    for (int64_t i = 0; i < N; ++i) {
      isTrain[i] = lab[i] >= 0 && split[i] == MGRT_SPLIT_TRAIN;
      isEval[i] = lab[i] >= 0 && split[i] == MGRT_SPLIT_TEST;
    }
    return;
  }
  std::vector<int64_t> perm(N);
  for (int64_t i = 0; i < N; ++i)
    perm[i] = i;
  shuffleSeeded(perm, mixSeed(opts.seed, 0x73706c6974ULL /* "split" */));
  const int64_t numTrain = std::llround(opts.trainFraction * N);
  for (int64_t i = 0; i < N; ++i)
    isTrain[perm[i]] = i < numTrain, isEval[perm[i]] = i >= numTrain;
}

FeatureBins::FeatureBins(const mgrt_tensor &features, int64_t categories)
    : categories(categories) {
  const int64_t N = features.shape[0], F = features.shape[1];
  lo.assign(F, 0.f);
  scale.assign(F, 0.f);
  const float *x = static_cast<const float *>(features.data);
  for (int64_t f = 0; f < F; ++f) {
    float l = N ? x[f] : 0.f, h = l;
    for (int64_t i = 0; i < N; ++i)
      l = std::min(l, x[i * F + f]), h = std::max(h, x[i * F + f]);
    lo[f] = l;
    scale[f] = h > l ? categories / (h - l) : 0.f;
  }
}

int64_t FeatureBins::id(int64_t f, float x) const {
  const int64_t bin = std::min<int64_t>(
      categories - 1, static_cast<int64_t>((x - lo[f]) * scale[f]));
  return 1 + f * categories + std::max<int64_t>(0, bin);
}

void normalizedAdjacency(const mgrt_graph &g, const int64_t *nodes, int64_t S,
                         std::vector<int64_t> &pos, float *a) {
  std::fill(a, a + S * S, 0.f);
  for (int64_t s = 0; s < S; ++s)
    pos[nodes[s]] = s;
  for (int64_t r = 0; r < S; ++r) {
    a[r * S + r] = 1.f;
    const int64_t u = nodes[r];
    for (int64_t ed = g.row_ptr[u]; ed < g.row_ptr[u + 1]; ++ed) {
      const int64_t c = pos[g.col_idx[ed]];
      if (c >= 0)
        a[r * S + c] = a[c * S + r] = 1.f;
    }
  }
  for (int64_t s = 0; s < S; ++s)
    pos[nodes[s]] = -1;
  std::vector<float> dinv(S);
  for (int64_t r = 0; r < S; ++r) {
    double d = 0;
    for (int64_t c = 0; c < S; ++c)
      d += a[r * S + c];
    dinv[r] = static_cast<float>(1.0 / std::sqrt(d));
  }
  for (int64_t r = 0; r < S; ++r)
    for (int64_t c = 0; c < S; ++c)
      a[r * S + c] *= dinv[r] * dinv[c];
}

} // namespace mgrt
