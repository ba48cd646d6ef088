#!/usr/bin/env python3
"""Training on a dataset in the OGB raw layout: examples/ogb/make_sample.py
writes a small SBM as DIR/raw/*.csv.gz + DIR/split/random/*.csv.gz (5% of
the nodes unlabelled); the Graphormer-style model of
train_graphormer_check.py, compiled with --train (SGD), trains on it with
`--data ogb:DIR`, the driver computing degrees and SPD from the loaded
topology and taking label_mask from the train split. Checks the loaded
sizes, that METIS cuts far fewer edges than random sequences, that the loss
falls and the training accuracy rises, test_accuracy when the compiled step
reports eval_correct, and clear errors for a missing file and a malformed
line.

usage: train_ogb_check.py MEGAGRAPH_COMPILE WORKDIR [--steps N]
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_graphormer_check import B, F, MAX_DIST, S, Graphormer  # noqa: E402

SAMPLE = os.path.join(HERE, "..", "..", "examples", "ogb", "make_sample.py")


def count_lines(path):
    with gzip.open(path, "rt") as f:
        return sum(1 for _ in f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ok = True

    def report(name, good, text):
        nonlocal ok
        ok &= good
        print(f"{name}: {text} {'OK' if good else 'FAIL'}")

    # 1. The sample dataset and the compiled model.
    data = os.path.join(args.work, "ogb-sample")
    subprocess.run([sys.executable, SAMPLE, data, "--nodes", "2048",
                    "--classes", "8", "--features", str(F), "--signal", "3",
                    "--unlabelled", "0.05", "--seed", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    torch.manual_seed(0)
    example = (torch.randn(B, S, F), torch.zeros(B, S, dtype=torch.long),
               torch.zeros(B, S, dtype=torch.long),
               torch.zeros(B, S, S, dtype=torch.long))
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(Graphormer(), example, onnx_path,
                      input_names=["x", "in_degree", "out_degree", "spd"],
                      output_names=["logits"], opset_version=17)
    exe = os.path.join(args.work, "train")
    subprocess.run([args.compiler, onnx_path, "--train", "--optimizer", "sgd",
                    "--lr", "0.1", "--emit=exe", "-o", exe], check=True)

    # 2. Train on ogb:DIR.
    log = os.path.join(args.work, "log.jsonl")
    run = subprocess.run([exe, "--mode", "train", "--data", "ogb:" + data,
                          "--steps", str(args.steps), "--max-distance",
                          str(MAX_DIST), "--log-json", log],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr)
    report("run", run.returncode == 0, f"exit {run.returncode}")
    raw, split = os.path.join(data, "raw"), os.path.join(data, "split", "random")
    edges = count_lines(os.path.join(raw, "edge.csv.gz"))
    train = count_lines(os.path.join(split, "train.csv.gz"))
    test = count_lines(os.path.join(split, "test.csv.gz"))
    m = re.search(r"data: \S+: (\d+) nodes, (\d+) edges, (\d+) features",
                  run.stderr)
    loaded = m and (int(m[1]), int(m[2]), int(m[3])) == (2048, 2 * edges, F)
    report("loaded", bool(loaded),
           m[0] if m else "no data line in: " + run.stderr[:300])
    m = re.search(r"(\d+) training nodes, (\d+) test nodes", run.stderr)
    report("split", bool(m) and (int(m[1]), int(m[2])) == (train, test),
           m[0] if m else "no train line")

    records = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    report("records", len(records) == args.steps, str(len(records)))
    if len(records) == args.steps:
        first = sum(r["loss"] for r in records[:10]) / 10
        last = sum(r["loss"] for r in records[-10:]) / 10
        acc = sum(r["accuracy"] for r in records[-10:]) / 10
        report("loss", last < 0.6 * first, f"first {first:.3f} last {last:.3f}")
        report("accuracy", acc >= 0.85, f"{acc:.3f}")
        tests = [r.get("test_accuracy") for r in records[-10:]]
        if all(t is None for t in tests):
            report("test_accuracy", "test acc -" in run.stdout,
                   "not reported (the step has no eval_correct)")
        else:
            t = [x for x in tests if x is not None]
            report("test_accuracy", sum(t) / len(t) >= 0.8,
                   f"{sum(t) / len(t):.3f}")

    # 3. METIS vs greedy sequences on this graph.
    cuts = {}
    for p in ("metis", "greedy"):
        r = subprocess.run([exe, "--mode", "train", "--data", data,
                            "--steps", "1", "--partition", p],
                           capture_output=True, text=True)
        m = re.search(r"partition: \w+, sequences of \d+ nodes cut "
                      r"([0-9.]+)% of the edges", r.stderr)
        cuts[p] = float(m[1]) if m else 100.0
    # Sequences of S random nodes would cut 1 - (S-1)/(N-1) of the edges.
    rand = 100 * (1 - (S - 1) / 2047)
    report("partition", cuts["metis"] < rand - 10,
           f"edge cut metis {cuts['metis']}% greedy {cuts['greedy']}% "
           f"random {rand:.1f}%")

    # 4. Clear errors.
    bad = os.path.join(args.work, "bad")
    shutil.copytree(data, bad)
    os.remove(os.path.join(bad, "raw", "node-label.csv.gz"))
    r = subprocess.run([exe, "--mode", "train", "--data", "ogb:" + bad,
                        "--steps", "1"], capture_output=True, text=True)
    want = f"cannot open '{bad}/raw/node-label.csv.gz'"
    report("missing file", r.returncode == 1 and want in r.stderr,
           r.stderr.strip().splitlines()[-1] if r.stderr else "")
    shutil.copy(os.path.join(raw, "node-label.csv.gz"),
                os.path.join(bad, "raw"))
    with gzip.open(os.path.join(bad, "raw", "edge.csv.gz"), "wt") as f:
        f.write("0,1\n2 3\n")
    r = subprocess.run([exe, "--mode", "train", "--data", "ogb:" + bad,
                        "--steps", "1"], capture_output=True, text=True)
    want = "edge.csv.gz' line 2: expected 'src,dst', got '2 3'"
    report("malformed line", r.returncode == 1 and want in r.stderr,
           r.stderr.strip().splitlines()[-1] if r.stderr else "")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
