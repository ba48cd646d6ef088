"""GraphGPS (Rampasek et al., NeurIPS 2022), re-created from github.com/rampasek/GraphGPS
(graphgps/layer/gps_layer.py GPSLayer with global_model_type='Transformer',
batch_norm=True and a GCN as the local message-passing model, in the slot where the
codebase offers GINE / GatedGCN / GAT / PNA; graphgps/network/gps_model.py):

  * global branch exactly as GPSLayer._sa_block: `self.self_attn(x, x, x,
    attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]`
    with nn.MultiheadAttention(dim_h, num_heads, dropout=attn_dropout,
    batch_first=True) and `key_padding_mask=~mask` from to_dense_batch. The batch is
    kept dense here (x [B, N, F] plus the to_dense_batch `mask` [B, N] as an input),
    because `h_attn[mask]` / to_dense_batch produce data-dependent shapes;
  * local branch: GCNConv on the normalised adjacency (dense `adj @ (x W) + b`),
    dropout, residual, BatchNorm1d (norm1_local); attention: dropout, residual,
    BatchNorm1d (norm1_attn); `h = sum([h_local, h_attn])`; _ff_block with ReLU,
    residual, BatchNorm1d (norm2). BatchNorms run on the flattened nodes [B*N, D], as on
    PyG's packed node batches;
  * FeatureEncoder (Linear), post-mp head (Linear) per node, padded rows zeroed with
    the mask.
"""

import numpy as np
import torch
import torch.nn as nn

import zoo_common as zc

NAME = "graphgps_dense"
SOURCE = "rampasek/GraphGPS (graphgps/layer/gps_layer.py, network/gps_model.py)"
LEVEL = "node"

N, FEAT, D, H, LAYERS, C = 12, 8, 16, 2, 2, 4


class DenseGCNConv(nn.Module):
    """pyg GCNConv on a pre-normalised dense adjacency: adj @ (x W) + bias."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, adj):
        return torch.matmul(adj, self.lin(x)) + self.bias


class GPSLayer(nn.Module):
    def __init__(self, dim_h, num_heads, dropout=0.0, attn_dropout=0.0, batch_norm=True):
        super().__init__()
        self.dim_h = dim_h
        self.num_heads = num_heads
        self.batch_norm = batch_norm
        self.activation = nn.ReLU
        self.local_model = DenseGCNConv(dim_h, dim_h)
        self.self_attn = nn.MultiheadAttention(dim_h, num_heads, dropout=attn_dropout,
                                               batch_first=True)
        self.norm1_local = nn.BatchNorm1d(dim_h)
        self.norm1_attn = nn.BatchNorm1d(dim_h)
        self.dropout_local = nn.Dropout(dropout)
        self.dropout_attn = nn.Dropout(dropout)
        self.ff_linear1 = nn.Linear(dim_h, dim_h * 2)
        self.ff_linear2 = nn.Linear(dim_h * 2, dim_h)
        self.act_fn_ff = self.activation()
        self.norm2 = nn.BatchNorm1d(dim_h)
        self.ff_dropout1 = nn.Dropout(dropout)
        self.ff_dropout2 = nn.Dropout(dropout)

    def _bn(self, norm, h):
        b, n, d = h.shape
        return norm(h.reshape(b * n, d)).reshape(b, n, d)

    def forward(self, h, adj, mask):
        h_in1 = h  # for first residual connection
        h_out_list = []
        # Local MPNN with edge attributes.
        h_local = self.local_model(h, adj)
        h_local = self.dropout_local(h_local)
        h_local = h_in1 + h_local  # Residual connection.
        if self.batch_norm:
            h_local = self._bn(self.norm1_local, h_local)
        h_out_list.append(h_local)
        # Multi-head attention.
        h_attn = self._sa_block(h, None, ~mask)
        h_attn = self.dropout_attn(h_attn)
        h_attn = h_in1 + h_attn  # Residual connection.
        if self.batch_norm:
            h_attn = self._bn(self.norm1_attn, h_attn)
        h_out_list.append(h_attn)
        # Combine local and global outputs.
        h = sum(h_out_list)
        # Feed Forward block.
        h = h + self._ff_block(h)
        if self.batch_norm:
            h = self._bn(self.norm2, h)
        return h

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return x

    def _ff_block(self, x):
        x = self.ff_dropout1(self.act_fn_ff(self.ff_linear1(x)))
        return self.ff_dropout2(self.ff_linear2(x))


class GPSModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(FEAT, D)        # FeatureEncoder (linear node encoder)
        self.layers = nn.ModuleList([GPSLayer(D, H, dropout=0.1, attn_dropout=0.1)
                                     for _ in range(LAYERS)])
        self.post_mp = nn.Linear(D, C)           # GNNNodeHead

    def forward(self, x, adj, mask):
        h = self.encoder(x)
        for layer in self.layers:
            h = layer(h, adj, mask)
        out = self.post_mp(h)
        return out * mask.unsqueeze(-1).to(out.dtype)


def build():
    return zc.init_weights(GPSModel(), seed=505)


def make_inputs(batch=2, seed=19):
    rng = np.random.RandomState(seed)
    sizes = [N, N - 3, N - 1, N][:batch] if batch > 1 else [N]
    x = np.zeros((batch, N, FEAT), np.float32)
    adj = np.zeros((batch, N, N), np.float32)
    mask = np.zeros((batch, N), bool)
    for b, n in enumerate(sizes):
        a = zc.random_graph(rng, n, edge_prob=0.2)
        x[b, :n] = rng.randn(n, FEAT)
        adj[b, :n, :n] = zc.gcn_norm(a)
        mask[b, :n] = True
    return [("x", x), ("adj", adj), ("mask", mask)]


VARIANTS = {"graphgps_dense": dict(batch=2), "graphgps_dense_b1": dict(batch=1)}
OUTPUT_NAMES = ["logits"]
EXPECT = {
    "attention": {"count": 2, "masked": 2},
    "ops": {"gt.linear": ">=12"},
    "desired": {"gt.spmm": 2},
}
INPUT_DOC = {"x": "float32 [B,12,8] node features, padded rows 0",
             "adj": "float32 [B,12,12] GCN-normalised adjacency (padded rows/cols 0)",
             "mask": "bool [B,12] to_dense_batch mask (True = real node); the model passes "
                     "~mask as key_padding_mask"}
NOTES = ("nn.MultiheadAttention(batch_first=True) with key_padding_mask; graph 1 has 9 real "
         "nodes of 12. The key padding mask must reach gt.attention (as mask, or folded into a "
         "bias). The B=1 variant (graphgps_dense_b1) is one unpadded graph.")
