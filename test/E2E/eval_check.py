#!/usr/bin/env python3
"""Evaluation: --eval-every K during training and --mode eval.

Compiles export_npy_check.py's node classifier (--train --optimizer adamw)
and checks on a synthetic graph that
  * training with --eval-every 3 logs an evaluation after steps 3 and 6
    (test split, one epoch of batches) and its training losses and final
    parameters equal those of the same run without evaluation, exactly
    (an evaluation does not update anything);
  * --mode eval --checkpoint DIR of the checkpoint after step 6 reports
    the loss and accuracy the in-training evaluation after step 6 logged,
    exactly, and twice in a row the same;
  * --split train evaluates the training nodes: another loss, and more
    nodes than the test split (train fraction 0.8).

usage: eval_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import Checks, read_export, write_onnx  # noqa: E402

DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"


def run(exe, work, name, *flags):
    log = os.path.join(work, name + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--data", DATA, "--log-json", log, "--quiet",
                    *flags], check=True, timeout=300)
    return [json.loads(l) for l in open(log)]


def main():
    compiler, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    onnx_path = os.path.join(work, "model.onnx")
    write_onnx(onnx_path, 4, "x")
    exe = os.path.join(work, "model")
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "adamw",
                    "--lr", "0.05", "--emit=exe", "-O0", "-o", exe],
                   check=True)
    ck = os.path.join(work, "ck")
    for d in ("ck", "p_plain", "p_eval"):
        shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    plain = run(exe, work, "plain", "--mode", "train", "--steps", "6",
                "--export-npy", os.path.join(work, "p_plain"))
    mixed = run(exe, work, "mixed", "--mode", "train", "--steps", "6",
                "--eval-every", "3", "--checkpoint-dir", ck, "--export-npy",
                os.path.join(work, "p_eval"))
    evals = [r for r in mixed if "eval_step" in r]
    steps = [r for r in mixed if "step" in r]
    check("eval-every", [e["eval_step"] for e in evals] == [3, 6] and
          all(e["split"] == "test" and e["batches"] > 0 and e["nodes"] > 0 and
              0 <= e["accuracy"] <= 1 for e in evals),
          f"{[(e['eval_step'], e['split'], e['batches'], e['nodes']) for e in evals]}")
    a, b = read_export(os.path.join(work, "p_plain")), \
        read_export(os.path.join(work, "p_eval"))
    same = ([r["loss"] for r in steps] == [r["loss"] for r in plain] and
            all(a[k].tobytes() == b[k].tobytes() for k in a))
    check("no update", same,
          "training losses and final parameters with --eval-every equal "
          "those without, exactly")
    e1 = run(exe, work, "eval1", "--mode", "eval", "--checkpoint", ck)
    e2 = run(exe, work, "eval2", "--mode", "eval", "--checkpoint", ck)
    want = evals[-1] if evals else {}
    check("mode eval", e1 == e2 and len(e1) == 1 and
          e1[0]["loss"] == want.get("loss") and
          e1[0]["accuracy"] == want.get("accuracy") and
          e1[0]["eval_step"] == 6,
          f"{e1[0] if e1 else None} equals the evaluation after step 6 and "
          f"a second --mode eval")
    tr = run(exe, work, "evaltrain", "--mode", "eval", "--checkpoint", ck,
             "--split", "train")
    check("split train", len(tr) == 1 and tr[0]["split"] == "train" and
          tr[0]["nodes"] > e1[0]["nodes"] and tr[0]["loss"] != e1[0]["loss"],
          f"{tr[0]['nodes']} training nodes, loss {tr[0]['loss']} "
          f"(test: {e1[0]['nodes']} nodes, loss {e1[0]['loss']})")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
