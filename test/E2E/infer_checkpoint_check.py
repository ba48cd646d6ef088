#!/usr/bin/env python3
"""Inference with trained weights: `--mode infer --checkpoint DIR` of an
executable compiled without --train, and export under pp.

The node classifier of export_npy_check.py (logits = relu(x @ fc.weight +
fc.bias) @ head.weight) is trained with adamw for STEPS steps, once in one
process and once under --plan dp=1,pp=2,mb=2 (each stage updates its own
parameters), with --checkpoint-dir, --export-npy and --export-onnx. Then
the model compiled for inference runs on INPUT with --checkpoint:
  * its logits equal a NumPy forward with the exported parameters (max abs
    difference <= 1e-5), for the one-process and the pp checkpoint;
  * and those of the exported ONNX model compiled for inference (the same
    weights; max abs difference <= 1e-6; the pp model was exported at the
    micro-batch, so on the first B / 2 sequences);
  * and onnxruntime's output of the --export-onnx file on the same inputs
    (max abs difference <= 1e-5), run by the python of ORT_PYTHON
    (default: the venv scripts/setup.sh installs onnxruntime in);
  * without --checkpoint (the initial weights) they differ (control);
  * the pp run's --export-onnx initializers equal its --export-npy files
    bit for bit, and its parameters those of the one-process run within
    the trajectory tolerance (1e-4 relative, train_pp_check.py's).
Also writes other.onnx, the model with an initializer renamed, for the
refusal in infer_checkpoint.test.

usage: infer_checkpoint_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import (Checks, F, S, mpirun, read_export,  # noqa
                              write_onnx)

STEPS = 5
ORT_PYTHON = os.environ.get("ORT_PYTHON", "/opt/megagraph/onnx-venv/bin/python")
# Runs an ONNX model's first output on one .npy input in onnxruntime.
ORT_RUN = """
import sys, numpy as np, onnxruntime as ort
model, name, x, out = sys.argv[1:5]
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
np.save(out, s.run(None, {name: np.load(x)})[0])
"""
DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"
B = 4


def forward(x, p):
    return np.maximum(x @ p["fc.weight"] + p["fc.bias"], 0) @ p["head.weight"]


def main():
    compiler, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    src = os.path.join(work, "model.onnx")
    write_onnx(src, B, "x")
    pp_src = os.path.join(work, "pp.onnx")
    write_onnx(pp_src, B // 2, "x")

    def compile_(onnx_path, exe, *flags):
        subprocess.run([compiler, onnx_path, *flags, "--emit=exe", "-O0",
                        "-o", os.path.join(work, exe)], check=True)
        return os.path.join(work, exe)

    infer = compile_(src, "infer")
    runs = {}
    for name, onnx_path, plan, np_ in (
            ("single", src, [], 1),
            ("pp2", pp_src, ["--plan", "dp=1,pp=2,mb=2"], 2)):
        exe = compile_(onnx_path, name, "--train", "--optimizer", "adamw",
                       "--lr", "0.05", *plan)
        ck = os.path.join(work, name + "_ck")
        npy = os.path.join(work, name + "_npy")
        exported = os.path.join(work, name + "_trained.onnx")
        for p in (ck, npy):
            shutil.rmtree(p, ignore_errors=True)
        prefix = mpirun() + ["-np", str(np_)] if np_ > 1 else []
        subprocess.run(prefix + [exe, "--mode", "train", "--data", DATA,
                                 "--steps", str(STEPS), "--quiet",
                                 "--checkpoint-dir", ck, "--export-npy", npy,
                                 "--export-onnx", exported,
                                 "--source-model", onnx_path],
                       check=True, timeout=300)
        runs[name] = (ck, read_export(npy), exported)

    x = np.random.default_rng(3).normal(0, 1, (B, S, F)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)

    def run_infer(exe, out, inputs=None, *flags):
        shutil.rmtree(out, ignore_errors=True)
        path = os.path.join(work, "x.npy")
        if inputs is not None:
            path = os.path.join(work, f"x{len(inputs)}.npy")
            np.save(path, inputs)
        subprocess.run([exe, "--mode", "infer", "--input", "x=" + path,
                        "--output-dir", out, "--quiet", *flags],
                       check=True, timeout=120)
        return np.load(os.path.join(out, "logits.npy"))

    initial = run_infer(infer, os.path.join(work, "out_initial"))
    for name, (ck, params, exported) in runs.items():
        got = run_infer(infer, os.path.join(work, "out_" + name), None,
                        "--checkpoint", ck)
        d = float(np.max(np.abs(got - forward(x, params))))
        check(f"{name}: infer --checkpoint vs NumPy", d <= 1e-5,
              f"max abs {d:.1e} <= 1e-5")
        # The pp model was exported at the micro-batch: its first rows.
        rows = B if name == "single" else B // 2
        again = run_infer(compile_(exported, name + "_trained_infer"),
                          os.path.join(work, "out_" + name + "_onnx"),
                          x[:rows])
        d = float(np.max(np.abs(got[:rows] - again)))
        check(f"{name}: infer --checkpoint vs the exported ONNX", d <= 1e-6,
              f"{rows} sequences, max abs {d:.1e} <= 1e-6")
        xin = os.path.join(work, f"ort_{name}_x.npy")
        ort_out = os.path.join(work, f"ort_{name}_logits.npy")
        np.save(xin, x[:rows])
        subprocess.run([ORT_PYTHON, "-c", ORT_RUN, exported, "x", xin,
                        ort_out], check=True, timeout=120)
        d = float(np.max(np.abs(got[:rows] - np.load(ort_out))))
        check(f"{name}: infer --checkpoint vs onnxruntime", d <= 1e-5,
              f"{rows} sequences, max abs {d:.1e} <= 1e-5")
        d = float(np.max(np.abs(got - initial)))
        check(f"{name}: control", d > 1e-3,
              f"the initial weights' logits differ by {d:.3f}")

    _, pp_params, pp_onnx = runs["pp2"]
    inits = {t.name: numpy_helper.to_array(t)
             for t in onnx.load(pp_onnx).graph.initializer}
    same = sorted(inits) == sorted(pp_params) and all(
        inits[k].tobytes() == pp_params[k].tobytes() for k in pp_params)
    check("pp2: --export-onnx", same,
          f"{sorted(inits)} equal --export-npy bit for bit")
    single = runs["single"][1]
    d = max(float(np.max(np.abs(pp_params[k] - single[k])) /
                  np.max(np.abs(single[k]))) for k in single)
    moved = min(float(np.max(np.abs(single[k] - v)))
                for k, v in read_initial(src).items())
    check("pp2: --export-npy vs one process", d <= 1e-4 and moved > 1e-3,
          f"relative {d:.1e} <= 1e-4 (trained: moved {moved:.3f})")

    # The refusal: a model whose initializer has another name.
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.name == "fc.bias":
            t.name = "other.bias"
    for n in m.graph.node:
        n.input[:] = ["other.bias" if i == "fc.bias" else i for i in n.input]
    onnx.save(m, os.path.join(work, "other.onnx"))
    return 0 if check.ok else 1


def read_initial(path):
    return {t.name: numpy_helper.to_array(t)
            for t in onnx.load(path).graph.initializer}


if __name__ == "__main__":
    sys.exit(main())
