#!/usr/bin/env python3
"""Writes a small synthetic node-classification dataset in the raw directory
layout of OGB node property prediction (what ogbn-arxiv.zip unpacks to), so
that `OUT --mode train --data ogb:DIR` can be tried without a download:

  DIR/raw/edge.csv.gz           one "src,dst" line per edge
  DIR/raw/node-feat.csv.gz      one line of F comma-separated floats per node
  DIR/raw/node-label.csv.gz     one class id per node ("nan": unlabelled)
  DIR/raw/num-node-list.csv.gz  N
  DIR/raw/num-edge-list.csv.gz  E
  DIR/split/<scheme>/{train,valid,test}.csv.gz   one node id per line

The graph is a stochastic block model: the classes are the blocks (a random
assignment, so node ids carry no structure), `--degree` expected neighbours
per node, 80% of them inside the block; features are the class mean (value
`--signal` on the features f with f % C == c) plus standard normal noise.
The labelled nodes are split at random into train / valid / test.

usage: make_sample.py DIR [--nodes 2048] [--classes 8] [--features 16]
                          [--degree 20] [--signal 3] [--unlabelled 0]
                          [--train 0.6] [--valid 0.2] [--split random]
                          [--seed 0]
"""
import argparse
import gzip
import os
import sys

import numpy as np


def write_lines(path, lines):
    with gzip.open(path, "wt") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--nodes", type=int, default=2048)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--features", type=int, default=16)
    ap.add_argument("--degree", type=float, default=20)
    ap.add_argument("--signal", type=float, default=3)
    ap.add_argument("--unlabelled", type=float, default=0.0,
                    help="share of nodes without a label")
    ap.add_argument("--train", type=float, default=0.6)
    ap.add_argument("--valid", type=float, default=0.2)
    ap.add_argument("--split", default="random", help="split scheme name")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n, c, f = args.nodes, args.classes, args.features
    if n < 2 or not 1 <= c <= n or f < 1:
        sys.exit("make_sample.py: needs --nodes >= 2, 1 <= --classes <= "
                 "--nodes, --features >= 1")
    rng = np.random.default_rng(args.seed)

    # Blocks and edges: a binomial number of uniformly drawn pairs per block
    # (and across blocks); duplicates and self loops are dropped.
    labels = rng.permutation(np.arange(n) % c)
    block = n / c
    p_in = min(1.0, 0.8 * args.degree / max(1.0, block - 1))
    p_out = min(1.0, 0.2 * args.degree / max(1.0, n - block)) if c > 1 else 0
    src, dst = [], []
    for k in range(c):
        members = np.flatnonzero(labels == k)
        m = rng.binomial(len(members) * (len(members) - 1) // 2, p_in)
        src.append(rng.choice(members, m))
        dst.append(rng.choice(members, m))
    m = rng.binomial(int(n * (n - block) / 2), p_out)
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = labels[u] != labels[v]
    src.append(u[keep])
    dst.append(v[keep])
    edges = np.stack([np.concatenate(src), np.concatenate(dst)], 1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    edges = np.unique(np.sort(edges, 1), axis=0)
    edges = edges[rng.permutation(len(edges))]

    # Features and labels.
    mu = np.zeros((c, f), np.float32)
    for k in range(c):
        mu[k, np.arange(f) % c == k] = args.signal
    feats = mu[labels] + rng.standard_normal((n, f), dtype=np.float32)
    labelled = rng.random(n) >= args.unlabelled

    raw = os.path.join(args.dir, "raw")
    split = os.path.join(args.dir, "split", args.split)
    os.makedirs(raw, exist_ok=True)
    os.makedirs(split, exist_ok=True)
    write_lines(os.path.join(raw, "edge.csv.gz"),
                (f"{a},{b}" for a, b in edges))
    write_lines(os.path.join(raw, "node-feat.csv.gz"),
                (",".join(f"{x:.6g}" for x in row) for row in feats))
    write_lines(os.path.join(raw, "node-label.csv.gz"),
                (str(y) if ok else "nan" for y, ok in zip(labels, labelled)))
    write_lines(os.path.join(raw, "num-node-list.csv.gz"), [str(n)])
    write_lines(os.path.join(raw, "num-edge-list.csv.gz"), [str(len(edges))])

    ids = rng.permutation(np.flatnonzero(labelled))
    n_train = round(args.train * len(ids))
    n_valid = round(args.valid * len(ids))
    parts = {"train": np.sort(ids[:n_train]),
             "valid": np.sort(ids[n_train:n_train + n_valid]),
             "test": np.sort(ids[n_train + n_valid:])}
    for name, part in parts.items():
        write_lines(os.path.join(split, f"{name}.csv.gz"),
                    (str(i) for i in part))
    print(f"{args.dir}: {n} nodes, {len(edges)} edges, {f} features, {c} "
          f"classes, {int(labelled.sum())} labelled "
          f"(train {len(parts['train'])}, valid {len(parts['valid'])}, "
          f"test {len(parts['test'])}), split '{args.split}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
