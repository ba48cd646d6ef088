"""Exports test/Import/Inputs/tied/model.onnx (torch 1.13, TorchScript
exporter), a model whose parameters start equal, for tied-initializers.test:
two blocks' LayerNorms (weights of ones, biases of zeros), a Linear with a
zero bias beside a BatchNorm whose running mean is zeros, and a scale that
one module's forward uses twice.

usage: python3 make_tied_model.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.lin = nn.Linear(4, 4)
        nn.init.zeros_(self.lin.bias)

    def forward(self, x):
        return self.lin(self.norm(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.bn = nn.BatchNorm1d(4)
        self.scale = nn.Parameter(torch.full((4,), 0.5))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        # One parameter, used twice.
        return self.bn(x) * self.scale + self.scale


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Model().eval()
    torch.onnx.export(model, (torch.randn(3, 4),),
                      os.path.join(out, "model.onnx"), input_names=["x"],
                      output_names=["y"], opset_version=17,
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
