"""Small full-graph GCN models written the way users write them, for MegaGraph.

Three models over one graph of N nodes (B = 1, S = N), node classification:

* ``gcn``  -- PyG-style message passing: self loops appended to
  ``edge_index``, symmetric degree normalization, ``x[edge_index[0]]`` messages
  scattered into ``edge_index[1]`` with ``scatter_add`` (Gather +
  ScatterElements with reduction add in ONNX).
* ``sage`` -- GraphSAGE with mean aggregation: neighbour sum via ``index_add_`` (torch 2.x: ScatterND with reduction
  add; torch 1.13, which cannot export it, uses ``scatter_add``),
  divided by the in-degree, plus a root weight.
* ``kipf`` -- Kipf & Welling's dense form ``adj @ (x @ W)`` with the
  normalized adjacency ``adj`` an input.

Inputs: ``x`` f32 [N, F], ``edge_index`` i64 [2, E] (row 0 source, row 1
target; gcn and sage) or ``adj_norm`` f32 [N, N] (kipf). Output ``logits``
f32 [N, C].

Export: ``python3 gcn.py OUTDIR [--dynamo] [--dynamic]`` writes
OUTDIR/<model>.onnx for the three models (torch 1.13's
``torch.onnx.export``; ``--dynamo`` uses torch 2.x's
``torch.onnx.export(..., dynamo=True)``), with N, F, E, C fixed by the flags
below. ``--dynamic`` leaves the node count N and the edge count E symbolic
(full-graph training compiles the model for its data set:
``megagraph-compile gcn.onnx --input-shape x=NxF --input-shape
edge_index=2xE``); the TorchScript exporter of torch 1.13 cannot export
``scatter_add`` with a symbolic row count, so use it with ``--dynamo``.
"""

import argparse
import os

import torch
import torch.nn as nn


class GCNConv(nn.Module):
    """PyG's GCNConv: out = D^-1/2 (A + I) D^-1/2 x W + b, as scatter_add."""

    def __init__(self, fin, fout):
        super().__init__()
        self.lin = nn.Linear(fin, fout, bias=False)
        self.bias = nn.Parameter(torch.zeros(fout))

    def forward(self, x, edge_index):
        n = x.shape[0]
        loops = torch.arange(n, dtype=edge_index.dtype)
        src = torch.cat([edge_index[0], loops])
        dst = torch.cat([edge_index[1], loops])
        deg = torch.zeros(n, dtype=x.dtype).scatter_add(
            0, dst, torch.ones(src.shape[0], dtype=x.dtype))
        dinv = deg.pow(-0.5)
        norm = dinv[src] * dinv[dst]
        h = self.lin(x)
        msg = h[src] * norm.unsqueeze(-1)
        out = torch.zeros(n, h.shape[1], dtype=x.dtype).scatter_add(
            0, dst.unsqueeze(-1).expand(-1, h.shape[1]), msg)
        return out + self.bias


class SAGEConv(nn.Module):
    """PyG's SAGEConv with mean aggregation: lin_l(mean_j x_j) + lin_r(x_i)."""

    def __init__(self, fin, fout):
        super().__init__()
        self.lin_l = nn.Linear(fin, fout)
        self.lin_r = nn.Linear(fin, fout, bias=False)

    def forward(self, x, edge_index):
        n = x.shape[0]
        src, dst = edge_index[0], edge_index[1]
        ones = torch.ones(dst.shape[0], dtype=x.dtype)
        if torch.__version__ < "2":
            # torch 1.13 exports index_add_/index_put_ with duplicate indices
            # wrongly (or not at all): scatter_add is its exact form.
            summed = torch.zeros(n, x.shape[1], dtype=x.dtype).scatter_add(
                0, dst.unsqueeze(-1).expand(-1, x.shape[1]), x[src])
            cnt = torch.zeros(n, dtype=x.dtype).scatter_add(0, dst, ones)
        else:
            summed = torch.zeros(n, x.shape[1], dtype=x.dtype).index_add_(
                0, dst, x[src])
            cnt = torch.zeros(n, dtype=x.dtype).index_add_(0, dst, ones)
        mean = summed / cnt.clamp(min=1.0).unsqueeze(-1)
        return self.lin_l(mean) + self.lin_r(x)


class Stack(nn.Module):
    """`layers` convolutions conv1 .. convL (fin -> hidden -> ... -> classes)
    with ReLU between them."""

    def __init__(self, conv, fin, hidden, classes, layers=2):
        super().__init__()
        self.layers = layers
        dims = [fin] + [hidden] * (layers - 1) + [classes]
        for i in range(layers):
            setattr(self, f"conv{i + 1}", conv(dims[i], dims[i + 1]))

    def forward(self, x, edge_index):
        for i in range(self.layers):
            x = getattr(self, f"conv{i + 1}")(x, edge_index)
            if i + 1 < self.layers:
                x = torch.relu(x)
        return x


class GCN(Stack):
    def __init__(self, fin, hidden, classes, layers=2):
        super().__init__(GCNConv, fin, hidden, classes, layers)


class SAGE(Stack):
    def __init__(self, fin, hidden, classes, layers=2):
        super().__init__(SAGEConv, fin, hidden, classes, layers)


class KipfGCN(nn.Module):
    """Kipf & Welling: adj @ relu(adj @ x W1) W2 with adj = D^-1/2 (A+I) D^-1/2."""

    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.w1 = nn.Linear(fin, hidden)
        self.w2 = nn.Linear(hidden, classes)

    def forward(self, x, adj_norm):
        h = torch.relu(adj_norm @ self.w1(x))
        return adj_norm @ self.w2(h)


MODELS = {"gcn": GCN, "sage": SAGE, "kipf": KipfGCN}


def build(name, fin, hidden, classes, seed=0, layers=2):
    torch.manual_seed(seed)
    model = (MODELS[name](fin, hidden, classes, layers) if name != "kipf"
             else MODELS[name](fin, hidden, classes))
    # Non-zero biases so that every parameter is exercised.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.uniform_(-0.1, 0.1)
    return model


def example_inputs(name, nodes, feats, edges):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(nodes, feats, generator=g)
    if name == "kipf":
        return x, torch.rand(nodes, nodes, generator=g)
    return x, torch.randint(0, nodes, (2, edges), generator=g)


def export(name, path, nodes, feats, hidden, classes, edges, dynamo=False,
           dynamic=False, layers=2):
    model = build(name, feats, hidden, classes, layers=layers).eval()
    args = example_inputs(name, nodes, feats, edges)
    second = "adj_norm" if name == "kipf" else "edge_index"
    if dynamo:
        shapes = None
        if dynamic:
            n = torch.export.Dim("N", min=2)
            shapes = {"x": {0: n},
                      second: ({0: n, 1: n} if name == "kipf"
                               else {1: torch.export.Dim("E", min=2)})}
        torch.onnx.export(model, args, path, dynamo=True,
                          dynamic_shapes=shapes,
                          input_names=["x", second], output_names=["logits"])
    else:
        axes = None
        if dynamic:
            axes = {"x": {0: "N"}, "logits": {0: "N"},
                    second: ({0: "N", 1: "N"} if name == "kipf"
                             else {1: "E"})}
        torch.onnx.export(model, args, path, opset_version=17,
                          input_names=["x", second], output_names=["logits"],
                          dynamic_axes=axes, do_constant_folding=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--models", default="gcn,sage,kipf")
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--features", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--edges", type=int, default=256)
    ap.add_argument("--dynamo", action="store_true")
    ap.add_argument("--dynamic", action="store_true",
                    help="symbolic node and edge counts")
    ap.add_argument("--layers", type=int, default=2,
                    help="convolutions of gcn and sage")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for name in a.models.split(","):
        export(name, os.path.join(a.outdir, name + ".onnx"), a.nodes,
               a.features, a.hidden, a.classes, a.edges, a.dynamo,
               a.dynamic, a.layers)


if __name__ == "__main__":
    main()
