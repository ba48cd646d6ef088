"""Microsoft Graphormer (Ying et al., 2021), re-created from github.com/microsoft/Graphormer:

  graphormer/modules/graphormer_layers.py          GraphNodeFeature, GraphAttnBias
  graphormer/modules/multihead_attention.py        fairseq-style MultiheadAttention
  graphormer/modules/graphormer_graph_encoder_layer.py, graphormer_graph_encoder.py
  graphormer/models/graphormer.py                  GraphormerEncoder (lm head)

Kept as the codebase writes it:
  * inputs are the collator's tensors (`batched_data` dict built from positional args):
    x [B,N,Fa] (convert_to_single_emb offsets, 0 = padding), attn_bias [B,N+1,N+1]
    (0, or -inf for padded keys and pairs beyond spatial_pos_max), spatial_pos [B,N,N]
    (shortest path + 1, 0 = padding), in_degree / out_degree [B,N] (+1, 0 = padding),
    edge_input [B,N,N,max_dist,Fe] (edge types along the shortest path, 0 = none);
  * graph token appended with `.weight.unsqueeze(0).repeat(n_graph, 1, 1)` and a
    virtual-distance embedding on the token's row/column of the bias;
  * in-place slice updates `graph_attn_bias[:, :, 1:, 1:] = ...`,
    `spatial_pos_[spatial_pos_ == 0] = 1`, `torch.where`, `clamp`;
  * multi-hop edge encoding: edge_encoder(edge_input).mean(-2), permute(3,0,1,2,4),
    bmm with edge_dis_encoder.weight.reshape(-1, H, H)[:max_dist], divide by distance;
  * padding mask from `x[:, :, 0].eq(0)` with a zero column for the graph token,
    applied as `masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), -inf)`;
  * the attention runs seq-first ([T, B, C]), `q *= self.scaling` before the bmm,
    `attn_weights += attn_bias.view(bsz * H, T, T)`, softmax in float + type_as;
  * post-LN layers (pre_layernorm=False, the default) with an embedding LayerNorm
    (encoder_normalize_before), fairseq GELU;
  * head: layer_norm(gelu(lm_head_transform_weight(x))), embed_out (no bias) +
    lm_output_learned_bias; graph-level logits taken at the graph token x[:, 0, :].
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo_common as zc

NAME = "graphormer"
SOURCE = ("microsoft/Graphormer (graphormer/modules/graphormer_layers.py, "
          "multihead_attention.py, graphormer_graph_encoder.py, models/graphormer.py)")
LEVEL = "graph"

N, D, H, LAYERS, FFN, C = 10, 32, 2, 2, 32, 3
F_ATOM, ATOM_VALS = 3, 8          # x[..., f] in 1 + 9 f .. 8 + 9 f
F_EDGE, EDGE_VALS = 2, 4          # edge types in 1 + 5 f .. 4 + 5 f
NUM_ATOMS = F_ATOM * (ATOM_VALS + 1)
NUM_EDGES = F_EDGE * (EDGE_VALS + 1)
NUM_SPATIAL = 16                  # spatial_pos = spd + 1, unreachable = 15
NUM_EDGE_DIS = 8
NUM_DEGREE = 16
MULTI_HOP_MAX_DIST = 3
SPATIAL_POS_MAX = 6               # collator: attn_bias[1:,1:][spatial_pos >= max] = -inf


class GraphNodeFeature(nn.Module):
    def __init__(self, num_heads, num_atoms, num_in_degree, num_out_degree, hidden_dim):
        super(GraphNodeFeature, self).__init__()
        self.num_heads = num_heads
        self.num_atoms = num_atoms
        # 1 for graph token
        self.atom_encoder = nn.Embedding(num_atoms + 1, hidden_dim, padding_idx=0)
        self.in_degree_encoder = nn.Embedding(num_in_degree, hidden_dim, padding_idx=0)
        self.out_degree_encoder = nn.Embedding(num_out_degree, hidden_dim, padding_idx=0)
        self.graph_token = nn.Embedding(1, hidden_dim)

    def forward(self, batched_data):
        x, in_degree, out_degree = (batched_data["x"], batched_data["in_degree"],
                                    batched_data["out_degree"])
        n_graph, n_node = x.size()[:2]
        node_feature = self.atom_encoder(x).sum(dim=-2)  # [n_graph, n_node, n_hidden]
        node_feature = (node_feature + self.in_degree_encoder(in_degree)
                        + self.out_degree_encoder(out_degree))
        graph_token_feature = self.graph_token.weight.unsqueeze(0).repeat(n_graph, 1, 1)
        graph_node_feature = torch.cat([graph_token_feature, node_feature], dim=1)
        return graph_node_feature


class GraphAttnBias(nn.Module):
    def __init__(self, num_heads, num_edges, num_spatial, num_edge_dis, edge_type,
                 multi_hop_max_dist):
        super(GraphAttnBias, self).__init__()
        self.num_heads = num_heads
        self.multi_hop_max_dist = multi_hop_max_dist
        self.edge_encoder = nn.Embedding(num_edges + 1, num_heads, padding_idx=0)
        self.edge_type = edge_type
        if self.edge_type == "multi_hop":
            self.edge_dis_encoder = nn.Embedding(num_edge_dis * num_heads * num_heads, 1)
        self.spatial_pos_encoder = nn.Embedding(num_spatial, num_heads, padding_idx=0)
        self.graph_token_virtual_distance = nn.Embedding(1, num_heads)

    def forward(self, batched_data):
        attn_bias, spatial_pos, x = (batched_data["attn_bias"], batched_data["spatial_pos"],
                                     batched_data["x"])
        edge_input = batched_data["edge_input"]
        n_graph, n_node = x.size()[:2]
        graph_attn_bias = attn_bias.clone()
        graph_attn_bias = graph_attn_bias.unsqueeze(1).repeat(1, self.num_heads, 1, 1)

        # spatial pos: [n_graph, n_node, n_node, n_head] -> [n_graph, n_head, n_node, n_node]
        spatial_pos_bias = self.spatial_pos_encoder(spatial_pos).permute(0, 3, 1, 2)
        graph_attn_bias[:, :, 1:, 1:] = graph_attn_bias[:, :, 1:, 1:] + spatial_pos_bias

        # reset spatial pos here
        t = self.graph_token_virtual_distance.weight.view(1, self.num_heads, 1)
        graph_attn_bias[:, :, 1:, 0] = graph_attn_bias[:, :, 1:, 0] + t
        graph_attn_bias[:, :, 0, :] = graph_attn_bias[:, :, 0, :] + t

        # edge feature (multi-hop)
        spatial_pos_ = spatial_pos.clone()
        spatial_pos_[spatial_pos_ == 0] = 1  # set pad to 1
        # set 1 to 1, x > 1 to x - 1
        spatial_pos_ = torch.where(spatial_pos_ > 1, spatial_pos_ - 1, spatial_pos_)
        if self.multi_hop_max_dist > 0:
            spatial_pos_ = spatial_pos_.clamp(0, self.multi_hop_max_dist)
            edge_input = edge_input[:, :, :, :self.multi_hop_max_dist, :]
        # [n_graph, n_node, n_node, max_dist, n_head]
        edge_input = self.edge_encoder(edge_input).mean(-2)
        max_dist = edge_input.size(-2)
        edge_input_flat = edge_input.permute(3, 0, 1, 2, 4).reshape(max_dist, -1, self.num_heads)
        edge_input_flat = torch.bmm(
            edge_input_flat,
            self.edge_dis_encoder.weight.reshape(-1, self.num_heads, self.num_heads)[:max_dist, :, :])
        edge_input = edge_input_flat.reshape(
            max_dist, n_graph, n_node, n_node, self.num_heads).permute(1, 2, 3, 0, 4)
        edge_input = (edge_input.sum(-2) / (spatial_pos_.float().unsqueeze(-1))).permute(0, 3, 1, 2)

        graph_attn_bias[:, :, 1:, 1:] = graph_attn_bias[:, :, 1:, 1:] + edge_input
        graph_attn_bias = graph_attn_bias + attn_bias.unsqueeze(1)  # reset
        return graph_attn_bias


class MultiheadAttention(nn.Module):
    """fairseq-style self attention; input Time x Batch x Channel."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, self_attention=True):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout_module = nn.Dropout(dropout)
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, attn_bias, key_padding_mask=None,
                need_weights=True, attn_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        src_len = tgt_len
        q = self.q_proj(query)
        k = self.k_proj(query)
        v = self.v_proj(query)
        q *= self.scaling

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if attn_bias is not None:
            attn_weights += attn_bias.view(bsz * self.num_heads, tgt_len, src_len)
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0)
            attn_weights += attn_mask
        if key_padding_mask is not None:
            # don't attend to padding symbols
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(
                key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)

        attn_weights_float = F.softmax(attn_weights.float(), dim=-1)
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = self.dropout_module(attn_weights)
        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        attn = self.out_proj(attn)
        attn_weights = None
        if need_weights:
            attn_weights = attn_weights_float.view(bsz, self.num_heads, tgt_len, src_len).transpose(1, 0)
            attn_weights = attn_weights.mean(dim=0)
        return attn, attn_weights


def fairseq_gelu(x):
    return F.gelu(x.float()).type_as(x)


class GraphormerGraphEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, ffn_embedding_dim, num_attention_heads, dropout=0.1,
                 attention_dropout=0.1, activation_dropout=0.1, pre_layernorm=False):
        super().__init__()
        self.pre_layernorm = pre_layernorm
        self.dropout_module = nn.Dropout(dropout)
        self.activation_dropout_module = nn.Dropout(activation_dropout)
        self.activation_fn = fairseq_gelu
        self.self_attn = MultiheadAttention(embedding_dim, num_attention_heads,
                                            dropout=attention_dropout, self_attention=True)
        self.self_attn_layer_norm = nn.LayerNorm(embedding_dim)
        self.fc1 = nn.Linear(embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, self_attn_bias=None, self_attn_mask=None, self_attn_padding_mask=None):
        residual = x
        if self.pre_layernorm:
            x = self.self_attn_layer_norm(x)
        x, attn = self.self_attn(query=x, key=x, value=x, attn_bias=self_attn_bias,
                                 key_padding_mask=self_attn_padding_mask,
                                 need_weights=False, attn_mask=self_attn_mask)
        x = self.dropout_module(x)
        x = residual + x
        if not self.pre_layernorm:
            x = self.self_attn_layer_norm(x)
        residual = x
        if self.pre_layernorm:
            x = self.final_layer_norm(x)
        x = self.activation_fn(self.fc1(x))
        x = self.activation_dropout_module(x)
        x = self.fc2(x)
        x = self.dropout_module(x)
        x = residual + x
        if not self.pre_layernorm:
            x = self.final_layer_norm(x)
        return x, attn


class GraphormerGraphEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout_module = nn.Dropout(0.1)
        self.embedding_dim = D
        self.graph_node_feature = GraphNodeFeature(H, NUM_ATOMS, NUM_DEGREE, NUM_DEGREE, D)
        self.graph_attn_bias = GraphAttnBias(H, NUM_EDGES, NUM_SPATIAL, NUM_EDGE_DIS,
                                             "multi_hop", MULTI_HOP_MAX_DIST)
        self.embed_scale = None
        self.emb_layer_norm = nn.LayerNorm(D)   # encoder_normalize_before
        self.layers = nn.ModuleList([GraphormerGraphEncoderLayer(D, FFN, H) for _ in range(LAYERS)])

    def forward(self, batched_data, last_state_only=False, attn_mask=None):
        data_x = batched_data["x"]
        n_graph, n_node = data_x.size()[:2]
        padding_mask = (data_x[:, :, 0]).eq(0)  # B x T x 1
        padding_mask_cls = torch.zeros(n_graph, 1, device=padding_mask.device,
                                       dtype=padding_mask.dtype)
        padding_mask = torch.cat((padding_mask_cls, padding_mask), dim=1)
        x = self.graph_node_feature(batched_data)
        attn_bias = self.graph_attn_bias(batched_data)
        if self.embed_scale is not None:
            x = x * self.embed_scale
        if self.emb_layer_norm is not None:
            x = self.emb_layer_norm(x)
        x = self.dropout_module(x)
        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        inner_states = []
        if not last_state_only:
            inner_states.append(x)
        for layer in self.layers:
            x, _ = layer(x, self_attn_padding_mask=padding_mask, self_attn_mask=attn_mask,
                         self_attn_bias=attn_bias)
            if not last_state_only:
                inner_states.append(x)
        graph_rep = x[0, :, :]
        if last_state_only:
            inner_states = [x]
        return inner_states, graph_rep


class GraphormerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph_encoder = GraphormerGraphEncoder()
        self.lm_head_transform_weight = nn.Linear(D, D)
        self.activation_fn = fairseq_gelu
        self.layer_norm = nn.LayerNorm(D)
        self.lm_output_learned_bias = nn.Parameter(torch.zeros(1))
        self.embed_out = nn.Linear(D, C, bias=False)

    def forward(self, x, attn_bias, spatial_pos, in_degree, out_degree, edge_input):
        batched_data = {"x": x, "attn_bias": attn_bias, "spatial_pos": spatial_pos,
                        "in_degree": in_degree, "out_degree": out_degree,
                        "edge_input": edge_input}
        inner_states, graph_rep = self.graph_encoder(batched_data)
        x = inner_states[-1].transpose(0, 1)
        x = self.layer_norm(self.activation_fn(self.lm_head_transform_weight(x)))
        x = self.embed_out(x)
        x = x + self.lm_output_learned_bias
        return x[:, 0, :]          # graph-level prediction at the graph token


def build():
    return zc.init_weights(GraphormerEncoder(), seed=101)


def _graph_arrays(rng, n):
    """One graph in Graphormer's preprocessing format (before collation)."""
    adj = zc.random_graph(rng, n, edge_prob=0.25)
    x = rng.randint(1, ATOM_VALS + 1, size=(n, F_ATOM)) + np.arange(F_ATOM) * (ATOM_VALS + 1)
    etype = np.zeros((n, n, F_EDGE), dtype=np.int64)
    for u in range(n):
        for v in range(u + 1, n):
            if adj[u, v]:
                f = rng.randint(1, EDGE_VALS + 1, size=F_EDGE) + np.arange(F_EDGE) * (EDGE_VALS + 1)
                etype[u, v] = etype[v, u] = f
    spd = np.full((n, n), NUM_SPATIAL - 2, dtype=np.int64)     # unreachable -> 14 (+1 = 15)
    edge_input = np.zeros((n, n, MULTI_HOP_MAX_DIST, F_EDGE), dtype=np.int64)
    for s in range(n):
        parent, seen = zc.bfs_paths(adj, s)
        for d in range(n):
            if not seen[d]:
                continue
            path = [d]
            while path[-1] != s:
                path.append(parent[path[-1]])
            path = path[::-1]
            spd[s, d] = min(len(path) - 1, NUM_SPATIAL - 2)
            for h in range(min(len(path) - 1, MULTI_HOP_MAX_DIST)):
                edge_input[s, d, h] = etype[path[h], path[h + 1]]
    deg = adj.sum(1).astype(np.int64)
    return x, spd, edge_input, deg


def make_inputs(batch=2, seed=7):
    rng = np.random.RandomState(seed)
    sizes = [N, N - 2, N - 1, N][:batch]
    X = np.zeros((batch, N, F_ATOM), np.int64)
    attn_bias = np.full((batch, N + 1, N + 1), -np.inf, np.float32)
    spatial_pos = np.zeros((batch, N, N), np.int64)
    in_deg = np.zeros((batch, N), np.int64)
    edge_input = np.zeros((batch, N, N, MULTI_HOP_MAX_DIST, F_EDGE), np.int64)
    for b, n in enumerate(sizes):
        x, spd, ei, deg = _graph_arrays(rng, n)
        X[b, :n] = x
        sp = spd + 1
        spatial_pos[b, :n, :n] = sp
        ab = np.zeros((n + 1, n + 1), np.float32)
        ab[1:, 1:][sp >= SPATIAL_POS_MAX] = -np.inf
        attn_bias[b, :n + 1, :n + 1] = ab
        attn_bias[b, n + 1:, :n + 1] = 0.0          # padded query rows see the real keys
        in_deg[b, :n] = np.minimum(deg, NUM_DEGREE - 2) + 1
        edge_input[b, :n, :n] = ei
    return [("x", X), ("attn_bias", attn_bias), ("spatial_pos", spatial_pos),
            ("in_degree", in_deg), ("out_degree", in_deg.copy()), ("edge_input", edge_input)]


VARIANTS = {"graphormer": dict(batch=2)}
OUTPUT_NAMES = ["logits"]
EXPECT = {
    "attention": {"count": 2, "bias": 2},
    "ops": {"gt.spatial_bias": 1, "gt.node_embedding": ">=1", "gt.layer_norm": 6,
            "gt.linear": ">=14", "gt.gelu": 3},
    "desired": {"gt.degree_embedding": 2, "gt.edge_bias": 1},
}
INPUT_DOC = {
    "x": "int64 [B,N,3] atom features with convert_to_single_emb offsets, 0 = padding",
    "attn_bias": "float32 [B,N+1,N+1] collator bias: 0, -inf on padded keys and pairs with spatial_pos >= 6",
    "spatial_pos": "int64 [B,N,N] shortest path + 1 (unreachable 15), 0 = padding",
    "in_degree": "int64 [B,N] degree + 1, 0 = padding",
    "out_degree": "int64 [B,N] same as in_degree (undirected graphs)",
    "edge_input": "int64 [B,N,N,3,2] edge types along the shortest path (multi-hop), 0 = none",
}
NOTES = ("Graph 1 of the batch is padded (8 of 10 nodes): the key padding mask, the -inf "
         "collator bias and the padding_idx rows are live. Graph-level logits [B,3] at the graph token.")
