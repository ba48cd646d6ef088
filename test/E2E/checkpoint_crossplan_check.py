#!/usr/bin/env python3
"""Resuming a checkpoint under another plan of the same model.

The node classifier of export_npy_check.py, compiled with `--train
--optimizer adamw` (moments and a step counter besides the parameters) for
one process (batch 4), for --plan dp=2,zero=3 (batch 2 per replica: each
rank holds half of the packed parameters and moments) and for --plan
dp=1,pp=2,mb=2 (two micro-batches of 2: each stage updates its own
parameters); and train_cp_check.py's plain graph transformer for one
process and for --plan cp=2 (attention is what cp shards). Each pair sees
the same global batch every step.

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
with PART one of dp, pp, cp (default all). Prints `check: ... OK|FAIL`
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
        kind, file_offset, elems, rank, offset, ndim = map(int, f[1:2] + f[3:8])
        name = " ".join(f[8 + ndim:])
        if kind != 2 or not name.endswith((".adam_m", ".adam_v")):
            continue
        found += 1
        n = int(np.prod([int(d) for d in f[8:8 + ndim]]))
        ranks = sum(p.endswith(".state") for p in os.listdir(last))
        for r in range(ranks) if rank < 0 else [rank]:
            path = os.path.join(last, f"rank{r}.state")
            b = np.fromfile(path, np.uint8)
            # Elements [offset, offset + n) of the storage: on one rank, or
            # packed over the ranks' shards (ZeRO-3).
            lo, hi = (offset, offset + n) if rank >= 0 else \
                (max(offset - r * elems, 0), min(offset + n - r * elems, elems))
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


def main():
    compiler, work = sys.argv[1:3]
    parts = sys.argv[3:] or ["dp", "pp", "cp"]
    os.makedirs(work, exist_ok=True)
    check = Checks()

    def node_classifier(name, batch, plan, np_):
        path = os.path.join(work, name + ".onnx")
        write_onnx(path, batch, "x")
        return compile_exe(compiler, path, os.path.join(work, name), plan,
                           np_, DATA)

    if "dp" in parts or "pp" in parts:
        single = node_classifier("single", 4, [], 1)
        want = single.run(work, "single_full", "--steps", str(STEPS))
    if "dp" in parts:
        dp = node_classifier("dp2z3", 2, ["--plan", "dp=2,zero=3"], 2)
        transition(check, work, dp, single, "dp2z3->single", want,
                   control=True)
        transition(check, work, single, dp, "single->dp2z3",
                   dp.run(work, "dp2z3_full", "--steps", str(STEPS)))
        dp0 = node_classifier("dp2", 2, ["--plan", "dp=2"], 2)
        # A ZeRO-1 checkpoint, which only its own plan resumes (the lit
        # test's refusal).
        z1 = node_classifier("dp2z1", 2, ["--plan", "dp=2,zero=1"], 2)
        shutil.rmtree(os.path.join(work, "z1_ck"), ignore_errors=True)
        z1.run(work, "z1", "--steps", "2", "--checkpoint-dir",
               os.path.join(work, "z1_ck"))
        transition(check, work, single, dp0, "single->dp2",
                   dp0.run(work, "dp2_full", "--steps", str(STEPS)))
    if "pp" in parts:
        pp = node_classifier("pp2", 2, ["--plan", "dp=1,pp=2,mb=2"], 2)
        transition(check, work, pp, single, "pp2->single", want,
                   control=True)
        transition(check, work, single, pp, "single->pp2",
                   pp.run(work, "pp2_full", "--steps", str(STEPS)))
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
