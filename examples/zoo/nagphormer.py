"""NAGphormer (Chen et al., ICLR 2023), re-created from github.com/JHL-HUST/NAGphormer
(model.py, utils.py):

  * Hop2Token (utils.re_features, done in preprocessing here with numpy): for every node,
    the sequence [X, AX, A^2X, ..., A^K X] of its propagated features (A the normalised
    adjacency), with Laplacian eigenvectors concatenated to the raw features; the model
    input is `batched_data` [B nodes, K+1 hops, F]. So the *hops* are the attention
    sequence (length K+1) and a batch is a set of nodes.
  * TransformerModel: att_embeddings_nope Linear, pre-LN EncoderLayers whose
    MultiHeadAttention scales q (`q = q * self.scale`, scale = att_size ** -0.5) and
    does `k.transpose(1, 2).transpose(2, 3)`, `torch.matmul`, `torch.softmax(x, dim=3)`,
    `x.transpose(1, 2).contiguous().view(...)`; FFN with nn.GELU; final_ln;
  * attention-based readout over hops: `output[:, 0, :].unsqueeze(1).repeat(1, K, 1)`,
    `torch.split(output, [1, K], dim=1)`, attn_layer on the concatenation, softmax over
    hops, weighted sum, `.squeeze()`, out_proj + relu, Linear1, `log_softmax(dim=1)`.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo_common as zc

NAME = "nagphormer"
SOURCE = "JHL-HUST/NAGphormer (model.py, utils.py re_features)"
LEVEL = "node"

NODES, HOPS, FEAT, PE, D, H, LAYERS, C = 16, 3, 8, 3, 16, 2, 2, 4


class FeedForwardNetwork(nn.Module):
    def __init__(self, hidden_size, ffn_size, dropout_rate):
        super(FeedForwardNetwork, self).__init__()
        self.layer1 = nn.Linear(hidden_size, ffn_size)
        self.gelu = nn.GELU()
        self.layer2 = nn.Linear(ffn_size, hidden_size)

    def forward(self, x):
        x = self.layer1(x)
        x = self.gelu(x)
        x = self.layer2(x)
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, attention_dropout_rate, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.num_heads = num_heads
        self.att_size = att_size = hidden_size // num_heads
        self.scale = att_size ** -0.5
        self.linear_q = nn.Linear(hidden_size, num_heads * att_size)
        self.linear_k = nn.Linear(hidden_size, num_heads * att_size)
        self.linear_v = nn.Linear(hidden_size, num_heads * att_size)
        self.att_dropout = nn.Dropout(attention_dropout_rate)
        self.output_layer = nn.Linear(num_heads * att_size, hidden_size)

    def forward(self, q, k, v, attn_bias=None):
        orig_q_size = q.size()
        d_k = self.att_size
        d_v = self.att_size
        batch_size = q.size(0)
        q = self.linear_q(q).view(batch_size, -1, self.num_heads, d_k)
        k = self.linear_k(k).view(batch_size, -1, self.num_heads, d_k)
        v = self.linear_v(v).view(batch_size, -1, self.num_heads, d_v)
        q = q.transpose(1, 2)                  # [b, h, q_len, d_k]
        v = v.transpose(1, 2)                  # [b, h, v_len, d_v]
        k = k.transpose(1, 2).transpose(2, 3)  # [b, h, d_k, k_len]
        q = q * self.scale
        x = torch.matmul(q, k)                 # [b, h, q_len, k_len]
        if attn_bias is not None:
            x = x + attn_bias
        x = torch.softmax(x, dim=3)
        x = self.att_dropout(x)
        x = x.matmul(v)                        # [b, h, q_len, attn]
        x = x.transpose(1, 2).contiguous()     # [b, q_len, h, attn]
        x = x.view(batch_size, -1, self.num_heads * d_v)
        x = self.output_layer(x)
        assert x.size() == orig_q_size
        return x


class EncoderLayer(nn.Module):
    def __init__(self, hidden_size, ffn_size, dropout_rate, attention_dropout_rate, num_heads):
        super(EncoderLayer, self).__init__()
        self.self_attention_norm = nn.LayerNorm(hidden_size)
        self.self_attention = MultiHeadAttention(hidden_size, attention_dropout_rate, num_heads)
        self.self_attention_dropout = nn.Dropout(dropout_rate)
        self.ffn_norm = nn.LayerNorm(hidden_size)
        self.ffn = FeedForwardNetwork(hidden_size, ffn_size, dropout_rate)
        self.ffn_dropout = nn.Dropout(dropout_rate)

    def forward(self, x, attn_bias=None):
        y = self.self_attention_norm(x)
        y = self.self_attention(y, y, y, attn_bias)
        y = self.self_attention_dropout(y)
        x = x + y
        y = self.ffn_norm(x)
        y = self.ffn(y)
        y = self.ffn_dropout(y)
        x = x + y
        return x


class TransformerModel(nn.Module):
    def __init__(self, hops, n_class, input_dim, pe_dim, n_layers=6, num_heads=8,
                 hidden_dim=64, ffn_dim=64, dropout_rate=0.0, attention_dropout_rate=0.1):
        super().__init__()
        self.seq_len = hops + 1
        self.pe_dim = pe_dim
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.ffn_dim = 2 * hidden_dim
        self.num_heads = num_heads
        self.n_layers = n_layers
        self.n_class = n_class
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.att_embeddings_nope = nn.Linear(self.input_dim, self.hidden_dim)
        encoders = [EncoderLayer(self.hidden_dim, self.ffn_dim, self.dropout_rate,
                                 self.attention_dropout_rate, self.num_heads)
                    for _ in range(self.n_layers)]
        self.layers = nn.ModuleList(encoders)
        self.final_ln = nn.LayerNorm(hidden_dim)
        self.out_proj = nn.Linear(self.hidden_dim, int(self.hidden_dim / 2))
        self.attn_layer = nn.Linear(2 * self.hidden_dim, 1)
        self.Linear1 = nn.Linear(int(self.hidden_dim / 2), self.n_class)
        self.scaling = nn.Parameter(torch.ones(1) * 0.5)

    def forward(self, batched_data):
        tensor = self.att_embeddings_nope(batched_data)
        for enc_layer in self.layers:
            tensor = enc_layer(tensor)
        output = self.final_ln(tensor)
        target = output[:, 0, :].unsqueeze(1).repeat(1, self.seq_len - 1, 1)
        split_tensor = torch.split(output, [1, self.seq_len - 1], dim=1)
        node_tensor = split_tensor[0]
        neighbor_tensor = split_tensor[1]
        layer_atten = self.attn_layer(torch.cat((target, neighbor_tensor), dim=2))
        layer_atten = F.softmax(layer_atten, dim=1)
        neighbor_tensor = neighbor_tensor * layer_atten
        neighbor_tensor = torch.sum(neighbor_tensor, dim=1, keepdim=True)
        output = (node_tensor + neighbor_tensor).squeeze()
        output = self.Linear1(torch.relu(self.out_proj(output)))
        return torch.log_softmax(output, dim=1)


def build():
    return zc.init_weights(TransformerModel(HOPS, C, FEAT + PE, PE, n_layers=LAYERS,
                                            num_heads=H, hidden_dim=D), seed=303)


def make_inputs(seed=13):
    """utils.re_features on a random graph: [nodes, K+1, F + PE]."""
    rng = np.random.RandomState(seed)
    adj = zc.random_graph(rng, NODES, edge_prob=0.2)
    feats = rng.randn(NODES, FEAT).astype(np.float32)
    feats = np.concatenate([feats, zc.laplacian_pe(adj, PE)], axis=1)
    a = zc.gcn_norm(adj)
    seq = [feats]
    x = feats
    for _ in range(HOPS):
        x = a @ x
        seq.append(x)
    return [("batched_data", np.stack(seq, axis=1).astype(np.float32))]


VARIANTS = {"nagphormer": dict()}
OUTPUT_NAMES = ["log_probs"]
EXPECT = {
    "attention": {"count": 2, "bias": 0},
    "ops": {"gt.layer_norm": 5, "gt.linear": ">=16", "gt.gelu": 2},
    "desired": {},
}
INPUT_DOC = {"batched_data": "float32 [16,4,11] hop tokens (X, AX, A^2X, A^3X) of 16 nodes, "
                             "features 8 + 3 Laplacian PE"}
NOTES = ("The attention sequence is the K+1 = 4 hops of one node and the batch is 16 nodes, "
         "so gt.attention runs on [16, 4, 32]; plus a second, tiny softmax over hops (readout) "
         "that is not an attention. Output log_softmax [16, 4].")
