//===- Synthetic.h - What the synthetic generators share --------*- C++ -*-===//
//
// Internal to the runtime (runtime/data/). The generators of
// "synthetic:NAME,KEY=VALUE,..." specs (Sbm.cpp, Rmat.cpp) share the
// splitting of a spec into its items, the number parsers with their
// diagnostics, and the label-correlated node features.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DATA_SYNTHETIC_H
#define MEGAGRAPH_RUNTIME_DATA_SYNTHETIC_H

#include "megagraph/RuntimeData.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mgrt {

/// The generator name and KEY=VALUE items of a spec.
struct SpecItems {
  std::string generator;
  std::vector<std::pair<std::string, std::string>> items;
};

/// Splits "[synthetic:]NAME,KEY=VALUE,..." into `out`. `who` prefixes the
/// messages ("mgrt_sbm_generate"); `example` is a well-formed spec of the
/// generator named `name`, quoted when NAME differs. A malformed item, a
/// key given twice or a NULL spec is MGRT_ERR_ARGUMENT.
int splitSpec(const char *text, const char *who, const char *name,
              const char *example, SpecItems &out, char *err, size_t errlen);

/// Decimal integers and finite reals, the whole string or nothing.
bool parseInt(const std::string &v, int64_t &out);
bool parseUnsigned(const std::string &v, uint64_t &out);
bool parseReal(const std::string &v, double &out);

/// Fills x [n, F] (row-major) with x[i] = mu[labels[i]] + noise, the
/// noise i.i.d. standard normal: with F >= C, mu[c][f] = signal when
/// f % C == c, else 0; with F < C, mu[c][f] = +signal when bit f of c is
/// set, else -signal (distinct means while C <= 2^F). Rows are drawn in
/// fixed chunks, each from its own xoshiro256** stream seeded by (seed,
/// `stream`, chunk), in parallel: the values do not depend on the number of
/// threads.
void classFeatures(float *x, const int64_t *labels, int64_t n, int64_t F,
                   int64_t C, double signal, uint64_t seed, uint64_t stream);

/// Zeroes the outputs a generator may fill (each may be NULL), so that a
/// failure leaves nothing to free.
void clearGenerated(mgrt_graph *graph, mgrt_tensor *features,
                    mgrt_tensor *labels);

/// The generators' node data from each node's class: `labels` ([n] i64,
/// the classes) and `features` ([n, F] f32, classFeatures with `signal`,
/// `seed` and `stream`), each skipped when NULL. On an allocation failure
/// frees what was made, `graph` included, and fails naming `who`.
int writeClassData(const std::vector<int64_t> &classOf, int64_t F, int64_t C,
                   double signal, uint64_t seed, uint64_t stream,
                   mgrt_graph *graph, mgrt_tensor *features,
                   mgrt_tensor *labels, const char *who, char *err,
                   size_t errlen);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DATA_SYNTHETIC_H
