"""A small Graph Transformer for the package's tests: node features x
[B, S, F] and shortest-path distances spd [B, S, S] (the names the
executables' synthetic data set fills), one attention layer with a learned
per-head spatial bias, per-node class logits [B, S, C]."""

import math

import torch
from torch import nn

B, S, F, D, H, C, MAX_DIST = 2, 8, 6, 16, 2, 3, 8


class TinyGT(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = H
        self.encoder = nn.Linear(F, D)
        self.spatial = nn.Embedding(MAX_DIST + 1, H)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.norm1 = nn.LayerNorm(D)
        self.ff1 = nn.Linear(D, 2 * D)
        self.ff2 = nn.Linear(2 * D, D)
        self.norm2 = nn.LayerNorm(D)
        self.head = nn.Linear(D, C)

    def forward(self, x, spd):
        b, s, _ = x.shape
        d = self.encoder.out_features
        h = self.encoder(x)
        q, k, v = (self.qkv(h).reshape(b, s, 3, self.heads, d // self.heads)
                   .permute(2, 0, 3, 1, 4))
        bias = self.spatial(spd).permute(0, 3, 1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
        o = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, s, d)
        h = self.norm1(h + self.proj(o))
        h = self.norm2(h + self.ff2(nn.functional.gelu(self.ff1(h))))
        return self.head(h)


def example_inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, S, F, generator=g)
    spd = torch.randint(0, MAX_DIST + 1, (B, S, S), generator=g)
    return {"x": x, "spd": spd}


def labels(seed=0):
    g = torch.Generator().manual_seed(seed + 100)
    return torch.randint(0, C, (B, S), generator=g)
