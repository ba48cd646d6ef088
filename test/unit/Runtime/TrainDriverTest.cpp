//===- TrainDriverTest.cpp - mgrt_main --mode train on a fake step --------===//
//
// The "compiled training step" is C++ here: it copies every input it gets
// and returns loss = mean of feature 0 over the masked nodes and correct =
// number of masked nodes with an even label. The test recognizes each node
// by its (random) feature row and checks the other inputs against the data
// layer's own answers for that sequence.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "megagraph/RuntimeData.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace mgrt_test;
using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

namespace {

constexpr int64_t B = 2, S = 8, F = 4;
const char *const kSpec = "synthetic:sbm,nodes=68,classes=4,features=4,seed=3";

struct Call {
  std::vector<float> x, adj;
  std::vector<int64_t> inDeg, deg, spd, labels;
  std::vector<uint8_t> mask;
  std::vector<float> eval; // eval_mask, when the model takes it
  float loss, correct, evalCorrect = 0;
};
std::vector<Call> calls;

template <typename T> std::vector<T> copyOf(void *descriptor, int64_t n) {
  // allocated, aligned, offset, sizes..., strides... (row-major here).
  auto *words = static_cast<int64_t *>(descriptor);
  const T *data = reinterpret_cast<const T *>(words[1]) + words[2];
  return std::vector<T>(data, data + n);
}

void setScalar(void *descriptor, float v) {
  auto *words = static_cast<int64_t *>(descriptor);
  reinterpret_cast<float *>(words[1])[words[2]] = v;
}

/// Inputs x, in_degree, degree, spd, adj_norm, labels, label_mask; outputs
/// loss, correct.
void stepEntry(void **d) {
  Call c;
  c.x = copyOf<float>(d[0], B * S * F);
  c.inDeg = copyOf<int64_t>(d[1], B * S);
  c.deg = copyOf<int64_t>(d[2], B * S);
  c.spd = copyOf<int64_t>(d[3], B * S * S);
  c.adj = copyOf<float>(d[4], B * S * S);
  c.labels = copyOf<int64_t>(d[5], B * S);
  c.mask = copyOf<uint8_t>(d[6], B * S);
  double sum = 0;
  int count = 0, correct = 0;
  for (int64_t i = 0; i < B * S; ++i)
    if (c.mask[i]) {
      sum += c.x[i * F];
      ++count;
      correct += c.labels[i] % 2 == 0;
    }
  c.loss = count ? static_cast<float>(sum / count) : 0.f;
  c.correct = static_cast<float>(correct);
  setScalar(d[7], c.loss);
  setScalar(d[8], c.correct);
  calls.push_back(std::move(c));
}

const mgrt_tensor_info kInputs[] = {
    {"x", MGRT_F32, 3, {B, S, F}},        {"in_degree", MGRT_I64, 2, {B, S}},
    {"degree", MGRT_I64, 2, {B, S}},      {"spd", MGRT_I64, 3, {B, S, S}},
    {"adj_norm", MGRT_F32, 3, {B, S, S}}, {"labels", MGRT_I64, 2, {B, S}},
    {"label_mask", MGRT_BOOL, 2, {B, S}}};
const mgrt_tensor_info kOutputs[] = {{"loss", MGRT_F32, 0, {}},
                                     {"correct", MGRT_F32, 0, {}}};
const mgrt_model_info kModel = {"fake_step", 7,        kInputs,
                                2,           kOutputs, stepEntry};

/// The same step with eval_mask (input 7) and eval_correct (output 10) =
/// the number of eval nodes with an even label.
void evalStepEntry(void **d) {
  void *shifted[9] = {d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[8], d[9]};
  stepEntry(shifted);
  Call &c = calls.back();
  c.eval = copyOf<float>(d[7], B * S);
  for (int64_t i = 0; i < B * S; ++i)
    c.evalCorrect += c.eval[i] * (c.labels[i] % 2 == 0);
  setScalar(d[10], c.evalCorrect);
}

const mgrt_tensor_info kEvalInputs[] = {
    {"x", MGRT_F32, 3, {B, S, F}},        {"in_degree", MGRT_I64, 2, {B, S}},
    {"degree", MGRT_I64, 2, {B, S}},      {"spd", MGRT_I64, 3, {B, S, S}},
    {"adj_norm", MGRT_F32, 3, {B, S, S}}, {"labels", MGRT_I64, 2, {B, S}},
    {"label_mask", MGRT_BOOL, 2, {B, S}}, {"eval_mask", MGRT_F32, 2, {B, S}}};
const mgrt_tensor_info kEvalOutputs[] = {{"loss", MGRT_F32, 0, {}},
                                         {"correct", MGRT_F32, 0, {}},
                                         {"eval_correct", MGRT_F32, 0, {}}};
const mgrt_model_info kEvalModel = {
    "eval_step", 8, kEvalInputs, 3, kEvalOutputs, evalStepEntry};

struct Result {
  int code;
  std::string out, err;
};

Result runMain(std::vector<std::string> args,
               const mgrt_model_info *model = &kModel) {
  args.insert(args.begin(), "fake_step");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  CaptureStdout();
  CaptureStderr();
  int code = mgrt_main((int)args.size(), argv.data(), model);
  return Result{code, GetCapturedStdout(), GetCapturedStderr()};
}

/// A flat JSON object of numbers, null and arrays of numbers; false on any
/// other syntax. Arrays come back in `arrays`, scalars in `numbers` (null
/// as NaN).
bool parseJsonLine(const std::string &line,
                   std::map<std::string, double> &numbers,
                   std::map<std::string, std::vector<double>> &arrays) {
  size_t i = 0;
  auto skip = [&] {
    while (i < line.size() && line[i] == ' ')
      ++i;
  };
  auto number = [&](double &v) {
    skip();
    if (line.compare(i, 4, "null") == 0) {
      v = NAN;
      i += 4;
      return true;
    }
    const char *start = line.c_str() + i;
    char *end = nullptr;
    v = std::strtod(start, &end);
    if (end == start)
      return false;
    i += end - start;
    return true;
  };
  skip();
  if (i >= line.size() || line[i++] != '{')
    return false;
  while (true) {
    skip();
    if (i >= line.size() || line[i++] != '"')
      return false;
    size_t close = line.find('"', i);
    if (close == std::string::npos)
      return false;
    std::string key = line.substr(i, close - i);
    i = close + 1;
    skip();
    if (i >= line.size() || line[i++] != ':')
      return false;
    skip();
    if (i < line.size() && line[i] == '[') {
      ++i;
      std::vector<double> values;
      while (true) {
        double v;
        if (!number(v))
          return false;
        values.push_back(v);
        skip();
        if (i < line.size() && line[i] == ',') {
          ++i;
          continue;
        }
        if (i < line.size() && line[i] == ']') {
          ++i;
          break;
        }
        return false;
      }
      arrays[key] = values;
    } else {
      double v;
      if (!number(v))
        return false;
      numbers[key] = v;
    }
    skip();
    if (i < line.size() && line[i] == ',') {
      ++i;
      continue;
    }
    if (i < line.size() && line[i] == '}') {
      ++i;
      skip();
      return i == line.size();
    }
    return false;
  }
}

/// The data the driver should have used.
struct Data {
  mgrt_graph g{};
  mgrt_tensor x{}, labels{}, inDeg{}, outDeg{};
  std::vector<int64_t> order;
  std::map<std::vector<float>, int64_t> nodeOf; // feature row -> node
  explicit Data(uint64_t seed = 1, bool greedy = false) {
    char err[256];
    EXPECT_EQ(mgrt_sbm_generate(kSpec, &g, &x, &labels, err, sizeof err), 0)
        << err;
    EXPECT_EQ(mgrt_graph_degrees(&g, &inDeg, &outDeg, err, sizeof err), 0);
    order.resize(g.num_nodes);
    EXPECT_EQ(
        greedy
            ? mgrt_partition_sequences(&g, S, order.data(), err, sizeof err)
            : mgrt_partition_metis(&g, S, seed, order.data(), err, sizeof err),
        0)
        << err;
    const float *f = static_cast<const float *>(x.data);
    for (int64_t n = 0; n < g.num_nodes; ++n)
      nodeOf[std::vector<float>(f + n * F, f + (n + 1) * F)] = n;
    EXPECT_EQ((int64_t)nodeOf.size(), g.num_nodes) << "feature rows collide";
  }
  ~Data() {
    mgrt_graph_free(&g);
    for (mgrt_tensor *t : {&x, &labels, &inDeg, &outDeg})
      mgrt_tensor_free(t);
  }
  bool edge(int64_t u, int64_t v) const {
    for (int64_t e = g.row_ptr[u]; e < g.row_ptr[u + 1]; ++e)
      if (g.col_idx[e] == v)
        return true;
    return false;
  }
  /// Sequence index of the node list, or -1.
  int64_t sequenceOf(const std::vector<int64_t> &nodes) const {
    for (int64_t q = 0; q < g.num_nodes / S; ++q)
      if (std::equal(nodes.begin(), nodes.end(), order.begin() + q * S))
        return q;
    return -1;
  }
};

class TrainDriver : public ::testing::Test {
protected:
  void SetUp() override {
    dir = makeTempDir("train-driver");
    calls.clear();
  }
  std::string dir;
};

/// Node ids of each batch row of `c`.
std::vector<std::vector<int64_t>> nodesOf(const Data &data, const Call &c) {
  std::vector<std::vector<int64_t>> rows(B);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      std::vector<float> key(c.x.begin() + (b * S + s) * F,
                             c.x.begin() + (b * S + s + 1) * F);
      auto it = data.nodeOf.find(key);
      rows[b].push_back(it == data.nodeOf.end() ? -1 : it->second);
    }
  return rows;
}

TEST_F(TrainDriver, FillsInputsAndLogs) {
  const std::string log = dir + "/log.jsonl";
  const size_t base = mgrt_current_bytes();
  Result r = runMain({"--mode", "train", "--data", kSpec, "--steps", "6",
                      "--max-distance=3", "--log-json", log, "--quiet",
                      "--seed", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("fake_step: train ok, 6 step(s), final loss"));
  EXPECT_EQ(r.out.find("step 1/6"), std::string::npos); // --quiet
  EXPECT_EQ(mgrt_current_bytes(), base);
  ASSERT_EQ(calls.size(), 6u);

  Data data(5);
  const int64_t numSeq = data.g.num_nodes / S; // 8 (4 nodes unused)
  ASSERT_EQ(numSeq, 8);
  std::map<int64_t, uint8_t> maskOf;
  std::vector<std::set<int64_t>> epochs(2);
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call &c = calls[k];
    auto rows = nodesOf(data, c);
    for (int64_t b = 0; b < B; ++b) {
      const std::vector<int64_t> &nodes = rows[b];
      const int64_t q = data.sequenceOf(nodes);
      ASSERT_GE(q, 0) << "call " << k << " row " << b
                      << " is not a sequence of the partition";
      EXPECT_TRUE(epochs[k / (numSeq / B)].insert(q).second)
          << "sequence " << q << " twice in an epoch";
      // SPD of the sequence with max_distance 3.
      std::vector<int64_t> spd(S * S);
      char err[256];
      ASSERT_EQ(mgrt_spd_block(&data.g, nodes.data(), S, 0, S, 3, spd.data(),
                               err, sizeof err),
                0);
      for (int64_t j = 0; j < S * S; ++j)
        ASSERT_EQ(c.spd[b * S * S + j], spd[j]) << "spd, call " << k;
      // adj_norm from the edges.
      std::vector<double> a(S * S, 0), deg(S, 0);
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j)
          a[i * S + j] = i == j || data.edge(nodes[i], nodes[j]) ||
                         data.edge(nodes[j], nodes[i]);
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j)
          deg[i] += a[i * S + j];
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j)
          ASSERT_NEAR(c.adj[b * S * S + i * S + j],
                      a[i * S + j] / std::sqrt(deg[i] * deg[j]), 1e-6);
      for (int64_t s = 0; s < S; ++s) {
        const int64_t n = nodes[s], i = b * S + s;
        EXPECT_EQ(c.inDeg[i], static_cast<int64_t *>(data.inDeg.data)[n]);
        EXPECT_EQ(c.deg[i], static_cast<int64_t *>(data.outDeg.data)[n]);
        EXPECT_EQ(c.labels[i], static_cast<int64_t *>(data.labels.data)[n]);
        ASSERT_LE(c.mask[i], 1);
        auto [it, fresh] = maskOf.emplace(n, c.mask[i]);
        EXPECT_EQ(it->second, c.mask[i]) << "mask of node " << n << " changed";
      }
    }
  }
  EXPECT_EQ(epochs[0].size(), 8u); // the first epoch visits every sequence
  // The first epoch covers the 64 used nodes; round(0.8 * 68) = 54 of the
  // 68 are training nodes, so 50..54 of them are among the used ones.
  int masked = 0;
  for (auto [n, m] : maskOf)
    masked += m;
  EXPECT_EQ(maskOf.size(), 64u);
  EXPECT_GE(masked, 50);
  EXPECT_LE(masked, 54);

  // The log: one object per step with the documented keys and types.
  std::ifstream in(log);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    std::map<std::string, double> num;
    std::map<std::string, std::vector<double>> arr;
    ASSERT_TRUE(parseJsonLine(line, num, arr)) << line;
    const Call &c = calls[lines];
    ++lines;
    EXPECT_EQ(num.at("step"), lines);
    EXPECT_FLOAT_EQ(num.at("loss"), c.loss);
    int counted = 0;
    for (uint8_t m : c.mask)
      counted += m;
    EXPECT_NEAR(num.at("accuracy"), c.correct / counted, 1e-7);
    EXPECT_GE(num.at("step_time_s"), 0);
    EXPECT_GT(num.at("tokens_per_s"), 0);
    EXPECT_EQ(num.at("epoch"), (lines - 1) / 4);
    EXPECT_TRUE(std::isnan(num.at("test_accuracy"))); // no eval_correct
    ASSERT_EQ(arr.at("peak_bytes").size(), 1u);
    EXPECT_GT(arr.at("peak_bytes")[0], 0);
  }
  EXPECT_EQ(lines, 6);

  // Same seed, same batches; appending to the log.
  std::vector<Call> first = calls;
  calls.clear();
  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "2",
               "--max-distance=3", "--log-json", log, "--quiet", "--seed", "5",
               "--batch", "2", "--seq-len", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].x, first[1].x);
  EXPECT_EQ(calls[1].mask, first[1].mask);
  std::ifstream again(log);
  lines = 0;
  while (std::getline(again, line))
    ++lines;
  EXPECT_EQ(lines, 8);
}

TEST_F(TrainDriver, PrintsStepLines) {
  Result r = runMain({"--mode=train", "--data=" + std::string(kSpec),
                      "--steps=2", "--train-fraction", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("step 1/2  loss "));
  EXPECT_THAT(r.out, HasSubstr("step 2/2  loss "));
  EXPECT_THAT(r.out, HasSubstr("  acc "));
  EXPECT_THAT(r.out, HasSubstr(" MiB\n"));
  EXPECT_THAT(r.err, HasSubstr("data: " + std::string(kSpec) + ": 68 nodes"));
  EXPECT_THAT(r.err, HasSubstr("8 sequences (4 nodes unused)"));
  ASSERT_EQ(calls.size(), 2u);
  for (uint8_t m : calls[0].mask)
    EXPECT_EQ(m, 1); // --train-fraction 1
}

TEST_F(TrainDriver, EvalMaskTestAccuracyAndDump) {
  const std::string log = dir + "/log.jsonl", dump = dir + "/dump/inputs";
  Result r = runMain({"--mode", "train", "--data", kSpec, "--steps", "5",
                      "--log-json", log, "--dump-inputs", dump},
                     &kEvalModel);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_THAT(r.out, HasSubstr("  test "));
  // Summary: test accuracy over the last 4 steps (one epoch).
  double ec = 0, en = 0;
  for (size_t k = 1; k < 5; ++k)
    for (size_t i = 0; i < calls[k].eval.size(); ++i)
      en += calls[k].eval[i],
          ec += calls[k].eval[i] * (calls[k].labels[i] % 2 == 0);
  char want[80];
  std::snprintf(want, sizeof want, "test acc %.4f (last 4 step(s))", ec / en);
  EXPECT_THAT(r.out, HasSubstr(want));
  std::ifstream in(log);
  std::string line;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call &c = calls[k];
    float count = 0;
    for (int64_t i = 0; i < B * S; ++i) {
      // SBM: every node is labelled; eval = the nodes outside the train
      // split.
      EXPECT_EQ(c.eval[i], 1.f - c.mask[i]) << "call " << k << " node " << i;
      count += c.eval[i];
    }
    ASSERT_TRUE(std::getline(in, line));
    std::map<std::string, double> num;
    std::map<std::string, std::vector<double>> arr;
    ASSERT_TRUE(parseJsonLine(line, num, arr)) << line;
    if (count > 0)
      EXPECT_NEAR(num.at("test_accuracy"), c.evalCorrect / count, 1e-7);
    else
      EXPECT_TRUE(std::isnan(num.at("test_accuracy")));
    // --dump-inputs wrote exactly what the step got.
    const std::string stepDir = dump + "/step" + std::to_string(k + 1);
    for (const char *name : {"x", "label_mask", "eval_mask", "spd"}) {
      mgrt_tensor t{};
      char err[256];
      ASSERT_EQ(mgrt_npy_read((stepDir + "/" + name + ".npy").c_str(), &t, err,
                              sizeof err),
                0)
          << err;
      const std::string n = name;
      if (n == "x")
        EXPECT_EQ(std::vector<float>(static_cast<float *>(t.data),
                                     static_cast<float *>(t.data) + B * S * F),
                  c.x);
      else if (n == "label_mask")
        EXPECT_EQ(std::vector<uint8_t>(static_cast<uint8_t *>(t.data),
                                       static_cast<uint8_t *>(t.data) + B * S),
                  c.mask);
      else if (n == "eval_mask")
        EXPECT_EQ(std::vector<float>(static_cast<float *>(t.data),
                                     static_cast<float *>(t.data) + B * S),
                  c.eval);
      else
        EXPECT_EQ(
            std::vector<int64_t>(static_cast<int64_t *>(t.data),
                                 static_cast<int64_t *>(t.data) + B * S * S),
            c.spd);
      mgrt_tensor_free(&t);
    }
  }
}

TEST_F(TrainDriver, GreedyPartition) {
  Result r = runMain({"--mode", "train", "--data", kSpec, "--steps", "4",
                      "--partition", "greedy"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("partition: greedy, sequences of 8 nodes cut "));
  Data greedy(1, true);
  ASSERT_EQ(calls.size(), 4u);
  for (const Call &c : calls)
    for (const auto &nodes : nodesOf(greedy, c))
      EXPECT_GE(greedy.sequenceOf(nodes), 0);
  calls.clear();
  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "1",
               "--partition", "spectral"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--partition 'spectral' is not a partitioner "
                               "(expected metis or greedy)"));
}

void noEntry(void **) { calls.emplace_back(); }

TEST_F(TrainDriver, Errors) {
  // F mismatch names both.
  Result r = runMain({"--mode", "train", "--data",
                      "synthetic:sbm,nodes=68,features=5", "--steps", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("model input 'x' has 4 features per node but "
                               "--data has features=5"));

  r = runMain(
      {"--mode", "train", "--data", "synthetic:sbm,nodes=abc", "--steps", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--data 'synthetic:sbm,nodes=abc': "));

  r = runMain({"--mode", "train", "--data", dir, "--steps", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("has no raw/ directory; expected the OGB raw "
                               "layout"));

  r = runMain(
      {"--mode", "train", "--data", kSpec, "--steps", "1", "--batch", "3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--batch 3 does not match the model, compiled "
                               "for B = 2 (input 'x')"));

  r = runMain({"--mode", "train", "--data", "synthetic:sbm,nodes=12,features=4",
               "--steps", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("1 sequence(s) of S = 8 nodes; a batch needs "
                               "B = 2"));

  r = runMain({"--mode", "train", "--data", kSpec});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--steps K is required"));

  r = runMain({"--mode", "train", "--steps", "1", "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--output-dir is not an option of --mode "
                               "train"));

  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "1", "--log-json",
               dir + "/no/such/dir/log"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot open for appending"));

  // Unknown input name: listed with the supported ones.
  const mgrt_tensor_info odd[] = {{"x", MGRT_F32, 3, {B, S, F}},
                                  {"pos_enc", MGRT_F32, 3, {B, S, 3}}};
  const mgrt_model_info oddModel = {"odd", 2, odd, 2, kOutputs, noEntry};
  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "1"}, &oddModel);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("model input 'pos_enc' has no training data "
                               "convention (supported: x, features, "
                               "node_feat, in_degree, out_degree, degree, "
                               "spd, adj_norm, edge_index, labels, "
                               "label_mask, "
                               "eval_mask)"));

  // Inconsistent B, S between inputs.
  const mgrt_tensor_info skew[] = {{"x", MGRT_F32, 3, {B, S, F}},
                                   {"spd", MGRT_I64, 3, {B, S, S + 1}}};
  const mgrt_model_info skewModel = {"skew", 2, skew, 2, kOutputs, noEntry};
  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "1"}, &skewModel);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("model input 'spd' is i64 [2, 8, 9], "
                               "expected i64 [B, S, S] with B = 2, S = 8"));

  // No `loss` output: no training step, exit 2.
  const mgrt_model_info inferOnly = {"infer_only", 1,      odd, 1,
                                     &kOutputs[1], noEntry};
  r = runMain({"--mode", "train", "--data", kSpec, "--steps", "1"}, &inferOnly);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("model 'infer_only' has no training step (no "
                               "output 'loss')"));
  EXPECT_TRUE(calls.empty());
}

} // namespace
