"""A graph transformer built from PyTorch's stock encoder, as many GT codebases do
(e.g. GraphTrans, the SAN/GPS "Transformer" baselines):

  nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
                        dropout, activation="gelu", batch_first=True), num_layers=2)
  called with `src_key_padding_mask` (True = padding), which is what a padded batch of
  graphs needs. Node features + Laplacian PE are embedded by two Linears and summed,
  a Linear head gives per-node logits; padded rows are zeroed.

Default constructor arguments otherwise (post-LN, enable_nested_tensor=True). In eval
mode under torch.no_grad(), PyTorch takes its fused fast path (nested tensors from the
padding mask, torch._transformer_encoder_layer_fwd) and torch.onnx.export fails on it
(torch 1.13: "aten::logical_not ... not supported"; torch 2 legacy:
"aten::_transformer_encoder_layer_fwd ... not supported"). Exported the way users call
the exporter (grad enabled, parameters requiring grad) the fast path is not taken;
export_zoo.py does that for every model.
"""

import numpy as np
import torch.nn as nn

import zoo_common as zc

NAME = "torch_transformer"
SOURCE = "torch.nn.TransformerEncoder / TransformerEncoderLayer (PyTorch), src_key_padding_mask"
LEVEL = "node"

N, FEAT, PE, D, H, FF, LAYERS, C = 12, 8, 4, 16, 2, 32, 2, 4


class TransformerGT(nn.Module):
    def __init__(self):
        super().__init__()
        self.node_in = nn.Linear(FEAT, D)
        self.pe_in = nn.Linear(PE, D)
        layer = nn.TransformerEncoderLayer(D, H, dim_feedforward=FF, dropout=0.1,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=LAYERS)
        self.head = nn.Linear(D, C)

    def forward(self, x, pe, padding_mask):
        h = self.node_in(x) + self.pe_in(pe)
        h = self.encoder(h, src_key_padding_mask=padding_mask)
        out = self.head(h)
        return out.masked_fill(padding_mask.unsqueeze(-1), 0.0)


def build():
    return zc.init_weights(TransformerGT(), seed=808)


def make_inputs(batch=2, seed=31):
    rng = np.random.RandomState(seed)
    sizes = [N, N - 4, N - 2, N][:batch] if batch > 1 else [N]
    x = np.zeros((batch, N, FEAT), np.float32)
    pe = np.zeros((batch, N, PE), np.float32)
    pad = np.ones((batch, N), bool)
    for b, n in enumerate(sizes):
        a = zc.random_graph(rng, n, edge_prob=0.25)
        x[b, :n] = rng.randn(n, FEAT)
        pe[b, :n] = zc.laplacian_pe(a, PE)
        pad[b, :n] = False
    return [("x", x), ("pe", pe), ("padding_mask", pad)]


VARIANTS = {"torch_transformer": dict(batch=2), "torch_transformer_b1": dict(batch=1)}
OUTPUT_NAMES = ["logits"]
EXPECT = {
    "attention": {"count": 2, "masked": 2},
    "ops": {"gt.layer_norm": 4, "gt.linear": ">=11", "gt.gelu": 2},
    "desired": {},
}
INPUT_DOC = {"x": "float32 [B,12,8] node features (padded rows 0)",
             "pe": "float32 [B,12,4] Laplacian PE",
             "padding_mask": "bool [B,12] src_key_padding_mask, True = padding (graph 1: 8 real nodes)"}
NOTES = ("Stock nn.TransformerEncoder, post-LN, GELU, key padding mask. In the B=1 variant "
         "the mask is all False.")
