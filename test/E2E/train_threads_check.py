#!/usr/bin/env python3
"""The compiled training step gives the same bits on any number of threads.

The generated loop nests run on the runtime's thread pool
(gt-parallel-to-runtime): only independent iterations are split, so the
losses and the trained parameters must not depend on
MEGAGRAPH_NUM_THREADS. The Graphormer-style model of
train_graphormer_check.py (degree embeddings, SPD spatial bias, two pre-LN
layers, GELU FFN) at S = 256 nodes per sequence, so that its layer-norm
rows, GELU, embedding, bias and AdamW loops are large enough to be
dispatched; trained with AdamW for STEPS steps with 1, 2 and 3 threads.

usage: train_threads_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_graphormer_check as g  # noqa: E402
from export_npy_check import Checks, read_export  # noqa: E402

S, STEPS = 256, 4
DATA = f"synthetic:sbm,nodes=2048,classes={g.C},features={g.F},signal=3,seed=3"


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    torch.manual_seed(0)
    inputs = (torch.randn(g.B, S, g.F), torch.zeros(g.B, S, dtype=torch.long),
              torch.zeros(g.B, S, dtype=torch.long),
              torch.zeros(g.B, S, S, dtype=torch.long))
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(g.Graphormer(), inputs, onnx_path,
                      input_names=["x", "in_degree", "out_degree", "spd"],
                      output_names=["logits"], opset_version=17)
    exe = os.path.join(work, "train")
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "adamw",
                    "--lr", "0.003", "--emit=exe", "-O0", "-o", exe],
                   check=True)
    # The step's loop nests are outlined functions (@megagraph_model_loop<N>).
    symbols = subprocess.run(["nm", exe], check=True, capture_output=True,
                             text=True).stdout
    loops = sum(" megagraph_model_loop" in line for line in symbols.splitlines())
    check("outlined", loops >= 10, f"{loops} loop nests on the pool")
    runs = {}
    for threads in (1, 2, 3):
        log = os.path.join(work, f"t{threads}.jsonl")
        out = os.path.join(work, f"t{threads}_params")
        for p in (log,):
            if os.path.exists(p):
                os.remove(p)
        subprocess.run([exe, "--mode", "train", "--data", DATA, "--steps",
                        str(STEPS), "--max-distance", str(g.MAX_DIST),
                        "--log-json", log, "--export-npy", out, "--quiet"],
                       check=True, stdout=subprocess.DEVNULL, timeout=600,
                       env=dict(os.environ, MEGAGRAPH_NUM_THREADS=str(threads)))
        runs[threads] = ([json.loads(l)["loss"] for l in open(log)],
                         read_export(out))
    losses1, params1 = runs[1]
    check("steps", len(losses1) == STEPS, f"{len(losses1)} losses")
    for threads in (2, 3):
        losses, params = runs[threads]
        check(f"{threads} threads: losses", losses == losses1,
              f"{losses} vs {losses1} (1 thread)")
        same = sorted(params) == sorted(params1) and all(
            np.array_equal(params[k].view(np.uint8), params1[k].view(np.uint8))
            for k in params1)
        check(f"{threads} threads: parameters", same,
              f"{len(params)} tensors bit-identical to 1 thread's" if same
              else "differ from 1 thread's")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
