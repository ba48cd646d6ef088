//===- OgbLoaderTest.cpp - mgrt_ogb_load and --data ogb:DIR ---------------===//
//
// A tiny dataset in the OGB raw layout written here with zlib: what the
// loader returns (undirected CSR, features, labels with unlabelled nodes,
// split), one error per kind of bad input, and the training driver on it
// with a fake step that takes eval_mask and returns eval_correct.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "megagraph/RuntimeData.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace mgrt_test;
using ::testing::HasSubstr;

namespace {

void writeGz(const std::string &path, const std::string &text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  if (!text.empty()) {
    ASSERT_EQ(gzwrite(f, text.data(), (unsigned)text.size()), (int)text.size());
  }
  gzclose(f);
}

/// 6 nodes, 2 features; node 4 unlabelled ("nan"), node 5 "3.0"; edges
/// 0-1 (twice, once reversed), 1-2, 2-2 (self loop), 3-4, 5-0 in CRLF.
struct Dataset {
  std::string dir;
  explicit Dataset(const std::string &root) : dir(root + "/ds") {
    ::mkdir(dir.c_str(), 0777);
    ::mkdir((dir + "/raw").c_str(), 0777);
    ::mkdir((dir + "/split").c_str(), 0777);
    ::mkdir((dir + "/split/time").c_str(), 0777);
    writeGz(dir + "/raw/edge.csv.gz", "0,1\n1,0\n1,2\n2,2\n3,4\r\n5,0");
    writeGz(dir + "/raw/node-feat.csv.gz",
            "0.5,1\n-1,2e-1\n3,4\n5,6\n7,8\n9,10\n");
    writeGz(dir + "/raw/node-label.csv.gz", "1\n0\n2\n1\nnan\n3.0\n");
    writeGz(dir + "/raw/num-node-list.csv.gz", "6\n");
    writeGz(dir + "/split/time/train.csv.gz", "0\n1\n2\n4\n");
    writeGz(dir + "/split/time/valid.csv.gz", "3\n");
    writeGz(dir + "/split/time/test.csv.gz", "5\n");
  }
};

struct Loaded {
  mgrt_graph g{};
  mgrt_tensor x{}, y{}, split{};
  int rc;
  char err[512] = "";
  Loaded(const std::string &dir, const char *scheme = nullptr) {
    rc =
        mgrt_ogb_load(dir.c_str(), scheme, &g, &x, &y, &split, err, sizeof err);
  }
  ~Loaded() {
    mgrt_graph_free(&g);
    for (mgrt_tensor *t : {&x, &y, &split})
      mgrt_tensor_free(t);
  }
};

class OgbLoader : public ::testing::Test {
protected:
  void SetUp() override { root = makeTempDir("ogb-loader"); }
  std::string root;
};

TEST_F(OgbLoader, LoadsTheRawLayout) {
  Dataset ds(root);
  const size_t base = mgrt_current_bytes();
  {
    Loaded l(ds.dir);
    ASSERT_EQ(l.rc, MGRT_OK) << l.err;
    EXPECT_EQ(l.g.num_nodes, 6);
    char err[256];
    ASSERT_EQ(mgrt_graph_check(&l.g, err, sizeof err), MGRT_OK) << err;
    // Undirected, no self loop, no duplicate: 0-1, 1-2, 3-4, 0-5.
    const std::vector<int64_t> rowPtr(l.g.row_ptr, l.g.row_ptr + 7),
        colIdx(l.g.col_idx, l.g.col_idx + l.g.num_edges);
    EXPECT_EQ(rowPtr, (std::vector<int64_t>{0, 2, 4, 5, 6, 7, 8}));
    EXPECT_EQ(colIdx, (std::vector<int64_t>{1, 5, 0, 2, 1, 4, 3, 0}));
    ASSERT_EQ(l.x.dtype, MGRT_F32);
    ASSERT_EQ(l.x.rank, 2);
    EXPECT_EQ(l.x.shape[0], 6);
    EXPECT_EQ(l.x.shape[1], 2);
    const float *x = static_cast<const float *>(l.x.data);
    EXPECT_FLOAT_EQ(x[0], 0.5f);
    EXPECT_FLOAT_EQ(x[3], 0.2f);
    EXPECT_FLOAT_EQ(x[11], 10.f);
    const int64_t *y = static_cast<const int64_t *>(l.y.data);
    EXPECT_EQ(std::vector<int64_t>(y, y + 6),
              (std::vector<int64_t>{1, 0, 2, 1, -1, 3}));
    const uint8_t *sp = static_cast<const uint8_t *>(l.split.data);
    EXPECT_EQ(std::vector<uint8_t>(sp, sp + 6),
              (std::vector<uint8_t>{1, 1, 1, 2, 1, 3}));
  }
  EXPECT_EQ(mgrt_current_bytes(), base); // everything tracked and freed
  Loaded named(ds.dir, "time");
  EXPECT_EQ(named.rc, MGRT_OK) << named.err;
}

TEST_F(OgbLoader, Errors) {
  Dataset ds(root);
  auto expectError = [&](int code, const std::string &what,
                         const char *scheme = nullptr) {
    Loaded l(ds.dir, scheme);
    EXPECT_EQ(l.rc, code) << l.err;
    EXPECT_THAT(std::string(l.err), HasSubstr(what));
    EXPECT_EQ(l.g.num_nodes, 0);
    EXPECT_EQ(l.x.data, nullptr);
  };
  const std::string raw = ds.dir + "/raw/";

  std::rename((raw + "node-label.csv.gz").c_str(), (raw + "x").c_str());
  expectError(MGRT_ERR_IO, "cannot open '" + raw + "node-label.csv.gz'");
  std::rename((raw + "x").c_str(), (raw + "node-label.csv.gz").c_str());

  writeGz(raw + "edge.csv.gz", "0,1\n1;2\n");
  expectError(MGRT_ERR_FORMAT,
              "'" + raw + "edge.csv.gz' line 2: expected 'src,dst', got '1;2'");
  writeGz(raw + "edge.csv.gz", "0,1\n1,6\n");
  expectError(MGRT_ERR_FORMAT, "'" + raw +
                                   "edge.csv.gz' line 2: node id 6 is out of "
                                   "range [0, 6)");
  writeGz(raw + "edge.csv.gz", "0,1,\n");
  expectError(MGRT_ERR_FORMAT, "line 1: expected 'src,dst'");
  writeGz(raw + "edge.csv.gz", "");
  expectError(MGRT_ERR_FORMAT, "'" + raw + "edge.csv.gz' is empty (no edges)");
  writeGz(raw + "edge.csv.gz", "0,1\n");

  writeGz(raw + "node-feat.csv.gz", "1,2\n3\n");
  expectError(MGRT_ERR_FORMAT, "node-feat.csv.gz' line 2: 1 features, the "
                               "first line has 2");
  writeGz(raw + "node-feat.csv.gz", "1,2\n3,x\n");
  expectError(MGRT_ERR_FORMAT,
              "node-feat.csv.gz' line 2: column 2 is not a number");
  writeGz(raw + "node-feat.csv.gz", "1,2\n3,nan\n");
  expectError(MGRT_ERR_FORMAT, "node-feat.csv.gz' line 2: column 2 is not a "
                               "finite float ('nan')");
  writeGz(raw + "node-feat.csv.gz", "1,2\n3,4\n1e39,6\n");
  expectError(MGRT_ERR_FORMAT, "node-feat.csv.gz' line 3: column 1 is not a "
                               "finite float ('1e39')");
  writeGz(raw + "node-feat.csv.gz", "1,2\n3,4\n5,6\n7,8\n9,10\n");
  expectError(MGRT_ERR_FORMAT, "num-node-list.csv.gz' does not say 5 nodes");
  std::remove((raw + "num-node-list.csv.gz").c_str());
  expectError(MGRT_ERR_FORMAT, "node-label.csv.gz' has 6 lines, "
                               "node-feat.csv.gz has 5 nodes");
  writeGz(raw + "node-feat.csv.gz", "1,2\n3,4\n5,6\n7,8\n9,10\n11,12\n");

  writeGz(raw + "node-label.csv.gz", "1\n0\n2\n1\n1.5\n3\n");
  expectError(MGRT_ERR_FORMAT,
              "node-label.csv.gz' line 5: expected a class id, got '1.5'");
  writeGz(raw + "node-label.csv.gz", "1,0\n0,1\n2,2\n1,1\n1,1\n3,3\n");
  expectError(MGRT_ERR_UNSUPPORTED, "several label columns");
  writeGz(raw + "node-label.csv.gz", "1\n0\n2\n1\nnan\n3\n");

  writeGz(ds.dir + "/split/time/test.csv.gz", "5\n0\n");
  expectError(MGRT_ERR_FORMAT,
              "test.csv.gz': node 0 is already in the train split");
  writeGz(ds.dir + "/split/time/test.csv.gz", "5\n");
  expectError(MGRT_ERR_IO,
              "cannot open '" + ds.dir + "/split/nope/train.csv.gz'", "nope");
  ::mkdir((ds.dir + "/split/random").c_str(), 0777);
  expectError(MGRT_ERR_ARGUMENT, "several split schemes (random, time); "
                                 "choose one (ogb:DIR,split=NAME)");

  // Truncated gzip: the data inflates, the trailer is missing.
  {
    std::string text;
    for (int i = 0; i < 2000; ++i)
      text += "0,1\n";
    writeGz(raw + "edge.csv.gz", text);
    std::ifstream in(raw + "edge.csv.gz", std::ios::binary);
    std::string gz((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(raw + "edge.csv.gz", std::ios::binary)
        << gz.substr(0, gz.size() - 6);
  }
  expectError(MGRT_ERR_FORMAT, "corrupt or truncated gzip data", "time");

  Loaded none(root + "/missing");
  EXPECT_EQ(none.rc, MGRT_ERR_IO);
  EXPECT_THAT(std::string(none.err), HasSubstr("is not a directory"));
  Loaded noRaw(root);
  EXPECT_EQ(noRaw.rc, MGRT_ERR_IO);
  EXPECT_THAT(std::string(noRaw.err), HasSubstr("has no raw/ directory"));
}

// The driver on the dataset: label_mask = labelled train nodes, eval_mask =
// labelled test nodes; test_accuracy = eval_correct / sum(eval_mask).
constexpr int64_t B = 1, S = 3;
struct Seen {
  std::vector<uint8_t> mask;
  std::vector<float> eval, x;
  std::vector<int64_t> labels;
};
std::vector<Seen> seen;

template <typename T> std::vector<T> copyOf(void *descriptor, int64_t n) {
  auto *words = static_cast<int64_t *>(descriptor);
  const T *data = reinterpret_cast<const T *>(words[1]) + words[2];
  return std::vector<T>(data, data + n);
}
void setScalar(void *descriptor, float v) {
  auto *words = static_cast<int64_t *>(descriptor);
  reinterpret_cast<float *>(words[1])[words[2]] = v;
}

/// Inputs x, labels, label_mask, eval_mask; outputs loss, eval_correct =
/// the number of eval nodes with an odd label.
void evalStep(void **d) {
  Seen s{copyOf<uint8_t>(d[2], B * S), copyOf<float>(d[3], B * S),
         copyOf<float>(d[0], B * S * 2), copyOf<int64_t>(d[1], B * S)};
  float odd = 0;
  for (int64_t i = 0; i < B * S; ++i)
    odd += s.eval[i] * (s.labels[i] % 2);
  setScalar(d[4], 1.f);
  setScalar(d[5], odd);
  seen.push_back(s);
}

const mgrt_tensor_info kIn[] = {{"x", MGRT_F32, 3, {B, S, 2}},
                                {"labels", MGRT_I64, 2, {B, S}},
                                {"label_mask", MGRT_BOOL, 2, {B, S}},
                                {"eval_mask", MGRT_F32, 2, {B, S}}};
const mgrt_tensor_info kOut[] = {{"loss", MGRT_F32, 0, {}},
                                 {"eval_correct", MGRT_F32, 0, {}}};
const mgrt_model_info kModel = {"ogb_step", 4, kIn, 2, kOut, evalStep};

TEST_F(OgbLoader, TrainDriverUsesTheSplit) {
  Dataset ds(root);
  const std::string log = root + "/log.jsonl";
  std::vector<std::string> args = {
      "ogb_step", "--mode", "train",      "--data", "ogb:" + ds.dir,
      "--steps",  "4",      "--log-json", log,      "--quiet"};
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  seen.clear();
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = mgrt_main((int)argv.size(), argv.data(), &kModel);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(code, 0) << err;
  ASSERT_EQ(seen.size(), 4u);
  // Features identify the nodes: x[i] = (2i - 1, 2i) except node 0, 1.
  auto nodeOf = [](float f0) {
    const float firsts[6] = {0.5f, -1, 3, 5, 7, 9};
    for (int i = 0; i < 6; ++i)
      if (firsts[i] == f0)
        return i;
    return -1;
  };
  const uint8_t train[6] = {1, 1, 1, 0, 0, 0}; // node 4 has no label
  const float test[6] = {0, 0, 0, 0, 0, 1};
  const int64_t labels[6] = {1, 0, 2, 1, 0, 3}; // unlabelled -> 0
  std::ifstream in(log);
  std::string line;
  for (const Seen &s : seen) {
    float evalCount = 0, odd = 0;
    for (int64_t i = 0; i < S; ++i) {
      const int n = nodeOf(s.x[i * 2]);
      ASSERT_GE(n, 0);
      EXPECT_EQ(s.mask[i], train[n]) << "node " << n;
      EXPECT_EQ(s.eval[i], test[n]) << "node " << n;
      EXPECT_EQ(s.labels[i], labels[n]) << "node " << n;
      evalCount += test[n];
      odd += test[n] * (labels[n] % 2);
    }
    ASSERT_TRUE(std::getline(in, line));
    if (evalCount > 0) {
      char want[64];
      std::snprintf(want, sizeof want, "\"test_accuracy\":%.9g",
                    odd / evalCount);
      EXPECT_THAT(line, HasSubstr(want));
    } else {
      EXPECT_THAT(line, HasSubstr("\"test_accuracy\":null"));
    }
  }
  // Node 5 (label 3, odd) is the only test node: test accuracy 1.
  EXPECT_THAT(out, HasSubstr("test acc 1.0000 (last 2 step(s))"));
}

} // namespace
