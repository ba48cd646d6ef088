//===- Sbm.cpp - Synthetic stochastic block model generator ---------------===//
//
// mgrt_sbm_generate (contract in RuntimeData.h). Node i is in block i % C.
// The edges are drawn in two independent families of pairs {i < j}:
//   * inter-block: the whole upper triangle over the N nodes with p_out,
//     dropping the same-block pairs it draws (exactly the inter-block pairs
//     remain, each with probability p_out);
//   * intra-block: per block, the upper triangle over its members with p_in.
// Each triangle is cut into chunks of kRows rows, each chunk one parallel
// task with its own xoshiro256** stream seeded from (seed, family, block,
// chunk), and sampled by geometric skipping: the gap to the next edge of a
// Bernoulli(p) sequence is floor(log U / log(1 - p)), so the cost is
// O(rows + edges), never O(N^2). The streams are replayed twice: once to
// count the degrees (row_ptr), once to scatter the targets; rows are then
// sorted, which makes the CSR independent of the scheduling.
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

constexpr int64_t kRows = 4096; // triangle rows per task
constexpr int64_t kMaxNodes = (1LL << 31) - 1;
constexpr double kMaxDirectedEdges = 4e9; // 32 GB of col_idx

enum : uint64_t { kInterStream = 1, kIntraStream = 2, kFeatureStream = 3 };

struct SbmSpec {
  int64_t nodes = -1, classes = -1, features = 16;
  double degree = 20, pIn = -1, pOut = -1, signal = 1;
  uint64_t seed = 1;
};

int parseSpec(const char *text, SbmSpec &s, char *err, size_t errlen) {
  const char *W = "mgrt_sbm_generate: ";
  SpecItems spec;
  if (int rc = splitSpec(text, "mgrt_sbm_generate", "sbm",
                         "synthetic:sbm,nodes=N,...", spec, err, errlen))
    return rc;
  for (const auto &[key, val] : spec.items) {
    bool ok;
    const char *expect;
    if (key == "nodes") {
      ok = parseInt(val, s.nodes) && s.nodes >= 1 && s.nodes <= kMaxNodes;
      expect = "an integer in [1, 2^31 - 1]";
    } else if (key == "classes") {
      ok = parseInt(val, s.classes) && s.classes >= 1;
      expect = "an integer >= 1";
    } else if (key == "features") {
      ok = parseInt(val, s.features) && s.features >= 0 &&
           s.features <= (1LL << 20);
      expect = "an integer in [0, 2^20]";
    } else if (key == "degree") {
      ok = parseReal(val, s.degree) && s.degree >= 0;
      expect = "a number >= 0";
    } else if (key == "p_in") {
      ok = parseReal(val, s.pIn) && s.pIn >= 0 && s.pIn <= 1;
      expect = "a probability in [0, 1]";
    } else if (key == "p_out") {
      ok = parseReal(val, s.pOut) && s.pOut >= 0 && s.pOut <= 1;
      expect = "a probability in [0, 1]";
    } else if (key == "signal") {
      ok = parseReal(val, s.signal) && s.signal >= 0;
      expect = "a number >= 0";
    } else if (key == "seed") {
      ok = parseUnsigned(val, s.seed);
      expect = "an unsigned 64-bit integer";
    } else {
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "mgrt_sbm_generate: unknown key '%s' in spec (known: "
                      "nodes, classes, features, degree, p_in, p_out, "
                      "signal, seed)",
                      key.c_str());
    }
    if (!ok)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%sbad value '%s' for key '%s': expected %s", W,
                      val.c_str(), key.c_str(), expect);
  }
  if (s.nodes < 0)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%smissing required key 'nodes' in spec (e.g. "
                    "'synthetic:sbm,nodes=4096')",
                    W);
  if (s.classes < 0)
    s.classes = std::min<int64_t>(8, s.nodes);
  if (s.classes > s.nodes)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%sbad value '%lld' for key 'classes': expected at most "
                    "nodes = %lld",
                    W, (long long)s.classes, (long long)s.nodes);
  const double n = static_cast<double>(s.nodes);
  const double blockSize = n / static_cast<double>(s.classes);
  const double inShare = s.classes > 1 ? 0.8 : 1.0;
  if (s.pIn < 0)
    s.pIn = blockSize > 1 ? std::min(1.0, inShare * s.degree / (blockSize - 1))
                          : 0.0;
  if (s.pOut < 0)
    s.pOut = n - blockSize > 0
                 ? std::min(1.0, (1 - inShare) * s.degree / (n - blockSize))
                 : 0.0;
  return MGRT_OK;
}

/// Members of block c: c, c + C, c + 2C, ...
int64_t blockSize(int64_t n, int64_t classes, int64_t c) {
  return n / classes + (c < n % classes ? 1 : 0);
}

/// One chunk of a triangle: rows [rowBegin, rowEnd) of the pairs (a, b),
/// a < b < size, of a triangle over `size` points.
struct Chunk {
  uint64_t family, block, index;
  int64_t size, rowBegin, rowEnd;
  double p;
};

/// Calls edge(a, b) for each drawn pair of the chunk (local indices).
template <typename Fn>
void sampleChunk(const Chunk &ch, uint64_t seed, Fn &&edge) {
  if (ch.p <= 0)
    return;
  Rng rng(mixSeed(seed, ch.family, ch.block, ch.index));
  const bool all = ch.p >= 1;
  const double logq = all ? 0.0 : std::log1p(-ch.p);
  int64_t a = ch.rowBegin;
  int64_t off = -1; // position within row a: b = a + 1 + off
  for (;;) {
    // Gap to the next drawn pair (failures before the next success).
    double gap =
        all ? 0.0 : std::floor(std::log(rng.uniformOpenClosed()) / logq);
    // Advance by gap + 1 positions, crossing rows as needed.
    double step = gap + 1;
    while (a < ch.rowEnd) {
      const int64_t rowLen = ch.size - 1 - a;
      const double left = static_cast<double>(rowLen - 1 - off);
      if (step <= left) {
        off += static_cast<int64_t>(step);
        break;
      }
      step -= left;
      ++a;
      off = -1;
    }
    if (a >= ch.rowEnd)
      return;
    edge(a, a + 1 + off);
  }
}

} // namespace

extern "C" {

int mgrt_sbm_generate(const char *spec, mgrt_graph *graph,
                      mgrt_tensor *features, mgrt_tensor *labels, char *err,
                      size_t errlen) {
  clearGenerated(graph, features, labels);
  if (!graph)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_sbm_generate: graph is NULL");
  SbmSpec s;
  if (int rc = parseSpec(spec, s, err, errlen))
    return rc;
  const int64_t n = s.nodes, C = s.classes;

  // Guard against specs whose graph cannot fit before drawing anything.
  // n % C blocks of n / C + 1 nodes, the others of n / C.
  const double big = static_cast<double>(n / C + 1),
               small = static_cast<double>(n / C);
  const double intraPairs =
      static_cast<double>(n % C) * big * (big - 1) / 2 +
      static_cast<double>(C - n % C) * small * (small - 1) / 2;
  const double allPairs = static_cast<double>(n) * (n - 1) / 2;
  const double expected =
      2 * (s.pIn * intraPairs + s.pOut * (allPairs - intraPairs));
  if (expected > kMaxDirectedEdges)
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_sbm_generate: about %.3g edges expected (p_in = "
                    "%g, p_out = %g), more than the %.3g supported; lower "
                    "nodes, p_in or p_out",
                    expected, s.pIn, s.pOut, kMaxDirectedEdges);

  // With one block every pair is intra-block: no inter family. Blocks of
  // one node have no pairs.
  std::vector<Chunk> chunks;
  if (C > 1 && s.pOut > 0)
    for (int64_t r = 0; r < n; r += kRows)
      chunks.push_back({kInterStream, 0, static_cast<uint64_t>(r / kRows), n, r,
                        std::min(n, r + kRows), s.pOut});
  for (int64_t c = 0; c < C && s.pIn > 0; ++c) {
    const int64_t sz = blockSize(n, C, c);
    for (int64_t r = 0; r + 1 < sz; r += kRows)
      chunks.push_back({kIntraStream, static_cast<uint64_t>(c),
                        static_cast<uint64_t>(r / kRows), sz, r,
                        std::min(sz, r + kRows), s.pIn});
  }
  // Calls edge(u, v) with global ids for every drawn pair of chunk k.
  auto forEachEdge = [&](int64_t k, auto &&edge) {
    const Chunk &ch = chunks[k];
    if (ch.family == kInterStream) {
      sampleChunk(ch, s.seed, [&](int64_t u, int64_t v) {
        if (u % C != v % C)
          edge(u, v);
      });
    } else {
      const int64_t c = static_cast<int64_t>(ch.block);
      sampleChunk(ch, s.seed,
                  [&](int64_t a, int64_t b) { edge(c + a * C, c + b * C); });
    }
  };

  int64_t *rowPtr =
      static_cast<int64_t *>(mgrt_alloc(sizeof(int64_t) * (n + 1)));
  if (!rowPtr)
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_sbm_generate: cannot allocate row_ptr of %lld nodes",
                    (long long)n);
  std::memset(rowPtr, 0, sizeof(int64_t) * (n + 1));
  const int64_t numChunks = static_cast<int64_t>(chunks.size());
  // Pass 1: degrees into rowPtr[1..n].
  parallelFor(numChunks, [&](int64_t k, int) {
    forEachEdge(k, [&](int64_t u, int64_t v) {
      __atomic_fetch_add(&rowPtr[u + 1], 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&rowPtr[v + 1], 1, __ATOMIC_RELAXED);
    });
  });
  for (int64_t i = 0; i < n; ++i)
    rowPtr[i + 1] += rowPtr[i];
  const int64_t numEdges = rowPtr[n];
  int64_t *colIdx = static_cast<int64_t *>(
      mgrt_alloc(sizeof(int64_t) * static_cast<size_t>(numEdges)));
  std::vector<int64_t> cursor;
  if (colIdx) {
    try {
      cursor.assign(rowPtr, rowPtr + n);
    } catch (...) {
      mgrt_free(colIdx);
      colIdx = nullptr;
    }
  }
  if (!colIdx) {
    mgrt_free(rowPtr);
    return dataFail(err, errlen, MGRT_ERR_NOMEM,
                    "mgrt_sbm_generate: cannot allocate %lld edges",
                    (long long)numEdges);
  }
  // Pass 2: the same streams again, scattering the targets.
  parallelFor(numChunks, [&](int64_t k, int) {
    forEachEdge(k, [&](int64_t u, int64_t v) {
      colIdx[__atomic_fetch_add(&cursor[u], 1, __ATOMIC_RELAXED)] = v;
      colIdx[__atomic_fetch_add(&cursor[v], 1, __ATOMIC_RELAXED)] = u;
    });
  });
  cursor = std::vector<int64_t>();
  parallelFor((n + kRows - 1) / kRows, [&](int64_t t, int) {
    const int64_t end = std::min(n, (t + 1) * kRows);
    for (int64_t i = t * kRows; i < end; ++i)
      std::sort(colIdx + rowPtr[i], colIdx + rowPtr[i + 1]);
  });
  graph->num_nodes = n;
  graph->num_edges = numEdges;
  graph->row_ptr = rowPtr;
  graph->col_idx = colIdx;

  // Block i % C is the class.
  std::vector<int64_t> classOf(n);
  for (int64_t i = 0; i < n; ++i)
    classOf[i] = i % C;
  return writeClassData(classOf, s.features, C, s.signal, s.seed,
                        kFeatureStream, graph, features, labels,
                        "mgrt_sbm_generate", err, errlen);
}

} // extern "C"
