//===- FullGraph.cpp - Full-graph training inputs -------------------------===//
//
// See FullGraph.h.
//
//===----------------------------------------------------------------------===//

#include "driver/FullGraph.h"

#include "driver/Inputs.h"
#include "driver/Roles.h"
#include "support/Error.h"
#include "support/Json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mgrt {
namespace {

/// Largest N for the dense [N, N] normalized adjacency (4 GiB of f32).
constexpr int64_t kMaxDenseNodes = 32768;

/// Stores integer `v` at element i of an i64 or i32 tensor.
inline void storeInt(const mgrt_tensor &t, int64_t i, int64_t v) {
  if (t.dtype == MGRT_I64)
    static_cast<int64_t *>(t.data)[i] = v;
  else
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(v);
}

bool isInt(int dtype) { return dtype == MGRT_I64 || dtype == MGRT_I32; }

} // namespace

bool isFullGraphModel(const mgrt_model_info &model) {
  for (int i = 0; i < model.num_inputs; ++i) {
    const mgrt_tensor_info &in = model.inputs[i];
    const mgrt_tensor_role role = roleOf(in);
    if (role == MGRT_ROLE_EDGE_INDEX ||
        ((role == MGRT_ROLE_NODE_FEATURES || role == MGRT_ROLE_ADJ_NORM) &&
         in.rank == 2))
      return true;
  }
  return false;
}

void checkFullGraphInputs(const mgrt_model_info &model, const GraphData &data,
                          int ranks, std::vector<std::string> &errors) {
  const int64_t N = data.numNodes(), E = data.graph.num_edges,
                F = data.numFeatures();
  const size_t before = errors.size();
  bool shapeError = false;
  std::string flags;
  for (int i = 0; i < model.num_inputs; ++i) {
    const mgrt_tensor_info &in = model.inputs[i];
    const mgrt_tensor_role role = roleOf(in);
    const std::string what = "model input '" + std::string(in.name) + "' is " +
                             describe(in.dtype, in.rank, in.shape);
    int rank = 1;
    bool dtypeOk = isInt(in.dtype);
    std::string expect = "i64 [R]";
    switch (role) {
    case MGRT_ROLE_NODE_FEATURES:
      rank = 2, dtypeOk = in.dtype == MGRT_F32, expect = "f32 [R, F]";
      flags += " --input-shape " + std::string(in.name) + "=" +
               std::to_string(N / (in.shape[0] == N ? 1 : ranks)) + "x" +
               std::to_string(F);
      break;
    case MGRT_ROLE_EDGE_INDEX:
      rank = 2, expect = "i64 [2, E]";
      flags +=
          " --input-shape " + std::string(in.name) + "=2x" + std::to_string(E);
      break;
    case MGRT_ROLE_ADJ_NORM:
      rank = 2, dtypeOk = in.dtype == MGRT_F32, expect = "f32 [R, N]";
      break;
    case MGRT_ROLE_IN_DEGREE:
    case MGRT_ROLE_OUT_DEGREE:
    case MGRT_ROLE_LABELS:
      break;
    case MGRT_ROLE_LABEL_MASK:
      dtypeOk = in.dtype == MGRT_BOOL || in.dtype == MGRT_U8;
      expect = "bool [R]";
      break;
    case MGRT_ROLE_EVAL_MASK:
      dtypeOk = in.dtype == MGRT_F32, expect = "f32 [R]";
      break;
    default:
      errors.push_back("model input '" + std::string(in.name) +
                       "' has no full-graph training convention (supported: "
                       "x, features, node_feat, edge_index, adj_norm, "
                       "in_degree, out_degree, labels, label_mask, "
                       "eval_mask)");
      continue;
    }
    if (in.rank != rank || !dtypeOk) {
      errors.push_back(what + ", expected " + expect +
                       " (full-graph training: R nodes of this rank)");
      continue;
    }
    if (role == MGRT_ROLE_EDGE_INDEX) {
      if (in.shape[0] != 2 || in.shape[1] != E) {
        errors.push_back(what + ", but --data has " + std::to_string(E) +
                         " directed edges: expected [2, " + std::to_string(E) +
                         "]");
        shapeError = true;
      }
      continue;
    }
    const int64_t R = in.shape[0];
    const bool split = ranks > 1 && N % ranks == 0 && R * ranks == N;
    // The labels and masks gt-autodiff added follow the node features.
    const bool added = role == MGRT_ROLE_LABELS ||
                       role == MGRT_ROLE_LABEL_MASK ||
                       role == MGRT_ROLE_EVAL_MASK;
    if (R != N && !split && added && shapeError)
      continue;
    if (R != N && !split) {
      errors.push_back(what + ", but --data has " + std::to_string(N) +
                       " nodes: expected " + std::to_string(N) + " rows" +
                       (ranks > 1
                            ? " (or N / " + std::to_string(ranks) + " per rank)"
                            : std::string()));
      shapeError = true;
      continue;
    }
    if (role == MGRT_ROLE_NODE_FEATURES && in.shape[1] != F) {
      errors.push_back(what + ", but --data has " + std::to_string(F) +
                       " features per node");
      shapeError = true;
    }
    if (role == MGRT_ROLE_ADJ_NORM) {
      if (in.shape[1] != N) {
        errors.push_back(what + ", expected [R, " + std::to_string(N) + "]");
        shapeError = true;
      } else if (N > kMaxDenseNodes) {
        errors.push_back(
            what + ": a dense adjacency of " + std::to_string(N) +
            " nodes is too large (at most " + std::to_string(kMaxDenseNodes) +
            "); compile the model with --input-shape edge_index=2x" +
            std::to_string(E) +
            " (the data set's directed edge count) so that adj_norm becomes "
            "a sparse edge list");
      }
    }
  }
  if (shapeError && errors.size() > before)
    errors.push_back("compile the model for this data set with" + flags +
                     " (a model exported with dynamic node and edge "
                     "counts: examples/gcn/gcn.py --dynamic)");
}

bool partitionNodes(const GraphData &data, const Options &opts, int parts,
                    bool lead, std::vector<int64_t> &order,
                    std::string &error) {
  const mgrt_graph &g = data.graph;
  const int64_t N = g.num_nodes;
  order.resize(N);
  for (int64_t i = 0; i < N; ++i)
    order[i] = i;
  if (parts <= 1)
    return true;
  if (N % parts != 0)
    return setError(error, "gp=" + std::to_string(parts) +
                               " does not divide the " + std::to_string(N) +
                               " nodes of --data into equal parts");
  const auto start = std::chrono::steady_clock::now();
  char err[512];
  if (mgrt_partition_metis(&g, N / parts, opts.seed, order.data(), err,
                           sizeof err) != MGRT_OK)
    return setError(error, std::string("gp parts (METIS): ") + err);
  int64_t cut = 0;
  if (!opts.quiet && lead &&
      mgrt_partition_edge_cut(&g, order.data(), N / parts, &cut, err,
                              sizeof err) == MGRT_OK)
    std::fprintf(
        stderr,
        "partition: gp=%d METIS parts of %lld nodes cut %.1f%% of "
        "the edges (%.2f s)\n",
        parts, (long long)(N / parts),
        g.num_edges ? 100.0 * cut / g.num_edges : 0.0,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  return true;
}

int writeGraphStats(const Options &opts) {
  std::string error;
  if (opts.data.empty())
    return reportError("--data SPEC is required for --mode graph-stats");
  std::vector<int> parts;
  {
    std::stringstream list(opts.parts);
    std::string item;
    while (std::getline(list, item, ',')) {
      char *end = nullptr;
      const long p = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end || p < 2 || p > 4096)
        return reportError("--parts needs a comma-separated list of part "
                           "counts >= 2, got '" +
                           opts.parts + "'");
      parts.push_back(static_cast<int>(p));
    }
  }
  GraphData data;
  if (!loadGraphData(opts, data, error))
    return reportError(error);
  const mgrt_graph &g = data.graph;
  const int64_t N = g.num_nodes;
  double sum = 0, sum2 = 0, maxDeg = 0;
  for (int64_t u = 0; u < N; ++u) {
    const double d = static_cast<double>(g.row_ptr[u + 1] - g.row_ptr[u]);
    sum += d, sum2 += d * d, maxDeg = std::max(maxDeg, d);
  }
  const double mean = N ? sum / N : 0;
  const double var = N ? sum2 / N - mean * mean : 0;
  JsonWriter w;
  w.objectBegin()
      .attribute("data", opts.data)
      .attribute("nodes", N)
      .attribute("edges", g.num_edges)
      .attribute("degree_mean", mean)
      .attribute("degree_max", maxDeg)
      .attribute("degree_cv",
                 mean > 0 ? std::sqrt(std::max(0.0, var)) / mean : 0.0);
  w.key("partitions").arrayBegin();
  std::vector<int64_t> order, partOf(N), seen(N, -1);
  for (int p : parts) {
    if (N % p != 0)
      continue;
    if (!partitionNodes(data, opts, p, /*lead=*/!opts.quiet, order, error))
      return reportError(error);
    const int64_t n = N / p;
    for (int64_t k = 0; k < N; ++k)
      partOf[order[k]] = k / n;
    // The halo of part q: nodes of other parts that q's rows reference;
    // its interior rows: those that reference none.
    int64_t halo = 0, maxHalo = 0, maxEdges = 0, minInterior = -1;
    std::fill(seen.begin(), seen.end(), -1);
    for (int64_t q = 0; q < p; ++q) {
      int64_t h = 0, e = 0, interior = 0;
      for (int64_t k = q * n; k < (q + 1) * n; ++k) {
        const int64_t u = order[k];
        e += g.row_ptr[u + 1] - g.row_ptr[u];
        bool local = true;
        for (int64_t ed = g.row_ptr[u]; ed < g.row_ptr[u + 1]; ++ed) {
          const int64_t v = g.col_idx[ed];
          local = local && partOf[v] == q;
          if (partOf[v] != q && seen[v] != q)
            seen[v] = q, ++h;
        }
        if (local)
          interior += g.row_ptr[u + 1] - g.row_ptr[u];
      }
      halo += h;
      maxHalo = std::max(maxHalo, h);
      maxEdges = std::max(maxEdges, e);
      minInterior =
          minInterior < 0 ? interior : std::min(minInterior, interior);
    }
    w.objectBegin()
        .attribute("parts", static_cast<int64_t>(p))
        .attribute("halo_rows", halo)
        .attribute("max_halo_rows", maxHalo)
        .attribute("max_part_edges", maxEdges)
        .attribute("min_interior_edges", std::max<int64_t>(minInterior, 0))
        .objectEnd();
  }
  w.arrayEnd().objectEnd();
  if (opts.logJson.empty()) {
    std::printf("%s\n", w.str().c_str());
    return 0;
  }
  std::ofstream out(opts.logJson);
  out << w.str() << "\n";
  if (!out)
    return reportError("--log-json '" + opts.logJson + "': cannot write");
  return 0;
}

FullGraphBatches::FullGraphBatches(const GraphData &data,
                                   std::vector<int64_t> order,
                                   std::vector<uint8_t> counted,
                                   std::vector<uint8_t> isEval,
                                   const mgrt_model_info &model, int rank,
                                   int ranks, Owner owner)
    : data(data), order(std::move(order)), counted(std::move(counted)),
      isEval(std::move(isEval)), model(model), rank(rank), ranks(ranks),
      owner(std::move(owner)) {}

void FullGraphBatches::rowsOf(const mgrt_tensor &t, int64_t &first,
                              int64_t &rows) const {
  const int64_t N = data.numNodes();
  rows = t.shape[0];
  first = rows == N ? 0 : rank * rows;
}

bool FullGraphBatches::fill(long, std::vector<mgrt_tensor> &inputs,
                            BatchCounts &counts, std::string &error) {
  const int64_t N = data.numNodes(), F = data.numFeatures();
  const mgrt_graph &g = data.graph;
  const bool write = *owner != this;
  *owner = this;
  counts = BatchCounts{};
  // This rank's nodes: those of the labels (the loss rows).
  for (size_t i = 0; i < inputs.size(); ++i)
    if (roleOf(model.inputs[i]) == MGRT_ROLE_LABEL_MASK) {
      int64_t first, rows;
      rowsOf(inputs[i], first, rows);
      for (int64_t k = first; k < first + rows; ++k)
        counts.counted += counted[order[k]],
            counts.evalCounted += isEval[order[k]];
    }
  if (!write)
    return true;
  std::vector<int64_t> pos(N);
  for (int64_t k = 0; k < N; ++k)
    pos[order[k]] = k;
  const int64_t *labels = static_cast<const int64_t *>(data.labels.data);
  const int64_t *inDeg = static_cast<const int64_t *>(data.inDegree.data);
  const int64_t *outDeg = static_cast<const int64_t *>(data.outDegree.data);
  const float *feats = static_cast<const float *>(data.features.data);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const mgrt_tensor &t = inputs[i];
    const mgrt_tensor_role role = roleOf(model.inputs[i]);
    if (role == MGRT_ROLE_EDGE_INDEX) {
      // Sources in row 0, targets in row 1, grouped by source in the node
      // order.
      const int64_t E = g.num_edges;
      int64_t e = 0;
      for (int64_t k = 0; k < N; ++k) {
        const int64_t u = order[k];
        for (int64_t ed = g.row_ptr[u]; ed < g.row_ptr[u + 1]; ++ed, ++e) {
          storeInt(t, e, k);
          storeInt(t, E + e, pos[g.col_idx[ed]]);
        }
      }
      continue;
    }
    int64_t first, rows;
    rowsOf(t, first, rows);
    switch (role) {
    case MGRT_ROLE_NODE_FEATURES:
      for (int64_t k = 0; k < rows && F > 0; ++k)
        std::memcpy(static_cast<float *>(t.data) + k * F,
                    feats + order[first + k] * F, F * sizeof(float));
      break;
    case MGRT_ROLE_ADJ_NORM: {
      std::vector<float> full(N * N);
      std::vector<int64_t> scratch(N, -1);
      normalizedAdjacency(g, order.data(), N, scratch, full.data());
      std::memcpy(t.data, full.data() + first * N, rows * N * sizeof(float));
      break;
    }
    case MGRT_ROLE_IN_DEGREE:
    case MGRT_ROLE_OUT_DEGREE:
    case MGRT_ROLE_LABELS: {
      const int64_t *src = role == MGRT_ROLE_IN_DEGREE    ? inDeg
                           : role == MGRT_ROLE_OUT_DEGREE ? outDeg
                                                          : labels;
      // Unlabelled nodes (-1, never in a mask) get class 0.
      for (int64_t k = 0; k < rows; ++k)
        storeInt(t, k, std::max<int64_t>(0, src[order[first + k]]));
      break;
    }
    case MGRT_ROLE_LABEL_MASK:
      for (int64_t k = 0; k < rows; ++k)
        static_cast<uint8_t *>(t.data)[k] = counted[order[first + k]];
      break;
    case MGRT_ROLE_EVAL_MASK:
      for (int64_t k = 0; k < rows; ++k)
        static_cast<float *>(t.data)[k] = isEval[order[first + k]];
      break;
    default:
      return setError(error, "model input '" +
                                 std::string(model.inputs[i].name) +
                                 "' has no full-graph training convention");
    }
  }
  return true;
}

} // namespace mgrt
