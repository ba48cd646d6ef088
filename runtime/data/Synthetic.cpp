//===- Synthetic.cpp - What the synthetic generators share ----------------===//
//
// See Synthetic.h.
//
//===----------------------------------------------------------------------===//

#include "data/Synthetic.h"

#include "data/GraphUtil.h"

#include "support/ThreadPool.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace mgrt {
namespace {

constexpr int64_t kFeatureRows = 4096; // feature rows per task

} // namespace

int splitSpec(const char *text, const char *who, const char *name,
              const char *example, SpecItems &out, char *err, size_t errlen) {
  if (!text)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT, "%s: spec is NULL", who);
  std::string spec(text);
  const std::string prefix = "synthetic:";
  if (spec.compare(0, prefix.size(), prefix) == 0)
    spec.erase(0, prefix.size());
  std::vector<std::string> items;
  for (size_t at = 0;;) {
    size_t comma = spec.find(',', at);
    items.push_back(spec.substr(at, comma - at));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  if (items[0] != name)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "%s: unknown generator '%s' in spec (expected '%s')", who,
                    items[0].c_str(), example);
  out.generator = items[0];
  out.items.clear();
  for (size_t i = 1; i < items.size(); ++i) {
    const std::string &item = items[i];
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0)
      return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                      "%s: malformed item '%s' in spec (expected KEY=VALUE)",
                      who, item.c_str());
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    for (const auto &[seen, v] : out.items)
      if (seen == key)
        return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                        "%s: key '%s' given twice", who, key.c_str());
    out.items.emplace_back(std::move(key), std::move(val));
  }
  return MGRT_OK;
}

bool parseInt(const std::string &v, int64_t &out) {
  if (v.empty() || !(std::isdigit((unsigned char)v[0]) || v[0] == '-'))
    return false;
  errno = 0;
  char *end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = x;
  return true;
}

bool parseUnsigned(const std::string &v, uint64_t &out) {
  if (v.empty() || !std::isdigit((unsigned char)v[0]))
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = x;
  return true;
}

bool parseReal(const std::string &v, double &out) {
  if (v.empty() || std::isspace((unsigned char)v[0]))
    return false;
  errno = 0;
  char *end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (errno || *end || !std::isfinite(x))
    return false;
  out = x;
  return true;
}

void classFeatures(float *x, const int64_t *labels, int64_t n, int64_t F,
                   int64_t C, double signal, uint64_t seed, uint64_t stream) {
  const bool oneHot = F >= C;
  auto mean = [&](int64_t c, int64_t f) -> double {
    if (oneHot)
      return f % C == c ? signal : 0.0;
    // Binary code of c: distinct means for C <= 2^F.
    return f < 63 && ((c >> f) & 1) ? signal : -signal;
  };
  parallelFor((n + kFeatureRows - 1) / kFeatureRows, [&](int64_t t, int) {
    Rng rng(mixSeed(seed, stream, static_cast<uint64_t>(t)));
    bool haveSpare = false;
    double spare = 0;
    const int64_t end = std::min(n, (t + 1) * kFeatureRows);
    for (int64_t i = t * kFeatureRows; i < end; ++i) {
      const int64_t c = labels[i];
      for (int64_t f = 0; f < F; ++f) {
        double z;
        if (haveSpare) {
          z = spare;
          haveSpare = false;
        } else { // Box-Muller: two standard normals per two uniforms
          const double r = std::sqrt(-2 * std::log(rng.uniformOpenClosed()));
          const double th = 6.283185307179586 *
                            static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
          z = r * std::cos(th);
          spare = r * std::sin(th);
          haveSpare = true;
        }
        x[i * F + f] = static_cast<float>(mean(c, f) + z);
      }
    }
  });
}

void clearGenerated(mgrt_graph *graph, mgrt_tensor *features,
                    mgrt_tensor *labels) {
  if (graph)
    std::memset(graph, 0, sizeof *graph);
  if (features)
    std::memset(features, 0, sizeof *features);
  if (labels)
    std::memset(labels, 0, sizeof *labels);
}

int writeClassData(const std::vector<int64_t> &classOf, int64_t F, int64_t C,
                   double signal, uint64_t seed, uint64_t stream,
                   mgrt_graph *graph, mgrt_tensor *features,
                   mgrt_tensor *labels, const char *who, char *err,
                   size_t errlen) {
  const auto n = static_cast<int64_t>(classOf.size());
  if (labels) {
    const int64_t shape[1] = {n};
    if (mgrt_tensor_alloc(labels, MGRT_I64, 1, shape) != MGRT_OK) {
      mgrt_graph_free(graph);
      return dataFail(err, errlen, MGRT_ERR_NOMEM, "%s: cannot allocate labels",
                      who);
    }
    std::memcpy(labels->data, classOf.data(), sizeof(int64_t) * n);
  }
  if (features) {
    const int64_t shape[2] = {n, F};
    if (mgrt_tensor_alloc(features, MGRT_F32, 2, shape) != MGRT_OK) {
      mgrt_graph_free(graph);
      mgrt_tensor_free(labels);
      return dataFail(err, errlen, MGRT_ERR_NOMEM,
                      "%s: cannot allocate features [%lld, %lld]", who,
                      (long long)n, (long long)F);
    }
    classFeatures(static_cast<float *>(features->data), classOf.data(), n, F, C,
                  signal, seed, stream);
  }
  return MGRT_OK;
}

} // namespace mgrt
