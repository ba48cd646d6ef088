#!/usr/bin/env python3
"""--export-npy DIR of a training executable against torch 1.13 autograd.

Writes a small node classifier as ONNX (x [B, S, F] -> MatMul fc.weight
[F, H] -> Add fc.bias -> Relu -> MatMul head.weight [H, C] -> logits),
compiles it with `megagraph-compile --train --optimizer sgd`, and checks:
  * npy: STEPS steps on the user's tensors (--data npy:DIR, the same batch
    every step) exported with --export-npy equal torch.optim.SGD's
    parameters after STEPS steps from the ONNX initializers (max abs
    difference <= 1e-5), one file per initializer with its ONNX name and
    shape, float32; and the logged losses equal torch's;
  * dp: the same model compiled for --plan dp=2,zero=3 (each rank holds
    half of the packed parameters) and run under mpirun -np 2 on a
    synthetic graph exports the parameters of the one-process run of the
    same global batch (relative difference <= 1e-4).

usage: export_npy_check.py MEGAGRAPH_COMPILE WORKDIR [npy|dp]...
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from train_dp_check import mpirun  # noqa: E402  (the dp tests' launcher)

F, H, C, S = 3, 6, 4, 8
LR = 0.1
STEPS = 3


def weights():
    rng = np.random.default_rng(7)
    return {"fc.weight": rng.normal(0, 0.5, (F, H)).astype(np.float32),
            "fc.bias": rng.normal(0, 0.1, (H,)).astype(np.float32),
            "head.weight": rng.normal(0, 0.5, (H, C)).astype(np.float32)}


def write_onnx(path, batch, input_name):
    w = weights()
    nodes = [helper.make_node("MatMul", [input_name, "fc.weight"], ["h0"]),
             helper.make_node("Add", ["h0", "fc.bias"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("MatMul", ["h2", "head.weight"], ["logits"])]
    graph = helper.make_graph(
        nodes, "export_npy",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT,
                                       [batch, S, F])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [batch, S, C])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


class Checks:
    def __init__(self):
        self.ok = True

    def __call__(self, name, good, detail):
        self.ok = self.ok and good
        print(f"check: {name}: {detail} {'OK' if good else 'FAIL'}")


def read_export(d):
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}


def compile_exe(compiler, onnx_path, exe, plan=()):
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "sgd",
                    "--lr", str(LR), *plan, "--emit=exe", "-O0", "-o", exe],
                   check=True)


def check_npy(check, compiler, work):
    onnx_path = os.path.join(work, "npy.onnx")
    write_onnx(onnx_path, 2, "node_attr")
    exe = os.path.join(work, "npy")
    compile_exe(compiler, onnx_path, exe)
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (2, S, F)).astype(np.float32)
    labels = rng.integers(0, C, (2, S)).astype(np.int64)
    data = os.path.join(work, "npy_data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "node_attr.npy"), x)
    np.save(os.path.join(data, "labels.npy"), labels)
    out, log = os.path.join(work, "npy_out"), os.path.join(work, "npy.jsonl")
    shutil.rmtree(out, ignore_errors=True)
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--mode", "train", "--data", "npy:" + data,
                    "--steps", str(STEPS), "--export-npy", out,
                    "--log-json", log, "--quiet"], check=True)
    got = read_export(out)
    losses = [json.loads(l)["loss"] for l in open(log)]

    # The reference: torch.optim.SGD from the ONNX initializers.
    params = {k: torch.tensor(v, requires_grad=True)
              for k, v in weights().items()}
    opt = torch.optim.SGD(params.values(), lr=LR)
    ref_losses = []
    xt, lt = torch.from_numpy(x), torch.from_numpy(labels)
    for _ in range(STEPS):
        opt.zero_grad()
        h = torch.relu(xt @ params["fc.weight"] + params["fc.bias"])
        logits = h @ params["head.weight"]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, C),
                                                 lt.reshape(-1))
        ref_losses.append(loss.item())
        loss.backward()
        opt.step()
    want = {k: v.detach().numpy() for k, v in params.items()}
    check("npy: files", sorted(got) == sorted(want),
          f"{sorted(got)} for initializers {sorted(want)}")
    if sorted(got) != sorted(want):
        return
    shapes = all(got[k].shape == want[k].shape and got[k].dtype == np.float32
                 for k in want)
    check("npy: shapes", shapes,
          ", ".join(f"{k} {got[k].dtype} {list(got[k].shape)}" for k in want))
    err = max(float(np.abs(got[k] - want[k]).max()) for k in want) \
        if shapes else float("inf")
    moved = min(float(np.abs(got[k] - weights()[k]).max()) for k in want)
    check("npy: values", err <= 1e-5 and moved > 1e-4,
          f"after {STEPS} SGD steps max abs difference to torch {err:.2e} "
          f"(each parameter moved, min of max |change| {moved:.2e})")
    lerr = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
    check("npy: losses", len(losses) == STEPS and lerr <= 1e-5,
          f"{len(losses)} logged, max relative difference {lerr:.2e}")


def check_dp(check, compiler, work):
    data = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS), "--quiet"]
    exports = {}
    for name, batch, plan, prefix in (
            ("single", 4, [], []),
            ("dp2z3", 2, ["--plan", "dp=2,zero=3"], mpirun() + ["-np", "2"])):
        onnx_path = os.path.join(work, name + ".onnx")
        write_onnx(onnx_path, batch, "x")
        exe = os.path.join(work, name)
        compile_exe(compiler, onnx_path, exe, plan)
        out = os.path.join(work, name + "_out")
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run(prefix + [exe, *run, "--export-npy", out], check=True,
                       timeout=300)
        exports[name] = read_export(out)
    a, b = exports["single"], exports["dp2z3"]
    same = sorted(a) == sorted(b) and all(a[k].shape == b[k].shape for k in a)
    rel = max(float(np.abs(a[k] - b[k]).max() / np.abs(a[k]).max())
              for k in a) if same else float("inf")
    moved = min(float(np.abs(b[k] - weights()[k]).max()) for k in b) \
        if same else 0.0
    check("dp=2,zero=3: values", same and rel <= 1e-4 and moved > 1e-4,
          f"{sorted(b)}: max relative difference to one process {rel:.2e} "
          f"(min of max |change| {moved:.2e})")


def main():
    compiler, work = sys.argv[1:3]
    parts = sys.argv[3:] or ["npy", "dp"]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    if "npy" in parts:
        check_npy(check, compiler, work)
    if "dp" in parts:
        check_dp(check, compiler, work)
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
