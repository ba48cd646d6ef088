#!/usr/bin/env python3
"""Gradient check against PyTorch autograd: exports a small transformer-style
block (linear, layer norm, GELU MLP with a residual, head) from PyTorch,
compiles its gradient function with `megagraph-compile --gradients
--emit=exe`, runs it on random inputs, labels and a label mask, and compares
the masked cross-entropy loss and every parameter gradient with
`loss.backward()`.

usage: gradient_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `loss: rel err E OK|FAIL` and one line per parameter; exits 1 on FAIL.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

TOL = 1e-4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 32)
        self.ln = nn.LayerNorm(32)
        self.ff1 = nn.Linear(32, 64)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(64, 32)
        self.ln2 = nn.LayerNorm(32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.inp(x)
        h = h + self.ff2(self.act(self.ff1(self.ln(h))))
        return self.head(self.ln2(h))


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    model = Block()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    x = torch.randn(2, 16, 8)
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, (x,), onnx_path, input_names=["x"],
                      output_names=["logits"], opset_version=17)
    exe = os.path.join(work, "grad")
    subprocess.run([compiler, onnx_path, "--gradients", "--emit=exe", "-o", exe],
                   check=True)

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, (2, 16)).astype(np.int64)
    mask = rng.random((2, 16)) < 0.7
    feeds = {"x": x.numpy(), "labels": labels, "label_mask": mask}
    cmd = [exe, "--mode", "infer", "--quiet", "--output-dir", os.path.join(work, "out")]
    for name, value in feeds.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    logits = model(x)
    ce = nn.functional.cross_entropy(logits.reshape(-1, 4),
                                     torch.from_numpy(labels).reshape(-1),
                                     reduction="none")
    w = torch.from_numpy(mask.reshape(-1).astype(np.float32))
    loss = (ce * w).sum() / w.sum().clamp(min=1)
    loss.backward()

    ok = True

    def report(name, got, want):
        nonlocal ok
        rel = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12))
        good = got.shape == want.shape and rel <= TOL
        ok &= good
        print(f"{name}: rel err {rel:.2e} {'OK' if good else 'FAIL'}")

    report("loss", np.load(os.path.join(work, "out", "loss.npy")),
           loss.detach().numpy())
    params = dict(model.named_parameters())
    for init in onnx.load(onnx_path).graph.initializer:
        value = numpy_helper.to_array(init)
        got = np.load(os.path.join(work, "out", f"grad:{init.name}.npy"))
        if init.name in params:
            want = params[init.name].grad.numpy()
        else:
            # The exporter folds weight.T into an initializer.
            match = [p for p in params.values()
                     if p.dim() == 2 and tuple(p.shape[::-1]) == value.shape
                     and np.allclose(p.detach().numpy().T, value)]
            want = match[0].grad.numpy().T
        report(init.name, got, want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
