//===- NpyTest.cpp - .npy read / write, and interop with NumPy ------------===//
//
// NumPy files are produced and checked with /usr/bin/python3 (Debian's
// python3-numpy); a missing NumPy fails these tests rather than skipping.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace mgrt_test;

namespace {

/// Runs a Python snippet (no single quotes inside) with `dir` as argv[1].
int runPython(const std::string &code, const std::string &dir) {
  std::string cmd = "/usr/bin/python3 -c '" + code + "' '" + dir + "'";
  return std::system(cmd.c_str());
}

/// Element i of the test pattern, as double, for every dtype.
double pattern(int dtype, int64_t i) {
  switch (dtype) {
  case MGRT_F32:
  case MGRT_F64:
    return i * 0.5 - 3;
  case MGRT_BOOL:
    return i % 3 == 0;
  case MGRT_I8:
    return (int)(i % 200) - 100;
  case MGRT_U8:
    return i % 251;
  case MGRT_I64:
    return i * 1000003 - 7;
  default: // I32
    return i * 7 - 50;
  }
}

double element(const mgrt_tensor &t, int64_t i) {
  switch (t.dtype) {
  case MGRT_F32:
    return static_cast<const float *>(t.data)[i];
  case MGRT_F64:
    return static_cast<const double *>(t.data)[i];
  case MGRT_I64:
    return (double)static_cast<const int64_t *>(t.data)[i];
  case MGRT_I32:
    return static_cast<const int32_t *>(t.data)[i];
  case MGRT_I8:
    return static_cast<const int8_t *>(t.data)[i];
  default: // U8, BOOL
    return static_cast<const uint8_t *>(t.data)[i];
  }
}

void setElement(mgrt_tensor &t, int64_t i, double v) {
  switch (t.dtype) {
  case MGRT_F32:
    static_cast<float *>(t.data)[i] = (float)v;
    break;
  case MGRT_F64:
    static_cast<double *>(t.data)[i] = v;
    break;
  case MGRT_I64:
    static_cast<int64_t *>(t.data)[i] = (int64_t)v;
    break;
  case MGRT_I32:
    static_cast<int32_t *>(t.data)[i] = (int32_t)v;
    break;
  case MGRT_I8:
    static_cast<int8_t *>(t.data)[i] = (int8_t)v;
    break;
  default:
    static_cast<uint8_t *>(t.data)[i] = (uint8_t)v;
  }
}

struct DtypeCase {
  int dtype;
  const char *numpy; // numpy dtype name
};
const DtypeCase kDtypes[] = {
    {MGRT_F32, "float32"}, {MGRT_F64, "float64"}, {MGRT_I64, "int64"},
    {MGRT_I32, "int32"},   {MGRT_BOOL, "bool"},   {MGRT_U8, "uint8"},
    {MGRT_I8, "int8"},
};

/// The NumPy side of the pattern: expression of the array for dtype d and
/// shape s (a Python tuple), in terms of i = np.arange(n).
std::string numpyPattern(int dtype) {
  switch (dtype) {
  case MGRT_F32:
  case MGRT_F64:
    return "i * 0.5 - 3";
  case MGRT_BOOL:
    return "i % 3 == 0";
  case MGRT_I8:
    return "(i % 200) - 100";
  case MGRT_U8:
    return "i % 251";
  case MGRT_I64:
    return "i * 1000003 - 7";
  default:
    return "i * 7 - 50";
  }
}

const std::vector<std::vector<int64_t>> kShapes = {{}, {5}, {2, 3, 4}, {0, 3}};

std::string pyShape(const std::vector<int64_t> &s) {
  std::string r = "(";
  for (int64_t d : s)
    r += std::to_string(d) + ",";
  return r + ")";
}

std::string fileName(const DtypeCase &d, size_t shapeIdx) {
  return std::string(d.numpy) + "_" + std::to_string(shapeIdx) + ".npy";
}

TEST(Npy, RoundTripEveryDtype) {
  const std::string dir = makeTempDir("npy");
  const size_t base = mgrt_current_bytes();
  for (const DtypeCase &d : kDtypes)
    for (size_t s = 0; s < kShapes.size(); ++s) {
      mgrt_tensor t;
      ASSERT_EQ(mgrt_tensor_alloc(&t, d.dtype, (int)kShapes[s].size(),
                                  kShapes[s].data()),
                MGRT_OK);
      for (int64_t i = 0; i < mgrt_tensor_numel(&t); ++i)
        setElement(t, i, pattern(d.dtype, i));
      const std::string path = dir + "/" + fileName(d, s);
      char err[256] = "";
      ASSERT_EQ(mgrt_npy_write(path.c_str(), &t, err, sizeof err), 0) << err;
      mgrt_tensor back;
      ASSERT_EQ(mgrt_npy_read(path.c_str(), &back, err, sizeof err), 0) << err;
      EXPECT_EQ(back.dtype, d.dtype);
      ASSERT_EQ(back.rank, t.rank);
      for (int i = 0; i < t.rank; ++i)
        EXPECT_EQ(back.shape[i], t.shape[i]);
      for (int64_t i = 0; i < mgrt_tensor_numel(&t); ++i)
        ASSERT_EQ(element(back, i), element(t, i)) << path << " at " << i;
      mgrt_tensor_free(&t);
      mgrt_tensor_free(&back);
      EXPECT_EQ(back.data, nullptr);
    }
  EXPECT_EQ(mgrt_current_bytes(), base);

  // NumPy reads what we wrote.
  std::string check = "import sys, numpy as np\n";
  for (const DtypeCase &d : kDtypes)
    for (size_t s = 0; s < kShapes.size(); ++s)
      check += "n = int(np.prod(" + pyShape(kShapes[s]) +
               "))\n"
               "i = np.arange(n)\n"
               "a = np.load(sys.argv[1] + \"/" +
               fileName(d, s) +
               "\")\n"
               "e = (" +
               numpyPattern(d.dtype) + ").astype(\"" + d.numpy +
               "\").reshape(" + pyShape(kShapes[s]) +
               ")\n"
               "assert a.dtype == e.dtype and a.shape == e.shape and "
               "np.array_equal(a, e), \"" +
               fileName(d, s) + "\"\n";
  EXPECT_EQ(runPython(check, dir), 0);
}

TEST(Npy, ReadsFilesWrittenByNumpy) {
  const std::string dir = makeTempDir("npy");
  std::string gen = "import sys, numpy as np\n";
  for (const DtypeCase &d : kDtypes)
    for (size_t s = 0; s < kShapes.size(); ++s)
      gen += "i = np.arange(int(np.prod(" + pyShape(kShapes[s]) +
             ")))\n"
             "np.save(sys.argv[1] + \"/" +
             fileName(d, s) + "\", (" + numpyPattern(d.dtype) + ").astype(\"" +
             d.numpy + "\").reshape(" + pyShape(kShapes[s]) + "))\n";
  // Format 2.0 header, and a 1-D Fortran-order array (same layout as C).
  gen += "f = open(sys.argv[1] + \"/v2.npy\", \"wb\")\n"
         "np.lib.format.write_array(f, np.arange(6, dtype=np.float32)"
         ".reshape(2, 3), version=(2, 0))\n"
         "f.close()\n"
         "np.save(sys.argv[1] + \"/fortran1d.npy\", "
         "np.asfortranarray(np.arange(4, dtype=np.int32)))\n";
  ASSERT_EQ(runPython(gen, dir), 0);

  for (const DtypeCase &d : kDtypes)
    for (size_t s = 0; s < kShapes.size(); ++s) {
      const std::string path = dir + "/" + fileName(d, s);
      mgrt_tensor t;
      char err[256] = "";
      ASSERT_EQ(mgrt_npy_read(path.c_str(), &t, err, sizeof err), 0) << err;
      EXPECT_EQ(t.dtype, d.dtype) << path;
      ASSERT_EQ(t.rank, (int)kShapes[s].size()) << path;
      for (int i = 0; i < t.rank; ++i)
        EXPECT_EQ(t.shape[i], kShapes[s][i]);
      for (int64_t i = 0; i < mgrt_tensor_numel(&t); ++i)
        ASSERT_EQ(element(t, i),
                  (d.dtype == MGRT_F32 ? (double)(float)pattern(d.dtype, i)
                                       : pattern(d.dtype, i)))
            << path << " at " << i;
      mgrt_tensor_free(&t);
    }
  mgrt_tensor t;
  char err[256] = "";
  ASSERT_EQ(mgrt_npy_read((dir + "/v2.npy").c_str(), &t, err, sizeof err), 0)
      << err;
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(static_cast<float *>(t.data)[5], 5.f);
  mgrt_tensor_free(&t);
  ASSERT_EQ(
      mgrt_npy_read((dir + "/fortran1d.npy").c_str(), &t, err, sizeof err), 0)
      << err;
  EXPECT_EQ(static_cast<int32_t *>(t.data)[3], 3);
  mgrt_tensor_free(&t);
}

/// Expects reading `path` to fail with `code` and a message containing
/// `needle`, leaving `out` empty and no memory behind.
void expectReadError(const std::string &path, int code, const char *needle) {
  const size_t base = mgrt_current_bytes();
  mgrt_tensor t;
  char err[512] = "";
  EXPECT_EQ(mgrt_npy_read(path.c_str(), &t, err, sizeof err), code) << err;
  EXPECT_NE(std::strstr(err, needle), nullptr)
      << "message '" << err << "' lacks '" << needle << "'";
  EXPECT_EQ(t.data, nullptr);
  EXPECT_EQ(mgrt_current_bytes(), base);
}

TEST(Npy, ErrorCases) {
  const std::string dir = makeTempDir("npy");
  ASSERT_EQ(
      runPython("import sys, numpy as np\n"
                "d = sys.argv[1]\n"
                "np.save(d + \"/fortran.npy\", "
                "np.asfortranarray(np.ones((3, 4), np.float32)))\n"
                "np.save(d + \"/big.npy\", np.ones(3, dtype=\">f4\"))\n"
                "np.save(d + \"/half.npy\", np.ones(3, dtype=np.float16))\n"
                "np.save(d + \"/ok.npy\", np.ones((10, 10), np.float32))\n"
                "b = open(d + \"/ok.npy\", \"rb\").read()\n"
                "open(d + \"/truncated.npy\", \"wb\").write(b[:-7])\n"
                "open(d + \"/trailing.npy\", \"wb\").write(b + b\"xyz\")\n"
                "np.save(d + \"/rank10.npy\", np.ones((1,) * 10, np.int8))\n"
                "open(d + \"/short_header.npy\", \"wb\").write(b[:40])\n"
                "open(d + \"/magic.npy\", \"wb\").write(b\"PK\" + b[2:])\n"
                "open(d + \"/empty.npy\", \"wb\").write(b\"\")\n",
                dir),
      0);
  expectReadError(dir + "/fortran.npy", MGRT_ERR_UNSUPPORTED, "Fortran-order");
  expectReadError(dir + "/big.npy", MGRT_ERR_UNSUPPORTED, "big-endian");
  expectReadError(dir + "/half.npy", MGRT_ERR_UNSUPPORTED,
                  "unsupported dtype '<f2'");
  expectReadError(dir + "/truncated.npy", MGRT_ERR_FORMAT,
                  "truncated data: expected 400 bytes, found 393");
  // Found by megagraph-fuzz-npy: dims past the ninth were stored beyond
  // the shape array.
  expectReadError(dir + "/rank10.npy", MGRT_ERR_UNSUPPORTED,
                  "rank 10 exceeds the maximum of 8");
  expectReadError(dir + "/trailing.npy", MGRT_ERR_FORMAT,
                  "3 bytes after the data (the shape says 400 bytes of <f4)");
  expectReadError(dir + "/short_header.npy", MGRT_ERR_FORMAT,
                  "truncated header");
  expectReadError(dir + "/magic.npy", MGRT_ERR_FORMAT, "bad magic");
  expectReadError(dir + "/empty.npy", MGRT_ERR_FORMAT, "bad magic");
  expectReadError(dir + "/missing.npy", MGRT_ERR_IO, "cannot open");

  // Writing into a directory that does not exist.
  mgrt_tensor t;
  ASSERT_EQ(mgrt_tensor_alloc(&t, MGRT_F32, 0, nullptr), MGRT_OK);
  char err[256] = "";
  EXPECT_EQ(
      mgrt_npy_write((dir + "/no/such/dir/x.npy").c_str(), &t, err, sizeof err),
      MGRT_ERR_IO);
  EXPECT_NE(std::strstr(err, "cannot create"), nullptr) << err;
  mgrt_tensor_free(&t);
}

TEST(Tensor, AllocRejectsBadArguments) {
  mgrt_tensor t;
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(mgrt_tensor_alloc(&t, MGRT_F32, 9, shape), MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_tensor_alloc(&t, 42, 1, shape), MGRT_ERR_ARGUMENT);
  int64_t negative = -1;
  EXPECT_EQ(mgrt_tensor_alloc(&t, MGRT_F32, 1, &negative), MGRT_ERR_ARGUMENT);
  EXPECT_EQ(mgrt_dtype_size(MGRT_I64), 8u);
  EXPECT_STREQ(mgrt_dtype_name(MGRT_BOOL), "bool");
  mgrt_tensor_free(nullptr);
}

} // namespace
