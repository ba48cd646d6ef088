#!/usr/bin/env python3
"""Exports dynamo/model.onnx (+ model.onnx.data) for the importer's tests of
torch 2.x's default exporter: opset 20, weights in a data file beside the
model, scalars lifted to initializers, and torch.export's kind of every
initializer (PARAMETER / BUFFER) in the value_info metadata.

Usage (torch 2.x, onnxscript; not needed by the tests, which use the
committed files): python make_dynamo_model.py OUTDIR
also writes OUTDIR/topk.onnx (an unsupported op with the exporter's
source metadata), OUTDIR/inputs/x.npy and OUTDIR/outputs/y.npy (PyTorch's output), and sdpa20/ and sdpa23/ beside OUTDIR
(scaled_dot_product_attention at opset 20 and 23, with inputs and outputs).
"""

import math
import os
import sys

import torch
import torch.nn.functional as F


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


class Sdpa(torch.nn.Module):
    """F.scaled_dot_product_attention with an additive bias and with a
    boolean mask: opset 23 exports it as ONNX Attention, opset 20 decomposed
    (with a NaN guard that zeroes fully masked rows)."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)

    def forward(self, x, bias, mask):
        b, s, d = x.shape
        q, k, v = (t.view(b, s, 2, 8).transpose(1, 2)
                   for t in self.qkv(x).split(16, dim=-1))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        o = o + F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return o.transpose(1, 2).reshape(b, s, d)


def export_sdpa(out):
    import numpy
    model = Sdpa().eval()
    x = torch.randn(2, 4, 16)
    bias = torch.randn(2, 2, 4, 4)
    mask = torch.rand(2, 1, 4, 4) > 0.3
    mask[1, 0, 2] = False  # a row with every key removed
    for opset in (20, 23):
        d = os.path.join(out, "sdpa%d" % opset)
        os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(d, "outputs"), exist_ok=True)
        torch.onnx.export(model, (x, bias, mask),
                          os.path.join(d, "model.onnx"),
                          opset_version=opset,
                          input_names=["x", "bias", "mask"],
                          output_names=["y"])
        for name, t in (("x", x), ("bias", bias), ("mask", mask)):
            numpy.save(os.path.join(d, "inputs", name + ".npy"), t.numpy())
        with torch.no_grad():
            numpy.save(os.path.join(d, "outputs", "y.npy"),
                       model(x, bias, mask).numpy())


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
    export_sdpa(os.path.dirname(os.path.abspath(out)))


if __name__ == "__main__":
    main()
