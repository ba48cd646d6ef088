"""Plain Graph Transformer: stock nn.TransformerEncoder with the graph injected as an
additive attention mask, exported to ONNX with symbolic batch/node dims.

  * node features x [B,S,FIN] -> Linear, plus Laplacian-eigenvector positional encoding
    pe [B,S,K] -> Linear (Dwivedi & Bresson, "A Generalization of Transformer Networks to
    Graphs", 2020)
  * structure: a distance-decay attention bias (ALiBi-style, one learned slope per head)
        bias[b, h, i, j] = -slope_h * spd[b, i, j]
    reshaped to the [B*H, S, S] float `mask` that nn.MultiheadAttention accepts
    (index b*H + h, which matches how MHA splits the batch into heads)
  * nn.TransformerEncoder(TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
    dropout=0.1, activation='gelu', batch_first=True), num_layers=2), post-LN (the default)
  * output: per-node logits [B,S,C]

Fast path: in torch 1.13, TransformerEncoderLayer in eval mode may dispatch to
torch._transformer_encoder_layer_fwd, which has no ONNX symbolic. Passing a `mask`
(src_mask) disables that path ("src_mask is not supported for fastpath"), and the
attention dropout (0.1) plus the non-None attn_mask disable the
nn.MultiheadAttention fast path (torch._native_multi_head_attention) as well.
enable_nested_tensor=False turns off the nested-tensor path of TransformerEncoder
(which would need a src_key_padding_mask anyway). So the exported graph is
the ordinary decomposed attention (MatMul / Softmax / ...).

Exported with dynamic_axes: batch -> "batch", nodes -> "nodes"; the reference data uses
B=2, S=16, so compile with e.g. --input-shape x=2x16x8 (see README.md).

Usage: /usr/bin/python3 examples/models/plain_gt.py   (writes examples/models/plain_gt/)
"""

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

B, S, FIN, K, D, H, FFN, LAYERS, C = 2, 16, 8, 4, 32, 4, 64, 2, 4
MAX_DIST = 7


class PlainGraphTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = H
        self.node_encoder = nn.Linear(FIN, D)
        self.pe_encoder = nn.Linear(K, D)
        # ALiBi-style geometric slopes, one per head (learnable)
        self.slopes = nn.Parameter(torch.tensor([1.0, 0.5, 0.25, 0.125]))
        layer = nn.TransformerEncoderLayer(d_model=D, nhead=H, dim_feedforward=FFN,
                                           dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=LAYERS,
                                             enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies one layer, so all layers start with identical
        # weights; re-initialise them so every layer is distinct (more like a trained model,
        # and the exporter does not fold equal initializers into Identity nodes).
        for m in self.encoder.modules():
            if isinstance(m, nn.MultiheadAttention):
                m._reset_parameters()
            elif isinstance(m, nn.Linear):
                m.reset_parameters()
        self.head = nn.Linear(D, C)

    def forward(self, x, pe, spd):
        h = self.node_encoder(x) + self.pe_encoder(pe)                    # [B,S,D]
        s = spd.shape[-1]
        slope = self.slopes.view(1, self.h, 1, 1)
        bias = -slope * spd.unsqueeze(1).to(h.dtype)                      # [B,H,S,S]
        mask = bias.reshape(-1, s, s)                                      # [B*H,S,S]
        h = self.encoder(h, mask=mask)
        return self.head(h)                                                # [B,S,C]


def make_inputs(seed=0):
    g = common.random_graphs(B, S, num_feats=FIN, max_dist=MAX_DIST, directed=False, seed=seed)
    return {
        "x": torch.from_numpy(g["feats"]),
        "pe": torch.from_numpy(common.laplacian_pe(g["adj"], K)),
        "spd": torch.from_numpy(g["spd"]),
    }


DYNAMIC_AXES = {
    "x": {0: "batch", 1: "nodes"},
    "pe": {0: "batch", 1: "nodes"},
    "spd": {0: "batch", 1: "nodes", 2: "nodes"},
    "logits": {0: "batch", 1: "nodes"},
}


def main(out_dir=None):
    common.seed_everything(0)
    model = common.randomize_params(PlainGraphTransformer())
    out_dir = out_dir or os.path.join(common.HERE, "plain_gt")
    return common.export(model, make_inputs(), out_dir, dynamic_axes=DYNAMIC_AXES)


if __name__ == "__main__":
    print(common.format_summary(main()))
