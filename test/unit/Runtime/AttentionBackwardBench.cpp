//===- AttentionBackwardBench.cpp - Timings of mgrt_attention_bwd_f32 -----===//
//
//   MegaGraphAttentionBwdBench [reps] [S ...]   (default 5, 1024 2048)
// The attention backward at the shape of the Graphormer benchmark (B = 2,
// H = 8, D = Dv = 128, a full [B,H,S,S] bias and its gradient), alternating
// the one-pass path and MEGAGRAPH_ATTENTION_BWD=phased in one process so
// that both see the same machine load. Prints the median ms of each and the
// max abs difference of their dq, dk, dv, dbias. Not a test.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mgrt_test;

int main(int argc, char **argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<int64_t> sizes;
  for (int i = 2; i < argc; ++i)
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
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    float diff = 0;
    diff = std::max(diff, maxAbsDiff(g[0].dq, g[1].dq));
    diff = std::max(diff, maxAbsDiff(g[0].dk, g[1].dk));
    diff = std::max(diff, maxAbsDiff(g[0].dv, g[1].dv));
    diff = std::max(diff, maxAbsDiff(g[0].dbias, g[1].dbias));
    std::printf("S=%-5lld B=%lld H=%lld D=%lld  one-pass %8.1f ms  phased "
                "%8.1f ms  ratio %.2fx  max|diff| %.2e  (median of %d)\n",
                (long long)S, (long long)B, (long long)H, (long long)D,
                median(ms[0]), median(ms[1]), median(ms[1]) / median(ms[0]),
                diff, reps);
    std::fflush(stdout);
  }
  return 0;
}
