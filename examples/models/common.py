"""Shared helpers for the MegaGraph example Graph Transformer models.

Everything here is deterministic: the same seed gives the same random graphs,
the same weights and therefore byte-identical reference inputs/outputs.

Requirements: torch 1.13 (CPU is enough), onnx 1.12, numpy.
"""

import os
import random
from collections import deque

import numpy as np
import onnx
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


def seed_everything(seed=0):
    """Seed python, numpy and torch; force deterministic single-threaded CPU math."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


# ---------------------------------------------------------------------------
# Random graphs
# ---------------------------------------------------------------------------

def _bfs_distances(adj, src, max_dist):
    """Hop distances from `src` along edges adj[u, v] != 0, clamped to max_dist."""
    n = adj.shape[0]
    dist = np.full(n, max_dist, dtype=np.int64)
    dist[src] = 0
    queue = deque([src])
    while queue:
        u = queue.popleft()
        if dist[u] + 1 >= max_dist:
            continue  # anything further is clamped to max_dist anyway
        for v in np.nonzero(adj[u])[0]:
            if dist[v] > dist[u] + 1:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def random_graphs(batch, num_nodes, num_feats=8, edge_prob=0.15,
                  max_dist=7, directed=False, seed=0):
    """Generate `batch` random graphs with `num_nodes` nodes each.

    Each graph is a random spanning-ish chain fragment plus Erdos-Renyi edges
    (so most, but not necessarily all, nodes are connected).

    Returns a dict of numpy arrays:
      feats      float32 [B, S, num_feats]  standard-normal node features
      adj        float32 [B, S, S]          0/1 adjacency, adj[b, u, v] = edge u->v, no self loops
      spd        int64   [B, S, S]          BFS hop distance u->v, clamped to max_dist;
                                            unreachable pairs = max_dist; spd[b, u, u] = 0
      in_degree  int64   [B, S]             number of edges v->u (column sums)
      out_degree int64   [B, S]             number of edges u->v (row sums)
    For undirected graphs in_degree == out_degree.
    """
    rng = np.random.RandomState(seed)
    B, S = batch, num_nodes
    feats = rng.randn(B, S, num_feats).astype(np.float32)
    adj = np.zeros((B, S, S), dtype=np.float32)
    for b in range(B):
        a = (rng.rand(S, S) < edge_prob).astype(np.float32)
        # a random path over ~3/4 of the nodes keeps the graph mostly connected,
        # the rest stay as (possibly) far away / unreachable nodes
        perm = rng.permutation(S)
        for i in range(int(S * 0.75) - 1):
            a[perm[i], perm[i + 1]] = 1.0
        if not directed:
            a = np.maximum(a, a.T)
        np.fill_diagonal(a, 0.0)
        adj[b] = a
    spd = np.stack([np.stack([_bfs_distances(adj[b], s, max_dist) for s in range(S)])
                    for b in range(B)]).astype(np.int64)
    in_degree = adj.sum(axis=1).astype(np.int64)
    out_degree = adj.sum(axis=2).astype(np.int64)
    return dict(feats=feats, adj=adj, spd=spd, in_degree=in_degree, out_degree=out_degree)


def gcn_norm(adj):
    """Symmetric GCN normalisation with self loops: D^-1/2 (A + I) D^-1/2, per graph."""
    S = adj.shape[-1]
    a = adj + np.eye(S, dtype=adj.dtype)[None]
    d = a.sum(-1)
    dinv = 1.0 / np.sqrt(d)
    return (dinv[:, :, None] * a * dinv[:, None, :]).astype(np.float32)


def laplacian_pe(adj, k):
    """First k non-trivial eigenvectors of the normalised Laplacian (sign fixed), [B, S, k] float32."""
    out = []
    for a in adj:
        a = np.maximum(a, a.T)
        d = a.sum(-1)
        dinv = np.where(d > 0, 1.0 / np.sqrt(np.maximum(d, 1e-12)), 0.0)
        lap = np.eye(a.shape[0]) - dinv[:, None] * a * dinv[None, :]
        _, vecs = np.linalg.eigh(lap)
        vecs = vecs[:, 1:k + 1]
        # make the sign deterministic: largest-magnitude entry positive
        idx = np.abs(vecs).argmax(axis=0)
        vecs = vecs * np.sign(vecs[idx, np.arange(vecs.shape[1])])[None, :]
        out.append(vecs)
    return np.stack(out).astype(np.float32)


# ---------------------------------------------------------------------------
# Model helpers
# ---------------------------------------------------------------------------

def randomize_params(model, seed=1):
    """Make default-initialised parameters non-trivial so the reference outputs test them:
    LayerNorm / BatchNorm get random affine params (defaults 1/0 are near-identity),
    BatchNorm gets random running stats, and all-zero biases (e.g. nn.MultiheadAttention
    in/out projection biases) get small random values. Without this the exporter would
    also de-duplicate the identical all-zero initializers into Identity nodes."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.LayerNorm, nn.BatchNorm1d)):
                if m.weight is not None:
                    m.weight.copy_(1.0 + 0.2 * torch.randn(m.weight.shape, generator=g))
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=g))
        for _, p in model.named_parameters():
            if p.dim() == 1 and not torch.any(p != 0):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model


def _op_summary(model_proto):
    counts = {}
    for node in model_proto.graph.node:
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def export(model, inputs, path_prefix, dynamic_axes=None, opset=17, output_names=("logits",)):
    """Export `model` to ONNX and save reference data.

    model       : nn.Module; put in eval mode here, run under torch.no_grad()
    inputs      : dict input_name -> torch.Tensor, in the order of model.forward's arguments
    path_prefix : output directory, e.g. examples/models/graphormer; writes
                    <path_prefix>/model.onnx
                    <path_prefix>/inputs/<input_name>.npy
                    <path_prefix>/outputs/<output_name>.npy
    dynamic_axes: passed through to torch.onnx.export (symbolic dims)
    Returns a summary dict (path, opset, op counts, size, inputs, outputs).
    """
    model.eval()
    names = list(inputs.keys())
    args = tuple(inputs[n] for n in names)
    os.makedirs(os.path.join(path_prefix, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(path_prefix, "outputs"), exist_ok=True)
    onnx_path = os.path.join(path_prefix, "model.onnx")

    with torch.no_grad():
        ref = model(*args)
        if isinstance(ref, torch.Tensor):
            ref = (ref,)
        assert len(ref) == len(output_names), (len(ref), output_names)
        torch.onnx.export(
            model, args, onnx_path,
            input_names=names,
            output_names=list(output_names),
            dynamic_axes=dynamic_axes,
            opset_version=opset,
            do_constant_folding=True,
            export_params=True,
        )
        # the export traces the model again; make sure it did not change anything
        ref2 = model(*args)
        ref2 = (ref2,) if isinstance(ref2, torch.Tensor) else ref2
        for a, b in zip(ref, ref2):
            assert torch.equal(a, b), "model is not deterministic in eval mode"

    for n, t in inputs.items():
        np.save(os.path.join(path_prefix, "inputs", f"{n}.npy"), t.detach().cpu().numpy())
    for n, t in zip(output_names, ref):
        np.save(os.path.join(path_prefix, "outputs", f"{n}.npy"), t.detach().cpu().numpy())

    proto = onnx.load(onnx_path)
    onnx.checker.check_model(proto, full_check=True)

    def _vi(v):
        tt = v.type.tensor_type
        dims = [d.dim_param if d.dim_param else d.dim_value for d in tt.shape.dim]
        return (v.name, onnx.TensorProto.DataType.Name(tt.elem_type), dims)

    return dict(
        name=os.path.basename(os.path.normpath(path_prefix)),
        path=onnx_path,
        opset=max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
        ops=_op_summary(proto),
        num_nodes=len(proto.graph.node),
        size=os.path.getsize(onnx_path),
        inputs=[_vi(v) for v in proto.graph.input],
        outputs=[_vi(v) for v in proto.graph.output],
    )


def format_summary(s):
    lines = [f"== {s['name']}: {os.path.relpath(s['path'])}",
             f"   opset {s['opset']}, {s['num_nodes']} nodes, {s['size']} bytes"]
    for n, t, d in s["inputs"]:
        lines.append(f"   input  {n}: {t} {d}")
    for n, t, d in s["outputs"]:
        lines.append(f"   output {n}: {t} {d}")
    lines.append("   ops: " + ", ".join(f"{k} x{v}" for k, v in s["ops"].items()))
    return "\n".join(lines)


def check_with_onnxruntime(path_prefix, atol=1e-4, rtol=1e-4):
    """Optional: run model.onnx on the saved inputs with onnxruntime (if installed) and
    compare with the saved PyTorch outputs. Returns max abs error or None if ORT missing."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(os.path.join(path_prefix, "model.onnx"),
                                providers=["CPUExecutionProvider"])
    feeds = {i.name: np.load(os.path.join(path_prefix, "inputs", f"{i.name}.npy"))
             for i in sess.get_inputs()}
    outs = sess.run(None, feeds)
    err = 0.0
    for o, got in zip(sess.get_outputs(), outs):
        want = np.load(os.path.join(path_prefix, "outputs", f"{o.name}.npy"))
        assert got.shape == want.shape, (o.name, got.shape, want.shape)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
        err = max(err, float(np.abs(got - want).max()))
    return err
