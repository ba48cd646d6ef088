//===- ParallelPlan.cpp - The parallel plan as a value --------------------===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Dialect/GT/GTAttrs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace megagraph;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

bool ParallelPlan::operator==(const ParallelPlan &other) const {
  return dp == other.dp && pp == other.pp && cp == other.cp &&
         microBatches == other.microBatches && zero == other.zero &&
         recompute == other.recompute && cpMode == other.cpMode &&
         stages == other.stages && mop == other.mop && gp == other.gp &&
         moa == other.moa && chunks == other.chunks;
}

llvm::Error megagraph::verifyParallelPlan(const ParallelPlan &plan) {
  if (plan.dp < 1 || plan.pp < 1 || plan.cp < 1)
    return fail("dp, pp and cp must be at least 1, got dp=" + Twine(plan.dp) +
                ", pp=" + Twine(plan.pp) + ", cp=" + Twine(plan.cp));
  if (plan.mop < 1 || plan.gp < 1 || plan.chunks < 1)
    return fail(
        "mop, gp and chunks must be at least 1, got mop=" + Twine(plan.mop) +
        ", gp=" + Twine(plan.gp) + ", chunks=" + Twine(plan.chunks));
  if (plan.mop > 1 && plan.gp > 1)
    return fail("mop and gp are two ways of splitting the nodes; give one");
  if (plan.microBatches < 1)
    return fail("mb (micro-batches) must be at least 1, got " +
                Twine(plan.microBatches));
  if (plan.zero < 0 || plan.zero > 3)
    return fail("zero must be 0, 1, 2 or 3, got " + Twine(plan.zero));
  if (plan.cpMode != "allgather" && plan.cpMode != "ring" &&
      plan.cpMode != "ulysses")
    return fail("cp_mode must be allgather, ring or ulysses, got '" +
                plan.cpMode + "'");
  if (plan.stages.empty())
    return llvm::Error::success();
  if (static_cast<int64_t>(plan.stages.size()) != plan.pp)
    return fail("stages lists " + Twine(plan.stages.size()) +
                " stage starts but pp=" + Twine(plan.pp));
  if (plan.stages.front() != 0)
    return fail("the first stage must start at layer 0, got " +
                Twine(plan.stages.front()));
  for (size_t i = 1; i < plan.stages.size(); ++i)
    if (plan.stages[i] <= plan.stages[i - 1])
      return fail("stage starts must be strictly increasing, got " +
                  Twine(plan.stages[i - 1]) + " then " + Twine(plan.stages[i]));
  return llvm::Error::success();
}

llvm::Expected<ParallelPlan> megagraph::parseParallelPlan(StringRef spec) {
  ParallelPlan plan;
  SmallVector<StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return fail("--plan is empty; use e.g. --plan dp=2");
  for (StringRef item : items) {
    auto [rawKey, rawValue] = item.split('=');
    StringRef key = rawKey.trim(), value = rawValue.trim();
    if (value.empty())
      return fail("--plan item '" + item + "' needs a value (KEY=VALUE)");
    if (key == "cp_mode") {
      plan.cpMode = value.str();
      continue;
    }
    if (key == "stages") {
      SmallVector<StringRef> parts;
      value.split(parts, ':', -1, /*KeepEmpty=*/false);
      plan.stages.clear();
      for (StringRef part : parts) {
        int64_t v;
        if (part.trim().getAsInteger(10, v) || v < 0)
          return fail("--plan stages: '" + part +
                      "' is not a non-negative layer index (use e.g. "
                      "stages=0:3:6)");
        plan.stages.push_back(v);
      }
      continue;
    }
    int64_t v;
    if (value.getAsInteger(10, v) || v < 0)
      return fail("--plan item '" + item +
                  "' needs a non-negative integer value");
    if (key == "dp")
      plan.dp = v;
    else if (key == "pp")
      plan.pp = v;
    else if (key == "cp")
      plan.cp = v;
    else if (key == "mb" || key == "micro_batches")
      plan.microBatches = v;
    else if (key == "zero")
      plan.zero = v;
    else if (key == "mop")
      plan.mop = v;
    else if (key == "gp")
      plan.gp = v;
    else if (key == "chunks")
      plan.chunks = v;
    else if (key == "moa") {
      if (v > 1)
        return fail("--plan moa must be 0 or 1");
      plan.moa = v == 1;
    } else if (key == "recompute") {
      if (v > 1)
        return fail("--plan recompute must be 0 or 1");
      plan.recompute = v == 1;
    } else
      return fail(
          "--plan: unknown key '" + key +
          "' (known: dp, pp, cp, cp_mode, mb, zero, recompute, stages, mop, "
          "gp, moa, chunks)");
  }
  if (llvm::Error error = verifyParallelPlan(plan))
    return fail("--plan: " + llvm::toString(std::move(error)));
  return plan;
}

llvm::Error megagraph::checkPlanImplemented(const ParallelPlan &plan) {
  auto notYet = [&](const Twine &why) {
    return fail("--plan " + toString(plan) + ": " + why);
  };
  if (plan.pp == 1 && !plan.stages.empty())
    return notYet("stages apply to pipeline parallelism (pp > 1)");
  if ((plan.mop > 1 || plan.gp > 1) &&
      (plan.dp != 1 || plan.pp != 1 || plan.cp != 1 || plan.zero != 0))
    return notYet(std::string(plan.mop > 1 ? "mop" : "gp") +
                  " splits the one graph's nodes over all ranks; it does not "
                  "combine with dp, pp, cp or zero yet");
  if (!plan.moa && plan.chunks != 1)
    return notYet("chunks is the pipeline depth of moa=1");
  if (plan.moa && (plan.pp > 1 || plan.microBatches > 1))
    return notYet("moa=1 does not combine with pipeline parallelism or "
                  "micro-batches");
  return llvm::Error::success();
}

std::string megagraph::toString(const ParallelPlan &plan) {
  // dp always, but for the full-graph splits (which have no dp).
  std::string s = plan.dp == 1 && (plan.mop > 1 || plan.gp > 1)
                      ? ""
                      : "dp=" + std::to_string(plan.dp);
  if (plan.pp != 1)
    s += ",pp=" + std::to_string(plan.pp);
  if (plan.cp != 1)
    s += ",cp=" + std::to_string(plan.cp);
  if (plan.cp != 1 && plan.cpMode != "allgather")
    s += ",cp_mode=" + plan.cpMode;
  if (plan.microBatches != 1)
    s += ",mb=" + std::to_string(plan.microBatches);
  if (plan.zero != 0)
    s += ",zero=" + std::to_string(plan.zero);
  if (plan.recompute)
    s += ",recompute=1";
  if (plan.mop != 1)
    s += (s.empty() ? "mop=" : ",mop=") + std::to_string(plan.mop);
  if (plan.gp != 1)
    s += (s.empty() ? "gp=" : ",gp=") + std::to_string(plan.gp);
  if (plan.moa)
    s += ",moa=1";
  if (plan.chunks != 1)
    s += ",chunks=" + std::to_string(plan.chunks);
  if (!plan.stages.empty()) {
    s += ",stages=";
    s +=
        llvm::join(llvm::map_range(plan.stages,
                                   [](int64_t v) { return std::to_string(v); }),
                   ":");
  }
  return s;
}

llvm::json::Value megagraph::toJSON(const ParallelPlan &plan) {
  return llvm::json::Object{{"dp", plan.dp},
                            {"pp", plan.pp},
                            {"cp", plan.cp},
                            {"micro_batches", plan.microBatches},
                            {"zero", plan.zero},
                            {"recompute", plan.recompute},
                            {"cp_mode", plan.cpMode},
                            {"stages", llvm::json::Array(plan.stages)},
                            {"mop", plan.mop},
                            {"gp", plan.gp},
                            {"moa", plan.moa},
                            {"chunks", plan.chunks},
                            {"devices", plan.devices()}};
}

bool megagraph::fromJSON(const llvm::json::Value &value, ParallelPlan &plan,
                         llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  return mapper && mapper.mapOptional("dp", plan.dp) &&
         mapper.mapOptional("pp", plan.pp) &&
         mapper.mapOptional("cp", plan.cp) &&
         mapper.mapOptional("micro_batches", plan.microBatches) &&
         mapper.mapOptional("zero", plan.zero) &&
         mapper.mapOptional("recompute", plan.recompute) &&
         mapper.mapOptional("cp_mode", plan.cpMode) &&
         mapper.mapOptional("stages", plan.stages) &&
         mapper.mapOptional("mop", plan.mop) &&
         mapper.mapOptional("gp", plan.gp) &&
         mapper.mapOptional("moa", plan.moa) &&
         mapper.mapOptional("chunks", plan.chunks);
}

gt::PlanAttr megagraph::toAttr(MLIRContext *context, const ParallelPlan &plan) {
  return gt::PlanAttr::get(context, plan.dp, plan.pp, plan.cp,
                           plan.microBatches, plan.zero, plan.recompute,
                           plan.cpMode, plan.stages, plan.mop, plan.gp,
                           plan.moa, plan.chunks);
}

ParallelPlan megagraph::fromAttr(gt::PlanAttr attr) {
  ParallelPlan plan;
  plan.dp = attr.getDp();
  plan.pp = attr.getPp();
  plan.cp = attr.getCp();
  plan.microBatches = attr.getMicroBatches();
  plan.zero = attr.getZero();
  plan.recompute = attr.getRecompute();
  plan.cpMode = attr.getCpMode().str();
  plan.stages.assign(attr.getStages().begin(), attr.getStages().end());
  plan.mop = attr.getMop();
  plan.gp = attr.getGp();
  plan.moa = attr.getMoa();
  plan.chunks = attr.getChunks();
  return plan;
}
