//===- Ogb.cpp - OGB node-property-prediction raw layout loader -----------===//
//
// mgrt_ogb_load (contract in RuntimeData.h). The files are gzip-compressed
// CSV, read with zlib in large chunks and split into lines in place; every
// parse error names the file and the 1-based line. The edges become an
// undirected CSR graph, the form node classification trains on.
//
//===----------------------------------------------------------------------===//

#include "megagraph/RuntimeData.h"

#include "data/GraphUtil.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace mgrt;

namespace {

/// Reads a gzip (or plain) text file line by line. Lines are handed out
/// NUL-terminated with the '\n' (and a '\r' before it) removed; a last line
/// without '\n' counts, an empty file has no lines.
class GzLines {
public:
  ~GzLines() {
    if (file)
      gzclose(file);
  }

  /// Opens `path`; false with `error` set if it cannot.
  bool open(const std::string &path, std::string &error) {
    name = path;
    struct stat sb;
    if (::stat(path.c_str(), &sb) != 0) {
      error = "cannot open '" + path + "': " + std::strerror(errno);
      return false;
    }
    file = gzopen(path.c_str(), "rb");
    if (!file) {
      error = "cannot open '" + path +
              "': " + (errno ? std::strerror(errno) : "zlib cannot allocate");
      return false;
    }
    gzbuffer(file, 1 << 17);
    return true;
  }

  /// The next line in `line` (valid until the next call); false at the end
  /// of the file or on a read error (then `error` is set).
  bool next(char *&line, std::string &error) {
    while (true) {
      char *nl =
          static_cast<char *>(std::memchr(buf.data() + pos, '\n', end - pos));
      if (nl || (eof && pos < end)) {
        // buf always has room for a terminator at `end`.
        char *stop = nl ? nl : buf.data() + end;
        line = buf.data() + pos;
        pos = nl ? static_cast<size_t>(nl - buf.data()) + 1 : end;
        if (stop > line && stop[-1] == '\r')
          --stop;
        *stop = '\0';
        ++lineNo;
        return true;
      }
      if (eof)
        return false;
      // Keep the partial line, read more.
      std::memmove(buf.data(), buf.data() + pos, end - pos);
      end -= pos;
      pos = 0;
      if (buf.size() < end + kChunk + 1)
        buf.resize(end + kChunk + 1);
      const int got = gzread(file, buf.data() + end, kChunk);
      if (got < 0) {
        int code;
        const char *msg = gzerror(file, &code);
        error = "'" + name + "': corrupt or truncated gzip data (" + msg + ")";
        return false;
      }
      if (got == 0) {
        int code;
        const char *msg = gzerror(file, &code);
        if (code != Z_OK) {
          error =
              "'" + name + "': corrupt or truncated gzip data (" + msg + ")";
          return false;
        }
        eof = true;
      }
      end += static_cast<size_t>(got);
    }
  }

  /// "'path' line N" for messages.
  std::string where() const {
    return "'" + name + "' line " + std::to_string(lineNo);
  }

  int64_t lines() const { return lineNo; }

private:
  static constexpr unsigned kChunk = 1u << 20;
  gzFile file = nullptr;
  std::string name;
  std::vector<char> buf = std::vector<char>(kChunk + 1);
  size_t pos = 0, end = 0;
  bool eof = false;
  int64_t lineNo = 0;
};

/// Parses a non-negative integer filling [s, stop) exactly (stop = the
/// next ',' or the end); advances `s` past the field and its comma.
bool parseIndex(const char *&s, int64_t &v) {
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  const long long x = std::strtoll(s, &end, 10);
  if (errno || (*end != ',' && *end != '\0'))
    return false;
  v = x;
  s = *end == ',' ? end + 1 : end;
  return true;
}

/// Error state of one load: the message and code of the first failure.
struct Failure {
  int code = MGRT_OK;
  std::string message;
  bool set(int c, const std::string &m) {
    code = c, message = m;
    return false;
  }
};

bool exists(const std::string &path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0;
}

/// Reads a file of one node id per line into `ids`.
bool readIds(const std::string &path, int64_t n, std::vector<int64_t> &ids,
             Failure &f) {
  GzLines in;
  std::string error;
  if (!in.open(path, error))
    return f.set(MGRT_ERR_IO, error);
  char *line;
  while (in.next(line, error)) {
    const char *s = line;
    int64_t v;
    if (!parseIndex(s, v) || *s != '\0')
      return f.set(MGRT_ERR_FORMAT, in.where() +
                                        ": expected one node id, got '" +
                                        std::string(line) + "'");
    if (v >= n)
      return f.set(MGRT_ERR_FORMAT,
                   in.where() + ": node id " + std::to_string(v) +
                       " is out of range [0, " + std::to_string(n) + ")");
    ids.push_back(v);
  }
  return error.empty() || f.set(MGRT_ERR_FORMAT, error);
}

/// The whole load; on failure returns false with `f` set.
bool load(const std::string &dir, const char *scheme, mgrt_graph &graph,
          mgrt_tensor &features, mgrt_tensor &labels, mgrt_tensor &split,
          Failure &f) {
  const std::string raw = dir + "/raw/";
  struct stat sb;
  if (::stat(dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode))
    return f.set(MGRT_ERR_IO, "'" + dir + "' is not a directory");
  if (::stat(raw.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode))
    return f.set(MGRT_ERR_IO,
                 "'" + dir +
                     "' has no raw/ directory; expected the OGB raw layout "
                     "(raw/edge.csv.gz, raw/node-feat.csv.gz, "
                     "raw/node-label.csv.gz, split/SCHEME/*.csv.gz)");
  std::string error;
  char *line;

  // 1. Node features: N rows of F floats.
  std::vector<float> feat;
  int64_t n = 0, numFeat = -1;
  {
    GzLines in;
    if (!in.open(raw + "node-feat.csv.gz", error))
      return f.set(MGRT_ERR_IO, error);
    while (in.next(line, error)) {
      const char *s = line;
      int64_t cols = 0;
      while (true) {
        errno = 0;
        char *end = nullptr;
        const float v = std::strtof(s, &end);
        if (end == s || errno == EINVAL || (*end != ',' && *end != '\0'))
          return f.set(MGRT_ERR_FORMAT, in.where() + ": column " +
                                            std::to_string(cols + 1) +
                                            " is not a number");
        // nan, inf and values past the float range would reach the model
        // (or its feature bins) as non-finite numbers.
        if (!std::isfinite(v))
          return f.set(MGRT_ERR_FORMAT, in.where() + ": column " +
                                            std::to_string(cols + 1) +
                                            " is not a finite float ('" +
                                            std::string(s, end - s) + "')");
        feat.push_back(v);
        ++cols;
        if (*end == '\0')
          break;
        s = end + 1;
      }
      if (numFeat < 0)
        numFeat = cols;
      else if (cols != numFeat)
        return f.set(MGRT_ERR_FORMAT, in.where() + ": " + std::to_string(cols) +
                                          " features, the first line has " +
                                          std::to_string(numFeat));
      ++n;
    }
    if (!error.empty())
      return f.set(MGRT_ERR_FORMAT, error);
    if (n == 0)
      return f.set(MGRT_ERR_FORMAT,
                   "'" + raw + "node-feat.csv.gz' is empty (no nodes)");
  }

  // 2. Optional node count.
  if (exists(raw + "num-node-list.csv.gz")) {
    std::vector<int64_t> counts;
    Failure g;
    if (!readIds(raw + "num-node-list.csv.gz", INT64_MAX, counts, g))
      return f.set(g.code, g.message);
    if (counts.size() != 1 || counts[0] != n)
      return f.set(MGRT_ERR_FORMAT,
                   "'" + raw + "num-node-list.csv.gz' does not say " +
                       std::to_string(n) +
                       " nodes (one graph with the rows of node-feat.csv.gz)");
  }

  // 3. Labels: one per node.
  std::vector<int64_t> lab;
  lab.reserve(n);
  {
    GzLines in;
    if (!in.open(raw + "node-label.csv.gz", error))
      return f.set(MGRT_ERR_IO, error);
    while (in.next(line, error)) {
      if (*line == '\0' || !strcasecmp(line, "nan")) {
        lab.push_back(-1);
        continue;
      }
      errno = 0;
      char *end = nullptr;
      const double v = std::strtod(line, &end);
      if (end == line || *end != '\0' || errno || !std::isfinite(v) ||
          v != std::floor(v) || v < 0 || v > 1e15) {
        if (std::strchr(line, ','))
          return f.set(MGRT_ERR_UNSUPPORTED,
                       in.where() +
                           ": several label columns (multi-task "
                           "labels); only single-label node classification "
                           "is supported");
        return f.set(MGRT_ERR_FORMAT, in.where() +
                                          ": expected a class id, got '" +
                                          std::string(line) + "'");
      }
      lab.push_back(static_cast<int64_t>(v));
    }
    if (!error.empty())
      return f.set(MGRT_ERR_FORMAT, error);
    if (static_cast<int64_t>(lab.size()) != n)
      return f.set(MGRT_ERR_FORMAT, "'" + raw + "node-label.csv.gz' has " +
                                        std::to_string(lab.size()) +
                                        " lines, node-feat.csv.gz has " +
                                        std::to_string(n) + " nodes");
  }

  // 4. Edges -> undirected CSR (both directions, no self loops or
  // duplicates, rows sorted).
  std::vector<int64_t> src, dst;
  {
    GzLines in;
    if (!in.open(raw + "edge.csv.gz", error))
      return f.set(MGRT_ERR_IO, error);
    while (in.next(line, error)) {
      const char *s = line;
      int64_t u, v;
      if (!parseIndex(s, u) || !parseIndex(s, v) || *s != '\0' || s[-1] == ',')
        return f.set(MGRT_ERR_FORMAT, in.where() +
                                          ": expected 'src,dst', got '" +
                                          std::string(line) + "'");
      if (u >= n || v >= n)
        return f.set(MGRT_ERR_FORMAT, in.where() + ": node id " +
                                          std::to_string(std::max(u, v)) +
                                          " is out of range [0, " +
                                          std::to_string(n) + ")");
      if (u != v)
        src.push_back(u), dst.push_back(v);
    }
    if (!error.empty())
      return f.set(MGRT_ERR_FORMAT, error);
    // A node-level data set without edges is a truncated or wrong file,
    // not a graph: attention biases and SPD would be meaningless.
    if (in.lines() == 0)
      return f.set(MGRT_ERR_FORMAT,
                   "'" + raw + "edge.csv.gz' is empty (no edges)");
  }
  std::vector<int64_t> start(n + 1, 0);
  for (size_t e = 0; e < src.size(); ++e)
    ++start[src[e] + 1], ++start[dst[e] + 1];
  for (int64_t i = 0; i < n; ++i)
    start[i + 1] += start[i];
  std::vector<int64_t> adj(start[n]), fill(start.begin(), start.end() - 1);
  for (size_t e = 0; e < src.size(); ++e)
    adj[fill[src[e]]++] = dst[e], adj[fill[dst[e]]++] = src[e];
  std::vector<int64_t>().swap(src);
  std::vector<int64_t>().swap(dst);
  int64_t m = 0;
  for (int64_t u = 0; u < n; ++u) {
    auto b = adj.begin() + start[u], e = adj.begin() + start[u + 1];
    std::sort(b, e);
    e = std::unique(b, e);
    const int64_t rowStart = m;
    for (auto it = b; it != e; ++it)
      adj[m++] = *it;
    start[u] = rowStart;
  }
  start[n] = m;

  // 5. Split.
  std::string schemeName = scheme ? scheme : "";
  const std::string splitRoot = dir + "/split/";
  if (schemeName.empty()) {
    std::vector<std::string> found;
    if (DIR *d = ::opendir(splitRoot.c_str())) {
      while (dirent *ent = ::readdir(d)) {
        const std::string name = ent->d_name;
        if (name != "." && name != ".." &&
            ::stat((splitRoot + name).c_str(), &sb) == 0 && S_ISDIR(sb.st_mode))
          found.push_back(name);
      }
      ::closedir(d);
    }
    std::sort(found.begin(), found.end());
    if (found.empty())
      return f.set(MGRT_ERR_IO, "'" + dir +
                                    "' has no split/SCHEME/ directory with "
                                    "train.csv.gz and test.csv.gz");
    if (found.size() > 1) {
      std::string list;
      for (const std::string &s : found)
        list += (list.empty() ? "" : ", ") + s;
      return f.set(MGRT_ERR_ARGUMENT,
                   "'" + dir + "' has several split schemes (" + list +
                       "); choose one (ogb:DIR,split=NAME)");
    }
    schemeName = found[0];
  }
  std::vector<uint8_t> which(n, MGRT_SPLIT_NONE);
  const char *const kFiles[] = {"train", "valid", "test"};
  for (int s = 0; s < 3; ++s) {
    const std::string path =
        splitRoot + schemeName + "/" + kFiles[s] + ".csv.gz";
    if (s == 1 && !exists(path))
      continue; // valid is optional
    std::vector<int64_t> ids;
    if (!readIds(path, n, ids, f))
      return false;
    for (int64_t v : ids) {
      if (which[v] != MGRT_SPLIT_NONE && which[v] != s + 1)
        return f.set(MGRT_ERR_FORMAT, "'" + path + "': node " +
                                          std::to_string(v) +
                                          " is already in the " +
                                          kFiles[which[v] - 1] + " split");
      which[v] = static_cast<uint8_t>(s + 1);
    }
  }

  // 6. Outputs (tracked allocations).
  const int64_t nShape[1] = {n}, fShape[2] = {n, numFeat};
  graph.num_nodes = n;
  graph.num_edges = m;
  graph.row_ptr = static_cast<int64_t *>(mgrt_alloc((n + 1) * sizeof(int64_t)));
  graph.col_idx = static_cast<int64_t *>(
      mgrt_alloc(std::max<int64_t>(m, 1) * sizeof(int64_t)));
  if (!graph.row_ptr || !graph.col_idx ||
      mgrt_tensor_alloc(&features, MGRT_F32, 2, fShape) != MGRT_OK ||
      mgrt_tensor_alloc(&labels, MGRT_I64, 1, nShape) != MGRT_OK ||
      mgrt_tensor_alloc(&split, MGRT_U8, 1, nShape) != MGRT_OK)
    return f.set(MGRT_ERR_NOMEM, "out of memory for the loaded dataset");
  std::memcpy(graph.row_ptr, start.data(), (n + 1) * sizeof(int64_t));
  std::memcpy(graph.col_idx, adj.data(), m * sizeof(int64_t));
  std::memcpy(features.data, feat.data(), feat.size() * sizeof(float));
  std::memcpy(labels.data, lab.data(), n * sizeof(int64_t));
  std::memcpy(split.data, which.data(), n);
  return true;
}

} // namespace

extern "C" int mgrt_ogb_load(const char *dir, const char *split_scheme,
                             mgrt_graph *graph, mgrt_tensor *features,
                             mgrt_tensor *labels, mgrt_tensor *split, char *err,
                             size_t errlen) {
  for (mgrt_tensor *t : {features, labels, split})
    if (t)
      std::memset(t, 0, sizeof *t);
  if (graph)
    std::memset(graph, 0, sizeof *graph);
  if (!dir || !*dir || !graph)
    return dataFail(err, errlen, MGRT_ERR_ARGUMENT,
                    "mgrt_ogb_load: needs a directory and a graph");
  mgrt_graph g{};
  mgrt_tensor x{}, y{}, s{};
  Failure f;
  if (!load(dir, split_scheme, g, x, y, s, f)) {
    mgrt_graph_free(&g);
    for (mgrt_tensor *t : {&x, &y, &s})
      mgrt_tensor_free(t);
    return dataFail(err, errlen, f.code, "%s", f.message.c_str());
  }
  *graph = g;
  mgrt_tensor *const outs[3] = {features, labels, split};
  mgrt_tensor *const loaded[3] = {&x, &y, &s};
  for (int i = 0; i < 3; ++i) {
    if (outs[i])
      *outs[i] = *loaded[i];
    else
      mgrt_tensor_free(loaded[i]);
  }
  return MGRT_OK;
}
