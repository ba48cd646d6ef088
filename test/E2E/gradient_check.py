#!/usr/bin/env python3
"""Gradient check against PyTorch autograd: exports a small model from
PyTorch, compiles its gradient function with `megagraph-compile --gradients
--emit=exe`, runs it on random inputs, labels and a label mask, and compares
the masked cross-entropy loss and every parameter gradient with
`loss.backward()`.

Models:
  block       a transformer-style block (linear, layer norm, GELU MLP with a
              residual, head)
  graphormer  a Graphormer-like block: summed nn.Embedding node features
              (int64 [B,S,2]), an in-degree embedding, an SPD spatial-bias
              embedding added to the attention scores of a hand-written
              multi-head attention, a GELU FFN and a head (gt.node_embedding,
              gt.degree_embedding, gt.spatial_bias and gt.attention after
              gt-raise)

  ops         concat, where, clamp, sigmoid, tanh, exp, log, division,
              sum, slices and an activation-activation matmul (the TOSA
              gradient rules the examples do not reach)
  more_ops    the rules the zoo models need beyond those: pow, amax/amin
              with ties, prod, abs, sin, cos, erf, flip, pad, repeat,
              gather, fmod, scatter / scatter_add with runtime indices,
              softmax, log_softmax, tanh GELU
  ex:graphormer, ex:graphgps, ex:plain_gt
              the example models as committed (examples/models/<name>/
              model.onnx and inputs/*.npy), against the PyTorch modules of
              examples/models/<name>.py with the same weights (rebuilt with
              the examples' seeds; every ONNX initializer must equal a
              parameter or its transpose, else FAIL). Inference-mode
              BatchNorm's running statistics are buffers, constants of the
              compiled model (no gradient output, skipped): the reference
              keeps them buffers of a hand-written BatchNorm formula.
              nn.Embedding's padding_idx is dropped in the reference (ONNX
              Gather has no padding row; its row gets a gradient).

usage: gradient_check.py MEGAGRAPH_COMPILE WORKDIR [MODEL [COMPILER FLAGS...]]
(MODEL defaults to `block`; extra flags such as --reference-attention go to
megagraph-compile.) Prints `loss: rel err E OK|FAIL` and one line per
parameter; exits 1 on FAIL.
"""
import math
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradient_common import (FLOOR, TOL, ManualBatchNorm,  # noqa: E402,F401
                             Report, masked_cross_entropy, run_exe)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 32)
        self.ln = nn.LayerNorm(32)
        self.ff1 = nn.Linear(32, 64)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(64, 32)
        self.ln2 = nn.LayerNorm(32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.inp(x)
        h = h + self.ff2(self.act(self.ff1(self.ln(h))))
        return self.head(self.ln2(h))


# Graphormer-like block sizes.
GB, GS, GD, GH, GC = 2, 8, 16, 2, 4
GF, GVOCAB = 2, 6       # categorical features per node, values per feature
GDEG, GSPATIAL = 5, 6   # in-degree and shortest-path-distance table sizes


class GraphAttention(nn.Module):
    """Hand-written multi-head attention with an additive bias, as in
    examples/models/graphormer.py."""

    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, attn_bias):
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        attn = (scores + attn_bias).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, s, d)
        return self.out_proj(out)


class GraphBlock(nn.Module):
    def __init__(self):
        super().__init__()
        # No padding_idx: its row would get no gradient in PyTorch.
        self.atom_encoder = nn.Embedding(GF * GVOCAB, GD)
        self.in_degree_encoder = nn.Embedding(GDEG, GD)
        self.spatial_pos_encoder = nn.Embedding(GSPATIAL, GH)
        self.attn_norm = nn.LayerNorm(GD)
        self.attn = GraphAttention(GD, GH)
        self.ffn_norm = nn.LayerNorm(GD)
        self.ffn = nn.Sequential(nn.Linear(GD, 2 * GD), nn.GELU(),
                                 nn.Linear(2 * GD, GD))
        self.final_norm = nn.LayerNorm(GD)
        self.head = nn.Linear(GD, GC)

    def forward(self, x, in_degree, spd):
        h = self.atom_encoder(x).sum(dim=-2)
        h = h + self.in_degree_encoder(in_degree)
        attn_bias = self.spatial_pos_encoder(spd).permute(0, 3, 1, 2)
        h = h + self.attn(self.attn_norm(h), attn_bias)
        h = h + self.ffn(self.ffn_norm(h))
        return self.head(self.final_norm(h))


class Ops(nn.Module):
    """The TOSA ops with external gradient models beyond the examples':
    concat, select (where), clamp, sigmoid, tanh, exp, log, reciprocal
    (division), reduce_sum, slice and a matmul of two activations."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(8, 16)
        self.head = nn.Linear(48, 4)

    def forward(self, x):
        h1, h2 = self.a(x), self.b(x)
        u = torch.cat([torch.sigmoid(h1), torch.tanh(h2)], dim=-1)
        v = torch.where(h1 > 0.1, h1, 0.5 * h2)
        w = torch.clamp(h2, -0.5, 0.7)
        e = torch.exp(-h1 * h1) + torch.log(1.0 + h2 * h2) + 1.0 / (2.0 + h1 * h1)
        s = (h1 * h2).sum(-1, keepdim=True)
        m = (h1 @ h2.transpose(-1, -2)) @ w * 0.05
        z = torch.cat([u[..., 8:24] + v * w + e * s, m], dim=-1)
        return self.head(torch.cat([z, h1[..., :16]], dim=-1))


class MoreOps(nn.Module):
    """The rules the zoo needs beyond `ops`, each with a differentiable
    operand: pow (both operands, and sqrt), amax/amin (ties split evenly:
    the clamp makes them), prod, abs, sin, cos, erf, flip, constant pad,
    repeat (tile), a gather with repeated indices, fmod (an elementwise
    linalg.generic), scatter and scatter_add with runtime indices (the
    importer's row-scatter linalg.generic), gather along a dim, an unfused
    softmax and log_softmax, and the tanh GELU."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)
        self.register_buffer("rows", torch.tensor([0, 0, 3, 5, 5, 5, 9, 15]))

    def forward(self, x):
        h1, h2 = self.a(x), self.b(x)
        p = torch.pow(1.5 + torch.sigmoid(h1), h2) + torch.sqrt(h2 * h2 + 1.0)
        c = torch.clamp(h1, max=0.2)
        m = torch.amax(c, dim=-1, keepdim=True) - torch.amin(
            torch.clamp(h2, min=-0.3), dim=1, keepdim=True)
        q = h1[..., :4].prod(-1, keepdim=True)
        t = torch.abs(h1) + torch.sin(h2) * torch.cos(h1) + torch.erf(h2)
        f = torch.flip(h1, [1]) + nn.functional.pad(h2, (1, 2))[..., 2:18]
        r = h1[:, :8].repeat(1, 2, 1)
        g = h2[:, self.rows].repeat(1, 2, 1)
        fm = torch.fmod(h1, 0.7 + torch.sigmoid(h2))
        bit = (h1[:, :8] > 0).long()
        idx = 2 * torch.arange(8).view(1, 8, 1) + bit
        sc = h2.scatter(1, idx, h1[:, 8:]) + h2.scatter_add(1, 3 * bit,
                                                            h1[:, 8:])
        ge = torch.gather(h1, 1, idx)
        ge = torch.cat([ge, ge], dim=1)
        sm = torch.softmax(h1, dim=-1) * 4.0 + torch.log_softmax(h2, dim=1)
        gl = nn.functional.gelu(h1, approximate="tanh")
        z = (0.1 * p + m + 0.3 * q + t + f + r * g + fm + sc + ge + sm + gl)
        return self.head(z)


def make_more_ops():
    x = torch.randn(2, 16, 8)
    return MoreOps(), {"x": x}, 4


def make_ops():
    x = torch.randn(2, 16, 8)
    return Ops(), {"x": x}, 4


def make_block():
    x = torch.randn(2, 16, 8)
    return Block(), {"x": x}, 4


def make_graphormer():
    g = torch.Generator().manual_seed(1)
    x = (torch.randint(0, GVOCAB, (GB, GS, GF), generator=g)
         + torch.arange(GF) * GVOCAB)
    inputs = {
        "x": x.to(torch.int64),
        "in_degree": torch.randint(0, GDEG, (GB, GS), generator=g),
        "spd": torch.randint(0, GSPATIAL, (GB, GS, GS), generator=g),
    }
    return GraphBlock(), inputs, GC


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "examples", "models")


def make_example(name):
    """The committed example: (module with its weights, inputs, classes,
    ONNX path, compiler flags)."""
    sys.path.insert(0, EXAMPLES)
    import importlib
    import common
    mod = importlib.import_module(name)
    common.seed_everything(0)
    model = common.randomize_params(getattr(mod, {
        "graphormer": "Graphormer", "graphgps": "GraphGPS",
        "plain_gt": "PlainGraphTransformer"}[name])())
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    torch.use_deterministic_algorithms(False)
    for m in list(model.modules()):
        if isinstance(m, nn.Embedding):
            m.padding_idx = None
        for child_name, child in list(m.named_children()):
            if isinstance(child, nn.BatchNorm1d):
                setattr(m, child_name, ManualBatchNorm(child))
    folder = os.path.join(EXAMPLES, name)
    inputs = {}
    flags = []
    for f in sorted(os.listdir(os.path.join(folder, "inputs"))):
        value = np.load(os.path.join(folder, "inputs", f))
        inputs[f[:-4]] = torch.from_numpy(value)
        if name == "plain_gt":  # exported with dynamic axes
            flags += ["--input-shape",
                      f"{f[:-4]}={'x'.join(map(str, value.shape))}"]
    order = {"graphormer": ["x", "in_degree", "out_degree", "spd"],
             "graphgps": ["x", "adj_norm"], "plain_gt": ["x", "pe", "spd"]}
    inputs = {n: inputs[n] for n in order[name]}
    return model, inputs, mod.C, os.path.join(folder, "model.onnx"), flags


MODELS = {"block": make_block, "graphormer": make_graphormer,
          "ops": make_ops, "more_ops": make_more_ops}


def reference_grad(name, value, params):
    """PyTorch's gradient for the ONNX initializer `name`: of the parameter
    of that name, or of the parameter the exporter folded into it (weight.T
    for MatMul, -p.view(...) for a negated, reshaped parameter), found by
    value."""
    def close(a, b):
        return a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-6)

    if name in params:
        p = params[name]
        if close(p.detach().numpy(), value):
            return p.grad.numpy()
    for p in params.values():
        w, g = p.detach().numpy(), p.grad.numpy()
        if w.ndim == 2 and close(w.T, value):
            return g.T
        if w.size == value.size and w.shape != value.shape:
            for sign in (1.0, -1.0):
                if close(sign * w.reshape(value.shape), value):
                    return sign * g.reshape(value.shape)
    return None


def prepare(which, work, flags=()):
    """The model `which` with its weights: (PyTorch module, inputs, classes,
    ONNX path, compiler flags). Non-example models get random weights and
    are exported to WORK/model.onnx. Also used by gradient_fd_check.py."""
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    flags = list(flags)
    if which.startswith("ex:"):
        model, inputs, classes, onnx_path, shape_flags = make_example(which[3:])
        model.eval()
        return model, inputs, classes, onnx_path, shape_flags + flags
    model, inputs, classes = MODELS[which]()
    model.eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    names = list(inputs)
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, tuple(inputs[n] for n in names), onnx_path,
                      input_names=names, output_names=["logits"],
                      opset_version=17)
    return model, inputs, classes, onnx_path, flags


def make_feeds(inputs, classes):
    """The step's inputs: the model's, then random labels, a label mask
    (70% of the items) and its complement as eval_mask."""
    first = next(iter(inputs.values()))
    items = tuple(first.shape[:2])
    rng = np.random.default_rng(3)
    labels = rng.integers(0, classes, items).astype(np.int64)
    mask = rng.random(items) < 0.7
    feeds = {n: t.numpy() for n, t in inputs.items()}
    feeds.update({"labels": labels, "label_mask": mask,
                  "eval_mask": (~mask).astype(np.float32)})
    return feeds


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    which = sys.argv[3] if len(sys.argv) > 3 else "block"
    model, inputs, classes, onnx_path, flags = prepare(which, work,
                                                       sys.argv[4:])
    args = tuple(inputs.values())
    exe = os.path.join(work, "grad")
    subprocess.run([compiler, onnx_path, "--gradients", "--emit=exe", "-o", exe]
                   + flags, check=True)
    feeds = make_feeds(inputs, classes)
    labels, mask = feeds["labels"], feeds["label_mask"]
    run_exe(exe, feeds, work, os.path.join(work, "out"))

    # The reference runs in float64 so that only the compiled side rounds.
    model = model.double()
    logits = model(*(a.double() if a.is_floating_point() else a for a in args))
    loss = masked_cross_entropy(logits, labels, mask)
    loss.backward()

    report = Report()
    report("loss", np.load(os.path.join(work, "out", "loss.npy")),
           loss.detach().numpy())
    params = dict(model.named_parameters())
    # The compiled parameters: the float initializers, and the parameters
    # the exporter named with an Identity of an initializer of equal value,
    # which the importer makes parameters of their own (docs/importer.md).
    graph = onnx.load(onnx_path).graph
    inits = [(t.name, numpy_helper.to_array(t)) for t in graph.initializer
             if t.data_type == onnx.TensorProto.FLOAT]
    values = dict(inits)
    inits += [(n.output[0], values[n.input[0]]) for n in graph.node
              if n.op_type == "Identity" and n.input[0] in values
              and "::" not in n.output[0]]
    for name, value in inits:
        path = os.path.join(work, "out", f"grad:{name}.npy")
        if not os.path.exists(path):
            print(f"{name}: a constant of the compiled model, skipped")
            continue
        got = np.load(path)
        want = reference_grad(name, value, params)
        if want is None:
            report.fail(f"{name}: no PyTorch parameter has its value")
            continue
        report(name, got, want.astype(np.float32))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
