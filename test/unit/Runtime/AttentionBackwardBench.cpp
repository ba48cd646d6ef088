//===- AttentionBackwardBench.cpp - Timings of mgrt_attention_bwd_f32 -----===//
//
//   MegaGraphAttentionBwdBench [--only=PATH | --paths=PATH,PATH...] [reps]
//                              [S ...]         (default 5, 1024 2048)
// The attention backward at the shape of the Graphormer benchmark (B = 2,
// H = 8, D = Dv = 128, a full [B,H,S,S] bias and its gradient), alternating
// its paths in one process so that all see the same machine load:
//   one-pass  mgrt_attention_bwd_f32 (statistics, then each tile once)
//   phased    the same under MEGAGRAPH_ATTENTION_BWD=phased (three passes)
//   lse       mgrt_attention_bwd_lse_f32 given the forward's out and lse
//             (from mgrt_attention_lse_f32, outside the timing): no
//             statistics pass
// Default: one-pass,phased. Prints the median and best ms of each path and
// the max abs difference of their dq, dk, dv, dbias to the first path's.
// --only runs one path (for callgrind or `perf stat` counts per path). Not
// a test.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace mgrt_test;

int main(int argc, char **argv) {
  int first = 1;
  std::vector<std::string> paths = {"one-pass", "phased"};
  if (argc > 1 && (std::strncmp(argv[1], "--only=", 7) == 0 ||
                   std::strncmp(argv[1], "--paths=", 8) == 0)) {
    std::string list = std::strchr(argv[1], '=') + 1;
    paths.clear();
    for (size_t at = 0; at <= list.size();) {
      size_t comma = list.find(',', at);
      if (comma == std::string::npos)
        comma = list.size();
      paths.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    ++first;
  }
  for (const std::string &path : paths)
    if (path != "one-pass" && path != "phased" && path != "lse") {
      std::fprintf(stderr, "unknown path '%s' (one-pass, phased, lse)\n",
                   path.c_str());
      return 2;
    }
  const int reps = argc > first ? std::atoi(argv[first]) : 5;
  std::vector<int64_t> sizes;
  for (int i = first + 1; i < argc; ++i)
    sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty())
    sizes = {1024, 2048};
  const int64_t B = 2, H = 8, D = 128, dh = D / H;
  const float scale = 1.f / std::sqrt((float)dh);
  const size_t n = paths.size();
  for (int64_t S : sizes) {
    std::vector<float> q = randomFloats(B * S * D, 1, -2, 2),
                       k = randomFloats(B * S * D, 2, -2, 2),
                       v = randomFloats(B * S * D, 3),
                       dout = randomFloats(B * S * D, 4),
                       bias = randomFloats(B * H * S * S, 5, -2, 2);
    std::vector<float> out(B * S * D), lse(B * H * S);
    struct Grads {
      std::vector<float> dq, dk, dv, dbias;
    };
    std::vector<Grads> g(n);
    auto qd = memref<mgrt_memref_f32_3>(q.data(), {B, S, D});
    auto kd = memref<mgrt_memref_f32_3>(k.data(), {B, S, D});
    auto vd = memref<mgrt_memref_f32_3>(v.data(), {B, S, D});
    auto od = memref<mgrt_memref_f32_3>(dout.data(), {B, S, D});
    auto bd = memref<mgrt_memref_f32_4>(bias.data(), {B, H, S, S});
    auto outd = memref<mgrt_memref_f32_3>(out.data(), {B, S, D});
    auto lsed = memref<mgrt_memref_f32_3>(lse.data(), {B, H, S});
    _mlir_ciface_mgrt_attention_lse_f32(&outd, &lsed, &qd, &kd, &vd, &bd,
                                        nullptr, H, scale, MGRT_ATTENTION_BIAS);
    std::vector<std::vector<double>> ms(n);
    for (int r = 0; r <= reps; ++r)
      for (size_t mode = 0; mode < n; ++mode) {
        Grads &x = g[mode];
        x.dq.resize(B * S * D), x.dk.resize(B * S * D), x.dv.resize(B * S * D);
        x.dbias.resize(B * H * S * S);
        auto dqd = memref<mgrt_memref_f32_3>(x.dq.data(), {B, S, D});
        auto dkd = memref<mgrt_memref_f32_3>(x.dk.data(), {B, S, D});
        auto dvd = memref<mgrt_memref_f32_3>(x.dv.data(), {B, S, D});
        auto dbd = memref<mgrt_memref_f32_4>(x.dbias.data(), {B, H, S, S});
        if (paths[mode] == "phased")
          setenv("MEGAGRAPH_ATTENTION_BWD", "phased", 1);
        else
          unsetenv("MEGAGRAPH_ATTENTION_BWD");
        const int64_t flags = MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
        auto t0 = std::chrono::steady_clock::now();
        if (paths[mode] == "lse")
          _mlir_ciface_mgrt_attention_bwd_lse_f32(
              &dqd, &dkd, &dvd, &dbd, &od, &qd, &kd, &vd, &bd, nullptr, &outd,
              &lsed, H, scale, flags);
        else
          _mlir_ciface_mgrt_attention_bwd_f32(&dqd, &dkd, &dvd, &dbd, &od, &qd,
                                              &kd, &vd, &bd, nullptr, H, scale,
                                              flags);
        const double t = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
        if (r > 0) // the first round warms up the pool and the pages
          ms[mode].push_back(t);
      }
    auto median = [](std::vector<double> v) {
      if (v.empty())
        return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    auto best = [](const std::vector<double> &v) {
      return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
    };
    std::printf("S=%-5lld B=%lld H=%lld D=%lld  (%d runs)\n", (long long)S,
                (long long)B, (long long)H, (long long)D, reps);
    for (size_t mode = 0; mode < n; ++mode) {
      float diff = 0;
      for (auto field : {&Grads::dq, &Grads::dk, &Grads::dv, &Grads::dbias})
        diff = std::max(diff, maxAbsDiff(g[mode].*field, g[0].*field));
      std::printf("  %-9s %8.1f ms (best %8.1f)  %s / this: median %.2fx  "
                  "best %.2fx  max|diff| to %s %.2e\n",
                  paths[mode].c_str(), median(ms[mode]), best(ms[mode]),
                  paths[0].c_str(), median(ms[0]) / median(ms[mode]),
                  best(ms[0]) / best(ms[mode]), paths[0].c_str(), diff);
    }
    std::fflush(stdout);
  }
  return 0;
}
