#!/usr/bin/env python3
"""Gradient check of the model zoo (examples/zoo/) against PyTorch autograd.

For one zoo entry and export style: compiles the committed
`examples/zoo/<entry>/<style>/model.onnx` with `megagraph-compile --gradients
--emit=exe`, runs it on the committed inputs (`inputs/*.npy`) plus random
labels and a label mask over the output's items, and compares the masked
cross-entropy loss of the model's output and every parameter gradient with
`loss.backward()` of the zoo's PyTorch module (`examples/zoo/<model>.py`,
rebuilt with its exported weights by `build()`), in float64 where it can.

Mapping compiled parameters back to PyTorch parameters: a compiled parameter
is an initializer or a copy of one (the compiler gives each node using a
shared initializer its own copy, `gt.onnx_untied` in its --emit=mlir). It is
the PyTorch parameter of its name when that parameter has its value, else,
found by value, a parameter the exporter folded into it (transposed for
MatMul, e.g. `onnx::MatMul_123`; reshaped, possibly negated). A parameter used
under several initializers (e.g. itself and its transpose) gets the sum of
their gradients; the copies of one initializer not matched by name are
compared, summed, with the sum of the gradients of the other parameters of
their value (the exporter keeps one initializer per distinct value).
Inference-mode BatchNorm's running statistics are buffers, constants of the
compiled model: the reference keeps them buffers of a hand-written BatchNorm
formula.
nn.Embedding's padding_idx is dropped in the reference (ONNX Gather has no
padding row). Initializers the compiler keeps as constants (no `grad:`
output) are skipped and the parameters they hold are named as skipped.

usage: zoo_gradient_check.py MEGAGRAPH_COMPILE WORKDIR ENTRY [STYLE [FLAGS...]]
(STYLE defaults to torch113.) Prints `loss: rel err E OK|FAIL` and one line
per parameter; exits 1 on any FAIL.
"""
import importlib
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gradient_common import (ManualBatchNorm, Report,  # noqa: E402
                             masked_cross_entropy, run_exe)

ZOO = os.path.join(HERE, "..", "..", "examples", "zoo")
MODULES = ["graphormer_ms", "torchgt_graphormer", "torchgt_node", "nagphormer",
           "sgformer", "graphgps_dense", "gt_lappe", "exphormer_dense",
           "torch_transformer"]


def load_entry(entry):
    """(module of the entry's model, its make_inputs keyword arguments)."""
    sys.path.insert(0, ZOO)
    for name in MODULES:
        mod = importlib.import_module(name)
        if entry in mod.VARIANTS:
            return mod, mod.VARIANTS[entry]
    raise SystemExit(f"unknown zoo entry {entry}")


def build_reference(mod):
    """The entry's PyTorch module with its exported weights."""
    import zoo_common as zc
    zc.seed_everything(0)
    model = mod.build()
    model.eval()
    for m in list(model.modules()):
        if isinstance(m, nn.Embedding):
            m.padding_idx = None
        for child_name, child in list(m.named_children()):
            if isinstance(child, (nn.BatchNorm1d, nn.BatchNorm2d)):
                setattr(m, child_name, ManualBatchNorm(child))
    return model


def candidates(value, params):
    """[(parameter name, to, back)] of every parameter whose value (as is,
    transposed, reshaped and possibly negated, tiled, or a reshaped slice)
    equals the initializer `value`: `to` maps the parameter's gradient to
    the initializer's layout, `back` an initializer gradient to the
    parameter's."""
    def close(a, b):
        return a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-6)

    found = []
    for name, p in params.items():
        w = p.detach().numpy().astype(np.float32)
        if close(w, value):
            found.append((name, lambda g: g, lambda g: g))
        elif w.ndim == 2 and close(w.T, value):
            found.append((name, lambda g: g.T, lambda g: g.T))
        elif w.size == value.size and w.shape != value.shape:
            for sign in (1.0, -1.0):
                if close(sign * w.reshape(value.shape), value):
                    found.append((name,
                                  lambda g, s=sign, v=value.shape:
                                  s * g.reshape(v),
                                  lambda g, s=sign, v=w.shape:
                                  s * g.reshape(v)))
                    break
        elif (value.size > w.size and value.ndim >= w.ndim
              and value.size % w.size == 0):
            # Tiled or broadcast copies (the dynamo exporter folds
            # `p.unsqueeze(0).repeat(B, 1, 1)` into one initializer): the
            # parameter's gradient is the sum over the copies.
            we = w.reshape((1,) * (value.ndim - w.ndim) + w.shape)
            if all(v % d == 0 for v, d in zip(value.shape, we.shape)):
                reps = tuple(v // d for v, d in zip(value.shape, we.shape))
                if close(np.tile(we, reps), value):
                    split = [x for r, d in zip(reps, we.shape) for x in (r, d)]
                    axes = tuple(range(0, 2 * len(reps), 2))
                    found.append((name,
                                  lambda g, r=reps, s=we.shape:
                                  np.tile(g.reshape(s), r),
                                  lambda g, sp=split, a=axes, s=w.shape:
                                  g.reshape(sp).sum(axis=a).reshape(s)))
        elif 1 < value.size < w.size:
            # A reshaped slice along the first axis (e.g.
            # `w.reshape(-1, H, H)[:d]`): a contiguous run of w's elements.
            flat, v = w.reshape(-1), value.reshape(-1)
            for off in np.nonzero(np.abs(flat - v[0]) <= 1e-6)[0]:
                if off + v.size <= flat.size and close(flat[off:off + v.size], v):
                    found.append((name,
                                  lambda g, o=off, v=value:
                                  g.reshape(-1)[o:o + v.size].reshape(v.shape),
                                  lambda g, o=off, w=w:
                                  np.concatenate([np.zeros(o), g.reshape(-1),
                                                  np.zeros(w.size - o - g.size)]
                                                 ).reshape(w.shape)))
                    break
    return found


def batchnorm_scales(model):
    """[(name prefix, s, shift)] of each BatchNorm of the reference, which
    the dynamo exporter may fold into the Linear before it: W' = s W (per
    output row) and b' = s b + shift, with s = weight / sqrt(var + eps) and
    shift = bias - s mean."""
    found = []
    for name, m in model.named_modules():
        if isinstance(m, ManualBatchNorm):
            s = (m.weight / torch.sqrt(m.running_var + m.eps)).detach()
            shift = (m.bias - s * m.running_mean).detach()
            found.append((name, s.numpy(), shift.numpy()))
    return found


def folded_candidates(value, params, scales):
    """[(parameter name, to, back, batchnorm)] of a Linear weight or bias
    that the exporter multiplied by a following BatchNorm (batchnorm_scales)
    to give `value`. With y = s z + shift for z = x W^T + b, the folded
    parameters' gradients are dL/dW' = dL/dW / s and dL/db' = dL/db / s."""
    found = []
    for name, p in params.items():
        w = p.detach().numpy()
        if w.shape != value.shape or w.ndim not in (1, 2):
            continue
        for bn, sc, shift in scales:
            if sc.shape[0] != w.shape[0]:
                continue
            col = sc.reshape((-1,) + (1,) * (w.ndim - 1))
            folded = col * w + (shift if w.ndim == 1 else 0)
            if np.allclose(folded, value, rtol=1e-5, atol=1e-6):
                found.append((name, lambda g, c=col: g / c,
                              lambda g, c=col: g * c, bn))
    return found


def compiled_copies(compiler, onnx_path, work, flags):
    """{initializer: [its name and the names of its copies]} for the
    initializers the compiler untied (`gt.onnx_untied` of the module)."""
    mlir = os.path.join(work, "import.mlir")
    subprocess.run([compiler, onnx_path, "--emit=mlir", "-o", mlir] + flags,
                   check=True)
    with open(mlir) as f:
        header = f.readline()
    match = re.search(r"gt\.onnx_untied = (\[\[.*?\]\])", header)
    return {names[0]: names for names in json.loads(match.group(1))} \
        if match else {}


def main():
    compiler, work, entry = sys.argv[1], sys.argv[2], sys.argv[3]
    style = sys.argv[4] if len(sys.argv) > 4 else "torch113"
    flags = sys.argv[5:]
    os.makedirs(work, exist_ok=True)
    folder = os.path.join(ZOO, entry, style)
    onnx_path = os.path.join(folder, "model.onnx")
    exe = os.path.join(work, "grad")
    subprocess.run([compiler, onnx_path, "--gradients", "--emit=exe", "-o",
                    exe] + flags, check=True)

    mod, kw = load_entry(entry)
    # The reference runs on the committed inputs (make_inputs() may differ in
    # the last bits across LAPACK builds, e.g. eigenvector signs), and in
    # float64 unless the model casts to float32 itself.
    feeds = {f[:-4]: np.load(os.path.join(folder, "inputs", f))
             for f in sorted(os.listdir(os.path.join(folder, "inputs")))}
    named = [(n, feeds.get(n, a)) for n, a in mod.make_inputs(**kw)]
    out = None
    for dtype in (torch.float64, torch.float32):
        torch.set_default_dtype(dtype)
        model = build_reference(mod).to(dtype)
        args = [torch.from_numpy(np.ascontiguousarray(a)) for _, a in named]
        args = [a.to(dtype) if a.is_floating_point() else a for a in args]
        try:
            out = model(*args)
            break
        except RuntimeError as err:  # e.g. an explicit .float() in forward
            print(f"reference in {dtype} failed ({err}); trying float32")
    out = out if isinstance(out, torch.Tensor) else out[0]
    classes = out.shape[-1]
    items = tuple(out.shape[:-1])
    rng = np.random.default_rng(3)
    labels = rng.integers(0, classes, items).astype(np.int64)
    mask = rng.random(items) < 0.7
    mask.reshape(-1)[0] = True

    feeds.update({"labels": labels, "label_mask": mask,
                  "eval_mask": (~mask).astype(np.float32)})
    run_exe(exe, feeds, work, os.path.join(work, "out"))

    loss = masked_cross_entropy(out, labels, mask)
    params = dict(model.named_parameters())
    for p in params.values():
        p.grad = None
    loss.backward()

    report = Report()
    report("loss", np.load(os.path.join(work, "out", "loss.npy")),
           loss.detach().numpy())
    grads = {n: (p.grad.numpy() if p.grad is not None
                 else np.zeros(tuple(p.shape)))
             for n, p in params.items()}
    # Per parameter: the sum of the gradients of the initializers it maps to.
    per_param = {}
    tied = set()
    constant = set()
    proto = onnx.load(onnx_path)
    untied = compiled_copies(compiler, onnx_path, work, flags)
    scales = batchnorm_scales(model)
    # BatchNorms folded into a Linear: their weight and bias are no
    # parameters of the compiled model.
    folded_bns = set()
    for init in proto.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        value = numpy_helper.to_array(init)
        found = candidates(value, params)
        # The compiled parameters holding this initializer: itself and its
        # copies, less the constants (no gradient output).
        names = untied.get(init.name, [init.name])
        paths = {n: os.path.join(work, "out", f"grad:{n}.npy") for n in names}
        names = [n for n in names if os.path.exists(paths[n])]
        if not names:
            # A constant of the compiled model (e.g. the running statistics
            # of a dynamo export): the parameters it holds are not trained.
            constant.update(n for n, _, _ in found)
            continue
        if not found:
            folded = folded_candidates(value, params, scales)
            if len(folded) != 1 or len(names) != 1:
                report.fail(f"{init.name}: no PyTorch parameter has its value")
                continue
            n, _, back, bn = folded[0]
            per_param.setdefault(n, []).append(
                (f"{init.name}, folded with {bn}", back(np.load(
                    paths[names[0]]))))
            folded_bns.add(bn)
            continue
        # A copy named after a parameter of its value is that parameter.
        rest = []
        for name in names:
            match = [f for f in found if f[0] == name]
            if len(found) > 1 and match:
                n, _, back = match[0]
                per_param.setdefault(n, []).append((name, back(np.load(
                    paths[name]))))
                found = [f for f in found if f[0] != name]
            else:
                rest.append(name)
        if not rest:
            continue
        got = sum(np.load(paths[n]) for n in rest)
        label = ", ".join(rest)
        if not found:
            report.fail(f"{label}: no other PyTorch parameter has its value")
        elif len(found) > 1:
            want = sum(to(grads[n]) for n, to, _ in found)
            tied.update(n for n, _, _ in found)
            report(f"{label} (= {', '.join(n for n, _, _ in found)})",
                   got, want.astype(np.float32))
        else:
            n, _, back = found[0]
            per_param.setdefault(n, []).append((label, back(got)))
    covered = set(per_param) | tied
    for bn in sorted(folded_bns):
        print(f"{bn}: folded into the Linear before it by the exporter, "
              "not a parameter of the compiled model")
        covered |= {f"{bn}.weight", f"{bn}.bias"}
    for n in sorted(constant - covered):
        print(f"{n}: a constant of the compiled model, skipped")
    covered |= constant
    for n, g in grads.items():
        if n not in covered and np.abs(g).max() > 0:
            report.fail(f"{n}: a PyTorch parameter with a gradient but no "
                        "gradient output")
    for n, uses in per_param.items():
        got = sum(g for _, g in uses)
        label = n if len(uses) == 1 and uses[0][0] == n else \
            f"{n} (as {', '.join(u for u, _ in uses)})"
        report(label, got, grads[n].astype(np.float32))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
