//===- AttentionBackwardBench.cpp - Timings of mgrt_attention_bwd_f32 -----===//
//
//   MegaGraphAttentionBwdBench [--only=one-pass|phased] [reps] [S ...]
//                                               (default 5, 1024 2048)
// The attention backward at the shape of the Graphormer benchmark (B = 2,
// H = 8, D = Dv = 128, a full [B,H,S,S] bias and its gradient), alternating
// the one-pass path and MEGAGRAPH_ATTENTION_BWD=phased in one process so
// that both see the same machine load. Prints the median and best ms of each
// and the max abs difference of their dq, dk, dv, dbias. --only runs one of
// them (for `perf stat` counts per path). Not a test.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mgrt_test;

int main(int argc, char **argv) {
  int first = 1, modes[2] = {1, 1};
  if (argc > 1 && std::strncmp(argv[1], "--only=", 7) == 0) {
    const bool phased = std::strcmp(argv[1] + 7, "phased") == 0;
    modes[phased ? 0 : 1] = 0;
    ++first;
  }
  const int reps = argc > first ? std::atoi(argv[first]) : 5;
  std::vector<int64_t> sizes;
  for (int i = first + 1; i < argc; ++i)
    sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty())
    sizes = {1024, 2048};
  const int64_t B = 2, H = 8, D = 128, dh = D / H;
  const float scale = 1.f / std::sqrt((float)dh);
  for (int64_t S : sizes) {
    std::vector<float> q = randomFloats(B * S * D, 1, -2, 2),
                       k = randomFloats(B * S * D, 2, -2, 2),
                       v = randomFloats(B * S * D, 3),
                       dout = randomFloats(B * S * D, 4),
                       bias = randomFloats(B * H * S * S, 5, -2, 2);
    struct Grads {
      std::vector<float> dq, dk, dv, dbias;
    } g[2];
    auto qd = memref<mgrt_memref_f32_3>(q.data(), {B, S, D});
    auto kd = memref<mgrt_memref_f32_3>(k.data(), {B, S, D});
    auto vd = memref<mgrt_memref_f32_3>(v.data(), {B, S, D});
    auto od = memref<mgrt_memref_f32_3>(dout.data(), {B, S, D});
    auto bd = memref<mgrt_memref_f32_4>(bias.data(), {B, H, S, S});
    std::vector<double> ms[2];
    for (int r = 0; r <= reps; ++r)
      for (int mode = 0; mode < 2; ++mode) {
        if (!modes[mode])
          continue;
        Grads &x = g[mode];
        x.dq.resize(B * S * D), x.dk.resize(B * S * D), x.dv.resize(B * S * D);
        x.dbias.resize(B * H * S * S);
        auto dqd = memref<mgrt_memref_f32_3>(x.dq.data(), {B, S, D});
        auto dkd = memref<mgrt_memref_f32_3>(x.dk.data(), {B, S, D});
        auto dvd = memref<mgrt_memref_f32_3>(x.dv.data(), {B, S, D});
        auto dbd = memref<mgrt_memref_f32_4>(x.dbias.data(), {B, H, S, S});
        if (mode == 0)
          unsetenv("MEGAGRAPH_ATTENTION_BWD");
        else
          setenv("MEGAGRAPH_ATTENTION_BWD", "phased", 1);
        auto t0 = std::chrono::steady_clock::now();
        _mlir_ciface_mgrt_attention_bwd_f32(
            &dqd, &dkd, &dvd, &dbd, &od, &qd, &kd, &vd, &bd, nullptr, H, scale,
            MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS);
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
    float diff = 0;
    if (modes[0] && modes[1]) {
      diff = std::max(diff, maxAbsDiff(g[0].dq, g[1].dq));
      diff = std::max(diff, maxAbsDiff(g[0].dk, g[1].dk));
      diff = std::max(diff, maxAbsDiff(g[0].dv, g[1].dv));
      diff = std::max(diff, maxAbsDiff(g[0].dbias, g[1].dbias));
    }
    auto best = [](const std::vector<double> &v) {
      return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
    };
    std::printf("S=%-5lld B=%lld H=%lld D=%lld  one-pass %8.1f ms (best "
                "%8.1f)  phased %8.1f ms (best %8.1f)  median ratio %.2fx  "
                "best ratio %.2fx  max|diff| %.2e  (%d runs)\n",
                (long long)S, (long long)B, (long long)H, (long long)D,
                median(ms[0]), best(ms[0]), median(ms[1]), best(ms[1]),
                median(ms[1]) / median(ms[0]), best(ms[1]) / best(ms[0]), diff,
                reps);
    std::fflush(stdout);
  }
  return 0;
}
