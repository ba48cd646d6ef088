#!/usr/bin/env python3
"""Exports dynamo/model.onnx (+ model.onnx.data) for the importer's tests of
torch 2.x's default exporter: opset 20, weights in a data file beside the
model, scalars lifted to initializers, and torch.export's kind of every
initializer (PARAMETER / BUFFER) in the value_info metadata.

Usage (torch 2.x, onnxscript; not needed by the tests, which use the
committed files): python make_dynamo_model.py OUTDIR
also writes OUTDIR/topk.onnx (an unsupported op with the exporter's
source metadata), OUTDIR/inputs/x.npy and OUTDIR/outputs/y.npy (PyTorch's output).
"""

import math
import os
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 32)
        self.head = torch.nn.Linear(32, 1)
        # A learnable scalar (rank 0) and a buffer: trained / not trained.
        self.temperature = torch.nn.Parameter(torch.tensor(1.5))
        self.register_buffer("shift", torch.linspace(-1.0, 1.0, 32))

    def forward(self, x):
        h = self.proj(x) * (1.0 / math.sqrt(8.0))
        h = torch.tanh(h) * self.temperature + self.shift
        return self.head(h * 0.5)


class TopK(torch.nn.Module):
    """An op MegaGraph does not import (TopK), for the refusal message that
    points at this line."""

    def forward(self, x):
        return torch.topk(x, 2, dim=-1).values


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Model().eval()
    x = torch.randn(2, 4, 8)
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                      input_names=["x"], output_names=["y"],
                      external_data=True)
    torch.onnx.export(TopK(), (x,), os.path.join(out, "topk.onnx"),
                      input_names=["x"], output_names=["y"])
    import numpy
    with torch.no_grad():
        y = model(x)
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(out, "outputs"), exist_ok=True)
    numpy.save(os.path.join(out, "inputs", "x.npy"), x.numpy())
    numpy.save(os.path.join(out, "outputs", "y.npy"), y.numpy())


if __name__ == "__main__":
    main()
