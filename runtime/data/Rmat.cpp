//===- Rmat.cpp - Synthetic R-MAT (power-law) graph generator -------------===//
//
// mgrt_rmat_generate and mgrt_synthetic_generate (contracts in
// RuntimeData.h). Edges are drawn in rounds until E distinct unordered pairs
// exist. A round oversamples what is missing, in fixed chunks of draws, each
// chunk one parallel task with its own xoshiro256** stream seeded from
// (seed, round, chunk); the new distinct pairs that come first in draw order
// are kept (a sort by pair then by draw index), so the graph does not
// depend on the scheduling. Ids are then shuffled and the CSR is built with
// both directions of every pair.
//
//===----------------------------------------------------------------------===//

#include "data/GraphUtil.h"
#include "data/Synthetic.h"

#include "support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mgrt;

namespace {

constexpr int64_t kDrawsPerTask = 1 << 16;
constexpr int64_t kRowsPerTask = 4096;
constexpr int64_t kMaxNodes = (1LL << 31) - 1;
constexpr double kMaxDirectedEdges = 4e9; // 32 GB of col_idx
constexpr int kMaxRounds = 64;

enum : uint64_t { kEdgeStream = 11, kShuffleStream = 12, kFeatureStream = 13 };

struct RmatSpec {
  int64_t nodes = -1, edges = -1, classes = -1, features = 16;
  double a = 0.57, b = 0.19, c = 0.19, signal = 1;
  uint64_t seed = 1;
};

int parseSpec(const char *text, RmatSpec &s, char *err, size_t errlen) {
  const char *W = "mgrt_rmat_generate: ";
  SpecItems spec;
  if (int rc =
          splitSpec(text, "mgrt_rmat_generate", "rmat",
                    "synthetic:rmat,nodes=N,edges=E,...", spec, err, errlen))
    return rc;
  for (const auto &[key, val] : spec.items) {
    bool ok;
    const char *expect;
    if (key == "nodes") {
      ok = parseInt(val, s.nodes) && s.nodes >= 1 && s.nodes <= kMaxNodes;
      expect = "an integer in [1, 2^31 - 1]";
    } else if (key == "edges") {
      ok = parseInt(val, s.edges) && s.edges >= 0;
      expect = "an integer >= 0";
    } else if (key == "classes") {
      ok = parseInt(val, s.classes) && s.classes >= 1;
      expect = "an integer >= 1";
    } else if (key == "features") {
      ok = parseInt(val, s.features) && s.features >= 0 &&
           s.features <= (1LL << 20);
      expect = "an integer in [0, 2^20]";
    } else if (key == "a" || key == "b" || key == "c") {
      double &p = key == "a" ? s.a : key == "b" ? s.b : s.c;
      ok = parseReal(val, p) && p >= 0 && p <= 1;
      expect = "a probability in [0, 1]";
    } else if (key == "signal") {
      ok = parseReal(val, s.signal) && s.signal >= 0;
      expect = "a number >= 0";
    } else if (key == "seed") {
      ok = parseUnsigned(val, s.seed);
      expect = "an unsigned 64-bit integer";
    } else {
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%sunknown key '%s' in spec (known: nodes, edges, "
                      "classes, features, a, b, c, signal, seed)",
                      W, key.c_str());
    }
    if (!ok)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%sbad value '%s' for key '%s': expected %s", W,
                      val.c_str(), key.c_str(), expect);
  }
  if (s.nodes < 0)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%smissing required key 'nodes' in spec (e.g. "
                    "'synthetic:rmat,nodes=65536,edges=524288')",
                    W);
  if (s.a + s.b + s.c > 1 + 1e-12)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%sa + b + c = %g exceeds 1 (d = 1 - a - b - c is the "
                    "fourth quadrant's probability)",
                    W, s.a + s.b + s.c);
  if (s.classes < 0)
    s.classes = std::min<int64_t>(8, s.nodes);
  if (s.classes > s.nodes)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%sbad value '%lld' for key 'classes': expected at most "
                    "nodes = %lld",
                    W, (long long)s.classes, (long long)s.nodes);
  const double n = static_cast<double>(s.nodes);
  if (s.edges < 0)
    s.edges = 8 * s.nodes;
  const double maxEdges = std::floor(n * (n - 1) / 4);
  if (static_cast<double>(s.edges) > maxEdges)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%sedges=%lld is more than half of the %.0f node pairs "
                    "(at most %.0f for nodes=%lld)",
                    W, (long long)s.edges, n * (n - 1) / 2, maxEdges,
                    (long long)s.nodes);
  if (2 * static_cast<double>(s.edges) > kMaxDirectedEdges)
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "%s%lld edges are more than the %.3g directed edges "
                    "supported; lower edges",
                    W, (long long)s.edges, kMaxDirectedEdges / 2);
  return MGRT_OK;
}

/// One R-MAT draw of an unordered pair {u, v}, u != v, both < n, packed as
/// (min << 32) | max.
uint64_t drawPair(Rng &rng, int scale, int64_t n, double a, double ab,
                  double abc) {
  for (;;) {
    uint64_t u = 0, v = 0;
    for (int level = 0; level < scale; ++level) {
      const double r = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      const uint64_t du = r >= ab, dv = (r >= a && r < ab) || r >= abc;
      u = (u << 1) | du;
      v = (v << 1) | dv;
    }
    if (u != v && u < static_cast<uint64_t>(n) && v < static_cast<uint64_t>(n))
      return u < v ? (u << 32) | v : (v << 32) | u;
  }
}

/// Uniform in [0, k) (Lemire's multiply; bias below 2^-64 k).
uint64_t below(Rng &rng, uint64_t k) {
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(rng.next()) * k) >> 64);
}

} // namespace

extern "C" {

int mgrt_rmat_generate(const char *spec, mgrt_graph *graph,
                       mgrt_tensor *features, mgrt_tensor *labels, char *err,
                       size_t errlen) {
  clearGenerated(graph, features, labels);
  if (!graph)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_rmat_generate: graph is NULL");
  RmatSpec s;
  if (int rc = parseSpec(spec, s, err, errlen))
    return rc;
  const int64_t n = s.nodes, E = s.edges, C = s.classes;
  int scale = 0;
  while ((int64_t(1) << scale) < n)
    ++scale;
  const double ab = s.a + s.b, abc = s.a + s.b + s.c;

  // 1. The distinct pairs, sorted, in rounds.
  std::vector<uint64_t> pairs;
  struct Draw {
    uint64_t pair;
    int64_t index;
  };
  std::vector<Draw> fresh;
  std::vector<uint64_t> kept, merged;
  try {
    pairs.reserve(E);
    for (int round = 0; static_cast<int64_t>(pairs.size()) < E; ++round) {
      if (round == kMaxRounds)
        return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                        "mgrt_rmat_generate: %lld distinct edges after %d "
                        "rounds of draws, %lld asked for; lower edges or "
                        "make a, b, c less skewed",
                        (long long)pairs.size(), kMaxRounds, (long long)E);
      const int64_t need = E - static_cast<int64_t>(pairs.size());
      const int64_t draws = need + need / 4 + 64;
      fresh.resize(draws);
      parallelFor(
          (draws + kDrawsPerTask - 1) / kDrawsPerTask, [&](int64_t t, int) {
            Rng rng(mixSeed(s.seed, kEdgeStream, static_cast<uint64_t>(round),
                            static_cast<uint64_t>(t)));
            const int64_t end = std::min(draws, (t + 1) * kDrawsPerTask);
            for (int64_t i = t * kDrawsPerTask; i < end; ++i)
              fresh[i] = {drawPair(rng, scale, n, s.a, ab, abc), i};
          });
      // The first draw of each new pair.
      std::sort(fresh.begin(), fresh.end(), [](const Draw &x, const Draw &y) {
        return x.pair != y.pair ? x.pair < y.pair : x.index < y.index;
      });
      int64_t m = 0;
      for (int64_t i = 0; i < draws; ++i)
        if ((i == 0 || fresh[i].pair != fresh[i - 1].pair) &&
            !std::binary_search(pairs.begin(), pairs.end(), fresh[i].pair))
          fresh[m++] = fresh[i];
      fresh.resize(m);
      // The `need` earliest of them.
      if (m > need) {
        std::nth_element(
            fresh.begin(), fresh.begin() + need, fresh.end(),
            [](const Draw &x, const Draw &y) { return x.index < y.index; });
        fresh.resize(need);
      }
      kept.resize(fresh.size());
      for (size_t i = 0; i < fresh.size(); ++i)
        kept[i] = fresh[i].pair;
      std::sort(kept.begin(), kept.end());
      merged.resize(pairs.size() + kept.size());
      std::merge(pairs.begin(), pairs.end(), kept.begin(), kept.end(),
                 merged.begin());
      pairs.swap(merged);
    }
  } catch (const std::bad_alloc &) {
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_rmat_generate: cannot hold %lld edges", (long long)E);
  }
  fresh = std::vector<Draw>();
  kept = merged = std::vector<uint64_t>();

  // 2. Shuffled ids: node `old` of the R-MAT matrix becomes perm[old].
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i)
    perm[i] = i;
  {
    Rng rng(mixSeed(s.seed, kShuffleStream));
    for (int64_t i = n; i > 1; --i)
      std::swap(perm[i - 1], perm[below(rng, static_cast<uint64_t>(i))]);
  }

  // 3. The CSR: both directions of every pair, rows sorted.
  int64_t *rowPtr =
      static_cast<int64_t *>(mgrt_alloc(sizeof(int64_t) * (n + 1)));
  int64_t *colIdx = static_cast<int64_t *>(
      mgrt_alloc(sizeof(int64_t) * static_cast<size_t>(2 * E)));
  if (!rowPtr || (!colIdx && E > 0)) {
    mgrt_free(rowPtr);
    mgrt_free(colIdx);
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_rmat_generate: cannot allocate %lld edges",
                    (long long)(2 * E));
  }
  std::memset(rowPtr, 0, sizeof(int64_t) * (n + 1));
  for (uint64_t p : pairs) {
    ++rowPtr[perm[p >> 32] + 1];
    ++rowPtr[perm[p & 0xffffffffu] + 1];
  }
  for (int64_t i = 0; i < n; ++i)
    rowPtr[i + 1] += rowPtr[i];
  {
    std::vector<int64_t> cursor(rowPtr, rowPtr + n);
    for (uint64_t p : pairs) {
      const int64_t u = perm[p >> 32], v = perm[p & 0xffffffffu];
      colIdx[cursor[u]++] = v;
      colIdx[cursor[v]++] = u;
    }
  }
  pairs = std::vector<uint64_t>();
  parallelFor((n + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t t, int) {
    const int64_t end = std::min(n, (t + 1) * kRowsPerTask);
    for (int64_t i = t * kRowsPerTask; i < end; ++i)
      std::sort(colIdx + rowPtr[i], colIdx + rowPtr[i + 1]);
  });
  graph->num_nodes = n;
  graph->num_edges = 2 * E;
  graph->row_ptr = rowPtr;
  graph->col_idx = colIdx;

  // 4. Classes: C equal runs of the R-MAT ids.
  std::vector<int64_t> classOf(n);
  for (int64_t old = 0; old < n; ++old)
    classOf[perm[old]] = static_cast<int64_t>(
        static_cast<unsigned __int128>(old) * C / static_cast<uint64_t>(n));
  return writeClassData(classOf, s.features, C, s.signal, s.seed,
                        kFeatureStream, graph, features, labels,
                        "mgrt_rmat_generate", err, errlen);
}

int mgrt_synthetic_generate(const char *spec, mgrt_graph *graph,
                            mgrt_tensor *features, mgrt_tensor *labels,
                            char *err, size_t errlen) {
  std::string name = spec ? spec : "";
  if (name.compare(0, 10, "synthetic:") == 0)
    name.erase(0, 10);
  name = name.substr(0, name.find(','));
  if (name == "rmat")
    return mgrt_rmat_generate(spec, graph, features, labels, err, errlen);
  if (name == "sbm" || !spec)
    return mgrt_sbm_generate(spec, graph, features, labels, err, errlen);
  clearGenerated(graph, features, labels);
  return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                  "unknown generator '%s' (expected synthetic:sbm,nodes=N,... "
                  "or synthetic:rmat,nodes=N,edges=E,...)",
                  name.c_str());
}

} // extern "C"
