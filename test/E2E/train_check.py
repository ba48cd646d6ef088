#!/usr/bin/env python3
"""End-to-end training: exports a small node classifier from PyTorch (linear
encoder, layer norm, GELU MLP with a residual, head), compiles its training
step with `megagraph-compile --train`, trains it with `--mode train` on the
runtime's synthetic stochastic block model, and checks the JSON log: one
record per step with the documented keys, a falling loss, and high accuracy
at the end.

usage: train_check.py MEGAGRAPH_COMPILE WORKDIR [--optimizer adamw|sgd]
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from torch import nn

B, S, F, C = 2, 64, 16, 8


class NodeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(F, 32)
        self.ln = nn.LayerNorm(32)
        self.ff1 = nn.Linear(32, 64)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(64, 32)
        self.head = nn.Linear(32, C)

    def forward(self, x):
        h = self.inp(x)
        h = h + self.ff2(self.act(self.ff1(self.ln(h))))
        return self.head(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--optimizer", default="adamw")
    ap.add_argument("--lr", default="0.01")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(NodeClassifier(), (torch.randn(B, S, F),), onnx_path,
                      input_names=["x"], output_names=["logits"],
                      opset_version=17)
    exe = os.path.join(args.work, "train")
    subprocess.run([args.compiler, onnx_path, "--train", "--optimizer",
                    args.optimizer, "--lr", args.lr, "--emit=exe", "-o", exe],
                   check=True)
    log = os.path.join(args.work, "log.jsonl")
    data = f"synthetic:sbm,nodes=2048,classes={C},features={F},signal=3,seed=5"
    subprocess.run([exe, "--mode", "train", "--data", data, "--steps",
                    str(args.steps), "--log-json", log, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    keys = {"step", "loss", "accuracy", "step_time_s", "peak_bytes"}
    ok = len(records) == args.steps and all(keys <= r.keys() for r in records)
    first = sum(r["loss"] for r in records[:5]) / 5
    last = sum(r["loss"] for r in records[-5:]) / 5
    acc = sum(r["accuracy"] for r in records[-5:]) / 5
    print(f"records: {len(records)} {'OK' if ok else 'FAIL'}")
    print(f"loss: first {first:.3f} last {last:.3f} "
          f"{'OK' if last < 0.5 * first else 'FAIL'}")
    print(f"accuracy: {acc:.3f} {'OK' if acc >= 0.9 else 'FAIL'}")
    return 0 if ok and last < 0.5 * first and acc >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
