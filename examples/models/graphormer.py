"""Graphormer-style Graph Transformer (Ying et al., 2021), exported to ONNX.

  * atom encoder: categorical node features x [B,S,F] (already offset per feature, as
    Graphormer's `convert_to_single_emb` preprocessing does) -> Embedding -> sum over F
  * centrality encoding: + in_degree_emb[in_degree] + out_degree_emb[out_degree]
  * spatial encoding: Embedding(num_spatial, H)[spd] -> [B,S,S,H] -> [B,H,S,S] attention bias,
    shared by all layers (as in Graphormer)
  * pre-LN transformer layers with hand-written multi-head attention and a GELU FFN
  * output: per-node logits [B,S,C] from a final LayerNorm + Linear

Usage: /usr/bin/python3 examples/models/graphormer.py   (writes examples/models/graphormer/)
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

B, S, D, H, LAYERS, C = 2, 16, 32, 4, 2, 4
F = 3                 # categorical features per node
VOCAB_PER_FEAT = 16   # values per categorical feature
NUM_SPATIAL = 8       # spd in [0, 7]; 7 = "7 or more hops / unreachable"
MAX_DEGREE = 8        # degrees clamped to [0, 7]


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, attn_bias):
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)   # [B,H,S,dh]
        k = self.k_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)             # [B,H,S,S]
        scores = scores + attn_bias
        attn = scores.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, s, d)                 # [B,S,D]
        return self.out_proj(out)


class GraphormerLayer(nn.Module):
    def __init__(self, d, h, ffn_dim):
        super().__init__()
        self.attn_norm = nn.LayerNorm(d)
        self.attn = MultiHeadSelfAttention(d, h)
        self.ffn_norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn_dim), nn.GELU(), nn.Linear(ffn_dim, d))
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, attn_bias):
        x = x + self.dropout(self.attn(self.attn_norm(x), attn_bias))
        x = x + self.dropout(self.ffn(self.ffn_norm(x)))
        return x


class Graphormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.atom_encoder = nn.Embedding(F * VOCAB_PER_FEAT + 1, D, padding_idx=0)
        self.in_degree_encoder = nn.Embedding(MAX_DEGREE, D, padding_idx=0)
        self.out_degree_encoder = nn.Embedding(MAX_DEGREE, D, padding_idx=0)
        self.spatial_pos_encoder = nn.Embedding(NUM_SPATIAL, H)
        self.layers = nn.ModuleList([GraphormerLayer(D, H, 2 * D) for _ in range(LAYERS)])
        self.final_norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, C)

    def forward(self, x, in_degree, out_degree, spd):
        h = self.atom_encoder(x).sum(dim=-2)                               # [B,S,D]
        h = h + self.in_degree_encoder(in_degree) + self.out_degree_encoder(out_degree)
        attn_bias = self.spatial_pos_encoder(spd).permute(0, 3, 1, 2)      # [B,H,S,S]
        for layer in self.layers:
            h = layer(h, attn_bias)
        return self.head(self.final_norm(h))                              # [B,S,C]


def make_inputs(seed=0):
    g = common.random_graphs(B, S, max_dist=NUM_SPATIAL - 1, directed=True, seed=seed)
    rng = np.random.RandomState(seed + 100)
    # feature f takes values 1..VOCAB_PER_FEAT, offset by f*VOCAB_PER_FEAT (0 = padding)
    x = rng.randint(1, VOCAB_PER_FEAT + 1, size=(B, S, F)) + np.arange(F) * VOCAB_PER_FEAT
    return {
        "x": torch.from_numpy(x.astype(np.int64)),
        "in_degree": torch.from_numpy(np.minimum(g["in_degree"], MAX_DEGREE - 1)),
        "out_degree": torch.from_numpy(np.minimum(g["out_degree"], MAX_DEGREE - 1)),
        "spd": torch.from_numpy(g["spd"]),
    }


def main(out_dir=None):
    common.seed_everything(0)
    model = common.randomize_params(Graphormer())
    out_dir = out_dir or os.path.join(common.HERE, "graphormer")
    return common.export(model, make_inputs(), out_dir)


if __name__ == "__main__":
    print(common.format_summary(main()))
