#!/usr/bin/env python3
"""AdamW update check: the compiled training step of the Graphormer-style
model of train_graphormer_check.py, built with gt-optimizer's
`return-state` (which also returns every gradient, `grad:<param>`, and every
global the step stores, read back after the step, `state:<global>`), runs
1..K steps on one fixed batch (`--mode infer --repeat k`). After every step

  * each parameter and its moments (`.adam_m`, `.adam_v`) and the step
    counter must equal a NumPy AdamW (float64) fed with the compiled
    gradients, starting from the ONNX initializers and zero moments
    (relative error <= 1e-4 of the tensor's largest entry), and
  * the loss must follow torch.optim.AdamW on the PyTorch model with the
    same weights (float64; relative difference <= 1e-4), and
  * `eval_correct` (argmax == label over the nodes with eval_mask = 1, here
    the unlabelled ones, from the logits before the update) must equal
    PyTorch's count.

This catches anything wrong in the update path: uninitialized or aliased
optimizer state, a stale step counter, wrong bias corrections or weight
decay.

usage: train_adamw_check.py MEGAGRAPH_COMPILE MEGAGRAPH_OPT WORKDIR [--steps K]
Prints `step k: ...` lines ending in OK or FAIL; exits 1 on FAIL.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_graphormer_check import (B, C, F, MAX_DEGREE, MAX_DIST, S,  # noqa: E402
                                    Graphormer)

LR, WD, BETA1, BETA2, EPS = 0.01, 0.05, 0.9, 0.999, 1e-8
TOL, FLOOR = 1e-4, 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("opt")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = Graphormer()
    with torch.no_grad():  # distinct values: the exporter merges equal ones
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    g = torch.Generator().manual_seed(1)
    inputs = {
        "x": torch.randn(B, S, F, generator=g),
        "in_degree": torch.randint(0, 12, (B, S), generator=g),
        "out_degree": torch.randint(0, 12, (B, S), generator=g),
        "spd": torch.randint(0, MAX_DIST + 1, (B, S, S), generator=g),
    }
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(model, tuple(inputs.values()), onnx_path,
                      input_names=list(inputs), output_names=["logits"],
                      opset_version=17)
    gt_path = os.path.join(args.work, "model.gt.mlir")
    step_path = os.path.join(args.work, "step.mlir")
    exe = os.path.join(args.work, "step")
    subprocess.run([args.compiler, onnx_path, "--emit=gt", "-o", gt_path],
                   check=True)
    subprocess.run([args.opt, gt_path, "--gt-autodiff",
                    f"--gt-optimizer=optimizer=adamw lr={LR} weight-decay={WD}"
                    " return-state=true", "-o", step_path], check=True)
    subprocess.run([args.compiler, step_path, "--emit=exe", "-o", exe],
                   check=True)

    rng = np.random.default_rng(3)
    labels = rng.integers(0, C, (B, S)).astype(np.int64)
    mask = rng.random((B, S)) < 0.7
    feeds = {n: t.numpy() for n, t in inputs.items()}
    feeds.update({"labels": labels, "label_mask": mask,
                  "eval_mask": (~mask).astype(np.float32)})
    cmd = [exe, "--mode", "infer", "--quiet"]
    for name, value in feeds.items():
        path = os.path.join(args.work, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]

    # PyTorch: the same model and batch, torch.optim.AdamW, float64.
    ref = model.double()
    opt = torch.optim.AdamW(ref.parameters(), lr=LR, betas=(BETA1, BETA2),
                            eps=EPS, weight_decay=WD)
    w = torch.from_numpy(mask.reshape(-1).astype(np.float64))
    torch_losses, torch_eval = [], []
    labels_t = torch.from_numpy(labels)
    for _ in range(args.steps):
        opt.zero_grad()
        logits = ref(inputs["x"].double(), inputs["in_degree"],
                     inputs["out_degree"], inputs["spd"])
        ce = torch.nn.functional.cross_entropy(
            logits.reshape(-1, C), torch.from_numpy(labels).reshape(-1),
            reduction="none")
        loss = (ce * w).sum() / w.sum()
        torch_losses.append(float(loss))
        hits = logits.argmax(-1).eq(labels_t) & torch.from_numpy(~mask)
        torch_eval.append(int(hits.sum()))
        loss.backward()
        opt.step()

    # NumPy AdamW on the compiled gradients.
    params = {i.name: numpy_helper.to_array(i).astype(np.float64)
              for i in onnx.load(onnx_path).graph.initializer
              if i.data_type == onnx.TensorProto.FLOAT}
    m = {n: np.zeros_like(p) for n, p in params.items()}
    v = {n: np.zeros_like(p) for n, p in params.items()}
    ok = True
    for k in range(1, args.steps + 1):
        out = os.path.join(args.work, f"out{k}")
        subprocess.run(cmd + ["--repeat", str(k), "--output-dir", out],
                       check=True, stdout=subprocess.DEVNULL)

        def load(name):
            return np.load(os.path.join(out, name + ".npy")).astype(np.float64)

        worst, where, checked = 0.0, "", 0
        for n in params:
            gr = load("grad:" + n)
            m[n] = BETA1 * m[n] + (1 - BETA1) * gr
            v[n] = BETA2 * v[n] + (1 - BETA2) * gr * gr
            mhat = m[n] / (1 - BETA1 ** k)
            vhat = v[n] / (1 - BETA2 ** k)
            params[n] = params[n] - LR * (mhat / (np.sqrt(vhat) + EPS)
                                          + WD * params[n])
            for suffix, want in (("", params[n]), (".adam_m", m[n]),
                                 (".adam_v", v[n])):
                got = load("state:" + n + suffix)
                scale = max(np.abs(want).max(),
                            FLOOR if suffix == "" else 1e-30)
                rel = float(np.abs(got - want).max() / scale)
                if got.shape != want.shape or not np.isfinite(rel):
                    rel = float("inf")
                checked += 1
                if rel > worst:
                    worst, where = rel, n + suffix
        t = float(load("state:gt.step"))
        loss = float(load("loss"))
        loss_rel = abs(loss - torch_losses[k - 1]) / abs(torch_losses[k - 1])
        evals = float(load("eval_correct"))
        good = (worst <= TOL and t == k and loss_rel <= TOL
                and evals == torch_eval[k - 1])
        ok &= good
        print(f"step {k}: {checked} state tensors vs NumPy AdamW, max rel err "
              f"{worst:.2e} ({where}); counter {t:g}; loss {loss:.6f} vs "
              f"torch.optim.AdamW {torch_losses[k - 1]:.6f} (rel "
              f"{loss_rel:.1e}); eval_correct {evals:g} vs {torch_eval[k - 1]} "
              f"{'OK' if good else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
