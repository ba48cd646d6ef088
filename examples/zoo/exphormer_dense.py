"""Exphormer-style sparse transformer (Shirzad et al., ICML 2023; github.com/hamed1375/
Exphormer, graphgps/layer/Exphormer.py and the GPS-style layer around it), written with
a dense boolean attention mask:

  * the attention graph is the union of the local edges, the edges of a random
    d-regular expander (Exphormer's `expander_edges`, d = 3, built in preprocessing with
    numpy) and self loops, given as a dense bool mask [B, N, N] (True = may attend);
  * ExphormerAttention with Q/K/V Linear(use_bias=True), scores `Q @ K^T / sqrt(dh)`
    restricted to the attention graph. Exphormer scatters over that edge list; here the
    restriction is a dense mask, applied with `scores.masked_fill(~mask, float('-inf'))`
    in the first layer and `torch.where(mask, scores, torch.full_like(scores, -inf))`
    in the second, the two forms users write;
  * GPS-style layer: local GCN branch on the normalised local adjacency + the Exphormer
    global branch, residuals, LayerNorm, ReLU FFN, LayerNorm; Linear node head.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo_common as zc

NAME = "exphormer_dense"
SOURCE = "hamed1375/Exphormer (graphgps/layer/Exphormer.py, gps_layer.py, transform/expander_edges)"
LEVEL = "node"

N, FEAT, D, H, LAYERS, C, EXP_DEG = 16, 8, 16, 2, 2, 4, 3


class ExphormerAttention(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads, use_bias=True, mask_style="masked_fill"):
        super().__init__()
        self.out_dim = out_dim          # per head
        self.num_heads = num_heads
        self.mask_style = mask_style
        self.Q = nn.Linear(in_dim, out_dim * num_heads, bias=use_bias)
        self.K = nn.Linear(in_dim, out_dim * num_heads, bias=use_bias)
        self.V = nn.Linear(in_dim, out_dim * num_heads, bias=use_bias)

    def forward(self, h, attn_mask):
        b, n, _ = h.shape
        Q_h = self.Q(h).view(b, n, self.num_heads, self.out_dim).permute(0, 2, 1, 3)
        K_h = self.K(h).view(b, n, self.num_heads, self.out_dim).permute(0, 2, 1, 3)
        V_h = self.V(h).view(b, n, self.num_heads, self.out_dim).permute(0, 2, 1, 3)
        score = torch.matmul(Q_h, K_h.transpose(-1, -2)) / math.sqrt(self.out_dim)
        m = attn_mask.unsqueeze(1)                           # [b, 1, n, n]
        if self.mask_style == "masked_fill":
            score = score.masked_fill(~m, float("-inf"))
        else:
            score = torch.where(m, score, torch.full_like(score, float("-inf")))
        score = F.softmax(score, dim=-1)
        out = torch.matmul(score, V_h)                       # [b, heads, n, out_dim]
        return out.permute(0, 2, 1, 3).reshape(b, n, self.num_heads * self.out_dim)


class GPSExphormerLayer(nn.Module):
    def __init__(self, dim_h, num_heads, mask_style, dropout=0.1):
        super().__init__()
        self.local_lin = nn.Linear(dim_h, dim_h)
        self.self_attn = ExphormerAttention(dim_h, dim_h // num_heads, num_heads, True, mask_style)
        self.O = nn.Linear(dim_h, dim_h)
        self.norm1_local = nn.LayerNorm(dim_h)
        self.norm1_attn = nn.LayerNorm(dim_h)
        self.dropout_local = nn.Dropout(dropout)
        self.dropout_attn = nn.Dropout(dropout)
        self.ff_linear1 = nn.Linear(dim_h, 2 * dim_h)
        self.ff_linear2 = nn.Linear(2 * dim_h, dim_h)
        self.norm2 = nn.LayerNorm(dim_h)

    def forward(self, h, adj_norm, attn_mask):
        h_in1 = h
        h_local = torch.matmul(adj_norm, self.local_lin(h))
        h_local = self.norm1_local(h_in1 + self.dropout_local(h_local))
        h_attn = self.O(self.self_attn(h, attn_mask))
        h_attn = self.norm1_attn(h_in1 + self.dropout_attn(h_attn))
        h = h_local + h_attn
        h = h + self.ff_linear2(F.relu(self.ff_linear1(h)))
        return self.norm2(h)


class Exphormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.node_encoder = nn.Linear(FEAT, D)
        styles = ["masked_fill", "where"]
        self.layers = nn.ModuleList([GPSExphormerLayer(D, H, styles[i % 2]) for i in range(LAYERS)])
        self.head = nn.Linear(D, C)

    def forward(self, x, adj_norm, attn_mask):
        h = self.node_encoder(x)
        for layer in self.layers:
            h = layer(h, adj_norm, attn_mask)
        return self.head(h)


def build():
    return zc.init_weights(Exphormer(), seed=707)


def _expander(rng, n, d):
    """Random d-regular-ish expander: union of d/2 random permutation cycles (+1 matching)."""
    a = np.zeros((n, n), bool)
    for _ in range((d + 1) // 2):
        p = rng.permutation(n)
        for i in range(n):
            u, v = p[i], p[(i + 1) % n]
            a[u, v] = a[v, u] = True
    np.fill_diagonal(a, False)
    return a


def make_inputs(batch=2, seed=29):
    rng = np.random.RandomState(seed)
    x = rng.randn(batch, N, FEAT).astype(np.float32)
    adj_norm = np.zeros((batch, N, N), np.float32)
    mask = np.zeros((batch, N, N), bool)
    for b in range(batch):
        local = zc.random_graph(rng, N, edge_prob=0.12)
        adj_norm[b] = zc.gcn_norm(local)
        mask[b] = (local > 0) | _expander(rng, N, EXP_DEG) | np.eye(N, dtype=bool)
    return [("x", x), ("adj_norm", adj_norm), ("attn_mask", mask)]


VARIANTS = {"exphormer_dense": dict(batch=2), "exphormer_dense_b1": dict(batch=1)}
OUTPUT_NAMES = ["logits"]
EXPECT = {
    "attention": {"count": 2, "masked": 2},
    "ops": {"gt.layer_norm": 6, "gt.linear": ">=16"},
    "desired": {"gt.sparse_attention": 2, "gt.spmm": 2},
}
INPUT_DOC = {"x": "float32 [B,16,8] node features",
             "adj_norm": "float32 [B,16,16] GCN-normalised local adjacency (local branch)",
             "attn_mask": "bool [B,16,16] expander (d=3) + local edges + self loops (True = attend)"}
NOTES = ("Layer 0 masks with masked_fill(~mask, -inf), layer 1 with torch.where(mask, s, -inf); "
         "both must reach gt.attention as a mask (or an additive -inf bias).")
