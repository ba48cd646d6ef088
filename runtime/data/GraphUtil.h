//===- GraphUtil.h - Helpers of the graph data layer ------------*- C++ -*-===//
//
// Internal to the runtime (runtime/data/). Error reporting into a caller
// buffer (dataFail), the O(1) part of the CSR contract, and the fixed
// pseudo-random generators (splitmix64, xoshiro256**) whose output is the same
// on every platform and standard library.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DATA_GRAPHUTIL_H
#define MEGAGRAPH_RUNTIME_DATA_GRAPHUTIL_H

#include "megagraph/RuntimeData.h"

#include "support/Error.h"

#include <cstdint>
#include <initializer_list>

namespace mgrt {

/// The data layer's name for errorInto (support/Error.h): writes the
/// message into err (if errlen > 0) and returns `code`.
inline constexpr auto &dataFail = errorInto;

/// Checks what every query needs in O(1): g, row_ptr, col_idx (unless no
/// edges) non-null, num_nodes, num_edges >= 0, row_ptr[0] == 0 and
/// row_ptr[N] == num_edges. `who` names the caller in the message.
int checkGraphHeader(const mgrt_graph *g, const char *who, char *err,
                     size_t errlen);

/// Checks row `u` of a graph that passed checkGraphHeader: row_ptr[u] <=
/// row_ptr[u + 1] <= num_edges and every col_idx of the row in [0, N).
/// MGRT_ERR_FORMAT with the row or edge at fault (`who` names the caller).
int checkGraphRow(const mgrt_graph *g, int64_t u, const char *who, char *err,
                  size_t errlen);

/// splitmix64 step: advances `state` and returns the next output.
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A 64-bit hash of (a, b, c, d), for seeding independent streams.
inline uint64_t mixSeed(uint64_t a, uint64_t b, uint64_t c = 0,
                        uint64_t d = 0) {
  uint64_t s = a;
  uint64_t h = splitmix64(s);
  for (uint64_t v : {b, c, d}) {
    s = h ^ v;
    h = splitmix64(s);
  }
  return h;
}

/// xoshiro256** 1.0 (Blackman and Vigna), seeded through splitmix64.
class Rng {
public:
  explicit Rng(uint64_t seed) {
    for (uint64_t &w : s)
      w = splitmix64(seed);
  }

  uint64_t next() {
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }

  /// Uniform in (0, 1] (53 bits), never 0 so log() is finite.
  double uniformOpenClosed() {
    return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s[4];
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DATA_GRAPHUTIL_H
