#!/usr/bin/env python3
"""Resuming a checkpoint under another plan of the same model.

The node classifier of export_npy_check.py, compiled with `--train
--optimizer adamw` (moments and a step counter besides the parameters) for
one process (batch 4), for --plan dp=2,zero=3 (batch 2 per replica: each
rank holds half of the packed parameters and moments), dp=2,zero=1 and
dp=2,zero=2 (the parameters whole, the moments packed and halved), for
--plan dp=1,pp=2,mb=2 (two micro-batches of 2: each stage updates its own
parameters) and dp=2,pp=2,mb=2 with zero=3 and zero=1 (4 ranks: each
stage's buckets are shared by that stage's two ranks, 1 and 3 for the
second stage); and train_cp_check.py's plain graph transformer for one
process and for --plan cp=2 (attention is what cp shards). Each pair sees
the same global batch every step. The uninterrupted runs of the ZeRO
plans must also export the one-process run's parameters (within
PLAN_TOL): a bucket gathered from the wrong ranks would not.

Per transition FROM -> TO: STEPS / 2 steps under FROM with --checkpoint-dir,
then --resume under TO to STEPS. The losses of steps STEPS / 2 + 1 .. STEPS
and the parameters exported at the end (--export-npy) must equal the
uninterrupted run of TO within TOL relative (|a - b| <= TOL * max|b| per
tensor; for cp=2, whose attention rounds apart from the one-process run's,
within twice the distance of the two plans' uninterrupted runs). As a
control, the Adam moments of a checkpoint are zeroed in its
rank files (located through the manifest's `logical` lines): the resumed
run must then leave the tolerance.

usage: checkpoint_crossplan_check.py MEGAGRAPH_COMPILE WORKDIR [PART]...
with PART one of dp, zero, pp, ppzero, cp (default all). Prints `check: ... OK|FAIL`
lines; exits 1 on FAIL.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import Checks, mpirun, read_export, write_onnx  # noqa

STEPS = 10
TOL = 1e-6
# Two plans' uninterrupted runs of the node classifier: the same global
# batch, summed in another order (measured: within 4e-7).
PLAN_TOL = 1e-5
DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"


class Exe:
    def __init__(self, path, np_, data):
        self.path, self.np, self.data = path, np_, data

    def run(self, work, name, *flags):
        """Runs it; returns the logged losses by step and the exported
        parameters."""
        log = os.path.join(work, name + ".jsonl")
        out = os.path.join(work, name + "_params")
        shutil.rmtree(out, ignore_errors=True)
        prefix = mpirun() + ["-np", str(self.np)] if self.np > 1 else []
        subprocess.run(prefix + [self.path, "--mode", "train", "--data",
                                 self.data, "--log-json", log, "--quiet",
                                 "--export-npy", out, *flags],
                       check=True, timeout=300)
        losses = {r["step"]: r["loss"] for r in map(json.loads, open(log))}
        return losses, read_export(out)


def compile_exe(compiler, onnx_path, exe, plan, np_, data, more=()):
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "adamw",
                    "--lr", "0.05", *more, *plan, "--emit=exe", "-O0", "-o",
                    exe], check=True)
    return Exe(exe, np_, data)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def distance(run, want):
    """The largest relative difference of the resumed run's losses and
    parameters from the uninterrupted run's."""
    losses, params = run
    wl, wp = want
    steps = sorted(losses)
    if steps != list(range(STEPS // 2 + 1, STEPS + 1)) or \
            sorted(params) != sorted(wp):
        return float("inf"), steps
    d = max(abs(losses[s] - wl[s]) / abs(wl[s]) for s in steps)
    return max([d] + [rel(params[k], wp[k]) for k in wp]), steps


def zero_moments(ck):
    """Zeroes every Adam moment of the newest checkpoint in `ck`, in every
    rank file; returns how many logical moments it found."""
    last = os.path.join(ck, open(os.path.join(ck, "latest")).read().strip())
    lines = open(os.path.join(last, "manifest")).read().splitlines()
    found = 0
    for line in lines:
        if not line.startswith("logical "):
            continue
        f = line.split(" ")
        kind, file_offset, elems = map(int, f[1:2] + f[3:5])
        place, offset, ndim = f[5], int(f[6]), int(f[7])
        name = " ".join(f[8 + ndim:])
        if kind != 2 or not name.endswith((".adam_m", ".adam_v")):
            continue
        found += 1
        n = int(np.prod([int(d) for d in f[8:8 + ndim]]))
        # PLACE: the rank of a whole tensor, or the ranks of its shards,
        # each followed by a comma (ZeRO: packed over them in that order).
        sharded = place.endswith(",")
        ranks = [int(r) for r in place.split(",")[:-1]] if sharded \
            else [int(place)]
        for k, r in enumerate(ranks):
            path = os.path.join(last, f"rank{r}.state")
            b = np.fromfile(path, np.uint8)
            # Elements [offset, offset + n) of the storage: on one rank, or
            # of the shards, the k-th holding [k * elems, (k + 1) * elems).
            lo, hi = (offset, offset + n) if not sharded else \
                (max(offset - k * elems, 0), min(offset + n - k * elems, elems))
            if lo < hi:
                b[file_offset + 4 * lo:file_offset + 4 * hi] = 0
                b.tofile(path)
    return found


def transition(check, work, a, b, name, want, control=False, gap=None):
    """STEPS / 2 steps of `a`, resumed by `b` to STEPS; against `want`.
    Files are named after `name` with "->" as "_to_". With `gap` (the
    uninterrupted run of `a`), the bound is the larger of TOL and twice
    the distance between the two plans' uninterrupted runs."""
    label, name = name, name.replace("->", "_to_")
    ck = os.path.join(work, name + "_ck")
    shutil.rmtree(ck, ignore_errors=True)
    a.run(work, name + "_half", "--steps", str(STEPS // 2),
          "--checkpoint-dir", ck)
    d, steps = distance(b.run(work, name + "_rest", "--steps", str(STEPS),
                              "--resume", ck), want)
    bound, why = TOL, f"{TOL:g}"
    if gap is not None:
        g = distance(({s: gap[0][s] for s in range(STEPS // 2 + 1, STEPS + 1)},
                      gap[1]), want)[0]
        bound = max(TOL, 2 * g)
        why = f"{bound:.1e} (the two plans' uninterrupted runs differ by {g:.1e})"
    check(f"{label}: resumed", d <= bound,
          f"steps {steps}, losses and parameters within {d:.1e} <= {why} "
          "relative of the uninterrupted run")
    if control:
        found = zero_moments(ck)
        d, _ = distance(b.run(work, name + "_zeroed", "--steps", str(STEPS),
                              "--resume", ck), want)
        check(f"{label}: control", found > 0 and d > bound,
              f"{found} moments zeroed: {d:.1e} > {bound:.1e} off")


def same_parameters(check, label, run, want):
    """The exported parameters of two plans' uninterrupted runs agree."""
    d = max(rel(run[1][k], want[1][k]) for k in want[1]) \
        if sorted(run[1]) == sorted(want[1]) else float("inf")
    check(f"{label}: export", d <= PLAN_TOL,
          f"parameters within {d:.1e} <= {PLAN_TOL:g} relative of the "
          "one-process run")


def main():
    compiler, work = sys.argv[1:3]
    parts = sys.argv[3:] or ["dp", "zero", "pp", "ppzero", "cp"]
    os.makedirs(work, exist_ok=True)
    check = Checks()

    def node_classifier(name, batch, plan, np_):
        path = os.path.join(work, name + ".onnx")
        write_onnx(path, batch, "x")
        return compile_exe(compiler, path, os.path.join(work, name), plan,
                           np_, DATA)

    def full(exe, name):
        return exe.run(work, name + "_full", "--steps", str(STEPS))

    if set(parts) & {"dp", "zero", "pp", "ppzero"}:
        single = node_classifier("single", 4, [], 1)
        want = full(single, "single")
    if "dp" in parts:
        dp = node_classifier("dp2z3", 2, ["--plan", "dp=2,zero=3"], 2)
        transition(check, work, dp, single, "dp2z3->single", want,
                   control=True)
        transition(check, work, single, dp, "single->dp2z3", full(dp, "dp2z3"))
        dp0 = node_classifier("dp2", 2, ["--plan", "dp=2"], 2)
        transition(check, work, single, dp0, "single->dp2", full(dp0, "dp2"))
    if "zero" in parts:
        # ZeRO-1/2: the moments are sharded, the parameters whole.
        z1 = node_classifier("dp2z1", 2, ["--plan", "dp=2,zero=1"], 2)
        transition(check, work, z1, single, "dp2z1->single", want,
                   control=True)
        z2 = node_classifier("dp2z2", 2, ["--plan", "dp=2,zero=2"], 2)
        z2_full = full(z2, "dp2z2")
        same_parameters(check, "dp2z2", z2_full, want)
        transition(check, work, single, z2, "single->dp2z2", z2_full)
    if "pp" in parts:
        pp = node_classifier("pp2", 2, ["--plan", "dp=1,pp=2,mb=2"], 2)
        transition(check, work, pp, single, "pp2->single", want,
                   control=True)
        transition(check, work, single, pp, "single->pp2", full(pp, "pp2"))
    if "ppzero" in parts:
        # dp=2 x pp=2: a micro-batch of 1; each stage's buckets over its
        # two ranks.
        ppz3 = node_classifier("dp2pp2z3", 1,
                               ["--plan", "dp=2,pp=2,mb=2,zero=3"], 4)
        same_parameters(check, "dp2pp2z3", full(ppz3, "dp2pp2z3"), want)
        transition(check, work, ppz3, single, "dp2pp2z3->single", want,
                   control=True)
        ppz1 = node_classifier("dp2pp2z1", 1,
                               ["--plan", "dp=2,pp=2,mb=2,zero=1"], 4)
        ppz1_full = full(ppz1, "dp2pp2z1")
        same_parameters(check, "dp2pp2z1", ppz1_full, want)
        transition(check, work, single, ppz1, "single->dp2pp2z1", ppz1_full)
    if "cp" in parts:
        import torch
        import train_cp_check
        import train_dp_check as tdp
        import train_graphormer_check as tg
        torch.manual_seed(0)
        model = train_cp_check.PlainGT()
        path = os.path.join(work, "gt.onnx")
        tdp.export(model, "plain", 2, path)
        data = (f"synthetic:sbm,nodes=512,classes={tg.C},features={tg.F},"
                "signal=3,seed=3")
        # The attention's key bias has a gradient of rounding noise only
        # (softmax ignores it); with Adam's default eps (1e-8) that noise
        # becomes steps of size lr, which no two plans round alike. eps
        # 1e-4 keeps it at rest and leaves the other updates Adam's. The
        # cp=2 and one-process runs still round the attention differently
        # (about 4e-5 apart after 10 steps): the bound is that gap.
        eps = ["--eps", "1e-4"]
        gt = compile_exe(compiler, path, os.path.join(work, "gt"), [], 1,
                         data, eps)
        cp = compile_exe(compiler, path, os.path.join(work, "cp2"),
                         ["--plan", "cp=2"], 2, data, eps)
        transition(check, work, cp, gt, "cp2->single",
                   gt.run(work, "gt_full", "--steps", str(STEPS)),
                   control=True,
                   gap=cp.run(work, "cp2_full", "--steps", str(STEPS)))
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
