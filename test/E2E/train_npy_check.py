#!/usr/bin/env python3
"""Training on the user's own tensors (`--mode train --data npy:DIR`)
against PyTorch SGD.

Compiles a zoo model (examples/zoo/<entry>/torch113/model.onnx, whose inputs
keep the codebase's names, e.g. Graphormer's attn_bias, spatial_pos,
edge_input) with `megagraph-compile --train --optimizer sgd --loss LOSS`,
writes three steps of tensors from torch 1.13 (the committed inputs, random
labels and label masks) as DIR/step<k>/<input>.npy, trains STEPS steps (the
steps are cycled) and compares each step's loss (before that step's update)
with the zoo's PyTorch module trained by torch.optim.SGD on the same
tensors, relative difference <= 1e-4.

usage: train_npy_check.py MEGAGRAPH_COMPILE WORKDIR ENTRY LOSS [STEPS]
Prints `step k: loss L reference R rel err E OK|FAIL`; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_gradient_check import ZOO, build_reference, load_entry  # noqa: E402

TOL = 1e-4
LR = 0.05
NUM_DIRS = 3


def loss_fn(loss, pred, labels, mask):
    m = torch.from_numpy(mask)
    t = torch.from_numpy(labels)
    fn = {"cross_entropy": nn.functional.cross_entropy,
          "mse": nn.functional.mse_loss,
          "l1": nn.functional.l1_loss}[loss]
    return fn(pred[m], t[m].to(pred.dtype) if t.is_floating_point() else t[m])


def main():
    compiler, work, entry, loss = sys.argv[1:5]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    os.makedirs(work, exist_ok=True)
    folder = os.path.join(ZOO, entry, "torch113")
    exe = os.path.join(work, "train")
    subprocess.run([compiler, os.path.join(folder, "model.onnx"), "--train",
                    "--optimizer", "sgd", "--lr", str(LR), "--loss", loss,
                    "--emit=exe", "-o", exe], check=True)

    mod, kw = load_entry(entry)
    feeds = {f[:-4]: np.load(os.path.join(folder, "inputs", f))
             for f in sorted(os.listdir(os.path.join(folder, "inputs")))}
    named = [(n, feeds.get(n, a)) for n, a in mod.make_inputs(**kw)]
    torch.set_default_dtype(torch.float64)
    model = build_reference(mod).double()
    args = [torch.from_numpy(np.ascontiguousarray(a)) for _, a in named]
    args = [a.double() if a.is_floating_point() else a for a in args]
    with torch.no_grad():
        out = model(*args)
    out = out if isinstance(out, torch.Tensor) else out[0]
    items, classes = tuple(out.shape[:-1]), out.shape[-1]

    data = os.path.join(work, "data")
    rng = np.random.default_rng(5)
    batches = []
    for k in range(1, NUM_DIRS + 1):
        mask = rng.random(items) < 0.7
        mask.reshape(-1)[0] = True
        if loss == "cross_entropy":
            labels = rng.integers(0, classes, items).astype(np.int64)
        else:
            labels = rng.standard_normal(items + (classes,)).astype(np.float32)
        d = os.path.join(data, f"step{k}")
        os.makedirs(d, exist_ok=True)
        for name, value in named:
            np.save(os.path.join(d, name + ".npy"), value)
        np.save(os.path.join(d, "labels.npy"), labels)
        np.save(os.path.join(d, "label_mask.npy"), mask)
        batches.append((labels, mask))

    log = os.path.join(work, "log.jsonl")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--mode", "train", "--data", "npy:" + data,
                    "--steps", str(steps), "--log-json", log, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    got = [json.loads(line)["loss"] for line in open(log)]

    model.train(False)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    ok = len(got) == steps
    for step in range(steps):
        labels, mask = batches[step % NUM_DIRS]
        opt.zero_grad()
        out = model(*args)
        out = out if isinstance(out, torch.Tensor) else out[0]
        want = loss_fn(loss, out, labels, mask)
        want.backward()
        opt.step()
        g = got[step] if step < len(got) else float("nan")
        rel = abs(g - want.item()) / max(abs(want.item()), 1e-6)
        good = rel <= TOL
        ok &= good
        print(f"step {step + 1}: loss {g:.6f} reference {want.item():.6f} "
              f"rel err {rel:.2e} {'OK' if good else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
