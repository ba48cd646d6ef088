//===- DriverPartsTest.cpp - The training driver's parts, one by one ------===//
//
// Each part of `--mode train` on its own, without a model or MPI: the JSON
// writer, the metrics log's lines, the npy batch source (with its label
// range checks), the topology builder (binning, adjacency normalization,
// label range against the data set), the graph batch source, and the
// state table's users: the options of checkpoints, export and evaluation,
// the state snapshot, the non-finite scan and the ONNX initializer rewrite. The
// pipeline schedules are checked in PipelineScheduleTest.cpp; the whole loop
// with a fake step in TrainDriverTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "driver/Checkpoint.h"
#include "driver/Export.h"
#include "driver/GraphBatches.h"
#include "driver/MetricsLog.h"
#include "driver/NpyBatches.h"
#include "driver/Options.h"
#include "driver/Topology.h"
#include "support/Json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace mgrt;
using ::testing::HasSubstr;

namespace {

TEST(JsonWriter, ObjectsArraysAndCommas) {
  JsonWriter j;
  j.objectBegin()
      .attribute("a", int64_t{-3})
      .attributeArray("b", std::vector<size_t>{1, 2})
      .key("c")
      .arrayBegin()
      .objectBegin()
      .objectEnd()
      .arrayBegin()
      .arrayEnd()
      .null()
      .value(true)
      .arrayEnd()
      .attribute("d", std::string("x"))
      .objectEnd();
  EXPECT_EQ(j.str(), R"({"a":-3,"b":[1,2],"c":[{},[],null,true],"d":"x"})");
}

TEST(JsonWriter, EscapesStrings) {
  EXPECT_EQ(JsonWriter::quote("plain"), "\"plain\"");
  EXPECT_EQ(JsonWriter::quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonWriter::quote("tab\tnl\ncr\r"), R"("tab\tnl\ncr\r")");
  EXPECT_EQ(JsonWriter::quote(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  // UTF-8 passes through.
  EXPECT_EQ(JsonWriter::quote("\xc3\xa9"), "\"\xc3\xa9\"");
  JsonWriter j;
  j.objectBegin().attribute("k\"ey", "v\n").objectEnd();
  EXPECT_EQ(j.str(), R"({"k\"ey":"v\n"})");
}

TEST(JsonWriter, Numbers) {
  EXPECT_EQ(JsonWriter::number(0.5), "0.5");
  EXPECT_EQ(JsonWriter::number(1.0 / 3.0), "0.333333333");
  EXPECT_EQ(JsonWriter::number(1e-12), "1e-12");
  EXPECT_EQ(JsonWriter::number(123456789012.0), "1.23456789e+11");
  EXPECT_EQ(JsonWriter::number(NAN), "null");
  EXPECT_EQ(JsonWriter::number(INFINITY), "null");
  EXPECT_EQ(JsonWriter::number(-INFINITY), "null");
  // A float round-trips through 9 digits.
  const float f = 0.1234567f;
  EXPECT_EQ(std::stof(JsonWriter::number(f)), f);
  JsonWriter j;
  j.arrayBegin()
      .value(int64_t{INT64_MIN})
      .value(uint64_t{UINT64_MAX})
      .arrayEnd();
  EXPECT_EQ(j.str(), "[-9223372036854775808,18446744073709551615]");
}

TEST(MetricsLog, NpyLineHasTheFiveKeys) {
  StepMetrics m;
  m.step = 3;
  m.loss = 0.25;
  m.accuracy = NAN;
  m.testAccuracy = 0.5;
  m.stepSeconds = 0.125;
  EXPECT_EQ(MetricsLog::jsonLine(m),
            R"({"step":3,"loss":0.25,"accuracy":null,"test_accuracy":0.5,)"
            R"("step_time_s":0.125})");
  EXPECT_EQ(MetricsLog::stepLine(m, 10),
            "step 3/10  loss 0.2500  acc -  test 0.500  0.125 s");
}

TEST(MetricsLog, GraphLineKeysInOrder) {
  StepMetrics m;
  m.step = 1;
  m.loss = 1.5;
  m.accuracy = 0.75;
  m.testAccuracy = NAN;
  m.stepSeconds = 2;
  m.hasMemory = true;
  m.localPeakBytes = 1048576;
  m.peakBytes = {10, 20};
  m.baseBytes = {1, 2};
  m.commBytes = {3, 4};
  m.tokensPerSecond = 64;
  m.epoch = 4;
  EXPECT_EQ(MetricsLog::jsonLine(m),
            R"({"step":1,"loss":1.5,"accuracy":0.75,"test_accuracy":null,)"
            R"("step_time_s":2,"peak_bytes":[10,20],"base_bytes":[1,2],)"
            R"("comm_bytes":[3,4],"tokens_per_s":64,"epoch":4})");
  EXPECT_EQ(MetricsLog::stepLine(m, 2),
            "step 1/2  loss 1.5000  acc 0.750  2.000 s  peak 1.0 MiB");
  m.hasDevicePeaks = true;
  m.devicePeakBytes = {7};
  m.hasCompute = true;
  m.computeSeconds = {0.5};
  m.computeCpuSeconds = {NAN};
  EXPECT_THAT(MetricsLog::jsonLine(m),
              HasSubstr(R"("comm_bytes":[3,4],"device_peak_bytes":[7],)"
                        R"("compute_s":[0.5],"compute_cpu_s":[null],)"
                        R"("tokens_per_s":64,)"));
}

TEST(MetricsLog, SummaryLines) {
  RunSummary s;
  s.modelName = "m";
  s.steps = 2;
  s.lastLoss = 0.5;
  s.lastAccuracy = NAN;
  s.totalSeconds = 1;
  EXPECT_EQ(MetricsLog::summaryLine(s), "m: train ok, 2 step(s), final loss "
                                        "0.5000, final acc -, mean step "
                                        "0.500 s");
  s.hasMemory = true;
  s.failed = true;
  s.pooledCorrect = 3;
  s.pooledCounted = 4;
  s.pooledSteps = 2;
  s.tokensPerStep = 100;
  s.maxPeakBytes = 2097152;
  EXPECT_EQ(MetricsLog::summaryLine(s),
            "m: train FAILED, 2 step(s), final loss 0.5000, final acc -, test "
            "acc 0.7500 (last 2 step(s)), mean step 0.500 s, 200 tokens/s, "
            "peak memory 2097152 bytes (2.0 MiB)");
}

TEST(MetricsLog, AppendsLinesAndReportsOpenErrors) {
  const std::string dir = mgrt_test::makeTempDir("metrics-log");
  std::string error;
  {
    MetricsLog log;
    ASSERT_TRUE(log.open(dir + "/log.jsonl", error)) << error;
    StepMetrics m;
    m.step = 1;
    ASSERT_TRUE(log.write(m, error)) << error;
    m.step = 2;
    ASSERT_TRUE(log.write(m, error)) << error;
  }
  FILE *f = std::fopen((dir + "/log.jsonl").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[256];
  std::string text;
  while (std::fgets(buf, sizeof buf, f))
    text += buf;
  std::fclose(f);
  EXPECT_EQ(text, R"({"step":1,"loss":0,"accuracy":0,"test_accuracy":0,)"
                  R"("step_time_s":0})"
                  "\n"
                  R"({"step":2,"loss":0,"accuracy":0,"test_accuracy":0,)"
                  R"("step_time_s":0})"
                  "\n");
  MetricsLog bad;
  EXPECT_FALSE(bad.open(dir + "/no/such/dir/log.jsonl", error));
  EXPECT_THAT(error, HasSubstr("--log-json '" + dir +
                               "/no/such/dir/log.jsonl': cannot open for "
                               "appending: "));
}

/// A model table of a node input and class labels over `classes` (role and
/// index as the compiler writes them), label_mask left to the default.
struct NpyModel {
  mgrt_tensor_info inputs[3];
  mgrt_tensor_info outputs[1];
  mgrt_model_info model{};

  explicit NpyModel(int classes) {
    inputs[0] = {"attr", MGRT_F32, 2, {2, 3}, MGRT_ROLE_OTHER, -1};
    inputs[1] = {"labels", MGRT_I64, 1, {2}, MGRT_ROLE_LABELS, classes};
    inputs[2] = {"label_mask", MGRT_BOOL, 1, {2}, MGRT_ROLE_LABEL_MASK, -1};
    outputs[0] = {"loss", MGRT_F32, 0, {}, MGRT_ROLE_LOSS, -1};
    model.model_name = "npy";
    model.num_inputs = 3;
    model.inputs = inputs;
    model.num_outputs = 1;
    model.outputs = outputs;
  }
};

void writeNpy(const std::string &path, int dtype, std::vector<int64_t> shape,
              const void *data) {
  mgrt_tensor t{};
  ASSERT_EQ(mgrt_tensor_alloc(&t, dtype, static_cast<int>(shape.size()),
                              shape.data()),
            MGRT_OK);
  std::memcpy(t.data, data, mgrt_tensor_numel(&t) * mgrt_dtype_size(dtype));
  char err[256];
  ASSERT_EQ(mgrt_npy_write(path.c_str(), &t, err, sizeof err), MGRT_OK) << err;
  mgrt_tensor_free(&t);
}

std::string npyStep(const std::string &tag, std::vector<int64_t> labels) {
  const std::string dir = mgrt_test::makeTempDir(tag);
  const float attr[6] = {1, 2, 3, 4, 5, 6};
  writeNpy(dir + "/attr.npy", MGRT_F32, {2, 3}, attr);
  writeNpy(dir + "/labels.npy", MGRT_I64, {2}, labels.data());
  return dir;
}

TEST(NpyBatches, FillsTheStepAndCountsTheDefaultMask) {
  NpyModel m(4);
  const std::string dir = npyStep("npy-batches", {3, 0});
  NpyBatches batches;
  std::vector<std::string> errors;
  ASSERT_TRUE(batches.open(m.model, dir, true, errors))
      << ::testing::PrintToString(errors);
  EXPECT_EQ(batches.size(), 1u);
  std::vector<mgrt_tensor> inputs(3);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(mgrt_tensor_alloc(&inputs[i], m.inputs[i].dtype, m.inputs[i].rank,
                                m.inputs[i].shape),
              MGRT_OK);
  BatchCounts counts;
  std::string error;
  ASSERT_TRUE(batches.fill(2, inputs, counts, error));
  EXPECT_EQ(counts.counted, 2); // label_mask.npy left out: all items count
  EXPECT_EQ(counts.evalCounted, 0);
  EXPECT_EQ(counts.epoch, 2); // one step, cycled
  EXPECT_EQ(static_cast<float *>(inputs[0].data)[5], 6.f);
  EXPECT_EQ(static_cast<int64_t *>(inputs[1].data)[0], 3);
  for (mgrt_tensor &t : inputs)
    mgrt_tensor_free(&t);
}

TEST(NpyBatches, RefusesLabelsOutOfRange) {
  NpyModel m(4);
  const std::string dir = npyStep("npy-range", {1, 4});
  NpyBatches batches;
  std::vector<std::string> errors;
  EXPECT_FALSE(batches.open(m.model, dir, true, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "--data npy: '" + dir +
                           "/labels.npy': class label 4 at index 1 is out of "
                           "range: the model's input 'labels' takes 4 "
                           "classes (0 to 3)");
  // Without the number of classes (a hand-written table) only < 0 is
  // refused.
  NpyModel unknown(-1);
  NpyBatches lenient;
  errors.clear();
  EXPECT_TRUE(lenient.open(unknown.model, dir, true, errors));
  const std::string negative = npyStep("npy-negative", {-1, 0});
  NpyBatches neg;
  EXPECT_FALSE(neg.open(unknown.model, negative, true, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("class label -1 at index 0 is out of "
                                   "range (< 0)"));
}

/// A 4-node path 0 - 1 - 2 - 3 (both directions).
struct PathGraph {
  std::vector<int64_t> rowPtr = {0, 1, 3, 5, 6};
  std::vector<int64_t> colIdx = {1, 0, 2, 1, 3, 2};
  mgrt_graph g{};
  PathGraph() {
    g.num_nodes = 4;
    g.num_edges = 6;
    g.row_ptr = rowPtr.data();
    g.col_idx = colIdx.data();
  }
};

TEST(Topology, NormalizedAdjacency) {
  PathGraph p;
  std::vector<int64_t> pos(4, -1);
  // The induced subgraph of nodes {2, 1, 0}: a path 2 - 1 - 0.
  const int64_t nodes[3] = {2, 1, 0};
  float a[9];
  normalizedAdjacency(p.g, nodes, 3, pos, a);
  // Degrees with self loops: 2, 3, 2.
  const double d[3] = {2, 3, 2};
  const float expect[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(a[r * 3 + c], expect[r * 3 + c] / std::sqrt(d[r] * d[c]),
                  1e-6)
          << r << "," << c;
  EXPECT_EQ(pos, std::vector<int64_t>(4, -1)); // scratch left clean
}

TEST(Topology, FeatureBins) {
  mgrt_tensor x{};
  const int64_t shape[2] = {3, 2};
  ASSERT_EQ(mgrt_tensor_alloc(&x, MGRT_F32, 2, shape), MGRT_OK);
  const float v[6] = {0, 5, 1, 5, 2, 5}; // column 1 constant
  std::memcpy(x.data, v, sizeof v);
  FeatureBins bins(x, 4);
  EXPECT_EQ(bins.id(0, 0.f), 1);     // first bin of column 0
  EXPECT_EQ(bins.id(0, 1.f), 1 + 2); // (1 - 0) * 4 / 2
  EXPECT_EQ(bins.id(0, 2.f), 1 + 3); // the maximum: into the last bin
  EXPECT_EQ(bins.id(1, 5.f), 1 + 4); // column 1, bin 0
  EXPECT_EQ(bins.id(0, -1.f), 1);    // below the range: bin 0
  mgrt_tensor_free(&x);
}

TEST(Topology, SyntheticLabelsAgainstTheModel) {
  Options opts;
  opts.quiet = true;
  opts.data = "synthetic:sbm,nodes=40,classes=5,features=2,seed=1";
  GraphData data;
  std::string error;
  ASSERT_TRUE(loadGraphData(opts, data, error)) << error;
  EXPECT_EQ(data.classes, 5);
  EXPECT_TRUE(checkLabelRange(data, opts, 5, "labels", error));
  EXPECT_TRUE(checkLabelRange(data, opts, -1, "labels", error)); // unknown
  EXPECT_FALSE(checkLabelRange(data, opts, 4, "labels", error));
  EXPECT_EQ(error, "--data 'synthetic:sbm,nodes=40,classes=5,features=2,"
                   "seed=1': classes=5 gives labels up to 4, but the "
                   "model's input 'labels' takes 4 classes (0 to 3)");
}

TEST(GraphBatches, FillsRowsFromTheSequences) {
  Options opts;
  opts.quiet = true;
  opts.partition = "greedy";
  opts.data = "synthetic:sbm,nodes=24,classes=3,features=2,seed=2";
  GraphData data;
  std::string error;
  ASSERT_TRUE(loadGraphData(opts, data, error)) << error;
  const int64_t S = 4;
  std::vector<int64_t> order;
  ASSERT_TRUE(partitionSequences(data, opts, S, 1, true, order, error))
      << error;
  std::vector<uint8_t> isTrain, isEval;
  drawSplit(data, opts, isTrain, isEval);
  BatchLayout layout;
  layout.B = 2;
  layout.S = layout.rows = S;
  const std::vector<mgrt_tensor_role> roles = {
      MGRT_ROLE_NODE_FEATURES, MGRT_ROLE_LABELS, MGRT_ROLE_LABEL_MASK,
      MGRT_ROLE_IN_DEGREE};
  const std::vector<uint8_t> train = isTrain;
  GraphBatches batches(data, order, isTrain, isEval, roles, layout, opts);
  EXPECT_EQ(batches.numSequences(), 6);
  EXPECT_EQ(batches.stepsPerEpoch(), 3);
  std::vector<mgrt_tensor> inputs(4);
  const int64_t f[3] = {2, S, 2}, n[2] = {2, S};
  ASSERT_EQ(mgrt_tensor_alloc(&inputs[0], MGRT_F32, 3, f), MGRT_OK);
  ASSERT_EQ(mgrt_tensor_alloc(&inputs[1], MGRT_I64, 2, n), MGRT_OK);
  ASSERT_EQ(mgrt_tensor_alloc(&inputs[2], MGRT_BOOL, 2, n), MGRT_OK);
  ASSERT_EQ(mgrt_tensor_alloc(&inputs[3], MGRT_I32, 2, n), MGRT_OK);
  const float *x = static_cast<const float *>(data.features.data);
  const int64_t *lab = static_cast<const int64_t *>(data.labels.data);
  const int64_t *deg = static_cast<const int64_t *>(data.inDegree.data);
  std::vector<int> seen(6, 0);
  for (long step = 0; step < 3; ++step) {
    BatchCounts counts;
    ASSERT_TRUE(batches.fill(step, inputs, counts, error)) << error;
    EXPECT_EQ(counts.epoch, 0);
    int64_t counted = 0;
    for (int64_t b = 0; b < 2; ++b) {
      // Which sequence: the one whose first node has this feature row.
      const float *row = static_cast<const float *>(inputs[0].data) + b * S * 2;
      int64_t seq = -1;
      for (int64_t q = 0; q < 6; ++q)
        if (std::memcmp(x + order[q * S] * 2, row, 2 * sizeof(float)) == 0)
          seq = q;
      ASSERT_GE(seq, 0);
      ++seen[seq];
      for (int64_t s = 0; s < S; ++s) {
        const int64_t node = order[seq * S + s];
        EXPECT_EQ(std::memcmp(x + node * 2, row + s * 2, 2 * sizeof(float)), 0);
        EXPECT_EQ(static_cast<int64_t *>(inputs[1].data)[b * S + s], lab[node]);
        EXPECT_EQ(static_cast<uint8_t *>(inputs[2].data)[b * S + s],
                  train[node]);
        EXPECT_EQ(static_cast<int32_t *>(inputs[3].data)[b * S + s], deg[node]);
        counted += train[node];
      }
    }
    EXPECT_EQ(counts.counted, counted);
  }
  // One epoch visits every sequence once.
  EXPECT_EQ(seen, std::vector<int>(6, 1));
  BatchCounts counts;
  ASSERT_TRUE(batches.fill(3, inputs, counts, error));
  EXPECT_EQ(counts.epoch, 1);
  for (mgrt_tensor &t : inputs)
    mgrt_tensor_free(&t);
}

TEST(Options, CheckpointExportAndEvalFlags) {
  const char *argv[] = {"m",
                        "--mode",
                        "eval",
                        "--checkpoint-every=3",
                        "--resume",
                        "ck",
                        "--export-npy",
                        "out",
                        "--split",
                        "train",
                        "--eval-every",
                        "2",
                        "--on-nonfinite",
                        "skip-step"};
  Options opts;
  std::string error;
  ASSERT_TRUE(parseOptions(sizeof argv / sizeof argv[0],
                           const_cast<char **>(argv), opts, error))
      << error;
  EXPECT_EQ(opts.mode, "eval");
  EXPECT_EQ(opts.checkpointEvery, 3);
  EXPECT_EQ(opts.resume, "ck");
  EXPECT_EQ(opts.exportNpy, "out");
  EXPECT_EQ(opts.split, "train");
  EXPECT_EQ(opts.evalEvery, 2);
  EXPECT_EQ(opts.onNonfinite, "skip-step");
  const char *bad[] = {"m", "--checkpoint-every", "0"};
  EXPECT_FALSE(parseOptions(3, const_cast<char **>(bad), opts, error));
  EXPECT_EQ(error, "--checkpoint-every needs a positive integer, got '0'");
}

/// A model with a state table of one parameter and one moment.
struct StateModel {
  float w[3] = {1, 2, 3};
  float m[3] = {0, 0, 0};
  mgrt_state_info state[2];
  mgrt_model_info model{};

  StateModel() {
    state[0] = {{"w", MGRT_F32, 1, {3}, 0, -1}, MGRT_STATE_PARAMETER, -1, 0, w};
    state[1] = {
        {"w.adam_m", MGRT_F32, 1, {3}, 0, -1}, MGRT_STATE_OPTIMIZER, -1, 0, m};
    model.model_name = "state";
    model.num_state = 2;
    model.state = state;
  }
};

TEST(StateSnapshot, RestoresEveryTensor) {
  StateModel s;
  StateSnapshot snapshot(s.model);
  snapshot.save();
  s.w[1] = 7, s.m[2] = NAN;
  EXPECT_EQ(firstNonFiniteState(s.model),
            "optimizer state 'w.adam_m' (element 2)");
  snapshot.restore();
  EXPECT_EQ(s.w[1], 2.f);
  EXPECT_EQ(s.m[2], 0.f);
  EXPECT_EQ(firstNonFiniteState(s.model), "");
}

TEST(Export, ReadsParametersOnly) {
  StateModel s;
  std::vector<ParameterValues> params;
  std::string error;
  ASSERT_TRUE(readParameters(s.model, params, error)) << error;
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(std::string(params[0].info->tensor.name), "w");
  EXPECT_EQ(params[0].values, (std::vector<float>{1, 2, 3}));
  mgrt_model_info none{};
  none.model_name = "none";
  EXPECT_FALSE(readParameters(none, params, error));
  EXPECT_THAT(error, HasSubstr("model 'none' lists no parameters"));
}

/// Protobuf bytes: field `n` with length-delimited `payload`.
std::string lengthField(int n, const std::string &payload) {
  std::string out(1, static_cast<char>((n << 3) | 2));
  out.push_back(static_cast<char>(payload.size()));
  return out + payload;
}

TEST(Export, RewritesTheTrainedInitializer) {
  // ModelProto{ir_version: 8, graph{initializer{dims: 3, data_type: FLOAT,
  // name: "w", float_data: [0, 0, 0]}, name: "g"}}.
  std::string floats(12, '\0');
  std::string tensor = std::string("\x08\x03\x10\x01", 4) +
                       lengthField(8, "w") + lengthField(4, floats);
  std::string graph = lengthField(5, tensor) + lengthField(2, "g");
  std::string model = std::string("\x08\x08", 2) + lengthField(7, graph);
  const std::string dir = mgrt_test::makeTempDir("onnx-rewrite");
  const std::string path = dir + "/m.onnx";
  std::ofstream(path, std::ios::binary) << model;

  StateModel s;
  std::vector<ParameterValues> params;
  std::string error, out;
  ASSERT_TRUE(readParameters(s.model, params, error)) << error;
  ASSERT_TRUE(rewriteOnnx(path, params, out, error)) << error;
  // The tensor keeps dims and name, float_data becomes raw_data.
  std::string raw(12, '\0');
  std::memcpy(&raw[0], s.w, 12);
  std::string want = std::string("\x08\x03", 2) + lengthField(8, "w") +
                     std::string("\x10\x01", 2) + lengthField(9, raw);
  EXPECT_EQ(out,
            std::string("\x08\x08", 2) +
                lengthField(7, lengthField(5, want) + lengthField(2, "g")));
  // A parameter of another size.
  params[0].values.push_back(4);
  EXPECT_FALSE(rewriteOnnx(path, params, out, error));
  EXPECT_THAT(error, HasSubstr("initializer 'w' has 3 values, the trained "
                               "parameter 4"));
}

} // namespace
