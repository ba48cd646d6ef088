"""GraphGPS-style hybrid layer (Rampasek et al., 2022), dense-batched, exported to ONNX.

Per layer (GPSLayer with a GCN local model and a Transformer global model):
  h_local = BatchNorm1d(h + Dropout(adj_norm @ (h W) + b))     # local MPNN (GCN, dense)
  h_attn  = LayerNorm(h + Dropout(MHA(h, h, h)))               # global attention
  h       = h_local + h_attn
  h       = BatchNorm1d(h + FFN(h)),  FFN = Linear(d,2d) -> ReLU -> Linear(2d,d)
BatchNorm1d runs on the flattened node dimension [B*S, D], as GraphGPS/PyG does on its
node-packed batches. Input features go through a Linear encoder, output is per-node
logits [B,S,C].

nn.MultiheadAttention(batch_first=True) is used as in GraphGPS. Its torch 1.13 eval-mode
fast path (torch._native_multi_head_attention, not exportable) is never taken here because
the attention has dropout > 0 (GraphGPS's attn_dropout), which the fast path rejects.

Usage: /usr/bin/python3 examples/models/graphgps.py   (writes examples/models/graphgps/)
"""

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

B, S, FIN, D, H, LAYERS, C = 2, 16, 8, 32, 4, 2, 4


class DenseGCNConv(nn.Module):
    """GCNConv on a dense, pre-normalised adjacency: adj_norm @ (x W) + b."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.randn(d_out) * 0.1)

    def forward(self, x, adj_norm):
        return adj_norm @ self.lin(x) + self.bias


class GPSLayer(nn.Module):
    def __init__(self, d, h, dropout=0.1, attn_dropout=0.1):
        super().__init__()
        self.local_model = DenseGCNConv(d, d)
        self.self_attn = nn.MultiheadAttention(d, h, dropout=attn_dropout, batch_first=True)
        self.norm1_local = nn.BatchNorm1d(d)
        self.norm1_attn = nn.LayerNorm(d)
        self.dropout_local = nn.Dropout(dropout)
        self.dropout_attn = nn.Dropout(dropout)
        self.ff_linear1 = nn.Linear(d, 2 * d)
        self.ff_linear2 = nn.Linear(2 * d, d)
        self.act = nn.ReLU()
        self.ff_dropout1 = nn.Dropout(dropout)
        self.ff_dropout2 = nn.Dropout(dropout)
        self.norm2 = nn.BatchNorm1d(d)

    def _bn(self, bn, h):
        b, s, d = h.shape
        return bn(h.reshape(b * s, d)).reshape(b, s, d)

    def forward(self, h, adj_norm):
        h_in = h
        # local message passing branch
        h_local = self.dropout_local(self.local_model(h, adj_norm))
        h_local = self._bn(self.norm1_local, h_in + h_local)
        # global attention branch
        h_attn = self.self_attn(h, h, h, need_weights=False)[0]
        h_attn = self.norm1_attn(h_in + self.dropout_attn(h_attn))
        # combine + feed-forward
        h = h_local + h_attn
        ff = self.ff_dropout2(self.ff_linear2(self.ff_dropout1(self.act(self.ff_linear1(h)))))
        return self._bn(self.norm2, h + ff)


class GraphGPS(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(FIN, D)
        self.layers = nn.ModuleList([GPSLayer(D, H) for _ in range(LAYERS)])
        self.head = nn.Linear(D, C)

    def forward(self, x, adj_norm):
        h = self.encoder(x)
        for layer in self.layers:
            h = layer(h, adj_norm)
        return self.head(h)


def make_inputs(seed=0):
    g = common.random_graphs(B, S, num_feats=FIN, directed=False, seed=seed)
    return {
        "x": torch.from_numpy(g["feats"]),
        "adj_norm": torch.from_numpy(common.gcn_norm(g["adj"])),
    }


def main(out_dir=None):
    common.seed_everything(0)
    model = common.randomize_params(GraphGPS())
    out_dir = out_dir or os.path.join(common.HERE, "graphgps")
    return common.export(model, make_inputs(), out_dir)


if __name__ == "__main__":
    print(common.format_summary(main()))
