"""A larger Graphormer-style model for the CPU inference benchmark.

Same architecture and code as examples/models/graphormer.py (its attention,
layer and forward are reused as they are), at benchmark sizes: by default
4 layers, D=128, H=8, FFN 2*D, B=1, and the example's categorical setup
(F=3 features of 16 values each, 8 spatial-distance buckets, degrees clamped
to [0, 7], 4 output classes). The graph is generated the way
examples/models/common.py's random_graphs does it (same random draws: a path
over 3/4 of the nodes plus Erdos-Renyi edges, directed), with an edge
probability of avg_degree/S so the degrees stay graph-like at large S, and
with a level-synchronous (matrix) BFS for the shortest-path distances, which
gives the same distances as common.random_graphs' per-node BFS (checked by
--self-check) but runs in seconds at S=4096.

With --train it exports the training variant instead (BenchGraphormerTrain):
the runtime's `--mode train` feeds float node features, so the categorical
atom encoder becomes a Linear(F, D) encoder of the SBM features (F=16), the
degree tables cover the raw SBM degrees (64 entries, no clamping, no padding
row), the spatial table the driver's distances 0..8 (--max-distance 8), and
the head has 8 classes (the SBM blocks). Layers, D, H and FFN are as above.

Writes into OUT (not under version control: use /tmp or build/):
  model.onnx, inputs/<name>.npy, outputs/logits.npy   (as common.export does)
  params/<state_dict name>.npy                          (every parameter)
  config.json                                           (sizes, op counts)

Usage:
  /usr/bin/python3 bench/graphormer_bench.py --nodes 1024 --out /tmp/gb/s1024
  /usr/bin/python3 bench/graphormer_bench.py --train --nodes 1024 --out /tmp/gb/t1024
  /usr/bin/python3 bench/graphormer_bench.py --self-check
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "models"))
import common  # noqa: E402
import graphormer  # noqa: E402


class BenchGraphormer(graphormer.Graphormer):
    """examples/models/graphormer.py's Graphormer with its sizes as arguments
    (the defaults of the example are D=32, H=4, 2 layers, C=4); forward() is
    the example's."""

    def __init__(self, d=128, h=8, layers=4, classes=4, ffn_mult=2,
                 feats=graphormer.F, vocab_per_feat=graphormer.VOCAB_PER_FEAT,
                 num_spatial=graphormer.NUM_SPATIAL,
                 max_degree=graphormer.MAX_DEGREE):
        nn.Module.__init__(self)
        self.atom_encoder = nn.Embedding(feats * vocab_per_feat + 1, d, padding_idx=0)
        self.in_degree_encoder = nn.Embedding(max_degree, d, padding_idx=0)
        self.out_degree_encoder = nn.Embedding(max_degree, d, padding_idx=0)
        self.spatial_pos_encoder = nn.Embedding(num_spatial, h)
        self.layers = nn.ModuleList(
            [graphormer.GraphormerLayer(d, h, ffn_mult * d) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)


# The training variant's sizes: what runtime/driver/Train.h feeds.
TRAIN_FEATURES = 16      # synthetic:sbm features= (the generator's default)
TRAIN_CLASSES = 8        # synthetic:sbm classes=
TRAIN_MAX_DEGREE = 64    # raw SBM degrees (expected 20) index the tables
TRAIN_MAX_DISTANCE = 8   # --max-distance: spd in [0, 8]


class BenchGraphormerTrain(BenchGraphormer):
    """BenchGraphormer fed the way `--mode train` feeds a model: float node
    features x [B,S,F] through a Linear encoder, raw degrees, SPD capped at
    TRAIN_MAX_DISTANCE. No padding rows: every table row is trained (ONNX
    does not carry padding_idx, so the compiled step updates them all)."""

    def __init__(self, d=128, h=8, layers=4, classes=TRAIN_CLASSES, ffn_mult=2,
                 features=TRAIN_FEATURES):
        nn.Module.__init__(self)
        self.feat_encoder = nn.Linear(features, d)
        self.in_degree_encoder = nn.Embedding(TRAIN_MAX_DEGREE, d)
        self.out_degree_encoder = nn.Embedding(TRAIN_MAX_DEGREE, d)
        self.spatial_pos_encoder = nn.Embedding(TRAIN_MAX_DISTANCE + 1, h)
        self.layers = nn.ModuleList(
            [graphormer.GraphormerLayer(d, h, ffn_mult * d) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x, in_degree, out_degree, spd):
        # graphormer.Graphormer.forward with the Linear feature encoder
        h = self.feat_encoder(x)
        h = h + self.in_degree_encoder(in_degree) + self.out_degree_encoder(out_degree)
        attn_bias = self.spatial_pos_encoder(spd).permute(0, 3, 1, 2)
        for layer in self.layers:
            h = layer(h, attn_bias)
        return self.head(self.final_norm(h))


def make_train_inputs(batch, nodes, seed=0):
    """Random inputs of the training variant's shapes and ranges (only the
    export and the reference output use them; training data comes from the
    runtime's synthetic:sbm)."""
    g = torch.Generator().manual_seed(seed)
    return {
        "x": torch.randn(batch, nodes, TRAIN_FEATURES, generator=g),
        "in_degree": torch.randint(0, TRAIN_MAX_DEGREE, (batch, nodes), generator=g),
        "out_degree": torch.randint(0, TRAIN_MAX_DEGREE, (batch, nodes), generator=g),
        "spd": torch.randint(0, TRAIN_MAX_DISTANCE + 1, (batch, nodes, nodes),
                             generator=g),
    }


def _spd_matrix_bfs(adj, max_dist):
    """All-pairs hop distances of one graph (adj[u, v] != 0 = edge u->v), clamped to
    max_dist, unreachable = max_dist: the same result as common._bfs_distances for
    every source, by a level-synchronous BFS over all sources at once."""
    n = adj.shape[0]
    a = torch.from_numpy(np.ascontiguousarray(adj, dtype=np.float32))
    dist = torch.full((n, n), max_dist, dtype=torch.int64)
    reached = torch.eye(n, dtype=torch.bool)
    frontier = reached.clone()
    dist[reached] = 0
    # common._bfs_distances only expands u when dist[u] + 1 < max_dist
    for d in range(1, max_dist):
        nxt = (frontier.float() @ a > 0) & ~reached
        if not bool(nxt.any()):
            break
        dist[nxt] = d
        reached |= nxt
        frontier = nxt
    return dist.numpy()


def random_graphs(batch, num_nodes, edge_prob, max_dist, directed, seed):
    """common.random_graphs with the matrix BFS (identical random draws)."""
    rng = np.random.RandomState(seed)
    B, S = batch, num_nodes
    feats = rng.randn(B, S, 8).astype(np.float32)  # drawn (and unused) as in common
    del feats
    adj = np.zeros((B, S, S), dtype=np.float32)
    for b in range(B):
        a = (rng.rand(S, S) < edge_prob).astype(np.float32)
        perm = rng.permutation(S)
        for i in range(int(S * 0.75) - 1):
            a[perm[i], perm[i + 1]] = 1.0
        if not directed:
            a = np.maximum(a, a.T)
        np.fill_diagonal(a, 0.0)
        adj[b] = a
    spd = np.stack([_spd_matrix_bfs(adj[b], max_dist) for b in range(B)]).astype(np.int64)
    in_degree = adj.sum(axis=1).astype(np.int64)
    out_degree = adj.sum(axis=2).astype(np.int64)
    return dict(adj=adj, spd=spd, in_degree=in_degree, out_degree=out_degree)


def make_inputs(batch, nodes, avg_degree, seed=0,
                feats=graphormer.F, vocab_per_feat=graphormer.VOCAB_PER_FEAT,
                num_spatial=graphormer.NUM_SPATIAL, max_degree=graphormer.MAX_DEGREE):
    """examples/models/graphormer.py's make_inputs at size (batch, nodes)."""
    edge_prob = min(1.0, avg_degree / nodes)
    g = random_graphs(batch, nodes, edge_prob, num_spatial - 1, True, seed)
    rng = np.random.RandomState(seed + 100)
    x = rng.randint(1, vocab_per_feat + 1, size=(batch, nodes, feats)) + \
        np.arange(feats) * vocab_per_feat
    return {
        "x": torch.from_numpy(x.astype(np.int64)),
        "in_degree": torch.from_numpy(np.minimum(g["in_degree"], max_degree - 1)),
        "out_degree": torch.from_numpy(np.minimum(g["out_degree"], max_degree - 1)),
        "spd": torch.from_numpy(g["spd"]),
    }


def export_bench(out_dir, nodes, batch=1, d=128, h=8, layers=4, classes=4,
                 avg_degree=4.0, seed=0, train=False):
    """Builds, exports and saves the benchmark model (the training variant if
    `train`) at `nodes` nodes; returns a summary dict (also written to
    OUT/config.json)."""
    common.seed_everything(seed)
    if train:
        # randomize_params also keeps the LayerNorm / bias initializers
        # distinct, so the exporter cannot merge (and so tie) them.
        model = common.randomize_params(BenchGraphormerTrain(
            d=d, h=h, layers=layers, classes=classes))
        inputs = make_train_inputs(batch, nodes, seed=seed)
    else:
        model = common.randomize_params(BenchGraphormer(d=d, h=h, layers=layers,
                                                        classes=classes))
        inputs = make_inputs(batch, nodes, avg_degree, seed=seed)
    model.eval()
    summary = common.export(model, inputs, out_dir)
    os.makedirs(os.path.join(out_dir, "params"), exist_ok=True)
    for name, t in model.state_dict().items():
        np.save(os.path.join(out_dir, "params", f"{name}.npy"),
                t.detach().cpu().numpy())
    config = dict(mode="train" if train else "infer",
                  nodes=nodes, batch=batch, dim=d, heads=h, layers=layers,
                  classes=classes, ffn_dim=2 * d, feats=graphormer.F,
                  vocab_per_feat=graphormer.VOCAB_PER_FEAT,
                  num_spatial=graphormer.NUM_SPATIAL,
                  max_degree=graphormer.MAX_DEGREE, avg_degree=avg_degree,
                  seed=seed, torch=torch.__version__,
                  num_params=sum(p.numel() for p in model.parameters()),
                  onnx_ops=summary["ops"], onnx_bytes=summary["size"])
    if train:
        config.update(features=TRAIN_FEATURES, max_degree=TRAIN_MAX_DEGREE,
                      max_distance=TRAIN_MAX_DISTANCE,
                      num_spatial=TRAIN_MAX_DISTANCE + 1)
        for k in ("feats", "vocab_per_feat", "avg_degree"):
            del config[k]
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    summary["config"] = config
    return summary


def self_check():
    """The matrix BFS reproduces common.random_graphs (per-node BFS) exactly, and
    the default BenchGraphormer sizes of the example reproduce its committed
    reference output."""
    for s, p in ((16, 0.15), (64, 0.05), (200, 0.01)):
        for directed in (True, False):
            ref = common.random_graphs(2, s, edge_prob=p, max_dist=7,
                                       directed=directed, seed=3)
            got = random_graphs(2, s, p, 7, directed, 3)
            for k in ("adj", "spd", "in_degree", "out_degree"):
                assert np.array_equal(ref[k], got[k]), (s, directed, k)
    common.seed_everything(0)
    model = common.randomize_params(BenchGraphormer(
        d=graphormer.D, h=graphormer.H, layers=graphormer.LAYERS,
        classes=graphormer.C)).eval()
    ex = os.path.join(HERE, "..", "examples", "models", "graphormer")
    args = [torch.from_numpy(np.load(os.path.join(ex, "inputs", f"{n}.npy")))
            for n in ("x", "in_degree", "out_degree", "spd")]
    with torch.no_grad():
        out = model(*args).numpy()
    want = np.load(os.path.join(ex, "outputs", "logits.npy"))
    assert np.array_equal(out, want), float(np.abs(out - want).max())
    print("self-check ok: matrix BFS == common.random_graphs; "
          "BenchGraphormer(example sizes) == examples/models/graphormer output")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", "-S", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--classes", type=int, default=None,
                    help=f"output classes (default 4; {TRAIN_CLASSES} with --train)")
    ap.add_argument("--avg-degree", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="work directory (under /tmp or build/)")
    ap.add_argument("--train", action="store_true",
                    help="export the training variant (BenchGraphormerTrain)")
    ap.add_argument("--self-check", action="store_true")
    a = ap.parse_args(argv)
    if a.self_check:
        self_check()
        return
    if not a.out:
        ap.error("--out DIR is required")
    classes = a.classes or (TRAIN_CLASSES if a.train else 4)
    s = export_bench(a.out, a.nodes, a.batch, a.dim, a.heads, a.layers,
                     classes, a.avg_degree, a.seed, train=a.train)
    print(common.format_summary(s))
    print(f"   params: {s['config']['num_params']} "
          f"(saved to {os.path.join(a.out, 'params')})")


if __name__ == "__main__":
    main()
