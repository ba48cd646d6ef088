//===- AttentionSpatialBench.cpp - Spatial bias in place vs dense ---------===//
//
//   MegaGraphAttentionSpatialBench [--forward] [--only=PATH |
//                                  --paths=PATH,PATH...]
//                                  [reps] [S ...]   (default 5, 1024 2048)
// One layer's attention forward and backward at the shape of the
// Graphormer benchmark (B = 2, H = 8, D = Dv = 128, distances 0..8 into a
// [9, 8] table), the two ways a training step can run it, alternating in
// one process so that both see the same machine load:
//   dense    the bias [B,H,S,S] = table[distance] built outside the timing
//            (the step builds it once for all layers), then
//            mgrt_attention_lse_f32 and mgrt_attention_bwd_lse_f32 with its
//            gradient dbias [B,H,S,S] (which the step then scatters into
//            the table, also outside this timing)
//   spatial  mgrt_attention_spatial_f32 (with lse) and its backward, which
//            read the table in place and return dtable [9, 8]; at this
//            shape (dh = 16, no dense bias or mask) the forward is the
//            narrow-head kernel of AttentionSmallHead.cpp
//   blockwise  spatial with MEGAGRAPH_ATTENTION_SMALL_HEAD=0 during the
//            forward: the blockwise forward of AttentionBlock.cpp
// Prints the median and best ms of each path's forward and backward, and
// the max abs difference of out, dq, dk, dv and of the table gradient (the
// dense path's dbias summed per table row) to the first path's. --only runs
// one path (for instruction counts per path: perf stat; callgrind's CPU
// has no AVX-512, so the narrow-head kernel is off under it); --forward
// skips the backward. Not a test.
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

namespace {

double now() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double best(const std::vector<double> &v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

} // namespace

int main(int argc, char **argv) {
  int first = 1;
  bool forwardOnly = false;
  if (argc > first && std::strcmp(argv[first], "--forward") == 0)
    forwardOnly = true, ++first;
  std::vector<std::string> paths = {"dense", "spatial"};
  if (argc > first && (std::strncmp(argv[first], "--only=", 7) == 0 ||
                       std::strncmp(argv[first], "--paths=", 8) == 0)) {
    std::string list = std::strchr(argv[first], '=') + 1;
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
    if (path != "dense" && path != "spatial" && path != "blockwise") {
      std::fprintf(stderr, "unknown path '%s' (dense, spatial, blockwise)\n",
                   path.c_str());
      return 2;
    }
  const int reps = argc > first ? std::atoi(argv[first]) : 5;
  std::vector<int64_t> sizes;
  for (int i = first + 1; i < argc; ++i)
    sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty())
    sizes = {1024, 2048};
  const int64_t B = 2, H = 8, D = 128, dh = D / H, V = 9;
  const float scale = 1.f / std::sqrt((float)dh);
  const size_t n = paths.size();
  for (int64_t S : sizes) {
    std::vector<float> q = randomFloats(B * S * D, 1, -2, 2),
                       k = randomFloats(B * S * D, 2, -2, 2),
                       v = randomFloats(B * S * D, 3),
                       dout = randomFloats(B * S * D, 4),
                       table = randomFloats(V * H, 5, -2, 2);
    std::vector<int16_t> dist(B * S * S);
    std::mt19937 gen(6);
    for (int16_t &d : dist)
      d = static_cast<int16_t>(gen() % V);
    auto qd = memref<mgrt_memref_f32_3>(q.data(), {B, S, D});
    auto kd = memref<mgrt_memref_f32_3>(k.data(), {B, S, D});
    auto vd = memref<mgrt_memref_f32_3>(v.data(), {B, S, D});
    auto od = memref<mgrt_memref_f32_3>(dout.data(), {B, S, D});
    auto dd = memref<mgrt_memref_i16_3>(dist.data(), {B, S, S});
    auto td = memref<mgrt_memref_f32_2>(table.data(), {V, H});
    struct Result {
      std::vector<float> out, lse, dq, dk, dv, dbias, dtable;
    };
    std::vector<Result> res(n);
    std::vector<std::vector<double>> fwdMs(n), bwdMs(n);
    std::vector<float> bias; // the dense path's, built once
    for (int r = 0; r <= reps; ++r)
      for (size_t mode = 0; mode < n; ++mode) {
        Result &x = res[mode];
        x.out.resize(B * S * D), x.lse.resize(B * H * S);
        x.dq.resize(B * S * D), x.dk.resize(B * S * D), x.dv.resize(B * S * D);
        auto outd = memref<mgrt_memref_f32_3>(x.out.data(), {B, S, D});
        auto lsed = memref<mgrt_memref_f32_3>(x.lse.data(), {B, H, S});
        auto dqd = memref<mgrt_memref_f32_3>(x.dq.data(), {B, S, D});
        auto dkd = memref<mgrt_memref_f32_3>(x.dk.data(), {B, S, D});
        auto dvd = memref<mgrt_memref_f32_3>(x.dv.data(), {B, S, D});
        double t0, t1, t2;
        if (paths[mode] == "dense") {
          if (bias.empty()) {
            bias.resize(B * H * S * S);
            for (int64_t b = 0; b < B; ++b)
              for (int64_t h = 0; h < H; ++h)
                for (int64_t e = 0; e < S * S; ++e)
                  bias[(b * H + h) * S * S + e] =
                      table[dist[b * S * S + e] * H + h];
          }
          x.dbias.resize(B * H * S * S);
          auto bd = memref<mgrt_memref_f32_4>(bias.data(), {B, H, S, S});
          auto dbd = memref<mgrt_memref_f32_4>(x.dbias.data(), {B, H, S, S});
          t0 = now();
          _mlir_ciface_mgrt_attention_lse_f32(&outd, &lsed, &qd, &kd, &vd, &bd,
                                              nullptr, H, scale,
                                              MGRT_ATTENTION_BIAS);
          t1 = now();
          if (!forwardOnly)
            _mlir_ciface_mgrt_attention_bwd_lse_f32(
                &dqd, &dkd, &dvd, &dbd, &od, &qd, &kd, &vd, &bd, nullptr, &outd,
                &lsed, H, scale, MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS);
          t2 = now();
        } else {
          x.dtable.resize(V * H);
          auto dtd = memref<mgrt_memref_f32_2>(x.dtable.data(), {V, H});
          if (paths[mode] == "blockwise")
            setenv("MEGAGRAPH_ATTENTION_SMALL_HEAD", "0", 1);
          t0 = now();
          _mlir_ciface_mgrt_attention_spatial_f32(&outd, &lsed, &qd, &kd, &vd,
                                                  nullptr, nullptr, &dd, &td, H,
                                                  scale, MGRT_ATTENTION_LSE);
          t1 = now();
          unsetenv("MEGAGRAPH_ATTENTION_SMALL_HEAD");
          if (!forwardOnly)
            _mlir_ciface_mgrt_attention_spatial_bwd_f32(
                &dqd, &dkd, &dvd, nullptr, &dtd, &od, &qd, &kd, &vd, nullptr,
                nullptr, &dd, &td, &outd, &lsed, H, scale, MGRT_ATTENTION_LSE);
          t2 = now();
        }
        if (r > 0) { // the first round warms up the pool and the pages
          fwdMs[mode].push_back(t1 - t0);
          bwdMs[mode].push_back(t2 - t1);
        }
      }
    // The dense path's table gradient: its dbias summed per table row.
    for (Result &x : res)
      if (!x.dbias.empty()) {
        std::vector<double> sum(V * H, 0.0);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t e = 0; e < S * S; ++e)
              sum[dist[b * S * S + e] * H + h] +=
                  x.dbias[(b * H + h) * S * S + e];
        x.dtable.assign(sum.begin(), sum.end());
      }
    std::printf("S=%-5lld B=%lld H=%lld D=%lld V=%lld  (%d runs)\n",
                (long long)S, (long long)B, (long long)H, (long long)D,
                (long long)V, reps);
    for (size_t mode = 0; mode < n; ++mode) {
      float diff = 0, tdiff = maxAbsDiff(res[mode].dtable, res[0].dtable);
      for (auto field : {&Result::out, &Result::dq, &Result::dk, &Result::dv})
        diff = std::max(diff, maxAbsDiff(res[mode].*field, res[0].*field));
      std::printf("  %-8s forward %8.1f ms (best %8.1f)  backward %8.1f ms "
                  "(best %8.1f)  %s / this: fwd %.2fx bwd %.2fx  max|diff| to "
                  "%s: out/dq/dk/dv %.2e, dtable %.2e\n",
                  paths[mode].c_str(), median(fwdMs[mode]), best(fwdMs[mode]),
                  median(bwdMs[mode]), best(bwdMs[mode]), paths[0].c_str(),
                  median(fwdMs[0]) / median(fwdMs[mode]),
                  median(bwdMs[0]) / median(bwdMs[mode]), paths[0].c_str(),
                  diff, tdiff);
    }
    std::fflush(stdout);
  }
  return 0;
}
