#!/usr/bin/env python3
"""Checks a plan report page (megagraph-compile --plan-report DIR): the
page parses as XML-compatible HTML; its SVG has one memory bar per device
(dp * pp * cp of DIR/plan.json) whose stacked parts add up to the predicted
peak, one device cell per rank, and one Gantt row per pipeline stage with a
forward and a backward of every micro-batch, each backward after the
forward of the same micro-batch.

usage: plan_report_check.py DIR
Prints `devices N bars N cells N stages K rows K actions A ok`; exits 1
with the first problem otherwise.
"""
import json
import os
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.bars, self.cells, self.rows = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag != "rect":  # rects are closed in place (<rect .../> or </rect>)
            self.stack.append(tag)
        if tag == "g" and cls == "memory-bar":
            self.bars.append({"rank": int(a["data-rank"]),
                              "bytes": int(a["data-bytes"]), "parts": []})
        if tag == "g" and cls == "device":
            self.cells.append(int(a["data-rank"]))
        if tag == "g" and cls == "gantt-row":
            self.rows.append({"stage": int(a["data-stage"]), "actions": []})
        if tag == "rect" and cls.startswith("mem-") and self.bars:
            self.bars[-1]["parts"].append(int(a["data-bytes"]))
        if tag == "rect" and cls in ("fwd", "bwd") and self.rows:
            self.rows[-1]["actions"].append(
                (cls, int(a["data-mb"]), float(a["x"]), float(a["width"])))

    def handle_endtag(self, tag):
        if tag != "rect" and self.stack:
            self.stack.pop()


def main():
    folder = sys.argv[1]
    plan = json.load(open(os.path.join(folder, "plan.json")))
    p = plan["plan"]
    devices = p["dp"] * p["pp"] * p["cp"]
    mb = p["micro_batches"] if p["pp"] > 1 else max(1, p["micro_batches"])
    page = Page()
    page.feed(open(os.path.join(folder, "index.html")).read())
    problems = []
    if [b["rank"] for b in page.bars] != list(range(devices)):
        problems.append(f"memory bars for ranks {[b['rank'] for b in page.bars]}"
                        f", expected 0..{devices - 1}")
    for b in page.bars:
        if b["bytes"] != int(plan["prediction"]["peak_bytes"]) or \
                abs(sum(b["parts"]) - b["bytes"]) > len(b["parts"]):
            problems.append(f"bar of rank {b['rank']}: parts {b['parts']} "
                            f"do not add up to the peak {b['bytes']}")
    if sorted(page.cells) != list(range(devices)):
        problems.append(f"device cells {page.cells}")
    if [r["stage"] for r in page.rows] != list(range(p["pp"])):
        problems.append(f"Gantt rows {[r['stage'] for r in page.rows]}, "
                        f"expected 0..{p['pp'] - 1}")
    for r in page.rows:
        fwd = {m: x for c, m, x, _ in r["actions"] if c == "fwd"}
        bwd = {m: x for c, m, x, _ in r["actions"] if c == "bwd"}
        if sorted(fwd) != list(range(mb)) or sorted(bwd) != list(range(mb)):
            problems.append(f"stage {r['stage']}: forwards {sorted(fwd)}, "
                            f"backwards {sorted(bwd)}, expected 0..{mb - 1}")
        elif any(bwd[m] <= fwd[m] for m in range(mb)):
            problems.append(f"stage {r['stage']}: a backward before its "
                            "forward")
    if problems:
        print("FAIL: " + problems[0])
        return 1
    actions = sum(len(r["actions"]) for r in page.rows)
    print(f"devices {devices} bars {len(page.bars)} cells {len(page.cells)} "
          f"stages {p['pp']} rows {len(page.rows)} actions {actions} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
