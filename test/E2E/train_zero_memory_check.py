#!/usr/bin/env python3
"""ZeRO memory, measured: a parameter-heavy MLP (several equal wide layers,
so the gradients outweigh the activations) is compiled for one process and
for `--plan dp=P,zero=Z` with Z = 1 and 2, and each is trained for a few
steps (under `mpirun -np P`). Both runs must reproduce the one-process
losses (1e-4 relative), and the step's own memory per rank (the log's
peak_bytes - base_bytes, what the runtime allocated at the step's peak)
with zero=2 must be below zero=1's by at least (P-1)/P of the gradient
bytes: zero=1 holds every full-size gradient until one reduce-scatter after
the whole backward (plus the packed copy it sends), zero=2 reduce-scatters
each layer's bucket as soon as the backward has produced it, so only one
layer's full-size gradients and the shards are live at a time.

usage: train_zero_memory_check.py MEGAGRAPH_COMPILE WORKDIR [--dp P]
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_check  # noqa: E402  (F, C: the synthetic data set's sizes)
from train_dp_check import Checks, mpirun  # noqa: E402

STEPS = 6
NODES = 64  # nodes per graph of the synthetic batches


class WideMLP(nn.Module):
    """F -> W, `layers` x (W -> W, GELU), W -> C: the W x W weights hold
    most of the parameters."""

    def __init__(self, width, layers):
        super().__init__()
        self.inp = nn.Linear(train_check.F, width)
        self.hidden = nn.ModuleList(
            [nn.Linear(width, width) for _ in range(layers)])
        self.head = nn.Linear(width, train_check.C)

    def forward(self, x):
        h = self.inp(x)
        for layer in self.hidden:
            h = torch.nn.functional.gelu(layer(h))
        return self.head(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--dp", type=int, default=2)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = WideMLP(args.width, args.layers)
    P = args.dp
    grad_bytes = 4 * sum(p.numel() for p in model.parameters())
    train = ["--train", "--optimizer", "adamw", "--lr", "0.001",
             "--emit=exe", "-O0"]
    data = "synthetic:sbm,nodes=2048,classes=8,features=16,signal=3,seed=5"
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS),
           "--quiet"]
    logs = {}
    for name, batch, plan, prefix in (
            ("single", P, [], []),
            *((f"zero{z}", 1, ["--plan", f"dp={P},zero={z}"],
               mpirun() + ["-np", str(P)]) for z in (1, 2))):
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        torch.onnx.export(model, (torch.randn(batch, NODES, train_check.F),),
                          onnx_path, input_names=["x"],
                          output_names=["logits"], opset_version=17)
        exe = os.path.join(args.work, name)
        subprocess.run([args.compiler, onnx_path, *train, *plan, "-o", exe],
                       check=True)
        log = os.path.join(args.work, f"{name}.jsonl")
        if os.path.exists(log):
            os.remove(log)
        subprocess.run(prefix + [exe, *run, "--log-json", log], check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        logs[name] = [json.loads(line) for line in open(log)]
    check = Checks()
    single = logs["single"]
    step = {}
    for z in (1, 2):
        recs = logs[f"zero{z}"]
        rel = max(abs(a["loss"] - b["loss"]) / abs(a["loss"])
                  for a, b in zip(single, recs))
        check(f"zero={z} losses", len(recs) == STEPS and rel <= 1e-4,
              f"max relative difference {rel:.2e} over {len(recs)} steps")
        # The step's own memory on the worst rank and step.
        step[z] = max(p - b for r in recs
                      for p, b in zip(r["peak_bytes"], r["base_bytes"]))
    shard_saving = grad_bytes * (P - 1) // P
    check("zero=2 step memory",
          step[2] <= step[1] - shard_saving,
          f"{step[2]} bytes per rank, zero=1 {step[1]}: "
          f"{step[1] - step[2]} less, at least {shard_saving} wanted "
          f"((P-1)/P of {grad_bytes} gradient bytes)")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
