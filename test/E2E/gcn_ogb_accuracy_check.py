#!/usr/bin/env python3
"""The GCN example learns an OGB-layout data set as well as PyTorch does.

Writes a node-classification sample in the OGB raw layout
(examples/ogb/make_sample.py: a stochastic block model whose features carry
a weak class signal, so that the aggregation over neighbours matters),
compiles examples/gcn/dynamic/gcn.onnx for its nodes and (undirected, both
directions) edges, and trains it full-graph with Adam on `--data ogb:DIR`
(the data set's train split, accuracy on its test split), on one process
and under each --plan. PyTorch trains examples/gcn/gcn.py's module from the
same initial weights on the inputs the one-process run dumped. The test
accuracy of the last step (from that step's forward) must agree with
PyTorch's within --points (1 point), and beat chance by far.

usage: gcn_ogb_accuracy_check.py MEGAGRAPH_COMPILE WORKDIR [--steps 60]
       [--plans mop=2] [--points 1]
Prints `check: NAME: DETAIL OK|FAIL` lines; exits 1 on FAIL.
"""
import argparse
import gzip
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "gcn"))
sys.path.insert(0, HERE)
import gcn  # noqa: E402
from gcn_parallel_check import compile_exe, model_dims, train  # noqa: E402
from train_dp_check import Checks  # noqa: E402


def undirected_edges(directory):
    """Directed edges after OGB's to_undirected (both directions, no self
    loops, no duplicates), as mgrt_ogb_load builds them."""
    pairs = set()
    with gzip.open(os.path.join(directory, "raw", "edge.csv.gz"), "rt") as f:
        for line in f:
            u, v = map(int, line.split(","))
            if u != v:
                pairs.add((min(u, v), max(u, v)))
    return 2 * len(pairs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--plans", default="mop=2")
    ap.add_argument("--points", type=float, default=1.0)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    check = Checks()
    nodes, classes_data, feats_data = 1024, 8, 16
    data = os.path.join(args.work, "ogb")
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "examples", "ogb", "make_sample.py"),
                    data, "--nodes", str(nodes), "--classes",
                    str(classes_data), "--features", str(feats_data),
                    "--degree", "8", "--signal", "0.5", "--seed", "4"],
                   check=True, stdout=subprocess.DEVNULL)
    onnx_path = os.path.join(ROOT, "examples", "gcn", "dynamic", "gcn.onnx")
    feats, classes = model_dims(onnx_path)
    shapes = {"x": [nodes, feats_data], "edge_index": [2, undirected_edges(data)]}
    opt = ["--optimizer", "adam"]

    # 1. One process, inputs dumped; then PyTorch on them.
    exe = os.path.join(args.work, "train1")
    compile_exe(args.compiler, onnx_path, shapes, args.lr, "", exe, opt)
    dump = os.path.join(args.work, "dump")
    recs = train(exe, "ogb:" + data, args.steps,
                 os.path.join(args.work, "one.jsonl"),
                 extra=["--dump-inputs", dump])
    ours = recs[-1]["test_accuracy"]
    step1 = os.path.join(dump, "step1")
    load = lambda name: torch.from_numpy(np.load(os.path.join(step1, name)))
    x, ei = load("x.npy").double(), load("edge_index.npy")
    labels, mask = load("labels.npy"), load("label_mask.npy").double()
    test = load("eval_mask.npy").double()
    model = gcn.build("gcn", feats, 32, classes).double()
    adam = torch.optim.Adam(model.parameters(), lr=args.lr)
    for _ in range(args.steps):
        logits = model(x, ei)
        ce = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
        loss = (ce * mask).sum() / mask.sum()
        right = (logits.argmax(-1) == labels).double()
        ref = ((right * test).sum() / test.sum()).item()
        adam.zero_grad()
        loss.backward()
        adam.step()
    diff = abs(ours - ref) * 100
    check("one process vs PyTorch, test accuracy", diff <= args.points,
          f"{ours:.4f} vs {ref:.4f} after {args.steps} steps "
          f"({diff:.2f} points)")
    check("learned", ours > 2.0 / classes_data,
          f"test accuracy {ours:.4f}, chance {1 / classes_data:.3f}")

    # 2. The plans, on the same data set.
    for plan in filter(None, args.plans.split(",")):
        ranks = int(plan.split("=")[1])
        exe = os.path.join(args.work, "train-" + plan.replace("=", ""))
        compile_exe(args.compiler, onnx_path, shapes, args.lr, plan, exe, opt)
        recs = train(exe, "ogb:" + data, args.steps,
                     os.path.join(args.work, plan.replace("=", "") + ".jsonl"),
                     ranks=ranks)
        acc = recs[-1]["test_accuracy"]
        diff = abs(acc - ref) * 100
        check(f"{plan} vs PyTorch, test accuracy", diff <= args.points,
              f"{acc:.4f} vs {ref:.4f} ({diff:.2f} points)")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
