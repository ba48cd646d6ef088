"""What the gradient checks against PyTorch autograd share
(gradient_check.py, zoo_gradient_check.py): the tolerance, the masked
cross-entropy of the compiled gradient function, the inference-mode
BatchNorm reference, running a compiled function on .npy feeds, and the
per-tensor report."""
import os
import shutil
import subprocess

import numpy as np
import torch
from torch import nn

TOL = 1e-4
# Errors are relative to the largest reference entry, but at least to FLOOR:
# some gradients are zero in exact arithmetic (the key projection's bias,
# since softmax ignores a shift shared by a row's scores) and their float32
# round-off (~1e-9) must not count as a relative error.
FLOOR = 1e-3


class ManualBatchNorm(nn.Module):
    """Inference-mode BatchNorm normalizing dim 1, as the compiled model
    computes it: (x - mean) / sqrt(var + eps) * weight + bias, with the
    running statistics buffers (casting with the module)."""

    def __init__(self, bn):
        super().__init__()
        self.eps = bn.eps
        self.weight, self.bias = bn.weight, bn.bias
        self.register_buffer("running_mean", bn.running_mean.detach().clone())
        self.register_buffer("running_var", bn.running_var.detach().clone())

    def forward(self, x):
        shape = [1, -1] + [1] * (x.dim() - 2)
        return ((x - self.running_mean.view(shape))
                / torch.sqrt(self.running_var.view(shape) + self.eps)
                * self.weight.view(shape) + self.bias.view(shape))


def masked_cross_entropy(logits, labels, mask):
    """The compiled loss: cross-entropy over the items of `logits` [..., C]
    averaged over those `mask` (numpy bool) selects."""
    ce = nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        torch.from_numpy(labels).reshape(-1), reduction="none")
    w = torch.from_numpy(mask.reshape(-1).astype(np.float64)).to(ce.dtype)
    return (ce * w).sum() / w.sum().clamp(min=1)


def run_exe(exe, feeds, work, out):
    """Runs a compiled function on FEEDS (saved under WORK); its outputs
    land in OUT as <name>.npy."""
    # A fresh folder: gradients of an earlier build's parameters must not
    # be taken for this one's.
    shutil.rmtree(out, ignore_errors=True)
    cmd = [exe, "--mode", "infer", "--quiet", "--output-dir", out]
    for name, value in feeds.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


class Report:
    """Prints `NAME: rel err E OK|FAIL` per compared tensor; `ok` is false
    after any FAIL."""

    def __init__(self):
        self.ok = True

    def __call__(self, name, got, want):
        rel = float(np.abs(got - want).max() / max(np.abs(want).max(), FLOOR))
        good = got.shape == want.shape and rel <= TOL
        self.ok &= good
        print(f"{name}: rel err {rel:.2e} {'OK' if good else 'FAIL'}")

    def fail(self, line):
        self.ok = False
        print(f"{line} FAIL")
