#!/usr/bin/env python3
"""Runs a compiled MegaGraph executable on an example's reference inputs and
compares every output with the PyTorch reference (.npy).

usage: run_example.py EXE EXAMPLE_DIR [--tol 1e-4] [--extra ARGS...]

EXAMPLE_DIR holds inputs/<name>.npy and outputs/<name>.npy as written by
examples/models/common.py. Prints one line per output:
  <name>: max abs error <e> (tolerance <t>) OK|FAIL
and exits 1 if any output is missing or off.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("example")
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()

    inputs = sorted(glob.glob(os.path.join(args.example, "inputs", "*.npy")))
    refs = sorted(glob.glob(os.path.join(args.example, "outputs", "*.npy")))
    if not inputs or not refs:
        print(f"no reference data under {args.example}")
        return 1
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.exe, "--mode", "infer", "--output-dir", out]
        for path in inputs:
            name = os.path.splitext(os.path.basename(path))[0]
            cmd += ["--input", f"{name}={path}"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"executable failed ({run.returncode}):\n{run.stdout}{run.stderr}")
            return 1
        ok = True
        for ref_path in refs:
            name = os.path.basename(ref_path)
            got_path = os.path.join(out, name)
            if not os.path.exists(got_path):
                print(f"{name[:-4]}: missing output")
                ok = False
                continue
            ref, got = np.load(ref_path), np.load(got_path)
            if ref.shape != got.shape:
                print(f"{name[:-4]}: shape {got.shape} != reference {ref.shape} FAIL")
                ok = False
                continue
            err = float(np.max(np.abs(ref.astype(np.float64) - got.astype(np.float64))))
            status = "OK" if err <= args.tol and np.all(np.isfinite(got)) else "FAIL"
            ok &= status == "OK"
            print(f"{name[:-4]}: max abs error {err:.3g} (tolerance {args.tol:g}) {status}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
