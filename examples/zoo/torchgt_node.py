"""TorchGT's node-level Graphormer (github.com/zxmeng98/torchgt,
models/graphormer_dist_node_level.py), re-created for one process (sequence-parallel
world size 1, attn_type="full"):

  * full-graph style: the node features x [N, F] of the whole (sub)graph are one
    sequence, `x.unsqueeze(0)` makes the batch of one (B = 1);
  * a global token (`graph_token.weight.unsqueeze(0).repeat(n_graph, 1, 1)`, cat in
    front), and the precomputed per-pair bias attn_bias [N, N, 1] extended by the
    token's virtual distance with two `torch.cat`s of `.unsqueeze(..).repeat(..)`ed
    embedding weights, then `.repeat(1, 1, 1, num_heads)`;
  * CoreAttention.full_attention exactly as written: `q.view(sq, b * np, -1)` and
    `k.view(...)` straight from [b, s, np, hn], `q = q * self.scale` with
    scale = sqrt(dh) (multiplied), `torch.matmul(q.transpose(0, 1),
    k.transpose(0, 1).transpose(1, 2))`, the [b, s, s, np] bias added through
    `attn_bias.view(b, np, s, s)` (a view, not a permute, as in TorchGT),
    `torch.softmax(x, dim=3)`, `torch.bmm(x, v.transpose(0, 1))`,
    `x.permute(0, 2, 1, 3).contiguous()`;
  * pre-LN encoder layers, final_ln, `downstream_out_proj(output[0, 1:, :])`,
    `F.log_softmax(output, dim=1)`. `edge_index` is an argument but only the
    "sparse" attention uses it, so the exporters may drop it.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo_common as zc

NAME = "torchgt_node"
SOURCE = "zxmeng98/torchgt (models/graphormer_dist_node_level.py)"
LEVEL = "node"

N, FEAT, D, H, LAYERS, FFN, C = 16, 8, 16, 2, 2, 32, 4


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


class CoreAttention(nn.Module):
    def __init__(self, hidden_size, attention_dropout_rate, num_heads, attn_bias_dim):
        super(CoreAttention, self).__init__()
        world_size = 1
        self.hidden_size_per_partition = hidden_size // world_size
        self.hidden_size_per_attention_head = hidden_size // num_heads
        self.num_attention_heads_per_partition = num_heads // world_size
        self.scale = math.sqrt(self.hidden_size_per_attention_head)
        self.num_heads = num_heads
        self.att_dropout = nn.Dropout(attention_dropout_rate)
        self.attention_dropout_rate = attention_dropout_rate

    def full_attention(self, k, q, v, attn_bias):
        # [b, np, sq+1, sk+1]
        output_size = (q.size(0), q.size(2), q.size(1), k.size(1))
        num_heads = self.num_attention_heads_per_partition if self.training else self.num_heads  # noqa: F841 (unused there too)
        # [b, sq+1, np, hn] -> [sq+1, b * np, hn]
        q = q.view(output_size[2], output_size[0] * output_size[1], -1)
        k = k.view(output_size[3], output_size[0] * output_size[1], -1)
        q = q * self.scale
        # [b * np, sq+1, sk+1]
        x = torch.matmul(q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2))
        x = x.view(*output_size)
        if attn_bias is not None:
            attn_bias = attn_bias.view(*output_size)  # [b, s+1, s+1, np] -> [b, np, s+1, s+1]
            x = x + attn_bias
        x = torch.softmax(x, dim=3)
        x = self.att_dropout(x)
        output_size = (v.size(0), v.size(2), q.size(0), v.size(3))
        v = v.view(v.size(1), output_size[0] * output_size[1], -1)
        x = x.view(output_size[0] * output_size[1], output_size[2], -1)
        x = torch.bmm(x, v.transpose(0, 1))
        x = x.view(*output_size)
        x = x.permute(0, 2, 1, 3).contiguous()
        x = x.view(output_size[0], output_size[2], -1)
        return x

    def forward(self, q, k, v, attn_bias=None, edge_index=None, attn_type=None):
        batch_size, s_len = q.size(0), q.size(1)
        if attn_type == "full":
            x = self.full_attention(k, q, v, attn_bias)
        else:
            raise NotImplementedError("only attn_type='full' is re-created here")
        x = x.view(batch_size, s_len, -1)
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, attention_dropout_rate, num_heads, attn_bias_dim):
        super(MultiHeadAttention, self).__init__()
        self.num_heads = num_heads
        self.att_size = att_size = hidden_size // num_heads
        self.linear_q = nn.Linear(hidden_size, num_heads * att_size)
        self.linear_k = nn.Linear(hidden_size, num_heads * att_size)
        self.linear_v = nn.Linear(hidden_size, num_heads * att_size)
        # DistributedAttentionNoMerge(local_attn, group) is the identity at world size 1
        self.dist_attn = CoreAttention(hidden_size, attention_dropout_rate, num_heads, attn_bias_dim)
        self.output_layer = nn.Linear(num_heads * att_size, hidden_size)

    def forward(self, x, attn_bias=None, edge_index=None, attn_type=None):
        batch_size = x.size(0)
        q = self.linear_q(x).view(batch_size, -1, self.num_heads, self.att_size)
        k = self.linear_k(x).view(batch_size, -1, self.num_heads, self.att_size)
        v = self.linear_v(x).view(batch_size, -1, self.num_heads, self.att_size)
        x = self.dist_attn(q, k, v, attn_bias, edge_index, attn_type)
        x = self.output_layer(x)
        return x


class EncoderLayer(nn.Module):
    def __init__(self, hidden_size, ffn_size, dropout_rate, attention_dropout_rate, num_heads,
                 attn_bias_dim):
        super(EncoderLayer, self).__init__()
        self.self_attention_norm = nn.LayerNorm(hidden_size)
        self.self_attention = MultiHeadAttention(hidden_size, attention_dropout_rate, num_heads,
                                                 attn_bias_dim)
        self.self_attention_dropout = nn.Dropout(dropout_rate)
        self.ffn_norm = nn.LayerNorm(hidden_size)
        self.ffn = FeedForwardNetwork(hidden_size, ffn_size, dropout_rate)
        self.ffn_dropout = nn.Dropout(dropout_rate)

    def forward(self, x, attn_bias=None, edge_index=None, attn_type=None):
        y = self.self_attention_norm(x)
        y = self.self_attention(y, attn_bias, edge_index, attn_type=attn_type)
        y = self.self_attention_dropout(y)
        x = x + y
        y = self.ffn_norm(x)
        y = self.ffn(y)
        y = self.ffn_dropout(y)
        x = x + y
        return x


class Graphormer(nn.Module):
    """Graphormer for node-level task: one node - one token, global token index 0."""

    def __init__(self, n_layers, num_heads, input_dim, hidden_dim, output_dim, attn_bias_dim,
                 dropout_rate, input_dropout_rate, attention_dropout_rate, ffn_dim,
                 num_global_node, attn_type="full"):
        super().__init__()
        self.num_heads = num_heads
        self.node_encoder = nn.Linear(input_dim, hidden_dim)
        self.input_dropout = nn.Dropout(input_dropout_rate)
        encoders = [EncoderLayer(hidden_dim, ffn_dim, dropout_rate, attention_dropout_rate,
                                 num_heads, attn_bias_dim) for _ in range(n_layers)]
        self.layers = nn.ModuleList(encoders)
        self.n_layers = n_layers
        self.final_ln = nn.LayerNorm(hidden_dim)
        self.downstream_out_proj = nn.Linear(hidden_dim, output_dim)
        self.hidden_dim = hidden_dim
        self.num_global_node = num_global_node
        self.graph_token = nn.Embedding(self.num_global_node, hidden_dim)
        self.graph_token_virtual_distance = nn.Embedding(self.num_global_node, attn_bias_dim)
        self.attn_type = attn_type

    def forward(self, x, attn_bias, edge_index, perturb=None, attn_type=None):
        attn_type = attn_type or self.attn_type
        # x -> [bs=1, s/p, x_d]
        x = x.unsqueeze(0)
        n_graph = x.shape[0]
        node_feature = self.node_encoder(x)
        if perturb is not None:
            node_feature += perturb
        global_node_feature = self.graph_token.weight.unsqueeze(0).repeat(n_graph, 1, 1)
        node_feature = torch.cat([global_node_feature, node_feature], dim=1)
        output = self.input_dropout(node_feature)
        if attn_bias is not None:
            # attn_bias: [bs, s/p, s, attn_bias_dim]
            attn_bias = attn_bias.unsqueeze(0)
            n_graph, subseq_len, seq_len = attn_bias.size()[:3]
            graph_attn_bias = attn_bias.clone()
            graph_attn_bias = torch.cat([
                self.graph_token_virtual_distance.weight.unsqueeze(0).unsqueeze(2).repeat(
                    n_graph, 1, seq_len, 1), graph_attn_bias], dim=1)
            graph_attn_bias = torch.cat([
                self.graph_token_virtual_distance.weight.unsqueeze(0).unsqueeze(0).repeat(
                    n_graph, subseq_len + self.num_global_node, 1, 1), graph_attn_bias], dim=2)
            graph_attn_bias = graph_attn_bias.repeat(1, 1, 1, self.num_heads)
        else:
            graph_attn_bias = attn_bias
        for enc_layer in self.layers:
            output = enc_layer(output, attn_bias=graph_attn_bias, edge_index=edge_index,
                               attn_type=attn_type)
        output = self.final_ln(output)
        output = self.downstream_out_proj(output[0, 1:, :])
        return F.log_softmax(output, dim=1)


def build():
    m = zc.init_weights(Graphormer(LAYERS, H, FEAT, D, C, 1, 0.1, 0.1, 0.1, FFN, 1), seed=909)
    with torch.no_grad():   # scale multiplies q by sqrt(dh): keep the softmax unsaturated
        for layer in m.layers:
            layer.self_attention.linear_q.weight.mul_(0.3)
    return m


def make_inputs(seed=37):
    rng = np.random.RandomState(seed)
    adj = zc.random_graph(rng, N, edge_prob=0.15)
    x = rng.randn(N, FEAT).astype(np.float32)
    spd = np.stack([zc.bfs_distances(adj, s, 6) for s in range(N)])
    # TorchGT's node-level preprocessing gives a float per-pair bias; here a decaying
    # function of the hop distance plus noise
    attn_bias = (-0.4 * spd + 0.1 * rng.randn(N, N)).astype(np.float32)[:, :, None]
    src, dst = np.nonzero(adj)
    edge_index = np.stack([src, dst]).astype(np.int64)
    return [("x", x), ("attn_bias", attn_bias), ("edge_index", edge_index)]


VARIANTS = {"torchgt_node": dict()}
OUTPUT_NAMES = ["log_probs"]
EXPECT = {
    "attention": {"count": 2, "bias": 2},
    "ops": {"gt.layer_norm": 5, "gt.linear": ">=12", "gt.gelu": 2},
    "desired": {},
}
INPUT_DOC = {"x": "float32 [16,8] node features of the whole graph (B = 1 after unsqueeze(0))",
             "attn_bias": "float32 [16,16,1] per-pair bias (-0.4 * hops + noise)",
             "edge_index": "int64 [2,E] edges; unused by attn_type='full' (exporters drop it)"}
NOTES = ("Full-graph B = 1 with a global token: sequence 17. The bias reaches the scores "
         "through TorchGT's `view` of [1,17,17,2] as [1,2,17,17] (not a permute). Scale "
         "sqrt(dh), multiplied.")
