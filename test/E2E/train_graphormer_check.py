#!/usr/bin/env python3
"""Training a Graphormer-style model end to end: float node features through
a linear encoder plus in/out-degree (centrality) embeddings, a spatial bias
from an embedding of shortest-path distances added to the attention scores,
two pre-LN transformer layers with hand-written multi-head attention and a
GELU FFN. Exported from PyTorch, compiled with `megagraph-compile --train`
(raised to gt.attention with the bias; gradients through the fused
attention backward kernel), trained with `--mode train` on the runtime's
synthetic stochastic block model, where the driver computes degrees and
SPD per sequence.

usage: train_graphormer_check.py MEGAGRAPH_COMPILE WORKDIR [--steps N]
           [--optimizer sgd|adamw] [--lr X]
Prints `raised: ...`, `records: ...`, `loss: ...`, `accuracy: ...` lines
ending in OK or FAIL; exits 1 on FAIL.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import torch
from torch import nn

B, S, F, C, D, H = 2, 32, 16, 8, 32, 4
MAX_DEGREE, MAX_DIST = 64, 8


class Attention(nn.Module):
    """Multi-head attention with an additive [B,H,S,S] bias, written out
    (q, k, v, o projections); also the layer of plan_accuracy_check.py and
    bench/pp_bench_model.py."""

    def __init__(self, d=D, h=H):
        super().__init__()
        self.h = h
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)
        self.v, self.o = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x, bias):
        b, s, d = x.shape
        h = self.h
        q = self.q(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(x).view(b, s, h, d // h).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h) + bias
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.o(out)


class Layer(nn.Module):
    """Pre-LN transformer layer: attention with the bias, GELU FFN (2d)."""

    def __init__(self, d=D, h=H):
        super().__init__()
        self.n1, self.att = nn.LayerNorm(d), Attention(d, h)
        self.n2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(),
                                 nn.Linear(2 * d, d))

    def forward(self, x, bias):
        x = x + self.att(self.n1(x), bias)
        return x + self.ffn(self.n2(x))


class Graphormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(F, D)
        self.indeg = nn.Embedding(MAX_DEGREE, D)
        self.outdeg = nn.Embedding(MAX_DEGREE, D)
        self.spatial = nn.Embedding(MAX_DIST + 1, H)
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, C)

    def forward(self, x, in_degree, out_degree, spd):
        h = self.enc(x) + self.indeg(in_degree) + self.outdeg(out_degree)
        bias = self.spatial(spd).permute(0, 3, 1, 2)
        for layer in self.layers:
            h = layer(h, bias)
        return self.head(self.norm(h))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--lr", default=None)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    inputs = (torch.randn(B, S, F), torch.zeros(B, S, dtype=torch.long),
              torch.zeros(B, S, dtype=torch.long),
              torch.zeros(B, S, S, dtype=torch.long))
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(Graphormer(), inputs, onnx_path,
                      input_names=["x", "in_degree", "out_degree", "spd"],
                      output_names=["logits"], opset_version=17)
    gt = subprocess.run([args.compiler, onnx_path, "--emit=gt"], check=True,
                        capture_output=True, text=True).stdout
    raised = gt.count("gt.attention") == 2 and "gt.spatial_bias" in gt
    print(f"raised: {gt.count('gt.attention')} attention, spatial bias "
          f"{'gt.spatial_bias' in gt} {'OK' if raised else 'FAIL'}")
    exe = os.path.join(args.work, "train")
    lr = args.lr or ("0.1" if args.optimizer == "sgd" else "0.003")
    subprocess.run([args.compiler, onnx_path, "--train", "--optimizer",
                    args.optimizer, "--lr", lr, "--emit=exe", "-o", exe],
                   check=True)
    log = os.path.join(args.work, "log.jsonl")
    data = f"synthetic:sbm,nodes=4096,classes={C},features={F},signal=3,seed=3"
    subprocess.run([exe, "--mode", "train", "--data", data, "--steps",
                    str(args.steps), "--max-distance", str(MAX_DIST),
                    "--log-json", log, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    ok = len(records) == args.steps
    first = sum(r["loss"] for r in records[:10]) / 10
    last = sum(r["loss"] for r in records[-10:]) / 10
    acc = sum(r["accuracy"] for r in records[-10:]) / 10
    print(f"records: {len(records)} {'OK' if ok else 'FAIL'}")
    print(f"loss: first {first:.3f} last {last:.3f} "
          f"{'OK' if last < 0.5 * first else 'FAIL'}")
    print(f"accuracy: {acc:.3f} {'OK' if acc >= 0.9 else 'FAIL'}")
    return 0 if raised and ok and last < 0.5 * first and acc >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
