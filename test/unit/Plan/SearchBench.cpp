//===- SearchBench.cpp - Plan search time (not a test) --------------------===//
//
// bench/run_search_bench.sh: search time over devices x layers on synthetic
// transformers (hidden 4096, 32 heads, S = 4096, batch 1024, H100 profile),
// and, for a model that plain dp does not fit, the per-device memory of
// dp=P versus the searched plan; then what the search picks at scale among
// the plans megagraph-compile builds (checkPlanImplemented). Prints
// Markdown tables.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/CostModel.h"
#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Plan/Search.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace megagraph;

int main() {
  HardwareProfile h100;
  getBuiltinProfile("h100", h100);
  std::printf("## Search time (H100 profile, hidden 4096, 32 heads, S=4096, "
              "batch 1024 sequences, 80 GB per device)\n\n");
  std::printf("| devices | layers | plans evaluated | search time (ms, "
              "median of 5) | chosen plan | predicted step (s) | peak/device "
              "|\n|---|---|---|---|---|---|---|\n");
  for (int64_t layers : {12, 24, 48, 96})
    for (int64_t devices : {8, 32, 128, 512, 1024}) {
      ModelProfile m = syntheticTransformer(layers, 4096, 32, 1024, 4096);
      SearchOptions o;
      o.devices = devices;
      std::vector<double> times;
      SearchResult r;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        r = searchPlans(m, h100, o);
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      std::sort(times.begin(), times.end());
      std::printf(
          "| %lld | %lld | %lld | %.1f | %s | %s | %s |\n", (long long)devices,
          (long long)layers, (long long)r.evaluated, times[2] * 1e3,
          r.found ? toString(r.best.plan).c_str() : "none fits",
          r.found ? std::to_string(r.best.prediction.stepTime).c_str() : "-",
          r.found ? formatBytes(r.best.prediction.peakBytes()).c_str()
                  : formatBytes(r.smallestPeak).c_str());
    }
  std::printf("\n## Plain dp versus the searched plan when dp does not fit "
              "(H100 profile, 80 GB)\n\n");
  std::printf(
      "| model | devices | dp=P peak/device | searched plan | "
      "peak/device | predicted step (s) |\n|---|---|---|---|---|---|\n");
  struct Case {
    int64_t layers, hidden, heads, batch, seq, devices;
  };
  for (Case c :
       {Case{24, 2048, 16, 64, 8192, 16}, Case{48, 4096, 32, 256, 4096, 64},
        Case{48, 4096, 32, 1024, 16384, 256}}) {
    ModelProfile m =
        syntheticTransformer(c.layers, c.hidden, c.heads, c.batch, c.seq);
    ParallelPlan dp;
    dp.dp = c.devices;
    Prediction pd = predict(m, dp, h100);
    SearchOptions o;
    o.devices = c.devices;
    SearchResult r = searchPlans(m, h100, o);
    std::printf("| L=%lld D=%lld S=%lld B=%lld | %lld | %s | %s | %s | %s |\n",
                (long long)c.layers, (long long)c.hidden, (long long)c.seq,
                (long long)c.batch, (long long)c.devices,
                formatBytes(pd.peakBytes()).c_str(),
                r.found ? toString(r.best.plan).c_str() : "none fits",
                r.found ? formatBytes(r.best.prediction.peakBytes()).c_str()
                        : formatBytes(r.smallestPeak).c_str(),
                r.found ? std::to_string(r.best.prediction.stepTime).c_str()
                        : "-");
  }
  std::printf("\n## At scale, among the plans the compiler builds (H100 "
              "profile, 80 GB)\n\n");
  std::printf("| model | devices | plans evaluated | fastest modelled | "
              "chosen (implemented) | predicted step (s) | peak/device | "
              "fitting but not implemented |\n|---|---|---|---|---|---|---|"
              "---|\n");
  for (Case c :
       {Case{48, 4096, 32, 256, 4096, 64}, Case{4, 128, 8, 1024, 256, 1024}}) {
    ModelProfile m =
        syntheticTransformer(c.layers, c.hidden, c.heads, c.batch, c.seq);
    SearchOptions o;
    o.devices = c.devices;
    o.implemented = [](const ParallelPlan &p) -> std::string {
      if (llvm::Error e = checkPlanImplemented(p))
        return llvm::toString(std::move(e));
      return "";
    };
    SearchResult r = searchPlans(m, h100, o);
    std::printf(
        "| L=%lld D=%lld H=%lld S=%lld B=%lld | %lld | %lld | %s | %s | %s | "
        "%s | %lld |\n",
        (long long)c.layers, (long long)c.hidden, (long long)c.heads,
        (long long)c.seq, (long long)c.batch, (long long)c.devices,
        (long long)r.evaluated, toString(r.bestModelled.plan).c_str(),
        r.found ? toString(r.best.plan).c_str() : "none fits",
        r.found ? std::to_string(r.best.prediction.stepTime).c_str() : "-",
        r.found ? formatBytes(r.best.prediction.peakBytes()).c_str() : "-",
        (long long)r.prunedUnimplemented);
  }
  return 0;
}
