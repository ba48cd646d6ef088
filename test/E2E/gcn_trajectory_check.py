#!/usr/bin/env python3
"""Full-graph GCN training (B = 1, S = N) against PyTorch 1.13 autograd.

Compiles a committed examples/gcn/<style>/<model>.onnx with
`megagraph-compile --train --optimizer sgd --lr LR --loss cross_entropy
--emit=exe`, trains it STEPS steps on one small graph (random edges of the
exported size, Gaussian features, random labels and a label mask, read with
`--data npy:DIR`) from the exported weights, and replays the same steps on
the PyTorch module of examples/gcn/gcn.py (built from the same seed, hence
the same initial weights) with `torch.optim.SGD`: every step's masked mean
cross-entropy must agree to a relative --tolerance (1e-4). The kipf model
reads the graph as the dense normalized adjacency D^-1/2 (A + I) D^-1/2
(row i over the edges into i, duplicates and self loops counted), or,
compiled with `--input-shape edge_index=2xE` among the extra flags
(gt-sparse-adjacency), the edge list itself, while PyTorch still
multiplies by the dense matrix.

usage: gcn_trajectory_check.py MEGAGRAPH_COMPILE WORKDIR MODEL STYLE
       [--steps 20] [--lr 0.1] [--tolerance 1e-4] [-- EXTRA COMPILE FLAGS]
Prints `trajectory MODEL STYLE: N steps, max relative difference E OK|FAIL`;
exits 1 on FAIL.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
GCN = os.path.join(HERE, "..", "..", "examples", "gcn")
sys.path.insert(0, GCN)
import gcn  # noqa: E402


def graph_inputs(model_path):
    """The static shapes of the exported inputs: {name: dims}."""
    g = onnx.load(model_path, load_external_data=False).graph
    return {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in g.input}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("model", choices=sorted(gcn.MODELS))
    ap.add_argument("style")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    onnx_path = os.path.join(GCN, args.style, args.model + ".onnx")
    shapes = graph_inputs(onnx_path)
    nodes, feats = shapes["x"]

    # 1. The graph: random directed edges (duplicates and self loops
    #    included, as a user's edge list may have them), features, labels.
    sparse = args.model == "kipf" and any(
        a.startswith("edge_index=") for a in args.extra)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((nodes, feats)).astype(np.float32)
    edges = shapes.get("edge_index", [2, 4 * nodes])[1]
    edge_index = rng.integers(0, nodes, (2, edges)).astype(np.int64)
    model = gcn.build(args.model, feats, 16, 4).double()
    classes = model(torch.from_numpy(x).double(),
                    *([torch.from_numpy(edge_index)] if args.model != "kipf"
                      else [torch.eye(nodes).double()])).shape[-1]
    labels = rng.integers(0, classes, nodes).astype(np.int64)
    mask = rng.random(nodes) < 0.6
    mask[0] = True
    feeds = {"x": x}
    if args.model == "kipf":
        a = np.zeros((nodes, nodes))
        np.add.at(a, (edge_index[1], edge_index[0]), 1.0)
        a += np.eye(nodes)
        d = a.sum(1) ** -0.5
        feeds["adj_norm"] = (d[:, None] * a * d[None, :]).astype(np.float32)
    else:
        feeds["edge_index"] = edge_index

    # 2. The compiled run.
    data = os.path.join(args.work, "data")
    os.makedirs(data, exist_ok=True)
    # The sparse kipf build reads the edge list; PyTorch the dense matrix.
    npy = ({"x": x, "edge_index": edge_index} if sparse else feeds)
    for name, value in npy.items():
        np.save(os.path.join(data, name + ".npy"), value)
    np.save(os.path.join(data, "labels.npy"), labels)
    np.save(os.path.join(data, "label_mask.npy"), mask)
    exe = os.path.join(args.work, "train")
    subprocess.run([args.compiler, onnx_path, "--train", "--optimizer", "sgd",
                    "--lr", str(args.lr), "--loss", "cross_entropy",
                    *args.extra, "--emit=exe", "-o", exe], check=True)
    log = os.path.join(args.work, "log.jsonl")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--mode", "train", "--data", "npy:" + data,
                    "--steps", str(args.steps), "--log-json", log, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    losses = [json.loads(line).get("loss") for line in open(log)]

    # 3. The replay in float64 from the same initial weights.
    inputs = [torch.from_numpy(v).double() if v.dtype == np.float32
              else torch.from_numpy(v) for v in feeds.values()]
    t_labels, w = torch.from_numpy(labels), torch.from_numpy(mask).double()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    worst = 0.0 if len(losses) == args.steps else float("inf")
    for t, ours in enumerate(losses[:args.steps], start=1):
        ce = nn.functional.cross_entropy(model(*inputs), t_labels,
                                         reduction="none")
        loss = (ce * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        rel = (abs(ours - loss.item()) / max(abs(loss.item()), 1e-12)
               if ours is not None else float("inf"))
        if t in (1, args.steps) or rel > args.tolerance:
            print(f"  step {t}: compiled {ours} torch {loss.item():.8g} "
                  f"rel {rel:.2e}")
        worst = max(worst, rel)
    ok = worst <= args.tolerance
    print(f"trajectory {args.model} {args.style}: {len(losses)} steps, max "
          f"relative difference {worst:.2e} {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
