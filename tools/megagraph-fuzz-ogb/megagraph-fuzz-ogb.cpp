//===- megagraph-fuzz-ogb.cpp - libFuzzer target over the OGB reader ------===//
//
// Part of MegaGraph. Feeds arbitrary bytes to mgrt_ogb_load as a data set
// in the OGB raw layout (--data ogb:DIR): the input is cut at each line
// "==" into the files raw/node-feat, raw/node-label, raw/edge,
// split/fuzz/train, split/fuzz/test, split/fuzz/valid and
// raw/num-node-list (.csv.gz; zlib reads plain text as well as gzip, so a
// part may be either). Whatever the files hold, the loader must return a
// graph or an error, never crash, hang or trip a sanitizer, and a graph it
// returns must satisfy the CSR contract (mgrt_graph_check). Built with
// -DMEGAGRAPH_FUZZ=ON and clang (README.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

const char *const kFiles[] = {
    "raw/node-feat.csv.gz",    "raw/node-label.csv.gz",
    "raw/edge.csv.gz",         "split/fuzz/train.csv.gz",
    "split/fuzz/test.csv.gz",  "split/fuzz/valid.csv.gz",
    "raw/num-node-list.csv.gz"};
constexpr int kNumFiles = sizeof kFiles / sizeof kFiles[0];

/// The scratch data set directory, made once per process.
const std::string &scratchDir() {
  static const std::string dir = [] {
    const char *base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string t = std::string(base) + "/megagraph-fuzz-ogb.XXXXXX";
    if (!::mkdtemp(&t[0])) {
      std::perror("mkdtemp");
      std::abort();
    }
    for (const char *sub : {"/raw", "/split", "/split/fuzz"})
      ::mkdir((t + sub).c_str(), 0700);
    return t;
  }();
  return dir;
}

void writeFile(const std::string &path, const char *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) ||
      std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &dir = scratchDir();
  const char *bytes = reinterpret_cast<const char *>(data);
  size_t pos = 0;
  bool more = true;
  for (int k = 0; k < kNumFiles; ++k) {
    const std::string path = dir + "/" + kFiles[k];
    if (!more) { // fewer parts: the optional files are absent
      ::unlink(path.c_str());
      continue;
    }
    size_t cut = pos;
    while (cut < size &&
           !(size - cut >= 4 && std::memcmp(bytes + cut, "\n==\n", 4) == 0))
      ++cut;
    writeFile(path, bytes + pos, cut - pos);
    more = cut < size;
    pos = more ? cut + 4 : size;
  }
  mgrt_graph g;
  mgrt_tensor x, y, s;
  char err[512];
  if (mgrt_ogb_load(dir.c_str(), "fuzz", &g, &x, &y, &s, err, sizeof err) !=
      MGRT_OK)
    return 0;
  if (mgrt_graph_check(&g, err, sizeof err) != MGRT_OK) {
    std::fprintf(stderr, "mgrt_ogb_load returned a broken graph: %s\n", err);
    std::abort();
  }
  mgrt_graph_free(&g);
  for (mgrt_tensor *t : {&x, &y, &s})
    mgrt_tensor_free(t);
  return 0;
}
