"""Shared helpers of the MegaGraph model zoo (examples/zoo/).

The model files re-create public Graph Transformer codebases; this module holds what
they share and what must not depend on the torch version:

  * seeded random graphs and their preprocessing (numpy only),
  * `init_weights(model, seed)`: overwrites every parameter and floating buffer of a
    model with values drawn from a numpy RandomState, in state_dict order. The weights
    are therefore bit-identical under torch 1.13 and torch 2.x (PyTorch's own
    initialisers are not guaranteed to draw the same numbers across versions), and no
    LayerNorm / BatchNorm / bias is left at an identity value.
  * `state_digest(model)`: a sha256 over the state_dict, recorded in every export so
    that the three export styles can be checked to carry the same weights.

Works with torch 1.13 (Debian's python3-torch) and torch 2.x.
"""

import hashlib
import os
import random
import sys
from collections import deque

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import common as _example_common  # noqa: E402


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)


# ---------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------

# Hop distances from src, unreachable / further = max_dist: the example
# models' BFS (examples/models/common.py).
bfs_distances = _example_common._bfs_distances


def bfs_paths(adj, src):
    """BFS parents from src (first-found shortest paths); -1 = unreachable / src."""
    n = adj.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[src] = True
    q = deque([src])
    while q:
        u = q.popleft()
        for v in np.nonzero(adj[u])[0]:
            if not seen[v]:
                seen[v] = True
                parent[v] = u
                q.append(v)
    return parent, seen


def random_graph(rng, n, edge_prob=0.2, directed=False):
    """0/1 adjacency [n, n] (no self loops): a random path over most nodes plus
    Erdos-Renyi edges, so most but not all pairs are connected."""
    a = (rng.rand(n, n) < edge_prob).astype(np.float32)
    perm = rng.permutation(n)
    for i in range(max(1, int(n * 0.75)) - 1):
        a[perm[i], perm[i + 1]] = 1.0
    if not directed:
        a = np.maximum(a, a.T)
    np.fill_diagonal(a, 0.0)
    return a


def gcn_norm(adj):
    """D^-1/2 (A + I) D^-1/2 for adj [..., n, n]."""
    n = adj.shape[-1]
    a = adj + np.eye(n, dtype=np.float32)
    d = a.sum(-1)
    dinv = 1.0 / np.sqrt(d)
    return (dinv[..., :, None] * a * dinv[..., None, :]).astype(np.float32)


def laplacian_pe(adj, k):
    """First k non-trivial eigenvectors of the normalised Laplacian, sign fixed, [n, k]."""
    a = np.maximum(adj, adj.T).astype(np.float64)
    d = a.sum(-1)
    dinv = np.where(d > 0, 1.0 / np.sqrt(np.maximum(d, 1e-12)), 0.0)
    lap = np.eye(a.shape[0]) - dinv[:, None] * a * dinv[None, :]
    _, vecs = np.linalg.eigh(lap)
    vecs = vecs[:, 1:k + 1]
    idx = np.abs(vecs).argmax(axis=0)
    vecs = vecs * np.sign(vecs[idx, np.arange(vecs.shape[1])])[None, :]
    return vecs.astype(np.float32)


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------

def _norm_names(model):
    ln, bn = set(), set()
    for mname, m in model.named_modules():
        p = mname + "." if mname else ""
        if isinstance(m, (nn.LayerNorm,)):
            ln.update({p + "weight", p + "bias"})
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            bn.update({p + "weight", p + "bias", p + "running_mean", p + "running_var"})
    return ln, bn


def init_weights(model, seed):
    """Deterministic, torch-version-independent, non-trivial weights (see module doc)."""
    rng = np.random.RandomState(seed)
    ln, bn = _norm_names(model)
    sd = model.state_dict()
    new = {}
    for name in sd:  # state_dict order is the module definition order
        t = sd[name]
        if not t.is_floating_point():
            new[name] = t
            continue
        shape = tuple(t.shape)
        leaf = name.rsplit(".", 1)[-1]
        if name in bn and leaf == "running_var":
            v = 0.5 + rng.rand(*shape)
        elif name in bn and leaf == "running_mean":
            v = 0.2 * rng.randn(*shape)
        elif (name in ln or name in bn) and leaf == "weight":
            v = 1.0 + 0.2 * rng.randn(*shape)
        elif (name in ln or name in bn) and leaf == "bias":
            v = 0.1 * rng.randn(*shape)
        elif len(shape) <= 1:
            v = 0.1 * rng.randn(*shape)           # biases, scalars, per-head vectors
        else:
            fan_in = int(np.prod(shape[1:]))
            bound = 1.0 / np.sqrt(fan_in)
            v = rng.uniform(-bound, bound, size=shape) * np.sqrt(3.0)
        new[name] = torch.from_numpy(np.asarray(v, dtype=np.float32).reshape(shape))
    model.load_state_dict(new)
    return embedding_init(model, seed + 1)


def embedding_init(model, seed, scale=0.5):
    """Re-draw every nn.Embedding table from N(0, scale^2) (padding rows stay 0)."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for _, m in model.named_modules():
            if isinstance(m, nn.Embedding):
                v = scale * rng.randn(*m.weight.shape)
                if m.padding_idx is not None:
                    v[m.padding_idx] = 0.0
                m.weight.copy_(torch.from_numpy(v.astype(np.float32)))
    return model


def state_digest(model):
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def t(x):
    """numpy -> torch tensor."""
    return torch.from_numpy(np.ascontiguousarray(x))
