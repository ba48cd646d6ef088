#!/usr/bin/env python3
"""Loss check against PyTorch autograd: compiles the gradient function of a
small model with `megagraph-compile --gradients --loss LOSS
[--loss-output NAME]`, runs it on random inputs, labels and a label mask,
and compares the loss and every parameter gradient with
`torch.nn.functional.<loss>(pred[mask], labels[mask])` (reduction='mean')
and `loss.backward()` in float64.

The label mask covers the prediction's items (its shape without the last
axis); class losses (cross_entropy, nll) take int64 labels of that shape,
the others float labels of the prediction's full shape.

usage: loss_check.py MEGAGRAPH_COMPILE WORKDIR LOSS SHAPE [--loss-output]
  SHAPE   node:C  prediction [B, S, C] (per node)
          graph:C prediction [B, C] (one per graph: mean over the nodes)
  --loss-output
          the model returns (aux, pred) and the loss is asked for `pred`
Prints `loss: rel err E OK|FAIL` and one line per parameter; exits 1 on
FAIL.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradient_check import FLOOR, TOL, reference_grad, run_exe  # noqa: E402

B, S, F = 4, 8, 6


class Net(nn.Module):
    def __init__(self, c, graph, log_probs, aux):
        super().__init__()
        self.inp = nn.Linear(F, 16)
        self.ln = nn.LayerNorm(16)
        self.head = nn.Linear(16, c)
        self.graph, self.log_probs, self.aux = graph, log_probs, aux

    def forward(self, x):
        h = torch.tanh(self.ln(self.inp(x)))
        if self.graph:
            h = h.mean(dim=1)
        y = self.head(h)
        if self.log_probs:
            y = torch.log_softmax(y, dim=-1)
        return (h.sum(-1), y) if self.aux else y


def reference_loss(loss, pred, labels, mask):
    m = torch.from_numpy(mask)
    p, t = pred[m], torch.from_numpy(labels)[m]
    fn = {"cross_entropy": nn.functional.cross_entropy,
          "nll": nn.functional.nll_loss,
          "mse": nn.functional.mse_loss,
          "l1": nn.functional.l1_loss,
          "bce_with_logits": nn.functional.binary_cross_entropy_with_logits}
    return fn[loss](p, t.double() if t.is_floating_point() else t,
                    reduction="mean")


def main():
    compiler, work, loss, shape = sys.argv[1:5]
    aux = "--loss-output" in sys.argv[5:]
    kind, c = shape.split(":")
    c, graph = int(c), kind == "graph"
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    model = Net(c, graph, loss == "nll", aux).eval()
    x = torch.randn(B, S, F)
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, (x,), onnx_path, input_names=["x"],
                      output_names=["aux", "pred"] if aux else ["pred"],
                      opset_version=17)
    exe = os.path.join(work, "grad")
    flags = ["--loss", loss] + (["--loss-output", "pred"] if aux else [])
    subprocess.run([compiler, onnx_path, "--gradients", "--emit=exe", "-o",
                    exe] + flags, check=True)

    items = (B,) if graph else (B, S)
    rng = np.random.default_rng(3)
    mask = rng.random(items) < 0.7
    if loss in ("cross_entropy", "nll"):
        labels = rng.integers(0, c, items).astype(np.int64)
    elif loss == "bce_with_logits":
        labels = rng.random(items + (c,)).astype(np.float32)
    else:
        labels = rng.standard_normal(items + (c,)).astype(np.float32)
    feeds = {"x": x.numpy(), "labels": labels, "label_mask": mask}
    if loss in ("cross_entropy", "nll"):
        feeds["eval_mask"] = (~mask).astype(np.float32)
    run_exe(exe, feeds, work, os.path.join(work, "out"))

    model = model.double()
    pred = model(x.double())
    if aux:
        pred = pred[1]
    want = reference_loss(loss, pred, labels, mask)
    want.backward()

    ok = True

    def report(name, got, want):
        nonlocal ok
        rel = float(np.abs(got - want).max() / max(np.abs(want).max(), FLOOR))
        good = got.shape == want.shape and rel <= TOL
        ok &= good
        print(f"{name}: rel err {rel:.2e} {'OK' if good else 'FAIL'}")

    out = os.path.join(work, "out")
    report("loss", np.load(os.path.join(out, "loss.npy")),
           want.detach().numpy())
    metrics = sorted(n for n in ("correct.npy", "eval_correct.npy")
                     if os.path.exists(os.path.join(out, n)))
    print("metrics:", " ".join(m[:-4] for m in metrics) or "none")
    params = dict(model.named_parameters())
    for init in onnx.load(onnx_path).graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        value = numpy_helper.to_array(init)
        got = np.load(os.path.join(out, f"grad:{init.name}.npy"))
        ref = reference_grad(init.name, value, params)
        if ref is None:
            print(f"{init.name}: no PyTorch parameter has its value FAIL")
            ok = False
            continue
        report(init.name, got, ref.astype(np.float32))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
