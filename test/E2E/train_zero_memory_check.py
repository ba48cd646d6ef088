#!/usr/bin/env python3
"""ZeRO memory, measured: a parameter-heavy MLP (several equal wide layers,
so the gradients outweigh the activations) is compiled for one process and
for `--plan dp=P,zero=Z` with Z = 1 and 2 (and 3 with --zero3), and each is
trained for a few steps (under `mpirun -np P`). Every run must reproduce
the one-process losses (1e-4 relative).

A rank's memory is the log's peak_bytes (what the runtime allocated at the
step's peak, the driver's data and buffers included) plus the bytes of the
rank's mutable globals (`--emit=gt`: parameters or their ZeRO-3 shards and
the optimizer moments, which live outside the runtime's allocator), worst
rank and step.
* zero=2 must be below zero=1 by at least (P-1)/P of the gradient bytes:
  zero=1 holds every full-size gradient until one reduce-scatter after the
  whole backward (plus the packed copy it sends), zero=2 reduce-scatters
  each layer's bucket as soon as the backward has produced it, so only one
  layer's full-size gradients and the shards are live at a time.
* zero=3 must be below zero=2 by at least (P-1)/P of the parameter bytes
  less the two largest layers': each rank stores 1/P of the parameters
  between steps, and a layer's parameters are all-gathered one layer ahead
  of its forward (and again of its backward), while the layer before it
  computes, and freed after their last use, so at most two layers' full
  parameters are live in the step. With every layer's gather alive at
  once (the whole-step gather), zero=3 saves nothing on the step's peak.

usage: train_zero_memory_check.py MEGAGRAPH_COMPILE WORKDIR [--dp P]
           [--zero3]
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
from plan_accuracy_check import state_bytes  # noqa: E402

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
    ap.add_argument("--zero3", action="store_true",
                    help="also zero=3, checked against zero=2")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = WideMLP(args.width, args.layers)
    P = args.dp
    grad_bytes = 4 * sum(p.numel() for p in model.parameters())
    layers = sorted((4 * sum(p.numel() for p in m.parameters())
                     for m in (model.inp, *model.hidden, model.head)),
                    reverse=True)
    gathered_bytes = layers[0] + layers[1]  # two layers' gathers at once
    stages = (1, 2, 3) if args.zero3 else (1, 2)
    train = ["--train", "--optimizer", "adamw", "--lr", "0.001",
             "--emit=exe", "-O0"]
    data = "synthetic:sbm,nodes=2048,classes=8,features=16,signal=3,seed=5"
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS),
           "--quiet"]
    logs, state = {}, {}
    for name, batch, plan, prefix in (
            ("single", P, [], []),
            *((f"zero{z}", 1, ["--plan", f"dp={P},zero={z}"],
               mpirun() + ["-np", str(P)]) for z in stages)):
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        torch.onnx.export(model, (torch.randn(batch, NODES, train_check.F),),
                          onnx_path, input_names=["x"],
                          output_names=["logits"], opset_version=17)
        exe = os.path.join(args.work, name)
        subprocess.run([args.compiler, onnx_path, *train, *plan, "-o", exe],
                       check=True)
        state[name] = state_bytes(subprocess.run(
            [args.compiler, onnx_path, *train, *plan, "--emit=gt",
             "--mlir-elide-elementsattrs-if-larger=1"], check=True,
            capture_output=True, text=True).stdout)
        log = os.path.join(args.work, f"{name}.jsonl")
        if os.path.exists(log):
            os.remove(log)
        subprocess.run(prefix + [exe, *run, "--log-json", log], check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        logs[name] = [json.loads(line) for line in open(log)]
    check = Checks()
    single = logs["single"]
    total = {}
    for z in stages:
        recs = logs[f"zero{z}"]
        rel = max(abs(a["loss"] - b["loss"]) / abs(a["loss"])
                  for a, b in zip(single, recs))
        check(f"zero={z} losses", len(recs) == STEPS and rel <= 1e-4,
              f"max relative difference {rel:.2e} over {len(recs)} steps")
        # The worst rank and step: its peak plus the rank's stored state.
        peak = max(p for r in recs for p in r["peak_bytes"])
        step = max(p - b for r in recs
                   for p, b in zip(r["peak_bytes"], r["base_bytes"]))
        total[z] = peak + state[f"zero{z}"]
        print(f"zero={z}: peak_bytes {peak} (step {step}) + state "
              f"{state[f'zero{z}']} = {total[z]} bytes per rank")
    shard_saving = grad_bytes * (P - 1) // P
    check("zero=2 memory",
          total[2] <= total[1] - shard_saving,
          f"{total[2]} bytes per rank, zero=1 {total[1]}: "
          f"{total[1] - total[2]} less, at least {shard_saving} wanted "
          f"((P-1)/P of {grad_bytes} gradient bytes)")
    if 3 in stages:
        param_saving = grad_bytes * (P - 1) // P - gathered_bytes
        check("zero=3 memory",
              total[3] <= total[2] - param_saving,
              f"{total[3]} bytes per rank, zero=2 {total[2]}: "
              f"{total[2] - total[3]} less, at least {param_saving} wanted "
              f"((P-1)/P of {grad_bytes} parameter bytes less two layers' "
              f"{gathered_bytes})")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
