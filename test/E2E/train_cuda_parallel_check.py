#!/usr/bin/env python3
"""Multi-rank --target cuda, emulated without GPUs: the Graphormer-style
model of train_graphormer_check.py (AdamW) compiled with `--plan SPEC
--cuda-emulate-on-host` - the plan passes' program, with every loop nest
run as gt-gpu-offload's kernels emulated by host loops over blocks and
threads, the collectives and cp attention on host buffers over MPI where
the GPU program uses NCCL - trained under `mpirun -np dp*pp*cp` must
reproduce the one-process CPU program of the same global batch: every
step's loss within 1e-4 relative over 20 steps, the same accuracy, one
peak_bytes entry per rank.

The exported batch is each rank's: the global batch / dp (dp, cp), or one
micro-batch of 2 sequences (pp, global batch dp * mb * 2). The layer-norm
weights are perturbed before export, as in train_pp_check.py (the exporter
would merge identical initializers, tying parameters across stages).

With --nogpu: the --target cuda executable of the plan (NCCL backend)
instead, started under mpirun on a machine without a GPU: the job fails
and says why.

usage: train_cuda_parallel_check.py MEGAGRAPH_COMPILE WORKDIR --plan SPEC
           [--global-batch B] [--nogpu]
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_dp_check as tdp  # noqa: E402  (export, mpirun, compare_runs)
import train_graphormer_check as tg  # noqa: E402  (Graphormer)

STEPS = 20
MICRO = 2  # sequences per pipeline micro-batch


def plan_sizes(spec):
    sizes = {"dp": 1, "pp": 1, "cp": 1, "mb": 1}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        if key in sizes:
            sizes[key] = int(value)
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--plan", required=True)
    ap.add_argument("--global-batch", type=int, default=4)
    ap.add_argument("--nogpu", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = tg.Graphormer()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".n1." in name or ".n2." in name or name.startswith("norm."):
                p.add_(0.1 * torch.randn_like(p))
    n = plan_sizes(args.plan)
    ranks = n["dp"] * n["pp"] * n["cp"]
    if n["pp"] > 1:
        G, local = n["dp"] * n["mb"] * MICRO, MICRO
    else:
        G = args.global_batch
        assert G % n["dp"] == 0
        local = G // n["dp"]
    # -O0: the host code's LLVM optimization is not what is tested, and the
    # compiles are faster.
    train = ["--train", "--optimizer", "adamw", "--lr", "0.01", "-O0",
             "--emit=exe"]
    data = (f"synthetic:sbm,nodes=2048,classes={tg.C},features={tg.F},"
            "signal=3,seed=3")
    check = tdp.Checks()
    if args.nogpu:
        onnx_path = os.path.join(args.work, "cuda.onnx")
        tdp.export(model, "graphormer", local, onnx_path)
        exe = os.path.join(args.work, "cuda")
        subprocess.run([args.compiler, onnx_path, *train, "--plan", args.plan,
                        "--target", "cuda", "-o", exe], check=True)
        r = subprocess.run(tdp.mpirun() + ["-np", str(ranks), exe, "--mode",
                                           "train", "--data", data, "--steps",
                                           "1", "--quiet"],
                           capture_output=True, text=True, timeout=300)
        said = "no CUDA device is usable here" in r.stderr
        check("no GPU", r.returncode != 0 and said,
              f"{args.plan} on {ranks} ranks: exit code {r.returncode}, "
              f"message {'printed' if said else 'missing'}")
        if not check.ok:
            print(r.stderr)
        return 0 if check.ok else 1
    exes = {}
    for name, batch, extra in (
            ("single", G, []),
            ("emulated", local, ["--plan", args.plan,
                                 "--cuda-emulate-on-host"])):
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        tdp.export(model, "graphormer", batch, onnx_path)
        exes[name] = os.path.join(args.work, name)
        subprocess.run([args.compiler, onnx_path, *train, *extra, "-o",
                        exes[name]], check=True)
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS),
           "--quiet"]
    logs = {}
    for name, prefix in (("single", []),
                         ("emulated", tdp.mpirun() + ["-np", str(ranks)])):
        logs[name] = os.path.join(args.work, f"{name}.jsonl")
        if os.path.exists(logs[name]):
            os.remove(logs[name])
        subprocess.run(prefix + [exes[name], *run, "--log-json", logs[name]],
                       check=True, stdout=subprocess.DEVNULL, timeout=900)
    single = [json.loads(line) for line in open(logs["single"])]
    emulated = [json.loads(line) for line in open(logs["emulated"])]
    tdp.compare_runs(check, single, emulated, ranks, STEPS,
                     note=f"; {args.plan} on {ranks} ranks, emulated kernels")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
