#!/usr/bin/env python3
"""The non-finite guard (--on-nonfinite stop|skip-step).

export_npy_check.py's node classifier (--train --optimizer sgd) trains on
the user's tensors, three steps DIR/step1..3 of which step 2's features
hold a NaN:
  * stop (default): exit 1 with one line naming step 2 and the first
    non-finite tensor, after one checkpoint (--checkpoint-every 1) that is
    intact: DIR/latest names step-1 and --mode eval on it runs;
  * skip-step: exit 0, a warning for step 2, and the final parameters equal
    bit for bit those of a run on steps 1 and 3 only (the bad step undone).

usage: nonfinite_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import C, F, S, Checks, read_export, write_onnx  # noqa


def main():
    compiler, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    onnx_path = os.path.join(work, "model.onnx")
    write_onnx(onnx_path, 2, "node_attr")
    exe = os.path.join(work, "model")
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "sgd",
                    "--lr", "0.1", "--emit=exe", "-O0", "-o", exe],
                   check=True)
    rng = np.random.default_rng(4)
    steps = []
    for k in range(3):
        x = rng.normal(0, 1, (2, S, F)).astype(np.float32)
        if k == 1:
            x[0, 3, 1] = np.nan
        steps.append((x, rng.integers(0, C, (2, S)).astype(np.int64)))
    for name, picked in (("bad", [0, 1, 2]), ("clean", [0, 2])):
        for i, k in enumerate(picked):
            d = os.path.join(work, name, f"step{i + 1}")
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, "node_attr.npy"), steps[k][0])
            np.save(os.path.join(d, "labels.npy"), steps[k][1])
    for d in ("ck", "p_skip", "p_clean"):
        shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    data = "npy:" + os.path.join(work, "bad")
    ck = os.path.join(work, "ck")
    r = subprocess.run([exe, "--mode", "train", "--data", data, "--steps",
                        "3", "--checkpoint-dir", ck, "--checkpoint-every",
                        "1", "--quiet"], capture_output=True, text=True)
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    check("stop", r.returncode == 1 and len(errors) == 1,
          f"exit {r.returncode}: {errors}")
    latest = open(os.path.join(ck, "latest")).read().strip()
    e = subprocess.run([exe, "--mode", "eval", "--data", data, "--checkpoint",
                        ck, "--eval-steps", "1", "--quiet"],
                       capture_output=True, text=True)
    check("checkpoint intact", latest == "step-1" and e.returncode == 0 and
          "eval after step 1" in e.stdout,
          f"latest {latest}; --mode eval on it: exit {e.returncode}")
    r = subprocess.run([exe, "--mode", "train", "--data", data, "--steps",
                        "3", "--on-nonfinite", "skip-step", "--export-npy",
                        os.path.join(work, "p_skip"), "--quiet"],
                       capture_output=True, text=True)
    warnings = [l for l in r.stderr.splitlines() if l.startswith("warning:")]
    check("skip-step", r.returncode == 0 and len(warnings) == 1,
          f"exit {r.returncode}: {warnings}")
    subprocess.run([exe, "--mode", "train", "--data",
                    "npy:" + os.path.join(work, "clean"), "--steps", "2",
                    "--export-npy", os.path.join(work, "p_clean"),
                    "--quiet"], check=True)
    a = read_export(os.path.join(work, "p_skip"))
    b = read_export(os.path.join(work, "p_clean"))
    same = sorted(a) == sorted(b) and all(
        a[k].tobytes() == b[k].tobytes() and np.isfinite(a[k]).all()
        for k in a)
    check("skip-step parameters", same,
          "equal a run on steps 1 and 3 bit for bit, all finite")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
