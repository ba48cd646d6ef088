//===- Search.cpp - The fastest parallel plan that fits -------------------===//

#include "megagraph/Plan/Search.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace megagraph;

static std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n && i <= limit; ++i)
    if (n % i == 0)
      d.push_back(i);
  return d;
}

std::vector<ParallelPlan>
megagraph::enumeratePlans(const ModelProfile &model,
                          const SearchOptions &options) {
  std::vector<ParallelPlan> plans;
  const int64_t P = options.devices;
  for (int64_t dp : divisors(P, P)) {
    if (model.batch % dp)
      continue;
    const int64_t b = model.batch / dp;
    for (int64_t pp : divisors(P / dp, model.layers())) {
      const int64_t cp = P / dp / pp;
      // cp need not divide S (uneven blocks of S / cp or one more rows).
      if (cp > 1 && model.seqLen / cp < options.minCpRows)
        continue;
      for (int64_t mb : divisors(b, options.maxMicroBatches)) {
        if (pp > 1 && mb < pp)
          continue; // a pipeline with fewer micro-batches than stages idles
        for (int64_t zero : options.zeroStages) {
          if (dp * cp == 1 && zero != 0)
            continue; // nothing to shard over (ZeRO shards over dp x cp)
          for (int rec = 0; rec <= (options.allowRecompute ? 1 : 0); ++rec) {
            std::vector<std::string> modes =
                cp > 1 ? options.cpModes
                       : std::vector<std::string>{"allgather"};
            for (const std::string &mode : modes) {
              // Ulysses gives each cp rank whole heads.
              if (mode == "ulysses" && (model.heads < cp || model.heads % cp))
                continue;
              ParallelPlan p;
              p.dp = dp;
              p.pp = pp;
              p.cp = cp;
              p.microBatches = mb;
              p.zero = zero;
              p.recompute = rec;
              p.cpMode = mode;
              plans.push_back(p);
            }
          }
        }
      }
    }
  }
  return plans;
}

SearchResult megagraph::searchPlans(const ModelProfile &model,
                                    const HardwareProfile &profile,
                                    const SearchOptions &options) {
  auto start = std::chrono::steady_clock::now();
  SearchResult r;
  r.budget =
      options.deviceMemory > 0 ? options.deviceMemory : profile.deviceMemory;
  bool haveBestModelled = false;
  bool haveSmallest = false, haveSmallestImpl = false;
  for (ParallelPlan &plan : enumeratePlans(model, options)) {
    ++r.evaluated;
    // A pipeline plan whose step time cannot beat the chosen plan nor
    // enter the kept list skips its stage DP.
    if (plan.pp > 1 && r.found && (int64_t)r.ranked.size() >= options.keep) {
      double bound = stepTimeLowerBound(model, plan, profile);
      if (bound >= r.best.prediction.stepTime &&
          bound >= r.ranked.back().prediction.stepTime) {
        ++r.prunedDominated;
        continue;
      }
    }
    Candidate c;
    c.plan = plan;
    c.prediction = predict(model, plan, profile, r.budget,
                           /*breakdown=*/false);
    if (!c.prediction.valid) {
      ++r.prunedInvalid;
      continue;
    }
    if (plan.pp > 1)
      c.plan.stages = c.prediction.firstUnit;
    std::string why =
        options.implemented ? options.implemented(c.plan) : std::string();
    const double peak = c.prediction.peakBytes();
    if (!haveSmallest || peak < r.smallestPeak) {
      r.smallestPeak = peak;
      haveSmallest = true;
    }
    if (why.empty() &&
        (!haveSmallestImpl || peak < r.smallestPeakImplemented)) {
      r.smallestPeakImplemented = peak;
      r.smallestPeakPlan = c.plan;
      haveSmallestImpl = true;
    }
    if (r.budget > 0 && peak > static_cast<double>(r.budget)) {
      ++r.prunedMemory;
      c.pruned = "over the budget: " + formatBytes(peak) + " > " +
                 formatBytes(static_cast<double>(r.budget));
      r.overBudget.push_back(c);
      continue;
    }
    auto faster = [](const Candidate &a, const Candidate &b) {
      if (a.prediction.stepTime != b.prediction.stepTime)
        return a.prediction.stepTime < b.prediction.stepTime;
      return a.prediction.peakBytes() < b.prediction.peakBytes();
    };
    if (!why.empty()) {
      ++r.prunedUnimplemented;
      c.pruned = "not implemented: " + why;
    } else if (!r.found || faster(c, r.best)) {
      r.best = c;
      r.found = true;
    }
    if (!haveBestModelled || faster(c, r.bestModelled)) {
      r.bestModelled = c;
      haveBestModelled = true;
    }
    // Keep the fastest `keep` (insertion into a short sorted list).
    auto pos = std::upper_bound(r.ranked.begin(), r.ranked.end(), c, faster);
    if (pos - r.ranked.begin() < options.keep) {
      r.ranked.insert(pos, c);
      if ((int64_t)r.ranked.size() > options.keep)
        r.ranked.pop_back();
    }
  }
  // The chosen plan is always listed.
  if (r.found &&
      std::none_of(r.ranked.begin(), r.ranked.end(), [&](const Candidate &c) {
        return c.pruned.empty() && c.plan == r.best.plan;
      }))
    r.ranked.push_back(r.best);
  // The kept plans with the compute / communication breakdown.
  auto detail = [&](Candidate &c) {
    c.prediction = predict(model, c.plan, profile, 0, /*breakdown=*/true);
  };
  for (Candidate &c : r.ranked)
    detail(c);
  if (r.found)
    detail(r.best);
  if (haveBestModelled)
    detail(r.bestModelled);
  std::sort(r.overBudget.begin(), r.overBudget.end(),
            [](const Candidate &a, const Candidate &b) {
              return a.prediction.peakBytes() < b.prediction.peakBytes();
            });
  if (r.overBudget.size() > 5)
    r.overBudget.resize(5);
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return r;
}

static std::string planCell(const ParallelPlan &p) {
  std::string s = toString(p);
  return s;
}

static std::string seconds(double s) {
  char buf[32];
  if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

std::string megagraph::formatExplain(const SearchResult &r, int64_t top) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "plan search: " << r.evaluated << " plans, budget "
     << (r.budget > 0 ? formatBytes(r.budget) : std::string("unlimited"))
     << " per device, " << llvm::format("%.1f", r.seconds * 1e3) << " ms\n";
  os << llvm::format("%-4s %-44s %11s %11s %11s %11s %12s  %s\n", "rank",
                     "plan", "step", "compute", "comm", "bubble", "peak/device",
                     "note");
  int64_t rank = 0;
  for (const Candidate &c : r.ranked) {
    ++rank;
    // Past `top`, only the chosen plan (appended when slower) is listed.
    if (rank > top && !(r.found && c.pruned.empty() && c.plan == r.best.plan))
      continue;
    std::string note = c.pruned.empty()
                           ? (r.found && c.plan == r.best.plan ? "chosen" : "")
                           : c.pruned;
    os << llvm::format(
        "%-4lld %-44s %11s %11s %11s %11s %12s  %s\n", (long long)rank,
        planCell(c.plan).c_str(), seconds(c.prediction.stepTime).c_str(),
        seconds(c.prediction.computeTime).c_str(),
        seconds(c.prediction.communicationTime).c_str(),
        seconds(c.prediction.bubbleTime).c_str(),
        formatBytes(c.prediction.peakBytes()).c_str(), note.c_str());
  }
  os << "pruned: " << r.prunedMemory << " over the memory budget, "
     << r.prunedInvalid
     << " not applicable (batch, S or layers not divisible), "
     << r.prunedUnimplemented << " fitting but not implemented yet";
  if (r.prunedDominated)
    os << ", " << r.prunedDominated
       << " pipeline plans slower than the kept ones by a lower bound";
  os << "\n";
  for (const Candidate &c : r.overBudget)
    os << "  over budget: " << planCell(c.plan) << " needs "
       << formatBytes(c.prediction.peakBytes()) << " per device\n";
  if (!r.found)
    os << "no plan fits: the smallest per-device memory that would fit is "
       << formatBytes(r.smallestPeakImplemented) << " ("
       << (int64_t)std::ceil(r.smallestPeakImplemented) << " bytes, "
       << planCell(r.smallestPeakPlan) << ")\n";
  return out;
}

llvm::json::Value megagraph::toJSON(const SearchResult &r) {
  llvm::json::Array alternatives;
  for (const Candidate &c : r.ranked)
    alternatives.push_back(
        llvm::json::Object{{"plan", toString(c.plan)},
                           {"prediction", toJSON(c.prediction)},
                           {"pruned", c.pruned}});
  llvm::json::Object o{{"found", r.found},
                       {"budget_bytes", r.budget},
                       {"evaluated", r.evaluated},
                       {"pruned_memory", r.prunedMemory},
                       {"pruned_invalid", r.prunedInvalid},
                       {"pruned_unimplemented", r.prunedUnimplemented},
                       {"pruned_dominated", r.prunedDominated},
                       {"search_seconds", r.seconds},
                       {"alternatives", std::move(alternatives)}};
  if (r.found) {
    o["plan"] = toJSON(r.best.plan);
    o["plan_string"] = toString(r.best.plan);
    o["prediction"] = toJSON(r.best.prediction);
  } else {
    o["smallest_fitting_bytes"] =
        static_cast<int64_t>(std::ceil(r.smallestPeakImplemented));
    o["smallest_fitting_plan"] = toString(r.smallestPeakPlan);
  }
  return o;
}
