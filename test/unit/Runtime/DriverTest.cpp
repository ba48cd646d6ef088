//===- DriverTest.cpp - mgrt_main on a tiny fake model --------------------===//

#include "RuntimeTestUtil.h"

#include <algorithm>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

using namespace mgrt_test;
using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

namespace {

int entryCalls = 0;

/// The "compiled model": sum = x + y over f32 [2,3] descriptors.
void addEntry(void **descriptors) {
  ++entryCalls;
  auto *x = static_cast<mgrt_memref_f32_2 *>(descriptors[0]);
  auto *y = static_cast<mgrt_memref_f32_2 *>(descriptors[1]);
  auto *out = static_cast<mgrt_memref_f32_2 *>(descriptors[2]);
  for (int64_t i = 0; i < out->sizes[0]; ++i)
    for (int64_t j = 0; j < out->sizes[1]; ++j)
      out->aligned[out->offset + i * out->strides[0] + j * out->strides[1]] =
          x->aligned[x->offset + i * x->strides[0] + j * x->strides[1]] +
          y->aligned[y->offset + i * y->strides[0] + j * y->strides[1]];
}

const mgrt_tensor_info kInputs[] = {{"x", MGRT_F32, 2, {2, 3}},
                                    {"y", MGRT_F32, 2, {2, 3}}};
const mgrt_tensor_info kOutputs[] = {{"sum", MGRT_F32, 2, {2, 3}}};
const mgrt_model_info kModel = {"add", 2, kInputs, 1, kOutputs, addEntry};

/// Writes a tensor of `dtype` and `shape` with values base, base+1, ...
void writeInput(const std::string &path, int dtype, std::vector<int64_t> shape,
                double base) {
  mgrt_tensor t;
  ASSERT_EQ(mgrt_tensor_alloc(&t, dtype, (int)shape.size(), shape.data()),
            MGRT_OK);
  for (int64_t i = 0; i < mgrt_tensor_numel(&t); ++i) {
    if (dtype == MGRT_F32)
      static_cast<float *>(t.data)[i] = (float)(base + i);
    else if (dtype == MGRT_F64)
      static_cast<double *>(t.data)[i] = base + i;
    else if (dtype == MGRT_I64)
      static_cast<int64_t *>(t.data)[i] = (int64_t)(base + i);
  }
  char err[256];
  ASSERT_EQ(mgrt_npy_write(path.c_str(), &t, err, sizeof err), 0) << err;
  mgrt_tensor_free(&t);
}

struct Result {
  int code;
  std::string out, err;
};

Result runMain(std::vector<std::string> args) {
  args.insert(args.begin(), "add_model");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  CaptureStdout();
  CaptureStderr();
  int code = mgrt_main((int)args.size(), argv.data(), &kModel);
  Result r{code, GetCapturedStdout(), GetCapturedStderr()};
  return r;
}

class Driver : public ::testing::Test {
protected:
  void SetUp() override {
    dir = makeTempDir("driver");
    writeInput(dir + "/x.npy", MGRT_F32, {2, 3}, 1);
    writeInput(dir + "/y.npy", MGRT_F32, {2, 3}, 10);
  }
  std::string dir;
};

TEST_F(Driver, InferWritesOutputs) {
  const size_t base = mgrt_current_bytes();
  entryCalls = 0;
  Result r = runMain({"--mode", "infer", "--input", "x=" + dir + "/x.npy",
                      "--input=y=" + dir + "/y.npy", "--output-dir",
                      dir + "/out/nested", "--repeat", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(entryCalls, 3);
  EXPECT_THAT(r.out, HasSubstr("add: infer ok, 3 run(s), mean"));
  EXPECT_THAT(r.out, HasSubstr("peak memory"));
  EXPECT_THAT(r.err, HasSubstr("wrote " + dir + "/out/nested/sum.npy"));
  EXPECT_EQ(mgrt_current_bytes(), base); // inputs and outputs released

  mgrt_tensor sum;
  char err[256];
  ASSERT_EQ(mgrt_npy_read((dir + "/out/nested/sum.npy").c_str(), &sum, err,
                          sizeof err),
            0)
      << err;
  EXPECT_EQ(sum.dtype, MGRT_F32);
  ASSERT_EQ(sum.rank, 2);
  EXPECT_EQ(sum.shape[0], 2);
  EXPECT_EQ(sum.shape[1], 3);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(static_cast<float *>(sum.data)[i], 11.f + 2 * i);
  mgrt_tensor_free(&sum);
}

TEST_F(Driver, QuietPrintsOnlyTheSummary) {
  Result r = runMain({"--input", "x=" + dir + "/x.npy", "--input",
                      "y=" + dir + "/y.npy", "--output-dir", dir, "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("infer ok, 1 run(s)"));
}

TEST_F(Driver, ConvertsF64WithANote) {
  writeInput(dir + "/x64.npy", MGRT_F64, {2, 3}, 1);
  Result r = runMain({"--mode=infer", "--input", "x=" + dir + "/x64.npy",
                      "--input", "y=" + dir + "/y.npy", "--output-dir", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("note: input 'x'"));
  EXPECT_THAT(r.err, HasSubstr("converted f64 to f32"));
}

TEST_F(Driver, MissingInput) {
  Result r = runMain({"--mode", "infer", "--input", "x=" + dir + "/x.npy",
                      "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing input 'y' (expected f32 [2, 3]); "
                               "pass --input y=FILE.npy"));
}

TEST_F(Driver, WrongShape) {
  writeInput(dir + "/y32.npy", MGRT_F32, {3, 2}, 0);
  Result r = runMain({"--mode", "infer", "--input", "x=" + dir + "/x.npy",
                      "--input", "y=" + dir + "/y32.npy", "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("input 'y' (" + dir +
                               "/y32.npy): expected "
                               "shape f32 [2, 3], got f32 [3, 2]"));
}

TEST_F(Driver, WrongDtypeUnknownNameAndBadFile) {
  writeInput(dir + "/xi.npy", MGRT_I64, {2, 3}, 0);
  Result r = runMain({"--input", "x=" + dir + "/xi.npy", "--input",
                      "y=" + dir + "/y.npy", "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("expected dtype f32, got i64"));

  r = runMain({"--input", "x=" + dir + "/x.npy", "--input",
               "y=" + dir + "/y.npy", "--input", "z=" + dir + "/y.npy",
               "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown input 'z' (the model's inputs: x, y)"));

  r = runMain({"--input", "x=" + dir + "/nope.npy", "--input",
               "y=" + dir + "/y.npy", "--output-dir", dir});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("input 'x': " + dir + "/nope.npy: cannot open"));
}

TEST_F(Driver, UsageErrorsAndModes) {
  Result r = runMain({"--mode", "train"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("has no training step (no output 'loss')"));

  r = runMain({"--mode", "fly"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown mode 'fly'"));

  r = runMain({"--mode", "infer", "--steps", "3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--steps is not an option of --mode infer"));

  r = runMain({"--frobnicate"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown argument '--frobnicate'"));

  r = runMain({"--repeat", "0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--repeat needs a positive integer"));

  r = runMain({"--input", "x"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--input needs NAME=FILE.npy"));

  r = runMain(
      {"--input", "x=" + dir + "/x.npy", "--input", "y=" + dir + "/y.npy"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--output-dir DIR is required"));

  // A usage error is one line, never the whole usage.
  r = runMain({"--mode", "bogus"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown mode 'bogus'"));
  EXPECT_THAT(r.err, HasSubstr("--help)"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  r = runMain({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: add_model --mode infer"));
  EXPECT_THAT(r.out, HasSubstr("  y: f32 [2, 3]"));
  EXPECT_THAT(r.out, HasSubstr("  sum: f32 [2, 3]"));
}

TEST_F(Driver, UnwritableOutputDir) {
  // A regular file where the output directory should be.
  writeInput(dir + "/file", MGRT_F32, {1}, 0);
  Result r = runMain({"--input", "x=" + dir + "/x.npy", "--input",
                      "y=" + dir + "/y.npy", "--output-dir", dir + "/file"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("is not a directory"));
}

} // namespace
