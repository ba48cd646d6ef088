#!/usr/bin/env python3
"""The pipeline benchmark's model (bench/run_pp_bench.sh): Graphormer-style,
with a heavy node encoder (an MLP F -> HID (-> HID) x ENC_DEPTH -> D with
GELUs, as costly as several transformer layers at these sizes), in/out-degree
embeddings, a spatial bias from shortest-path distances, L pre-LN
transformer layers (attention with the bias, GELU FFN), a head. The
layer-norm weights are randomized so that the exporter does not merge them
into one tied initializer.

usage: pp_bench_model.py OUT.onnx --batch B [--layers L] [--seq S]
           [--features F] [--hidden HID] [--enc-depth E] [--dim D] [--heads H]
"""
import argparse
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "E2E"))
from train_graphormer_check import Layer  # noqa: E402  (the same layer)

MAX_DEGREE, MAX_DIST, CLASSES = 64, 8, 8


class Model(nn.Module):
    def __init__(self, f, hid, d, h, layers, enc_depth=1):
        super().__init__()
        enc = [nn.Linear(f, hid), nn.GELU()]
        for _ in range(enc_depth):
            enc += [nn.Linear(hid, hid), nn.GELU()]
        self.enc = nn.Sequential(*enc, nn.Linear(hid, d))
        self.indeg = nn.Embedding(MAX_DEGREE, d)
        self.outdeg = nn.Embedding(MAX_DEGREE, d)
        self.spatial = nn.Embedding(MAX_DIST + 1, h)
        self.layers = nn.ModuleList([Layer(d, h) for _ in range(layers)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, CLASSES)

    def forward(self, x, in_degree, out_degree, spd):
        h = self.enc(x) + self.indeg(in_degree) + self.outdeg(out_degree)
        bias = self.spatial(spd).permute(0, 3, 1, 2)
        for layer in self.layers:
            h = layer(h, bias)
        return self.head(self.norm(h))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--enc-depth", type=int, default=1,
                    help="HID x HID layers of the node encoder")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    a = ap.parse_args()
    torch.manual_seed(0)
    m = Model(a.features, a.hidden, a.dim, a.heads, a.layers, a.enc_depth)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "n1." in name or "n2." in name or name.startswith("norm."):
                p.add_(0.1 * torch.randn_like(p))
    b, s = a.batch, a.seq
    inputs = (torch.randn(b, s, a.features),
              torch.zeros(b, s, dtype=torch.long),
              torch.zeros(b, s, dtype=torch.long),
              torch.zeros(b, s, s, dtype=torch.long))
    torch.onnx.export(m, inputs, a.out,
                      input_names=["x", "in_degree", "out_degree", "spd"],
                      output_names=["logits"], opset_version=17)


if __name__ == "__main__":
    main()
