#!/usr/bin/env python3
"""Checkpoint and resume (--checkpoint-dir, --checkpoint-every, --resume)
end to end: bit-identical continuation.

The node classifier of export_npy_check.py is compiled with `--train
--optimizer adamw` (moments and a step counter: state besides the
parameters) for one process and for --plan dp=2,zero=3 (each rank holds
half of the packed parameters and moments). Per plan:
  * an uninterrupted run of STEPS steps (losses logged, parameters
    exported with --export-npy);
  * a run of STEPS / 2 steps with --checkpoint-dir, then a second process
    resuming it with --resume to STEPS: its losses of steps
    STEPS / 2 + 1 .. STEPS and its final parameters must equal the
    uninterrupted run's exactly (bit for bit);
  * checkpointing every 2 steps keeps only the newest (DIR/latest names
    it, the folders of older ones are gone).
Under --plan cp=2 the model is train_cp_check.py's plain graph
transformer (attention is what cp shards). Under --plan dp=1,pp=2,mb=2
the final
parameters are compared as the raw state files of a checkpoint after the
last step, every rank's.

usage: checkpoint_check.py MEGAGRAPH_COMPILE WORKDIR [single|dp|pp|cp]...
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
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
DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"


def run(prefix, exe, work, name, export, *flags, data=DATA):
    """The log and the final parameters: exported with --export-npy, or
    (pipelined plans: every rank's copies, stale ones too) the raw state
    of every rank from a checkpoint after the last step."""
    log = os.path.join(work, name + ".jsonl")
    out = os.path.join(work, name + "_params")
    for p in (log, out):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    more = ["--export-npy", out] if export else []
    if not export and "--checkpoint-dir" not in flags:
        more = ["--checkpoint-dir", out]
    subprocess.run(prefix + [exe, "--mode", "train", "--data", data,
                             "--log-json", log, "--quiet", *more, *flags],
                   check=True, timeout=300)
    if export:
        return [json.loads(l) for l in open(log)], read_export(out)
    ck = flags[flags.index("--checkpoint-dir") + 1] \
        if "--checkpoint-dir" in flags else out
    last = os.path.join(ck, open(os.path.join(ck, "latest")).read().strip())
    state = {f: np.fromfile(os.path.join(last, f), np.uint8)
             for f in os.listdir(last) if f.endswith(".state")}
    return [json.loads(l) for l in open(log)], state


def check_plan(check, compiler, work, name, batch, plan, prefix,
               export=True, writer=None, data=DATA):
    onnx_path = os.path.join(work, name + ".onnx")
    (writer or (lambda p, b: write_onnx(p, b, "x")))(onnx_path, batch)
    exe = os.path.join(work, name)
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "adamw",
                    "--lr", "0.05", *plan, "--emit=exe", "-O0", "-o", exe],
                   check=True)
    ck = os.path.join(work, name + "_ck")
    shutil.rmtree(ck, ignore_errors=True)
    full, pfull = run(prefix, exe, work, name + "_full", export, "--steps",
                      str(STEPS), data=data)
    half, _ = run(prefix, exe, work, name + "_half", export, "--steps",
                  str(STEPS // 2), "--checkpoint-dir", ck, data=data)
    rest, prest = run(prefix, exe, work, name + "_rest", export, "--steps",
                      str(STEPS), "--resume", ck, data=data)
    want = full[STEPS // 2:]
    check(f"{name}: first half", [r["loss"] for r in half] ==
          [r["loss"] for r in full[:STEPS // 2]],
          f"{len(half)} steps equal the uninterrupted run's")
    same = ([r["step"] for r in rest] == [r["step"] for r in want] and
            [r["loss"] for r in rest] == [r["loss"] for r in want])
    check(f"{name}: resumed losses", same,
          f"steps {[r['step'] for r in rest]}: "
          f"{[r['loss'] for r in rest]} vs {[r['loss'] for r in want]}")
    bits = sorted(prest) == sorted(pfull) and all(
        prest[k].tobytes() == pfull[k].tobytes() for k in pfull)
    moved = not export or writer or (sorted(prest) == sorted(pfull) and any(
        not np.array_equal(prest[k], read_export_initial(k)) for k in prest))
    check(f"{name}: resumed parameters", bits and moved,
          f"{sorted(prest)} bit-identical to the uninterrupted run's")
    # Every 2 steps: the newest only.
    every = os.path.join(work, name + "_every")
    shutil.rmtree(every, ignore_errors=True)
    run(prefix, exe, work, name + "_every", export, "--steps", "5",
        "--checkpoint-dir", every, "--checkpoint-every", "2", data=data)
    latest = open(os.path.join(every, "latest")).read().strip()
    left = sorted(os.listdir(every))
    ranks = sorted(os.listdir(os.path.join(every, latest)))
    check(f"{name}: kept", latest == "step-5" and left == ["latest", "step-5"],
          f"latest {latest}, folder {left}, checkpoint {ranks}")


def read_export_initial(name):
    from export_npy_check import weights
    return weights()[name]


def main():
    compiler, work = sys.argv[1:3]
    parts = sys.argv[3:] or ["single", "dp", "pp", "cp"]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    if "single" in parts:
        check_plan(check, compiler, work, "single", 4, [], [])
    if "dp" in parts:
        check_plan(check, compiler, work, "dp2z3", 2,
                   ["--plan", "dp=2,zero=3"], mpirun() + ["-np", "2"])
    if "cp" in parts:
        # A graph transformer (attention: what cp shards), each rank S / 2
        # nodes of every sequence.
        import torch
        import train_cp_check
        import train_dp_check as tdp
        import train_graphormer_check as tg
        torch.manual_seed(0)
        model = train_cp_check.PlainGT()
        check_plan(check, compiler, work, "cp2", 2,
                   ["--plan", "cp=2"], mpirun() + ["-np", "2"],
                   writer=lambda p, b: tdp.export(model, "plain", b, p),
                   data=f"synthetic:sbm,nodes=512,classes={tg.C},"
                        f"features={tg.F},signal=3,seed=3")
    if "pp" in parts:
        check_plan(check, compiler, work, "pp2", 4,
                   ["--plan", "dp=1,pp=2,mb=2"], mpirun() + ["-np", "2"],
                   export=False)
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
