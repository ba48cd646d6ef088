//===- PlanReport.cpp - megagraph-compile --plan-report -------------------===//
//
// The page is drawn from the plan step's JSON only (PlanChoice.cpp), so
// what it shows is what --emit=plan prints: the search's alternatives, the
// chosen plan's prediction and the model summary. The prediction's memory
// is the most loaded device's, which every device of the grid is drawn
// with; the Gantt chart's stage durations split the predicted compute time
// by each stage's share of the model's FLOPs.
//
//===----------------------------------------------------------------------===//

#include "PlanReport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace llvm;
using namespace megagraph;

std::vector<ScheduledAction>
megagraph::scheduleOneFOneB(const std::vector<double> &stageTimes,
                            int64_t microBatches) {
  const int64_t pp = stageTimes.size(), mb = std::max<int64_t>(1, microBatches);
  // Each stage's actions in the driver's order.
  std::vector<std::vector<ScheduledAction>> order(pp);
  for (int64_t s = 0; s < pp; ++s) {
    const int64_t warmup = std::min(pp - s - 1, mb);
    auto add = [&](bool forward, int64_t m) {
      order[s].push_back({s, m, forward, 0, 0});
    };
    for (int64_t m = 0; m < warmup; ++m)
      add(true, m);
    for (int64_t i = 0; i < mb - warmup; ++i) {
      add(true, warmup + i);
      add(false, i);
    }
    for (int64_t i = mb - warmup; i < mb; ++i)
      add(false, i);
  }
  // Times: repeatedly start the first pending action of any stage whose
  // input is ready (the dependency graph is acyclic, so this terminates).
  std::vector<std::vector<double>> fwdEnd(pp, std::vector<double>(mb, -1)),
      bwdEnd(pp, std::vector<double>(mb, -1));
  std::vector<size_t> next(pp, 0);
  std::vector<double> free(pp, 0);
  std::vector<ScheduledAction> done;
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < pp; ++s) {
      while (next[s] < order[s].size()) {
        ScheduledAction a = order[s][next[s]];
        double ready = 0;
        if (a.forward && s > 0)
          ready = fwdEnd[s - 1][a.microBatch];
        else if (!a.forward)
          ready = s + 1 < pp ? bwdEnd[s + 1][a.microBatch]
                             : fwdEnd[s][a.microBatch];
        if (ready < 0)
          break;
        const double forwardTime = stageTimes[s] / 3;
        a.start = std::max(free[s], ready);
        a.end = a.start + (a.forward ? forwardTime : 2 * forwardTime);
        free[s] = a.end;
        (a.forward ? fwdEnd : bwdEnd)[s][a.microBatch] = a.end;
        done.push_back(a);
        ++next[s];
        progress = true;
      }
    }
  }
  return done;
}

namespace {

/// The memory kinds of a prediction, in stacking order, with their colors.
struct MemoryKind {
  const char *key, *label, *color;
};
constexpr MemoryKind memoryKinds[] = {
    {"parameters", "parameters", "#4e79a7"},
    {"gradients", "gradients", "#f28e2b"},
    {"optimizer_state", "optimizer state", "#e15759"},
    {"activations", "activations", "#76b7b2"},
    {"attention_bias", "attention bias", "#59a14f"},
    {"io", "inputs / outputs", "#edc948"},
    {"transient", "transient (largest op's scratch)", "#b07aa1"},
    {"update", "after the backward (reduction, update)", "#9c755f"}};

/// Whether a kind belongs to the backward's phase or the update's: the
/// step peaks in one of them (the prediction's `peak_phase`), so a bar
/// shows the kinds of that phase and the kinds both hold.
bool inBackwardPhase(StringRef key) {
  return key == "activations" || key == "attention_bias" || key == "transient";
}

std::string escapeXML(StringRef text) {
  std::string out;
  raw_string_ostream os(out);
  printHTMLEscaped(text, os);
  return out;
}

std::string bytesText(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4)
    bytes /= 1024, ++u;
  return formatv(u ? "{0:F2} {1}" : "{0:F0} {1}", bytes, units[u]).str();
}

std::string secondsText(double s) {
  if (s >= 1)
    return formatv("{0:F3} s", s).str();
  if (s >= 1e-3)
    return formatv("{0:F3} ms", s * 1e3).str();
  return formatv("{0:F1} us", s * 1e6).str();
}

double number(const json::Object *o, StringRef key) {
  if (!o)
    return 0;
  if (std::optional<double> v = o->getNumber(key))
    return *v;
  return 0;
}

/// What the page needs from the plan JSON.
struct Report {
  std::string planString, profile;
  int64_t dp = 1, pp = 1, cp = 1, mb = 1, globalBatch = 0;
  double budget = 0;
  bool searched = false;
  const json::Object *prediction = nullptr;
  const json::Array *alternatives = nullptr;
  const json::Object *summary = nullptr; // the search's counts
  std::vector<double> stageTimes;
};

Expected<Report> readReport(const json::Value &root) {
  Report r;
  const json::Object *o = root.getAsObject();
  if (!o)
    return createStringError("plan JSON: not an object");
  r.summary = o;
  const json::Object *plan = o->getObject("plan");
  r.prediction = o->getObject("prediction");
  if (!plan || !r.prediction)
    return createStringError("plan JSON: no plan or prediction (was a plan "
                             "found?)");
  if (std::optional<StringRef> s = o->getString("plan_string"))
    r.planString = s->str();
  if (std::optional<StringRef> s = o->getString("profile"))
    r.profile = s->str();
  r.searched = o->getBoolean("searched").value_or(false);
  r.dp = plan->getInteger("dp").value_or(1);
  r.pp = plan->getInteger("pp").value_or(1);
  r.cp = plan->getInteger("cp").value_or(1);
  r.mb = std::max<int64_t>(1, plan->getInteger("micro_batches").value_or(1));
  r.globalBatch = o->getInteger("global_batch").value_or(0);
  r.budget = number(o, "budget_bytes");
  r.alternatives = o->getArray("alternatives");

  // Stage durations: the stages' FLOP shares of the slowest stage's
  // predicted compute per micro-batch.
  std::vector<double> unitFlops;
  if (const json::Object *model = o->getObject("model"))
    if (const json::Array *units = model->getArray("units_per_sequence"))
      for (const json::Value &u : *units) {
        const json::Object *uo = u.getAsObject();
        unitFlops.push_back(number(uo, "gemm_flops") +
                            number(uo, "small_gemm_flops") +
                            number(uo, "attention_flops"));
      }
  std::vector<int64_t> firsts;
  if (const json::Array *f = r.prediction->getArray("first_layer_of_stage"))
    for (const json::Value &v : *f)
      firsts.push_back(v.getAsInteger().value_or(0));
  std::vector<double> shares(r.pp, 1.0);
  if (!unitFlops.empty() && (int64_t)firsts.size() == r.pp) {
    for (int64_t s = 0; s < r.pp; ++s) {
      int64_t end = s + 1 < r.pp ? firsts[s + 1] : unitFlops.size();
      double sum = 0;
      for (int64_t u = std::max<int64_t>(0, firsts[s]);
           u < end && u < (int64_t)unitFlops.size(); ++u)
        sum += unitFlops[u];
      shares[s] = sum;
    }
  }
  double maxShare = *std::max_element(shares.begin(), shares.end());
  const double perMicroBatch = number(r.prediction, "compute_s") / r.mb;
  for (double share : shares)
    r.stageTimes.push_back(maxShare > 0 ? perMicroBatch * share / maxShare
                                        : perMicroBatch);
  return r;
}

void writeHead(raw_ostream &os, const Report &r) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\"/>\n<title>MegaGraph plan "
     << escapeXML(r.planString) << "</title>\n<style>\n"
     << "body{font-family:system-ui,sans-serif;margin:2em;color:#222;"
        "max-width:1100px}\n"
        "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}\n"
        "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:"
        "left;border-bottom:1px solid #ddd;font-size:0.9em;white-space:"
        "nowrap}\ntd:last-child{white-space:normal}\n"
        "tr.chosen{background:#e8f4e8;font-weight:bold}"
        "tr.pruned{color:#777}\n"
        "svg text{font-size:11px;font-family:system-ui,sans-serif}\n"
        ".legend span{display:inline-block;width:12px;height:12px;"
        "margin:0 4px 0 12px;vertical-align:middle}\n"
     << "</style>\n</head>\n<body>\n";
}

void writeSummary(raw_ostream &os, const Report &r) {
  os << "<h1>MegaGraph plan <code>" << escapeXML(r.planString)
     << "</code></h1>\n<table class=\"summary\">\n";
  auto row = [&](StringRef k, const Twine &v) {
    os << "<tr><th>" << k << "</th><td>" << escapeXML(v.str())
       << "</td></tr>\n";
  };
  row("devices", formatv("{0} = dp {1} x pp {2} x cp {3}", r.dp * r.pp * r.cp,
                         r.dp, r.pp, r.cp));
  row("global batch",
      Twine(r.globalBatch) + " sequences" +
          (r.pp > 1 ? ", " + Twine(r.mb) + " micro-batches" : Twine()));
  row("predicted step",
      secondsText(number(r.prediction, "step_time_s")) + " (compute " +
          secondsText(number(r.prediction, "compute_s")) + ", communication " +
          secondsText(number(r.prediction, "communication_s")) + ", bubble " +
          secondsText(number(r.prediction, "bubble_s")) + ")");
  row("predicted peak per device",
      bytesText(number(r.prediction, "peak_bytes")));
  row("budget per device", r.budget > 0 ? bytesText(r.budget) : "none given");
  row("hardware profile", r.profile);
  row("chosen by", r.searched ? "the plan search" : "--plan (priced)");
  os << "</table>\n";
}

/// The grid: one row per dp replica, one column group per stage, cp ranks
/// side by side; rank = (d * pp + k) * cp + c.
void writeGrid(raw_ostream &os, const Report &r) {
  const int cell = 46, gap = 14;
  const int64_t cols = r.pp * r.cp;
  const int width = 90 + cols * cell + (r.pp - 1) * gap + 10;
  const int height = 30 + r.dp * (cell + 6) + 10;
  os << "<h2>Device grid</h2>\n<svg id=\"grid\" width=\"" << width
     << "\" height=\"" << height
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (int64_t k = 0; k < r.pp; ++k)
    os << "<text x=\"" << 90 + k * (r.cp * cell + gap) << "\" y=\"18\">stage "
       << k << (r.cp > 1 ? formatv(" (cp {0})", r.cp).str() : "")
       << "</text>\n";
  for (int64_t d = 0; d < r.dp; ++d) {
    const int y = 30 + d * (cell + 6);
    os << "<text x=\"0\" y=\"" << y + cell / 2 + 4 << "\">replica " << d
       << "</text>\n";
    for (int64_t k = 0; k < r.pp; ++k)
      for (int64_t c = 0; c < r.cp; ++c) {
        const int64_t rank = (d * r.pp + k) * r.cp + c;
        const int x = 90 + k * (r.cp * cell + gap) + c * cell;
        os << "<g class=\"device\" data-rank=\"" << rank << "\" data-dp=\"" << d
           << "\" data-pp=\"" << k << "\" data-cp=\"" << c << "\"><rect x=\""
           << x << "\" y=\"" << y << "\" width=\"" << cell - 4 << "\" height=\""
           << cell
           << "\" rx=\"4\" fill=\"#dbe8f5\" stroke=\"#4e79a7\"/><text x=\""
           << x + 6 << "\" y=\"" << y + cell / 2 + 4 << "\">rank " << rank
           << "</text></g>\n";
      }
  }
  os << "</svg>\n";
}

void writeMemory(raw_ostream &os, const Report &r) {
  const int64_t devices = r.dp * r.pp * r.cp;
  const json::Object *memory = r.prediction->getObject("memory");
  const double peak = number(r.prediction, "peak_bytes");
  // The scale shows the budget when it is within 4x of the peak; else the
  // bars would be slivers, and the budget is only named.
  const bool budgetOnScale = r.budget > 0 && r.budget <= 4 * peak;
  const double scale = std::max(peak, budgetOnScale ? r.budget : 0.0) * 1.05;
  const int barWidth = 34, step = 48, plotHeight = 220, top = 20, left = 70;
  const int width = left + devices * step + 20;
  os << "<h2>Predicted memory per device</h2>\n<p class=\"legend\">";
  for (const MemoryKind &k : memoryKinds)
    os << "<span style=\"background:" << k.color << "\"></span>" << k.label;
  os << "</p>\n";
  const std::optional<StringRef> phase =
      memory ? memory->getString("peak_phase") : std::nullopt;
  const bool updatePhase = phase && *phase == "update";
  os << "<p>The step peaks "
     << (updatePhase ? "after its backward, while the gradients are reduced "
                       "and the optimizer updates the parameters"
                     : "in its backward, while the activations are held")
     << "; the bars show that phase.</p>\n";
  if (r.pp > 1)
    os << "<p>With pipeline stages, activations and attention bias include "
          "the micro-batches in flight on the most loaded stage (at most "
       << std::min(r.pp, r.mb) << " under 1F1B).</p>\n";
  if (r.budget > 0 && !budgetOnScale)
    os << "<p>Budget " << bytesText(r.budget)
       << " per device, off this scale: the peak is "
       << formatv("{0:F3}", 100 * peak / r.budget) << "% of it.</p>\n";
  os << "<svg id=\"memory\" width=\"" << width << "\" height=\""
     << top + plotHeight + 40 << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = scale * i / 4;
    const int y = top + plotHeight - (int)(plotHeight * i / 4);
    os << "<line x1=\"" << left - 4 << "\" x2=\"" << width - 10 << "\" y1=\""
       << y << "\" y2=\"" << y << "\" stroke=\"#eee\"/><text x=\"0\" y=\""
       << y + 4 << "\">" << bytesText(v) << "</text>\n";
  }
  for (int64_t rank = 0; rank < devices; ++rank) {
    const int x = left + rank * step;
    double below = 0;
    os << "<g class=\"memory-bar\" data-rank=\"" << rank << "\" data-bytes=\""
       << (int64_t)peak << "\">";
    for (const MemoryKind &k : memoryKinds) {
      if (StringRef(k.key) == "update" ? !updatePhase
                                       : updatePhase && inBackwardPhase(k.key))
        continue;
      const double bytes = number(memory, k.key);
      const double y0 = top + plotHeight * (1 - below / scale);
      const double h = plotHeight * bytes / scale;
      below += bytes;
      os << "<rect class=\"mem-" << k.key << "\" data-bytes=\""
         << (int64_t)bytes << "\" x=\"" << x << "\" y=\""
         << format("%.2f", y0 - h) << "\" width=\"" << barWidth
         << "\" height=\"" << format("%.2f", h) << "\" fill=\"" << k.color
         << "\"><title>rank " << rank << ": " << k.label << " "
         << bytesText(bytes) << "</title></rect>";
    }
    os << "<text x=\"" << x << "\" y=\"" << top + plotHeight + 16 << "\">rank "
       << rank << "</text></g>\n";
  }
  if (budgetOnScale) {
    const double y = top + plotHeight * (1 - r.budget / scale);
    os << "<line class=\"budget\" x1=\"" << left - 4 << "\" x2=\"" << width - 10
       << "\" y1=\"" << format("%.2f", y) << "\" y2=\"" << format("%.2f", y)
       << "\" stroke=\"#c00\" stroke-dasharray=\"6,3\"/><text x=\"" << left
       << "\" y=\"" << format("%.2f", y - 4) << "\" fill=\"#c00\">budget "
       << bytesText(r.budget) << "</text>\n";
  }
  os << "</svg>\n";
}

void writeGantt(raw_ostream &os, const Report &r) {
  std::vector<ScheduledAction> actions = scheduleOneFOneB(r.stageTimes, r.mb);
  double end = 0;
  for (const ScheduledAction &a : actions)
    end = std::max(end, a.end);
  const int left = 70, rowHeight = 28, plotWidth = 820;
  const double scale = end > 0 ? plotWidth / end : 0;
  os << "<h2>Pipeline schedule (1F1B, one step)</h2>\n<p>Forward "
        "<span style=\"color:#4e79a7\">&#9632;</span>, backward <span "
        "style=\"color:#f28e2b\">&#9632;</span> of each micro-batch; stage "
        "durations split the predicted compute by each stage's share of "
        "the model's FLOPs; "
     << secondsText(end) << " without communication.</p>\n";
  os << "<svg id=\"gantt\" width=\"" << left + plotWidth + 20 << "\" height=\""
     << r.pp * rowHeight + 30 << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (int64_t s = 0; s < r.pp; ++s) {
    const int y = 4 + s * rowHeight;
    os << "<g class=\"gantt-row\" data-stage=\"" << s << "\"><text x=\"0\" y=\""
       << y + 16 << "\">stage " << s << "</text>";
    for (const ScheduledAction &a : actions) {
      if (a.stage != s)
        continue;
      const double x = left + a.start * scale, w = (a.end - a.start) * scale;
      os << "<rect class=\"" << (a.forward ? "fwd" : "bwd") << "\" data-mb=\""
         << a.microBatch << "\" x=\"" << format("%.2f", x) << "\" y=\"" << y
         << "\" width=\"" << format("%.2f", std::max(0.5, w - 1))
         << "\" height=\"" << rowHeight - 6 << "\" fill=\""
         << (a.forward ? "#4e79a7" : "#f28e2b") << "\"><title>stage " << s
         << (a.forward ? " forward" : " backward") << " micro-batch "
         << a.microBatch << ": " << secondsText(a.start) << " - "
         << secondsText(a.end) << "</title></rect>";
      if (w > 18)
        os << "<text x=\"" << format("%.2f", x + 3) << "\" y=\"" << y + 15
           << "\" fill=\"#fff\">" << (a.forward ? "F" : "B") << a.microBatch
           << "</text>";
    }
    os << "</g>\n";
  }
  os << "<text x=\"" << left << "\" y=\"" << r.pp * rowHeight + 20
     << "\">0</text><text x=\"" << left + plotWidth - 60 << "\" y=\""
     << r.pp * rowHeight + 20 << "\">" << secondsText(end) << "</text>\n";
  os << "</svg>\n";
}

void writeAlternatives(raw_ostream &os, const Report &r) {
  os << "<h2>Ranked alternatives</h2>\n";
  if (!r.alternatives) {
    os << "<p>The plan was given (--plan), not searched: no "
          "alternatives.</p>\n";
    return;
  }
  const json::Object *o = r.summary;
  os << "<p>" << (int64_t)number(o, "evaluated") << " plans evaluated in "
     << secondsText(number(o, "search_seconds"))
     << "; pruned: " << (int64_t)number(o, "pruned_memory")
     << " over the memory budget, " << (int64_t)number(o, "pruned_invalid")
     << " not applicable, " << (int64_t)number(o, "pruned_unimplemented")
     << " not implemented yet, " << (int64_t)number(o, "pruned_dominated")
     << " dominated. The fastest ranked plans:</p>\n";
  os << "<table id=\"alternatives\">\n<tr><th>rank</th><th>plan</th><th>"
        "step</th><th>compute</th><th>comm</th><th>bubble</th><th>peak / "
        "device</th><th>verdict</th></tr>\n";
  for (auto [i, alt] : enumerate(*r.alternatives)) {
    const json::Object *a = alt.getAsObject();
    if (!a)
      continue;
    const json::Object *p = a->getObject("prediction");
    StringRef plan = a->getString("plan").value_or("");
    StringRef pruned = a->getString("pruned").value_or("");
    const bool chosen = plan == r.planString;
    os << "<tr class=\""
       << (chosen           ? "chosen"
           : pruned.empty() ? ""
                            : "pruned")
       << "\"><td>" << i + 1 << "</td><td><code>" << escapeXML(plan)
       << "</code></td><td>" << secondsText(number(p, "step_time_s"))
       << "</td><td>" << secondsText(number(p, "compute_s")) << "</td><td>"
       << secondsText(number(p, "communication_s")) << "</td><td>"
       << secondsText(number(p, "bubble_s")) << "</td><td>"
       << bytesText(number(p, "peak_bytes")) << "</td><td>"
       << (chosen           ? std::string("chosen")
           : pruned.empty() ? std::string("fits; slower or tied")
                            : escapeXML(pruned))
       << "</td></tr>\n";
  }
  os << "</table>\n";
}

} // namespace

Error megagraph::writePlanReport(StringRef dir, StringRef planJson) {
  Expected<json::Value> root = json::parse(planJson);
  if (!root)
    return createStringError("--plan-report: the plan JSON does not parse: " +
                             toString(root.takeError()));
  Expected<Report> report = readReport(*root);
  if (!report)
    return report.takeError();
  if (std::error_code ec = sys::fs::create_directories(dir))
    return createStringError("--plan-report '" + dir +
                             "': cannot create the folder: " + ec.message());
  for (StringRef name : {"plan.json", "index.html"}) {
    SmallString<256> path(dir);
    sys::path::append(path, name);
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec)
      return createStringError("--plan-report: cannot write '" + path +
                               "': " + ec.message());
    if (name == "plan.json") {
      os << planJson;
      continue;
    }
    writeHead(os, *report);
    writeSummary(os, *report);
    writeGrid(os, *report);
    writeMemory(os, *report);
    writeGantt(os, *report);
    writeAlternatives(os, *report);
    os << "</body>\n</html>\n";
  }
  return Error::success();
}
