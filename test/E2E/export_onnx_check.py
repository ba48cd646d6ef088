#!/usr/bin/env python3
"""--export-onnx FILE: the ONNX model an executable was compiled from, with
the trained values in its initializers.

Compiles export_npy_check.py's node classifier with `--train --optimizer
sgd`, trains STEPS steps on the user's tensors with --export-npy and
--export-onnx, and checks that the exported model
  * passes onnx.checker and keeps the source's graph (same nodes, inputs,
    outputs, opset);
  * holds in each initializer exactly the --export-npy values
    (onnx.numpy_helper), which differ from the source's;
  * compiled again by megagraph-compile (inference) and run with --mode
    infer gives the logits of a NumPy forward with the exported weights
    (max abs difference <= 1e-5), unlike the source model's.

usage: export_onnx_check.py MEGAGRAPH_COMPILE WORKDIR
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
from export_npy_check import (C, F, S, Checks, read_export,  # noqa: E402
                              write_onnx)

STEPS = 3


def infer(compiler, onnx_path, exe, x, out):
    subprocess.run([compiler, onnx_path, "--emit=exe", "-O0", "-o", exe],
                   check=True)
    shutil.rmtree(out, ignore_errors=True)
    xs = os.path.join(os.path.dirname(out), "x.npy")
    np.save(xs, x)
    subprocess.run([exe, "--mode", "infer", "--input", "node_attr=" + xs,
                    "--output-dir", out, "--quiet"], check=True)
    return np.load(os.path.join(out, "logits.npy"))


def main():
    compiler, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    src = os.path.join(work, "model.onnx")
    write_onnx(src, 2, "node_attr")
    exe = os.path.join(work, "train")
    subprocess.run([compiler, src, "--train", "--optimizer", "sgd", "--lr",
                    "0.1", "--emit=exe", "-O0", "-o", exe], check=True)
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (2, S, F)).astype(np.float32)
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "node_attr.npy"), x)
    np.save(os.path.join(data, "labels.npy"),
            rng.integers(0, C, (2, S)).astype(np.int64))
    npy, trained = os.path.join(work, "params"), os.path.join(work,
                                                                "trained.onnx")
    shutil.rmtree(npy, ignore_errors=True)
    subprocess.run([exe, "--mode", "train", "--data", "npy:" + data,
                    "--steps", str(STEPS), "--export-npy", npy,
                    "--export-onnx", trained, "--source-model", src,
                    "--quiet"], check=True)

    a, b = onnx.load(src), onnx.load(trained)
    onnx.checker.check_model(b)
    same_graph = (a.graph.node == b.graph.node and
                  a.graph.input == b.graph.input and
                  a.graph.output == b.graph.output and
                  a.opset_import == b.opset_import)
    check("graph", same_graph, f"{len(b.graph.node)} nodes, opset "
          f"{b.opset_import[0].version}, as the source")
    params = read_export(npy)
    got = {t.name: numpy_helper.to_array(t) for t in b.graph.initializer}
    old = {t.name: numpy_helper.to_array(t) for t in a.graph.initializer}
    exact = sorted(got) == sorted(params) and all(
        got[k].dtype == np.float32 and got[k].shape == params[k].shape and
        got[k].tobytes() == params[k].tobytes() for k in params)
    moved = all(not np.array_equal(got[k], old[k]) for k in old)
    check("initializers", exact and moved,
          f"{sorted(got)} equal --export-npy bit for bit, all trained")

    y = infer(compiler, trained, os.path.join(work, "infer_trained"), x,
              os.path.join(work, "out_trained"))
    y0 = infer(compiler, src, os.path.join(work, "infer_source"), x,
               os.path.join(work, "out_source"))
    h = np.maximum(x @ params["fc.weight"] + params["fc.bias"], 0)
    ref = h @ params["head.weight"]
    err = float(np.abs(y - ref).max())
    diff = float(np.abs(y0 - ref).max())
    check("inference", err <= 1e-5 and diff > 1e-3,
          f"--mode infer of the exported model vs NumPy with the trained "
          f"weights: max abs difference {err:.2e} (the source model's "
          f"{diff:.2e})")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
