//===- RuntimeTestUtil.cpp - Naive references and temp dirs ---------------===//

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <vector>

namespace mgrt_test {

namespace {
/// Index of [b,h,i,j] in a dense tensor of `shape` broadcast to
/// [B,H,Sq,Sk] (dimensions of size 1 broadcast).
int64_t broadcastIndex(const std::vector<int64_t> &shape, int64_t b, int64_t h,
                       int64_t i, int64_t j) {
  const int64_t idx[4] = {b, h, i, j};
  int64_t flat = 0;
  for (int d = 0; d < 4; ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
  return flat;
}
} // namespace

std::vector<float> naiveAttention(const AttentionProblem &p,
                                  std::vector<double> *lse) {
  const int64_t D = p.H * p.dh, Dv = p.H * p.dvh;
  std::vector<float> out(p.B * p.Sq * Dv, 0.f);
  if (lse)
    lse->assign(p.B * p.H * p.Sq, -INFINITY);
  std::vector<double> scores(p.Sk);
  std::vector<bool> kept(p.Sk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Sq; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < p.Sk; ++j) {
          double s = 0;
          for (int64_t c = 0; c < p.dh; ++c)
            s += (double)p.q[(b * p.Sq + i) * D + h * p.dh + c] *
                 p.k[(b * p.Sk + j) * D + h * p.dh + c];
          s *= p.scale;
          if (!p.biasShape.empty())
            s += p.bias[broadcastIndex(p.biasShape, b, h, i, j)];
          kept[j] = p.maskShape.empty() ||
                    p.mask[broadcastIndex(p.maskShape, b, h, i, j)] != 0;
          scores[j] = s;
          if (kept[j])
            mx = std::max(mx, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < p.Sk; ++j) {
          scores[j] = kept[j] ? std::exp(scores[j] - mx) : 0.0;
          sum += scores[j];
        }
        if (sum == 0)
          continue; // nothing kept: zeros
        if (lse)
          (*lse)[(b * p.H + h) * p.Sq + i] = mx + std::log(sum);
        for (int64_t c = 0; c < p.dvh; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < p.Sk; ++j)
            acc += scores[j] * p.v[(b * p.Sk + j) * Dv + h * p.dvh + c];
          out[(b * p.Sq + i) * Dv + h * p.dvh + c] = (float)(acc / sum);
        }
      }
  return out;
}

namespace {
/// Removes every directory makeTempDir created when the test binary exits,
/// so test runs leave nothing behind in $TMPDIR.
struct TempDirRegistry {
  std::vector<std::filesystem::path> dirs;
  ~TempDirRegistry() {
    for (const auto &d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};
TempDirRegistry &tempDirs() {
  static TempDirRegistry registry;
  return registry;
}
} // namespace

std::string makeTempDir(const std::string &tag) {
  const char *base = std::getenv("TMPDIR");
  std::filesystem::path root = base && *base ? base : "/tmp";
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      "mgrt-test-" + tag + "-" + std::to_string(static_cast<long>(::getpid()));
  if (info)
    name += std::string("-") + info->name();
  for (char &c : name)
    if (c == '/')
      c = '_';
  std::filesystem::path dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  tempDirs().dirs.push_back(dir);
  return dir.string();
}

} // namespace mgrt_test
