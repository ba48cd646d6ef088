#!/usr/bin/env python3
"""Data parallelism end to end: the same PyTorch model (same weights) is
exported at the global batch B and at B / P, compiled with `--train` for one
process and with `--train --plan dp=P` for P ranks, and trained on the same
synthetic SBM for 20 steps, once alone and once under `mpirun -np P`. The
dp run must reproduce the one-process run of the same global batch: every
step's loss within 1e-4 relative, the same accuracy, and one peak_bytes
entry per rank; each rank's comm_bytes is the analytic volume of the
step's collectives. With zero = 0 and zero >= 2 the gradient buckets'
all-reduces / reduce-scatters run while the backward computes (started,
waited for later; MEGAGRAPH_COMM_ASYNC=1 here, since by default a rank
with fewer than two cores completes them at their start): the same dp
executable run with MEGAGRAPH_COMM_ASYNC=0 (each start waits at once) must
give bit-identical losses and the same comm_bytes, and each rank must wait
for every started bucket of every step, with the progress thread on. Also:
the dp executable started without mpirun must fail with a message saying
how to launch it.

usage: train_dp_check.py MEGAGRAPH_COMPILE WORKDIR --model mlp|graphormer
           --dp P [--optimizer sgd|adamw] [--lr X] [--global-batch B]
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_check  # noqa: E402  (NodeClassifier)
import train_graphormer_check as tg  # noqa: E402  (Graphormer)

STEPS = 20


_SESSION_BASE = []


def session_base():
    """A session-directory base of this process's own: lit runs tests in
    parallel, and concurrent mpiruns creating their session directories
    under one shared base can collide (Open MPI 4.1: `session_dir.c ...
    File exists` before any rank starts)."""
    if not _SESSION_BASE:
        path = tempfile.mkdtemp(prefix="mg-ompi-")
        atexit.register(shutil.rmtree, path, True)
        _SESSION_BASE.append(path)
    return _SESSION_BASE[0]


def mpirun():
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    cmd = [exe, "--oversubscribe", "--mca", "btl", "self,vader",
           "--mca", "orte_tmpdir_base", session_base()]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


class Checks:
    """check(name, good, detail) prints one line ending in OK or FAIL;
    `ok` stays True while every check passed."""

    def __init__(self):
        self.ok = True

    def __call__(self, name, good, detail):
        self.ok = self.ok and good
        print(f"check: {name}: {detail} {'OK' if good else 'FAIL'}")


def export(model, kind, batch, path):
    """The checkers' models as ONNX: `mlp` (train_check's classifier),
    `mha` / `plain` (train_cp_check's nn.MultiheadAttention and bias-free
    models) or the Graphormer-style model (any other kind)."""
    if kind == "mlp":
        inputs = (torch.randn(batch, 64, train_check.F),)
        names = ["x"]
    elif kind == "mha":
        inputs = (torch.randn(batch, tg.S, tg.F),
                  torch.zeros(batch, tg.S, tg.S, dtype=torch.long))
        names = ["x", "spd"]
    elif kind == "plain":
        inputs, names = (torch.randn(batch, tg.S, tg.F),), ["x"]
    else:
        inputs = (torch.randn(batch, tg.S, tg.F),
                  torch.zeros(batch, tg.S, dtype=torch.long),
                  torch.zeros(batch, tg.S, dtype=torch.long),
                  torch.zeros(batch, tg.S, tg.S, dtype=torch.long))
        names = ["x", "in_degree", "out_degree", "spd"]
    torch.onnx.export(model, inputs, path, input_names=names,
                      output_names=["logits"], opset_version=17)


def global_bytes(mlir, want):
    """Bytes of the f32 ml_program globals whose line satisfies `want`."""
    total = 0
    for line in mlir.splitlines():
        if "ml_program.global " in line and want(line):
            m = re.search(r"\) : tensor<([0-9x]*)f32>", line)
            n = 1
            for d in (m.group(1).rstrip("x").split("x") if m.group(1) else []):
                n *= int(d)
            total += 4 * n
    return total


def optimizer_state_bytes(mlir):
    return global_bytes(mlir, lambda l: "gt.optimizer_state" in l)


def parameter_bytes(mlir):
    """The parameters each rank stores between steps: the mutable parameter
    globals, or with zero=3 the shard globals (`gt.param_shard`)."""
    return global_bytes(mlir, lambda l: " mutable " in l and (
        re.search(r"[{ ,]gt\.param[,}]", l) or "gt.param_shard" in l))


def initial_weight_bytes(mlir):
    """zero=3: the immutable initial weights (`gt.param_init`), read on the
    first step only."""
    return global_bytes(mlir, lambda l: "gt.param_init" in l)


def analytic_comm_bytes(mlir, ranks):
    """Bytes each rank sends per step by the shard collectives of the
    compiled step (`--emit=gt`), at the ring volumes of megagraph/Comm.h:
    all_reduce 2 (n-1)/n of the buffer, reduce_scatter (n-1)/n of its input,
    all_gather (n-1) times its input; all_slice is a local copy. With zero=3
    the first step's shard cut (an scf.if) is all_slice only, so every step
    sends the same."""
    n, total = ranks, 0
    for m in re.finditer(r"shard\.(all_reduce|reduce_scatter|all_gather) "
                         r"[^\n]*: tensor<(\d+)xf32> -> tensor<(\d+)xf32>",
                         mlir):
        kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
        if kind == "all_reduce":
            total += int(2.0 * (n - 1) * a / n * 4)
        elif kind == "reduce_scatter":
            total += (a - b) * 4
        else:
            total += (b - a) * 4
    return total


def compare_runs(check, single, parallel, ranks, steps, note=""):
    """The parallel run reproduces the one-process run: `steps` records each,
    every step's loss within 1e-4 relative, the same accuracy, and one
    peak_bytes entry per rank."""
    check("records", len(single) == steps and len(parallel) == steps,
          f"{len(single)} and {len(parallel)}")
    rel = max(abs(a["loss"] - b["loss"]) / abs(a["loss"])
              for a, b in zip(single, parallel))
    check("losses", rel <= 1e-4, f"max relative difference {rel:.2e} over "
          f"{steps} steps (first {single[0]['loss']:.4f}, last "
          f"{single[-1]['loss']:.4f}){note}")
    acc = max(abs(a["accuracy"] - b["accuracy"])
              for a, b in zip(single, parallel))
    check("accuracy", acc <= 1e-3, f"max difference {acc:.2e}")
    peaks = [len(r["peak_bytes"]) for r in parallel]
    check("peak_bytes", all(n == ranks for n in peaks),
          f"{ranks} entries per record, per-rank peak "
          f"{parallel[-1]['peak_bytes']} (one process: "
          f"{single[-1]['peak_bytes']})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--model", choices=["mlp", "graphormer"], default="mlp")
    ap.add_argument("--dp", type=int, default=2)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--lr", default="0.1")
    ap.add_argument("--global-batch", type=int, default=4)
    ap.add_argument("--zero", type=int, default=0)
    ap.add_argument("--recipe", default="",
                    help="more training flags for both compiles, e.g. "
                         "'--momentum 0.9 --clip-grad-norm 1'")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = (train_check.NodeClassifier() if args.model == "mlp"
             else tg.Graphormer())
    B, P = args.global_batch, args.dp
    assert B % P == 0
    # -O0: LLVM's -O3 takes most of the compile time and is not what is
    # tested here (the runtime's kernels are optimized either way).
    train = ["--train", "--optimizer", args.optimizer, "--lr", args.lr,
             *args.recipe.split(), "--emit=exe", "-O0"]
    exes, state, params, init, gts = {}, {}, {}, {}, {}
    for name, batch, plan in (("single", B, []),
                              (f"dp{P}", B // P,
                               ["--plan", f"dp={P},zero={args.zero}"])):
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        export(model, args.model, batch, onnx_path)
        exes[name] = os.path.join(args.work, name)
        subprocess.run([args.compiler, onnx_path, *train, *plan, "-o",
                        exes[name]], check=True)
        # Optimizer state per rank: the gt.optimizer_state globals.
        mlir = subprocess.run([args.compiler, onnx_path, *train[:-2], *plan,
                               "--emit=gt",
                               "--mlir-elide-elementsattrs-if-larger=1"],
                              check=True, capture_output=True,
                              text=True).stdout
        gts[name] = mlir
        state[name] = optimizer_state_bytes(mlir)
        params[name] = parameter_bytes(mlir)
        init[name] = initial_weight_bytes(mlir)
    if args.model == "mlp":
        data = "synthetic:sbm,nodes=2048,classes=8,features=16,signal=3,seed=5"
    else:
        data = (f"synthetic:sbm,nodes=2048,classes={tg.C},features={tg.F},"
                "signal=3,seed=3")
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS),
           "--quiet"]
    logs, stderr = {}, {}
    runs = [("single", [], {}),
            (f"dp{P}", mpirun() + ["-np", str(P)],
             {"MEGAGRAPH_COMM_ASYNC_STATS": "1", "MEGAGRAPH_COMM_ASYNC": "1"})]
    if args.zero != 1:
        runs.append(("sync", mpirun() + ["-np", str(P)],
                     {"MEGAGRAPH_COMM_ASYNC": "0"}))
    for name, prefix, env in runs:
        logs[name] = os.path.join(args.work, f"{name}.jsonl")
        if os.path.exists(logs[name]):
            os.remove(logs[name])
        exe = exes["single" if name == "single" else f"dp{P}"]
        stderr[name] = subprocess.run(
            prefix + [exe, *run, "--log-json", logs[name]], check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            timeout=600, env={**os.environ, **env}).stderr
    single = [json.loads(l) for l in open(logs["single"])]
    dp = [json.loads(l) for l in open(logs[f"dp{P}"])]
    check = Checks()
    compare_runs(check, single, dp, P, STEPS)
    # comm_bytes: what each rank sent in the step, the analytic volume of
    # the step's collectives; nothing alone.
    want = analytic_comm_bytes(gts[f"dp{P}"], P)
    got = {b for r in dp for b in r["comm_bytes"]}
    check("comm_bytes", want > 0 and got == {want} and
          all(r["comm_bytes"] == [0] for r in single),
          f"{sorted(got)} bytes per rank and step, analytic {want}")
    if args.zero != 1:
        sync = [json.loads(l) for l in open(logs["sync"])]
        check("overlapped vs waited at once",
              [r["loss"] for r in dp] == [r["loss"] for r in sync] and
              [r["comm_bytes"] for r in dp] ==
              [r["comm_bytes"] for r in sync],
              "losses bit for bit and comm_bytes equal")
        buckets = gts[f"dp{P}"].count("{gt.overlap}")
        stats = re.findall(r"rank (\d+): (\d+) of (\d+) started collectives "
                           r"were complete at their wait \(progress thread "
                           r"(on|off)\)", stderr[f"dp{P}"])
        check("started collectives",
              buckets > 0 and len(stats) == P and
              all(int(n) == buckets * STEPS and t == "on"
                  for _, _, n, t in stats),
              f"{buckets} buckets per step; per rank (complete at the wait, "
              f"waits, progress thread): "
              f"{[(int(a), int(n), t) for _, a, n, t in stats]}")

    s1, sp = state["single"], state[f"dp{P}"]
    if args.optimizer == "adamw":
        # zero=0 replicates the moments; zero=1 keeps 1/P of them (plus the
        # step counter and the padding of the buckets to a multiple of P).
        want = sp <= s1 / P + 4 * (2 * P + 1) if args.zero else sp == s1
        check("optimizer state", want,
              f"{s1} bytes per rank alone, {sp} bytes per rank with "
              f"dp={P},zero={args.zero} (ratio {s1 / sp:.2f})")
    # zero=3 keeps 1/P of the parameters (plus the padding of the buckets);
    # below it every rank holds them all.
    p1, pp = params["single"], params[f"dp{P}"]
    want = pp <= p1 / P + 4 * 2 * P if args.zero == 3 else pp == p1
    check("parameters", want and p1 > 0,
          f"{p1} bytes per rank alone, {pp} bytes per rank with "
          f"dp={P},zero={args.zero} (ratio {p1 / max(pp, 1):.2f}; "
          f"initial weights, read-only: {init[f'dp{P}']} bytes)")
    # Without mpirun the dp executable names the launch it needs.
    r = subprocess.run([exes[f"dp{P}"], *run], capture_output=True, text=True,
                       timeout=120)
    want = f"launch it with mpirun -np {P}"
    check("launch", r.returncode != 0 and want in r.stderr,
          f"exit {r.returncode}, '{want}' in the message")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
